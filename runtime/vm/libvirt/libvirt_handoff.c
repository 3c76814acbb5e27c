/* runtime/vm/libvirt/libvirt_handoff.c — a static qpod hands a libvirt pod to
 * qpod-libvirt.
 *
 * qpod is linked statically where it can be (configure.ac): every command
 * that enters a pod execs it twice (util/exe_guard.h) and the dynamic
 * loader was most of each exec's cost.  A static binary cannot dlopen()
 * libvirt (libvirt_dl.c), so `run` and `create` of a pod whose backend is
 * libvirt re-execute, before they touch anything, as qpod-libvirt: the same
 * program linked dynamically, shipped beside qpod (util/paths.h).  Its
 * monitor is then the one that holds the libvirt connection; every other
 * command on the pod (state, kill, delete...) needs no libvirt and stays in
 * qpod.  docs/DECISIONS.md "A static qpod". */
#include <errno.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/log.h"
#include "util/paths.h"
#include "vm/libvirt/libvirt.h"

extern char **environ;

/* no program interpreter (the dynamic loader) mapped: a static binary */
bool vm_lv_linked_static(void)
{
	return getauxval(AT_BASE) == 0;
}

int vm_lv_handoff(char **argv, bool handed_off, qp_error **err)
{
	_cleanup_free_ char *helper = NULL;

	if (!vm_lv_linked_static())
		return 0; /* this qpod loads libvirt itself */
	if (handed_off)
		return qp_error_set(err, QP_E_GENERIC, 0,
				    "libvirt backend: " QP_LV_HELPER " is linked statically too and cannot load "
				    "libvirt (rebuild it: make)");
	if (!(helper = qp_find_shipped(QP_LV_HELPER, QP_LV_HELPER, NULL)))
		return qp_error_set(err, QP_E_NOTFOUND, 0,
				    "libvirt backend: this qpod is linked statically and cannot load libvirt; "
				    "its helper " QP_LV_HELPER " (qpod linked dynamically) is not installed beside it");
	/* QPOD_EXE_DIR stays qpod's (the helper lives elsewhere: main.c) */
	if (setenv(QP_LV_HANDOFF_ENV, "1", 1) < 0)
		return qp_fail(err, errno, "libvirt backend: setenv");
	qp_debug("libvirt backend: handed to %s (this qpod is static)", helper);
	execve(helper, argv, environ);
	int e = errno;
	unsetenv(QP_LV_HANDOFF_ENV);
	return qp_fail(err, e, "libvirt backend: execute %s", helper);
}
