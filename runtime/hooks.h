/* runtime/hooks.h — running OCI hooks (config.md "POSIX-platform Hooks").
 *
 * A hook is a program: path (absolute), args (argv, args[0] included),
 * env, timeout.  It gets the pod's OCI state as JSON on stdin; its stdout
 * and stderr are captured, as runc does, for the error message of a hook
 * that fails.  A hook fails when it cannot be executed, exits non-zero, is
 * killed by a signal or outlives its timeout (then it is SIGKILLed with its
 * process group).  The hooks of one kind run in order; the first failure
 * stops them.
 *
 * Who runs what, and when (docs/DECISIONS.md "Hooks"):
 *   prestart, createRuntime  create, in qpod (the runtime namespace), once
 *                            the pod's namespaces and mounts exist, before
 *                            pivot_root; status "creating", the host pid
 *   createContainer          create, in the container child, in the pod's
 *                            mount namespace before pivot_root (cwd: the
 *                            rootfs); status "creating", pid as the pod sees it
 *   startContainer           start, in the container after pivot_root and the
 *                            privilege drop, just before the exec (path
 *                            resolved in the pod's root, env by default
 *                            process.env); status "created"
 *   poststart                start, in qpod, after the exec; a failure is a
 *                            warning
 *   poststop                 delete (and a failed create), in qpod, once the
 *                            pod is gone, before its state is removed;
 *                            a failure is a warning
 */
#ifndef QPOD_HOOKS_H
#define QPOD_HOOKS_H

#include <sys/types.h>

#include "oci_state.h"
#include "spec/spec.h"
#include "util/error.h"

struct pod;

/* Run spec's hooks of `kind` in order, st as JSON on each one's stdin.
 * env_default: the environment of a hook without "env" (NULL: qpod's own,
 * as runc and crun do).  The error names the kind, the hook's index and
 * path, and how it failed (exit status, signal, timeout) with its output. */
int qp_hooks_run(const struct pod_spec *spec, enum qp_hook_kind kind, const struct qp_oci_state *st,
		 char *const *env_default, qp_error **err);

/* How long to wait for a peer that runs kind's hooks: base_ms plus every
 * hook's timeout, or -1 (for ever) if one has none. */
int qp_hooks_wait_ms(const struct pod_spec *spec, enum qp_hook_kind kind, int base_ms);

/* The pod's hooks of `kind` run by qpod itself (the runtime namespace),
 * with the pod's OCI state at this status and pid.  If there are any, the
 * pod's lock (exclusive, from create, start or delete) is shared from then
 * on, so that a hook can run `qpod state ID` of its own pod. */
int pod_hooks_run(struct pod *pod, enum qp_hook_kind kind, enum qp_status status, pid_t pid,
		  qp_error **err);
/* create's hooks in the runtime namespace: prestart, then createRuntime,
 * status "creating" with the pod's pid. */
int pod_hooks_create_runtime(struct pod *pod, pid_t pid, qp_error **err);
/* The same for hooks whose failure is only a warning (poststart, poststop):
 * it is logged, and the caller goes on. */
void pod_hooks_warn(struct pod *pod, enum qp_hook_kind kind, enum qp_status status, pid_t pid);

#endif
