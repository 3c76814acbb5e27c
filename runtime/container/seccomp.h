/* runtime/container/seccomp.h — linux.seccomp (struct qp_seccomp) to a
 * libseccomp filter: validate, build, load.
 *
 * Loading a filter without no_new_privs needs CAP_SYS_ADMIN.  qpod never lets
 * libseccomp set no_new_privs on its own (SCMP_FLTATR_CTL_NNP is off), so the
 * process.noNewPrivileges setting is what counts.  Consequence for callers:
 * with noNewPrivileges false and a workload without CAP_SYS_ADMIN, load the
 * filter BEFORE qp_process_drop_privileges() (as runc does); otherwise load it
 * last, right before execve, so the fewest syscalls run under it.
 */
#ifndef QPOD_CONTAINER_SECCOMP_H
#define QPOD_CONTAINER_SECCOMP_H

#include <stdbool.h>
#include <stdint.h>
#include <seccomp.h>

#include "spec/spec.h"
#include "util/error.h"

/* Validate without building: action, op, arch and flag names, errnoRet
 * ranges, argument indices, bounds.  Errors are QP_E_INVALID and name the
 * JSON path ("linux.seccomp.syscalls[3].action: unknown action \"X\"").
 * sc == NULL is valid (no filter). */
int qp_seccomp_validate(const struct qp_seccomp *sc, qp_error **err);

/* Build the filter (seccomp_init with defaultAction/defaultErrnoRet, the
 * architectures, the rules with their argument comparisons, the flags as
 * filter attributes).  Syscall names unknown to libseccomp on this
 * architecture are skipped, as runc does; an unknown action or op is an
 * error.  Does not load it.  On success *out must be seccomp_release()d. */
int qp_seccomp_build(const struct qp_seccomp *sc, scmp_filter_ctx *out, qp_error **err);

/* Build and load (seccomp_load).  sc == NULL: no-op. */
int qp_seccomp_apply(const struct qp_seccomp *sc, qp_error **err);

/* Name maps, exposed for the spec writer, `qpod features` and tests.
 * Each returns false for an unknown name. */
bool qp_seccomp_arch_from_name(const char *name, uint32_t *arch);
bool qp_seccomp_op_from_name(const char *name, enum scmp_compare *op);
/* NULL-terminated lists of the names qpod accepts (for `qpod features`). */
extern const char *const qp_seccomp_action_names[];
extern const char *const qp_seccomp_op_names[];
extern const char *const qp_seccomp_arch_names[];
extern const char *const qp_seccomp_flag_names[];

#endif
