/* runtime/util/safepath.c — see safepath.h. */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/safepath.h"

static int openat2_in_root(int rootfd, const char *path, int flags)
{
	struct open_how how = {
		.flags = (unsigned long long)(flags | O_CLOEXEC),
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	int fd;

	do
		fd = (int)syscall(SYS_openat2, rootfd, path, &how, sizeof(how));
	while (fd < 0 && errno == EAGAIN); /* a concurrent rename: retry */
	return fd;
}

const char *qp_fd_path(int fd, char *buf, size_t len)
{
	snprintf(buf, len, "/proc/self/fd/%d", fd);
	return buf;
}

int qp_fd_realpath(int fd, char *buf, size_t size, const char *what, qp_error **err)
{
	char link[64];
	ssize_t n = readlink(qp_fd_path(fd, link, sizeof(link)), buf, size - 1);

	if (n <= 0 || (size_t)n >= size - 1)
		return qp_fail(err, n < 0 ? errno : ENAMETOOLONG, "the path of %s", what);
	buf[n] = '\0';
	return 0;
}

/* Create the leaf `name` under dirfd (a resolved O_PATH dir). */
static int make_leaf(int dirfd, const char *name, bool dir)
{
	if (dir)
		return mkdirat(dirfd, name, 0755) < 0 && errno != EEXIST ? -1 : 0;
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return errno == EEXIST ? 0 : -1;
	close(fd);
	return 0;
}

int qp_open_in_root(int rootfd, const char *path, enum qp_mkpath mk, int extra_flags,
		    qp_error **err)
{
	_cleanup_free_ char *copy = NULL;
	char *p;
	int fd;

	while (*path == '/')
		path++;
	if (!*path)
		path = ".";
	fd = openat2_in_root(rootfd, path, O_PATH | extra_flags);
	if (fd >= 0 || errno != ENOENT || mk == QP_PATH_EXISTING) {
		if (fd < 0)
			return qp_fail(err, errno, "resolve \"/%s\" in rootfs", path);
		return fd;
	}

	/* Create what is missing, one component at a time, each lookup
	 * confined to the root again: a component may itself be a symlink. */
	copy = strdup(path);
	if (!copy)
		return qp_fail(err, ENOMEM, "resolve \"/%s\"", path);
	for (p = copy;; p++) {
		bool last = (*p == '\0');
		if (*p != '/' && !last)
			continue;
		*p = '\0';
		_cleanup_close_ int cur = openat2_in_root(rootfd, copy, O_PATH);
		if (cur < 0) {
			if (errno != ENOENT)
				return qp_fail(err, errno, "resolve \"/%s\" in rootfs", copy);
			char *slash = strrchr(copy, '/');
			_cleanup_close_ int parent = -1;
			const char *leaf = copy;
			if (slash) {
				*slash = '\0';
				parent = openat2_in_root(rootfd, copy, O_PATH | O_DIRECTORY);
				*slash = '/';
				leaf = slash + 1;
			} else {
				parent = openat2_in_root(rootfd, ".", O_PATH | O_DIRECTORY);
			}
			if (parent < 0)
				return qp_fail(err, errno, "resolve parent of \"/%s\" in rootfs", copy);
			if (make_leaf(parent, leaf, !last || mk == QP_PATH_MKDIR) < 0)
				return qp_fail(err, errno, "create \"/%s\" in rootfs", copy);
		}
		if (last)
			break;
		*p = '/';
	}
	fd = openat2_in_root(rootfd, path, O_PATH | extra_flags);
	if (fd < 0)
		return qp_fail(err, errno, "resolve \"/%s\" in rootfs", path);
	return fd;
}
