/* runtime/container/copyup.c — the "tmpcopyup" mount option (runc's and
 * crun's extension, which podman sends for tmpfs mounts): after a tmpfs is
 * mounted on a directory of the image, copy what that directory held into
 * it, so the tmpfs starts with the image's files.
 *
 * The source is read through an fd of the covered directory, opened before
 * the mount: the covered inode stays reachable through it, and every lookup
 * below it is relative (O_NOFOLLOW), so a symlink in the image cannot lead
 * the copy outside the rootfs. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include "container/mounts.h"
#include "util/cleanup.h"
#include "util/safepath.h"

#define COPYUP_MAX_DEPTH 32

static int copy_file(int sfd, int dfd, const char *name, const struct stat *st)
{
	_cleanup_close_ int in = openat(sfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_close_ int out = -1;

	if (in < 0)
		return -1;
	out = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, st->st_mode & 07777);
	if (out < 0)
		return -1;
	for (off_t left = st->st_size; left > 0;) {
		ssize_t n = sendfile(out, in, NULL, left > (1 << 20) ? (1 << 20) : (size_t)left);
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		left -= n;
	}
	return 0;
}

static int copy_tree(int sfd, int dfd, int depth, const char **failed)
{
	_cleanup_closedir_ DIR *d = NULL;
	int fd = openat(sfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct dirent *de;

	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (depth > COPYUP_MAX_DEPTH) {
		errno = ELOOP;
		return -1;
	}
	while ((errno = 0, de = readdir(d))) {
		const char *n = de->d_name;
		struct stat st;
		int r = 0;

		if (!strcmp(n, ".") || !strcmp(n, ".."))
			continue;
		*failed = n;
		if (fstatat(sfd, n, &st, AT_SYMLINK_NOFOLLOW) < 0)
			return -1;
		if (S_ISDIR(st.st_mode)) {
			if (mkdirat(dfd, n, st.st_mode & 07777) < 0)
				return -1;
			_cleanup_close_ int s2 = openat(sfd, n, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			_cleanup_close_ int d2 = openat(dfd, n, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (s2 < 0 || d2 < 0 || copy_tree(s2, d2, depth + 1, failed) < 0)
				return -1;
		} else if (S_ISREG(st.st_mode)) {
			r = copy_file(sfd, dfd, n, &st);
		} else if (S_ISLNK(st.st_mode)) {
			char target[4096];
			ssize_t len = readlinkat(sfd, n, target, sizeof(target) - 1);
			if (len < 0)
				return -1;
			target[len] = '\0';
			r = symlinkat(target, dfd, n);
		} else {
			r = mknodat(dfd, n, st.st_mode, st.st_rdev);
		}
		if (r < 0 || fchownat(dfd, n, st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW) < 0)
			return -1;
		if (!S_ISLNK(st.st_mode) && fchmodat(dfd, n, st.st_mode & 07777, 0) < 0)
			return -1;
	}
	return errno ? -1 : 0;
}

int qp_mount_copyup(int covered_fd, const char *target, const char *what, qp_error **err)
{
	_cleanup_close_ int dst = open(target, O_PATH | O_DIRECTORY | O_CLOEXEC);
	_cleanup_close_ int src = -1;
	const char *failed = "";
	char path[64];

	/* covered_fd is O_PATH; reopen it for reading its entries */
	src = open(qp_fd_path(covered_fd, path, sizeof(path)), O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dst < 0 || src < 0)
		return qp_fail(err, errno, "tmpcopyup \"%s\"", what);
	if (copy_tree(src, dst, 0, &failed) < 0)
		return qp_fail(err, errno, "tmpcopyup \"%s\": copy \"%s\"", what, failed);
	return 0;
}
