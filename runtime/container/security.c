/* runtime/container/security.c — what the host must be able to give a pod's
 * process (checked at create), and the last steps before it execs: the LSM
 * exec label, no_new_privs, privilege drop and seccomp, in the one order that
 * works.  The LSM label goes first, as under runc: writing it needs the
 * privileges the later steps drop.
 * Loading a seccomp filter needs either no_new_privs or CAP_SYS_ADMIN: with
 * no_new_privs the filter goes last (so it need not allow setresuid,
 * capset, ...); without it the filter must be loaded while we still hold
 * CAP_SYS_ADMIN, i.e. before the drop (as runc does). */
#include "host/caps.h"
#include "container/container.h"
#include "container/lsm.h"
#include "container/seccomp.h"

int qp_process_check_host(const struct pod_spec *spec, bool new_userns, qp_error **err)
{
	if (qp_caps_check_host(&spec->process.caps, new_userns, err) < 0)
		return -1;
	return qp_lsm_check(spec, err);
}

int qp_process_lockdown(const struct qp_process *p, const struct qp_seccomp *sc, qp_error **err)
{
	if (qp_lsm_apply(p, err) < 0)
		return -1;
	if (p->no_new_privileges) {
		if (qp_no_new_privs(err) < 0 || qp_process_drop_privileges(p, err) < 0)
			return -1;
		return qp_seccomp_apply(sc, err);
	}
	if (qp_seccomp_apply(sc, err) < 0)
		return -1;
	return qp_process_drop_privileges(p, err);
}
