/* guest-init/tinyinit.h — PID 1 of a pod: start the workload, forward signals
 * to it, reap every zombie, and exit with the workload's status.  The same
 * code is PID 1 of a container pod (linked into qpod) and of a microVM
 * (linked into the guest-init binary). */
#ifndef QPOD_TINYINIT_H
#define QPOD_TINYINIT_H

#include <sys/types.h>

/* Called in the forked workload child with default signal state restored.
 * Must exec or _exit; it never returns. */
typedef void (*tinyinit_exec_fn)(void *arg);

struct tinyinit_hooks {
	/* runs in the parent right after the fork (may be NULL) */
	void (*on_spawn)(pid_t pid, void *arg);
	/* a child other than the workload was reaped (may be NULL): pid and
	 * its exit code in the same form as the return value */
	void (*on_other_exit)(pid_t pid, int code, void *arg);
};

/* Fork the workload, then loop: forward every catchable signal to it, reap
 * children.  Returns the exit code for PID 1: the workload's exit status, or
 * 128+N if a signal N killed it, or -1 if the fork failed (errno set).
 * hooks may be NULL. */
int tinyinit_run(tinyinit_exec_fn fn, void *arg, const struct tinyinit_hooks *hooks);

/* Every signal back to its default action, none blocked: the state a
 * workload is exec'd with. */
void tinyinit_reset_signals(void);

/* 0..255 for an exit, 128+N for death by signal N, from a wait status. */
int tinyinit_exit_code(int status);

#endif
