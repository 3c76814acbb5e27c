/* runtime/util/exe_overlay.c — the first guard of exe_guard.h: qpod's binary
 * seen through a private, read-only overlayfs (made with the new mount API,
 * never attached to any mount namespace). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/exe_guard.h"

/* Overlayfs without an upper layer is read-only at the superblock (no
 * remount or clone of the mount can make it writable), but it needs two
 * lower layers: the binary's directory on top (so nothing below can hide
 * the binary), and an empty one.  A kernel that takes layers as fds
 * ("lowerdir+", Linux 6.13+) gets a detached empty tmpfs; an older one
 * takes paths only, and gets the spare directory.  The tmpfs's fd is kept
 * open until the overlay is created: closing a detached mount unmounts it. */
static int layers_by_fd(int ctx, int dirfd, int *empty)
{
	_cleanup_close_ int tmp = -1;

	/* the binary's directory first: a kernel without "lowerdir+" refuses
	 * it before any tmpfs is made for nothing */
	if (fsconfig(ctx, FSCONFIG_SET_FD, "lowerdir+", NULL, dirfd) < 0)
		return -1;
	if ((tmp = fsopen("tmpfs", FSOPEN_CLOEXEC)) < 0 || fsconfig(tmp, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0 ||
	    (*empty = fsmount(tmp, FSMOUNT_CLOEXEC, MOUNT_ATTR_RDONLY)) < 0)
		return -1;
	return fsconfig(ctx, FSCONFIG_SET_FD, "lowerdir+", NULL, *empty);
}

/* s with overlayfs's option separators (',', ':') and '\' escaped */
static char *escaped(const char *s)
{
	char *out = malloc(2 * strlen(s) + 1), *o = out;

	for (; out && *s; s++) {
		if (*s == '\\' || *s == ':' || *s == ',')
			*o++ = '\\';
		*o++ = *s;
	}
	if (out)
		*o = '\0';
	return out;
}

static int layers_by_path(int ctx, const char *dir, const char *spare)
{
	_cleanup_free_ char *d = escaped(dir), *s = escaped(spare), *both = NULL;

	if (!d || !s || asprintf(&both, "%s:%s", d, s) < 0) {
		errno = ENOMEM;
		return -1;
	}
	return fsconfig(ctx, FSCONFIG_SET_STRING, "lowerdir", both, 0);
}

/* A fresh overlay context with the layers set, or -1 (errno set); *empty
 * is the empty layer's fd, if it has one, to close after the creation. */
static int overlay_context(int dirfd, const char *dir, const char *spare, int *empty)
{
	_cleanup_close_ int ctx = fsopen("overlay", FSOPEN_CLOEXEC);

	if (ctx < 0)
		return -1;
	if (layers_by_fd(ctx, dirfd, empty) == 0)
		return steal_fd(&ctx);
	/* a context that refused a layer may hold the other: start again */
	close(ctx);
	if (*empty >= 0)
		close(*empty);
	*empty = -1;
	if ((ctx = fsopen("overlay", FSOPEN_CLOEXEC)) < 0 || layers_by_path(ctx, dir, spare) < 0)
		return -1;
	return steal_fd(&ctx);
}

int qp_exe_overlay_open(const char *exe, const char *spare_dir, qp_error **err)
{
	_cleanup_free_ char *dir = strdup(exe);
	_cleanup_close_ int dirfd = -1, empty = -1, ctx = -1, mnt = -1, fd = -1, self = -1;
	struct stat want, got;
	char *slash;
	const char *name;

	if (!dir)
		return qp_fail(err, ENOMEM, "overlay view of \"%s\"", exe);
	slash = strrchr(dir, '/');
	/* a binary in / itself: its directory would be above the spare one */
	if (!slash || slash == dir || !slash[1])
		return qp_fail(err, EINVAL, "overlay view of \"%s\": not a file below /", exe);
	*slash = '\0';
	name = slash + 1;
	dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return qp_fail(err, errno, "open \"%s\"", dir);
	if ((ctx = overlay_context(dirfd, dir, spare_dir, &empty)) < 0)
		return qp_fail(err, errno, "overlayfs over \"%s\"", dir);
	/* inode numbers across layers: not wanted, and its warnings fill dmesg */
	(void)fsconfig(ctx, FSCONFIG_SET_STRING, "xino", "off", 0);
	if (fsconfig(ctx, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		return qp_fail(err, errno, "create an overlayfs over \"%s\"", dir);
	mnt = fsmount(ctx, FSMOUNT_CLOEXEC, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOSUID);
	if (mnt < 0)
		return qp_fail(err, errno, "fsmount the overlayfs over \"%s\"", dir);
	fd = openat(mnt, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return qp_fail(err, errno, "open \"%s\" through the overlayfs", name);
	/* the file found there must be the one running (a rebuilt or replaced
	 * binary at that path is not) */
	self = open("/proc/self/exe", O_PATH | O_CLOEXEC);
	if (self < 0 || fstat(self, &want) < 0 || fstat(fd, &got) < 0)
		return qp_fail(err, errno, "stat \"%s\"", exe);
	if (got.st_ino != want.st_ino || got.st_size != want.st_size || !S_ISREG(got.st_mode) ||
	    got.st_mtim.tv_sec != want.st_mtim.tv_sec || got.st_mtim.tv_nsec != want.st_mtim.tv_nsec)
		return qp_fail(err, ESTALE, "\"%s\" is no longer the running binary", exe);
	return steal_fd(&fd);
}
