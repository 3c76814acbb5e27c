/* runtime/util/safepath.h — resolve paths inside a rootfs without ever
 * leaving it (CVE-2021-30465 class): every lookup is openat2() with
 * RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS, so a symlink "etc -> /" in the
 * rootfs resolves to the rootfs itself, and ".." stops at its top.  The
 * result is an O_PATH fd; mounts then target "/proc/self/fd/N", the resolved
 * inode, so nothing can swap a path between check and use. */
#ifndef QPOD_SAFEPATH_H
#define QPOD_SAFEPATH_H

#include <stdbool.h>
#include <sys/types.h>

#include "util/error.h"

enum qp_mkpath {
	QP_PATH_EXISTING = 0,  /* must exist */
	QP_PATH_MKDIR,         /* create missing directories, the leaf too */
	QP_PATH_MKFILE,        /* create missing parent dirs and an empty leaf file */
};

/* Open PATH (absolute or relative, interpreted inside rootfd) as O_PATH
 * (| extra_flags, e.g. O_DIRECTORY).  Returns the fd or -1. */
int qp_open_in_root(int rootfd, const char *path, enum qp_mkpath mk, int extra_flags,
		    qp_error **err);
/* "/proc/self/fd/N" for fd, in buf (at least 32 bytes). */
const char *qp_fd_path(int fd, char *buf, size_t len);
/* The absolute path fd names (what that link reads) into buf; -1 with an
 * error naming `what` when it cannot be read or does not fit. */
int qp_fd_realpath(int fd, char *buf, size_t size, const char *what, qp_error **err);

#endif
