/* runtime/util/exe_guard.c — see exe_guard.h: which guard runs, and how a
 * re-executed qpod knows that it already runs from one. */
#include <errno.h>
#include <stdbool.h>
#include <linux/magic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/exe_guard.h"
#include "util/log.h"

/* set for the re-executed process only: a guard that its check does not
 * recognise is an error, never a loop */
#define REEXECED_ENV "QPOD_EXE_GUARD_REEXECED"

extern char **environ;

static int guarded_now(void)
{
	_cleanup_close_ int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	struct statfs sfs;
	int seals;

	if (fd < 0)
		return 0;
	seals = fcntl(fd, F_GET_SEALS);
	if (seals >= 0 && (seals & QP_EXE_SEALS) == QP_EXE_SEALS)
		return 1;
	return fstatfs(fd, &sfs) == 0 && sfs.f_type == OVERLAYFS_SUPER_MAGIC && (sfs.f_flags & ST_RDONLY);
}

int qp_exe_guarded(void)
{
	static int guarded = -1; /* /proc/self/exe changes only with an exec */

	if (guarded < 0)
		guarded = guarded_now();
	return guarded;
}

int qp_exe_guard_reexec(char **argv, const char *exe, const char *spare_dir, qp_error **err)
{
	const char *mode = getenv("QPOD_EXE_GUARD");
	bool reexeced = getenv(REEXECED_ENV) != NULL;
	_cleanup_close_ int fd = -1;
	qp_error *why = NULL;

	unsetenv(REEXECED_ENV); /* not for qpod's own children */
	if (qp_exe_guarded())
		return 0;
	if (reexeced)
		return qp_fail(err, 0, "exe guard: re-executed (" REEXECED_ENV " is set), but /proc/self/exe "
				       "is not a guarded view");
	if (mode && *mode && strcmp(mode, "auto") && strcmp(mode, "memfd")) {
		char shown[QP_SHOWN_MAX];
		return qp_error_set(err, QP_E_INVALID, 0, "QPOD_EXE_GUARD must be auto or memfd, not \"%s\"",
				    qp_shown(mode, shown));
	}
	if (mode && !strcmp(mode, "memfd"))
		qp_debug("exe guard: a sealed memfd copy (QPOD_EXE_GUARD=memfd)");
	else if (!exe)
		qp_debug("exe guard: a sealed memfd copy (no path of /proc/self/exe)");
	else if ((fd = qp_exe_overlay_open(exe, spare_dir, &why)) >= 0)
		qp_debug("exe guard: a read-only overlayfs view of %s", exe);
	else
		qp_debug("exe guard: a sealed memfd copy (no overlayfs view: %s)", why ? why->msg : "?");
	qp_error_free(&why);
	if (fd < 0 && (fd = qp_exe_memfd_copy(err)) < 0)
		return qp_error_prefix(err, "exe guard");
	if (setenv(REEXECED_ENV, "1", 1) < 0)
		return qp_fail(err, errno, "exe guard: setenv");
	execveat(fd, "", argv, environ, AT_EMPTY_PATH);
	return qp_fail(err, errno, "exe guard: re-execute qpod");
}
