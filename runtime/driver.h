/* runtime/driver.h — the interface both pod modes implement.
 *
 * pod.c drives the lifecycle and never asks which mode it has: it calls
 * through `struct pod_driver`.  The container driver lives in
 * runtime/container/, the VM drivers (qemu, libvirt) in runtime/vm/.
 */
#ifndef QPOD_DRIVER_H
#define QPOD_DRIVER_H

#include <sys/types.h>

#include "spec/spec.h"
#include "state.h"
#include "stats.h"
#include "util/error.h"

struct pod;

/* A spare, as `qpod spares list` shows it. */
struct qp_spare {
	const char *name, *key, *accel;
	const char *status;      /* "making", "free" or "taken" */
	const char *taken_by;    /* the pod's ID ("" unless taken) */
	unsigned long long mem_mib;
	int vcpus;
	pid_t holder, qemu;
};

struct pod_driver {
	const char *name;
	/* Build the pod up to "created": the workload's process exists (or the
	 * VM is booted) and waits for start.  Fills pod->state (pid, cgroup...). */
	int (*create)(struct pod *pod, qp_error **err);
	/* Let the created workload exec. */
	int (*start)(struct pod *pod, qp_error **err);
	/* Current status, from the live system (not just the saved state). */
	enum qp_status (*status)(struct pod *pod);
	/* Deliver a signal to the workload (all = every process of the pod). */
	int (*kill)(struct pod *pod, int sig, int all, qp_error **err);
	/* Release every resource (processes must be gone or are killed). */
	int (*destroy)(struct pod *pod, qp_error **err);
	/* An fd that polls readable once the pod's workload has ended (only
	 * valid in the process that created the pod), and the reaping that
	 * follows: *code = the exit code qpod should exit with. */
	int (*wait_fd)(struct pod *pod, qp_error **err);
	int (*reap)(struct pod *pod, int *code, qp_error **err);
	/* Run an extra process inside the pod; *status gets its exit code. */
	int (*exec)(struct pod *pod, const struct qp_process *proc, int *status, qp_error **err);
	/* PIDs (host view) of the pod's processes. */
	int (*pids)(struct pod *pod, pid_t **pids, size_t *n, qp_error **err);
	/* Stop every process of the pod where it is (OCI pause) and let them
	 * go on (resume); status() reports QP_STATUS_PAUSED in between. */
	int (*pause)(struct pod *pod, qp_error **err);
	int (*resume)(struct pod *pod, qp_error **err);
	/* Apply res, the pod's whole resources after an update (the old ones,
	 * pod->spec->resources, with the changes merged in).  What the pod
	 * cannot change is refused, never skipped. */
	int (*update)(struct pod *pod, const struct qp_resources *res, qp_error **err);
	/* Usage figures (stats.h); *st is zeroed first, qp_stats_free frees it. */
	int (*stats)(struct pod *pod, struct qp_stats *st, qp_error **err);
	/* Memory figures of the running pod (stats.h; *m is -1 everywhere
	 * when called). */
	int (*mem)(struct pod *pod, struct qp_pod_mem *m, qp_error **err);
	/* The accelerator a pod of this driver gets for `want`, resolved as
	 * create resolves it: "kvm", "tcg", or "none" (container pods). */
	int (*accel)(enum qp_accel want, const char **name, qp_error **err);
	/* Warm replace: give the running pod the workload cmd (NULL: its own
	 * process again) without rebuilding it; prints the JSON timing line.
	 * NULL when the driver has none (replace is then cold: delete, create). */
	int (*replace)(struct pod *pod, char **cmd, qp_error **err);
	/* Pod templates (NULL when the driver has none): make the one pods of
	 * spec would clone (its key into key[17]); list them; remove one. */
	int (*template_create)(const struct pod_spec *spec, char key[17], bool *made, qp_error **err);
	int (*template_list)(void (*each)(void *ctx, const char *key, const char *meta, long long mem_bytes,
					  bool stale),
			     void *ctx, qp_error **err);
	/* Remove the stale templates (their inputs changed: no pod clones them
	 * again); each removed key to each(). */
	int (*template_prune)(void (*each)(void *ctx, const char *key), void *ctx, qp_error **err);
	int (*template_remove)(const char *key, qp_error **err);
	/* Spares (NULL when the driver has none): pods of spec started ahead
	 * of the pods that take them (vm: docs/TEMPLATES.md, "Spares"), in
	 * the state root rootfd.  fill: until count are free (keep: and kept
	 * so, every take starting a replacement); made(ctx, name) for each.
	 * drain: stop the free ones (*n), forget the target.  gc: remove what
	 * dead ones left (*n). */
	int (*spares_fill)(int rootfd, const struct pod_spec *spec, int count, bool keep,
			   void (*made)(void *ctx, const char *name), void *ctx, qp_error **err);
	int (*spares_list)(int rootfd, void (*each)(void *ctx, const struct qp_spare *s), void *ctx,
			   qp_error **err);
	int (*spares_drain)(int rootfd, int *n, qp_error **err);
	int (*spares_gc)(int rootfd, int *n, qp_error **err);
	/* Whether pid, a process the state names (the VMM, or the pod's pid)
	 * alive but outside the pod's cgroup, is still the pod's by the
	 * driver's own proof (the libvirt backend: its QEMU, libvirtd's child,
	 * carries the domain's uuid; a foreground run's monitor is then a qpod
	 * process of this binary); NULL: never. */
	bool (*owns_pid)(struct pod *pod, pid_t pid);
	/* The "linux" key and object of the OCI features document, written to
	 * gen (a yajl_gen); NULL for a driver that adds nothing there. */
	void (*features)(void *gen);
};

extern const struct pod_driver qp_container_driver;
extern const struct pod_driver qp_vm_driver;
/* a container inside a vm pod's VM (one VM per pod: vm/member/) */
extern const struct pod_driver qp_vm_member_driver;

/* NULL (with an error) if the mode's driver is not built or not usable. */
const struct pod_driver *driver_for_mode(enum qp_mode mode, qp_error **err);
/* The driver of a pod: the member driver for a container inside a vm
 * pod's VM (in_pod: its pod's ID, NULL for a pod of its own). */
const struct pod_driver *driver_for_pod(enum qp_mode mode, const char *in_pod, qp_error **err);
/* The driver of the mode named `mode` ("container", "vm"). */
const struct pod_driver *driver_by_name(const char *mode, qp_error **err);
/* The accelerator pods of mode `mode` ("container", "vm") get by default
 * (the driver's accel op with auto). */
int driver_default_accel(const char *mode, const char **name, qp_error **err);

#endif
