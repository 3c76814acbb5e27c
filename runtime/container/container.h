/* runtime/container/container.h — internals shared by the container
 * driver's files: the context handed to the cloned child. */
#ifndef QPOD_CONTAINER_H
#define QPOD_CONTAINER_H

#include <stdbool.h>
#include <sys/types.h>

#include "spec/spec.h"
#include "stats.h"

struct qp_cgroup_entry;

#define QP_EXEC_FIFO "exec.fifo"

struct qp_child_ctx {
	const struct pod_spec *spec;
	const char *id;       /* the pod's, and its bundle (or rootfs): for the hooks' state */
	const char *bundle;
	const char *rootfs;   /* absolute, resolved */
	int sync_fd;          /* child's end of the sync socketpair */
	int fifo_fd;          /* O_PATH fd of exec.fifo */
	const struct qp_cgroup_entry *cg_entry; /* the child moves itself in; NULL: no cgroup */
	bool new_userns;
	int preserve_fds;     /* --preserve-fds: fds 3..3+N-1 go to the workload */
	bool no_pivot;        /* --no-pivot */
	bool no_new_keyring;  /* --no-new-keyring */
	void *stack;          /* the clone's stack (for ASan: see qp_container_child);
			       * NULL: a fork-like clone3, on the parent's stack */
	size_t stack_size;
};

/* Entry point of the cloned child; never returns normally. */
int qp_container_child(void *arg);

/* The hooks of create and start as the child sees them (child_hooks.c):
 * before pivot_root, ask the parent (sync_fd) to run prestart and
 * createRuntime, then run createContainer in the rootfs; just before the
 * exec, run startContainer. */
int qp_child_create_hooks(const struct qp_child_ctx *c, int sync_fd, qp_error **err);
int qp_child_start_hooks(const struct qp_child_ctx *c, qp_error **err);

/* Resolve the executable like execvp would, inside the current root, with
 * PATH from env (NULL-terminated "K=V").  Returns 0 and the path in buf,
 * or -1 with errno ENOENT (not found) / EACCES (not executable). */
int qp_find_executable(const char *cmd, char *const *env, char *buf, size_t len);

/* At create: capabilities and LSM labels the host can give (security.c). */
int qp_process_check_host(const struct pod_spec *spec, bool new_userns, qp_error **err);
/* LSM label, no_new_privs, privilege drop and seccomp, in the right order
 * (security.c). */
int qp_process_lockdown(const struct qp_process *p, const struct qp_seccomp *sc, qp_error **err);

/* Before a signal to the pod's PID 1: if it started less than a second
 * ago and has no handler for sig yet, wait (at most 250 ms) for one
 * (signal_grace.c explains why). */
void qp_signal_grace(pid_t pid, int sig);

/* The error for a failed qp_find_executable(): QP_E_EXEC with errnum e. */
int qp_exec_lookup_error(const char *cmd, int e, qp_error **err);

/* control.c: the driver's pause, resume, update and stats, via the cgroup */
struct pod;
struct qp_stats;
int qp_container_pause(struct pod *pod, qp_error **err);
int qp_container_resume(struct pod *pod, qp_error **err);
bool qp_container_frozen(struct pod *pod);
int qp_container_update(struct pod *pod, const struct qp_resources *res, qp_error **err);
int qp_container_stats(struct pod *pod, struct qp_stats *st, qp_error **err);
int qp_container_mem(struct pod *pod, struct qp_pod_mem *out, qp_error **err);
/* The "linux" key and object of the OCI features document (a yajl_gen). */
void qp_container_features(void *gen);

#endif
