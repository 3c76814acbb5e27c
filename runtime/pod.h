/* runtime/pod.h — driver-independent pod lifecycle: create, start, wait,
 * kill, delete, and the whole `run` (create + start + wait [+ delete]). */
#ifndef QPOD_POD_H
#define QPOD_POD_H

#include <stdbool.h>
#include <signal.h>
#include <sys/types.h>

#include "driver.h"
#include "oci_state.h"
#include "spec/spec.h"
#include "state.h"
#include "host/tty_relay.h"

struct pod_io {
	const char *console_socket;   /* OCI --console-socket */
	bool tty_stdin;               /* `run -t`: the terminal is qpod's own stdin's */
	const char *pid_file;         /* OCI --pid-file */
	bool foreground;              /* qpod stays the parent and waits */
	int preserve_fds;             /* OCI --preserve-fds (container pods) */
	bool no_pivot;                /* OCI --no-pivot: MS_MOVE + chroot, not pivot_root */
	bool no_new_keyring;          /* OCI --no-new-keyring: keep the caller's session keyring */
};

struct pod {
	char *id;
	int rootfd;                   /* state root dir */
	const char *root;             /* its path (borrowed from the caller) */
	int dirfd;                    /* this pod's state dir (locked) */
	struct pod_spec *spec;
	struct pod_state *state;
	const struct pod_driver *drv;
	struct pod_io io;
	char *bundle;                 /* absolute; NULL for the friendly form */
	char *rootfs;                 /* absolute rootfs path */
	int exit_status;              /* of the workload, when waited for */
	/* driver-private, valid in the creating process only */
	int sync_fd;                  /* container: child's sync socket, -1 if none */
	int wait_fd;                  /* pidfd or similar for drv->wait_fd */
	struct qp_tty_relay tty;      /* `run -t` of a container pod (master -1: none) */
	int lock;                     /* enum qp_lock held on dirfd */
	bool creator;                 /* this process is creating the pod */
	bool spare;                   /* a VM spare being made (vm/snapshot/spare.c) */
	bool spare_nic;               /* ...with a NIC on an unattached tap */
	bool building;                /* drv->create got as far as a pod process
				       * (clone, VMM fork): a failed create then
				       * runs the poststop hooks, as a delete would */
	long long t_create, t_created; /* CLOCK_MONOTONIC ns around drv->create */
};

/* On success the pod owns spec; on failure the caller still does. */
int pod_create(int rootfd, const char *root, const char *id, struct pod_spec *spec, const char *bundle,
	       const char *rootfs, const struct pod_io *io, struct pod **out, qp_error **err);
/* lock: an enum qp_lock (state.h); true = exclusive, for a change (start,
 * delete), false = shared. */
int pod_open(int rootfd, const char *root, const char *id, int lock, struct pod **out,
	     qp_error **err);
/* pod_open's check that the state's ID, cgroup and pids are the pod's own
 * (pod_identity.c): a pid that is not is forgotten, a wrong ID or cgroup
 * refused. */
int pod_check_identity(struct pod *pod, qp_error **err);
int pod_start(struct pod *pod, qp_error **err);
/* Wait for the pod's init (only the parent can); forwards SIGINT/SIGTERM/...
 * to the pod meanwhile. Returns the exit code qpod should exit with. */
int pod_wait(struct pod *pod, qp_error **err);
/* Block (and un-ignore) the signals pod_wait forwards, so that one arriving
 * while the pod is still being created is kept for it; *old = the old mask. */
void pod_hold_signals(sigset_t *old);
int pod_kill(struct pod *pod, int sig, bool all, qp_error **err);
/* OCI pause / resume: the pod must be created or running / paused, else
 * runc's "container not running" / "container not paused". */
int pod_pause(struct pod *pod, qp_error **err);
int pod_resume(struct pod *pod, qp_error **err);
/* Merge upd into the pod's resources, validate, apply (drv->update) and
 * keep them in the pod's config.json.  A stopped pod is refused. */
int pod_update(struct pod *pod, const struct qp_resources *upd, qp_error **err);
/* Usage figures of a live pod (drv->stats). */
int pod_stats(struct pod *pod, struct qp_stats *st, qp_error **err);
int pod_delete(struct pod *pod, bool force, qp_error **err);
void pod_free(struct pod *pod);

/* ---- pod_info.c: what the drivers and hooks read of a pod ---- */

/* CREATING while its creator holds the lock (else STOPPED), then what the
 * driver says (drv->status). */
enum qp_status pod_status(struct pod *pod);
/* The pod's OCI state (id, bundle, annotations) with this status and pid;
 * it points into pod->state. */
struct qp_oci_state pod_oci_state(const struct pod *pod, enum qp_status status, pid_t pid);
/* Write PID to path atomically (tmp + rename), as --pid-file wants. */
int pod_write_pid_file(const char *path, pid_t pid, qp_error **err);

/* Networking settings of a pod, from its spec (opts.net and the
 * annotations qpod.net.subnet, qpod.net.bridge, qpod.net.ip).
 * Returns true if the pod wants a bridged network. */
struct qp_net_config;
bool pod_net_config(const struct pod *pod, struct qp_net_config *cfg, const char **ip);

#endif
