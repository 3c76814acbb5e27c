/* runtime/container/security.c — the last steps before a pod process execs:
 * no_new_privs, privilege drop and seccomp, in the one order that works.
 * Loading a seccomp filter needs either no_new_privs or CAP_SYS_ADMIN: with
 * no_new_privs the filter goes last (so it need not allow setresuid,
 * capset, ...); without it the filter must be loaded while we still hold
 * CAP_SYS_ADMIN, i.e. before the drop (as runc does). */
#include "container/caps.h"
#include "container/container.h"
#include "container/seccomp.h"

int qp_process_lockdown(const struct qp_process *p, const struct qp_seccomp *sc, qp_error **err)
{
	if (p->no_new_privileges) {
		if (qp_no_new_privs(err) < 0 || qp_process_drop_privileges(p, err) < 0)
			return -1;
		return qp_seccomp_apply(sc, err);
	}
	if (qp_seccomp_apply(sc, err) < 0)
		return -1;
	return qp_process_drop_privileges(p, err);
}
