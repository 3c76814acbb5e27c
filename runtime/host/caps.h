/* runtime/host/caps.h — process privileges of a container workload:
 * capability names and sets (libcap), the uid/gid switch, no_new_privs and
 * rlimits.  Seccomp lives in seccomp.h.
 *
 * Order in the container child (after pivot_root, before execve):
 *   qp_rlimits_apply()            raising a hard limit needs CAP_SYS_RESOURCE
 *   qp_no_new_privs()             if process.noNewPrivileges
 *   qp_process_drop_privileges()
 *   qp_seccomp_apply()            last (see seccomp.h about no_new_privs)
 */
#ifndef QPOD_CONTAINER_CAPS_H
#define QPOD_CONTAINER_CAPS_H

#include <stdbool.h>
#include <stddef.h>

#include "spec/spec.h"
#include "util/error.h"

/* "CAP_SYS_ADMIN" -> 21.  Exact upper-case names only; -1 if unknown to qpod. */
int qp_cap_from_name(const char *name);
/* 21 -> "CAP_SYS_ADMIN"; NULL if out of range. */
const char *qp_cap_name(int cap);
/* Highest capability number the running kernel supports (cap_last_cap). */
int qp_cap_last_cap(void);

/* Check every name in every set is a known capability the running kernel
 * supports ("process.capabilities.bounding: unknown capability \"CAP_FOO\"").
 * QP_E_INVALID on failure.  A set of absent caps (caps->present false) is valid. */
int qp_caps_validate(const struct qp_caps *caps, qp_error **err);
/* At create: every capability of the effective, permitted, inheritable and
 * ambient sets must be one qpod can hand on (in its bounding set, and in its
 * permitted set but for inheritable), else the pod would only fail at
 * start: "process.capabilities.permitted: CAP_SYS_RESOURCE is not in this
 * host's capability bounding set ...".  Nothing to check when the pod gets a
 * new user namespace (it starts with a full set there). */
int qp_caps_check_host(const struct qp_caps *caps, bool new_userns, qp_error **err);

/* The whole privilege drop for the workload, in this order:
 *  (1) drop from the bounding set every cap not in caps->bounding
 *  (2) PR_SET_KEEPCAPS, setgroups(additional_gids), setresgid(gid), setresuid(uid)
 *  (3) cap_set_proc with effective/permitted/inheritable
 *  (4) ambient: PR_CAP_AMBIENT_CLEAR_ALL, then raise each
 *  (5) PR_SET_KEEPCAPS off
 * If !caps.present the current capabilities are kept (restored after the
 * uid switch) and only uid/gid/groups change.  Errors carry errno. */
int qp_process_drop_privileges(const struct qp_process *p, qp_error **err);

/* prctl(PR_SET_NO_NEW_PRIVS, 1). */
int qp_no_new_privs(qp_error **err);

/* rlimits.c --------------------------------------------------------------- */

/* "RLIMIT_NOFILE" -> RLIMIT_NOFILE; -1 if unknown. */
int qp_rlimit_from_name(const char *name);
/* RLIMIT_NOFILE -> "RLIMIT_NOFILE"; NULL if unknown. */
const char *qp_rlimit_name(int resource);
/* Check resources are known, soft <= hard, no duplicates (QP_E_INVALID). */
int qp_rlimits_validate(const struct qp_rlimit *r, size_t n, qp_error **err);
/* Validate, then setrlimit() each, in the calling process. */
int qp_rlimits_apply(const struct qp_rlimit *r, size_t n, qp_error **err);

#endif
