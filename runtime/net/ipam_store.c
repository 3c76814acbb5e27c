/* runtime/net/ipam_store.c — the file half of IPAM (see ipam.h):
 * ROOT/.net/lock (flock, held for a whole network operation) and
 * ROOT/.net/ipam (the lease table, replaced atomically by rename). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "net/ipam.h"
#include "util/cleanup.h"

#define NET_DIR ".net"
#define LOCK_FILE "lock"
#define IPAM_FILE "ipam"
#define IPAM_TMP "ipam.tmp"

static int open_dir(int at, const char *name, const char *shown, qp_error **err)
{
	int fd;

	if (mkdirat(at, name, 0700) < 0 && errno != EEXIST)
		return qp_fail(err, errno, "mkdir \"%s\"", shown);
	/* O_NOFOLLOW: a symlink planted at ROOT/.net must not redirect us */
	fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return qp_fail(err, errno, "open \"%s\"", shown);
	return fd;
}

int qp_ipam_lock(const struct qp_net_cfg *cfg, int *dirfd, int *lockfd, qp_error **err)
{
	_cleanup_close_ int rootfd = -1, netfd = -1, lfd = -1;

	rootfd = open_dir(AT_FDCWD, cfg->root, cfg->root, err);
	if (rootfd < 0)
		return -1;
	netfd = open_dir(rootfd, NET_DIR, NET_DIR, err);
	if (netfd < 0)
		return qp_error_prefix(err, "state root \"%s\"", cfg->root);
	lfd = openat(netfd, LOCK_FILE, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (lfd < 0)
		return qp_fail(err, errno, "open \"%s/" NET_DIR "/" LOCK_FILE "\"", cfg->root);
	while (flock(lfd, LOCK_EX) < 0) {
		if (errno != EINTR)
			return qp_fail(err, errno, "lock \"%s/" NET_DIR "/" LOCK_FILE "\"", cfg->root);
	}
	*dirfd = steal_fd(&netfd);
	*lockfd = steal_fd(&lfd);
	return 0;
}

int qp_ipam_load(int dirfd, struct qp_ipam_table *t, qp_error **err)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *buf = NULL;
	struct stat st;
	size_t got = 0;

	t->v = NULL;
	t->n = t->cap = 0;
	fd = openat(dirfd, IPAM_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		return qp_fail(err, errno, "open IPAM file");
	}
	if (fstat(fd, &st) < 0)
		return qp_fail(err, errno, "stat IPAM file");
	if (!S_ISREG(st.st_mode))
		return qp_error_set(err, QP_E_INVALID, 0, "IPAM file is not a regular file");
	if (st.st_size > (off_t)QP_IPAM_FILE_MAX)
		return qp_error_set(err, QP_E_INVALID, 0, "IPAM file larger than %u bytes",
				    QP_IPAM_FILE_MAX);
	buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		return qp_fail(err, ENOMEM, "read IPAM file");
	while (got < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return qp_fail(err, errno, "read IPAM file");
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return qp_ipam_parse(buf, got, t, err);
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int qp_ipam_save(int dirfd, const struct qp_ipam_table *t, qp_error **err)
{
	_cleanup_free_ char *buf = NULL;
	_cleanup_close_ int fd = -1;
	size_t len;

	if (qp_ipam_format(t, &buf, &len, err) < 0)
		return -1;
	/* Under the lock nobody else writes IPAM_TMP; O_TRUNC drops a leftover
	 * from a crashed writer. */
	fd = openat(dirfd, IPAM_TMP, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return qp_fail(err, errno, "create IPAM file");
	if (write_all(fd, buf, len) < 0 || fsync(fd) < 0) {
		int e = errno;
		unlinkat(dirfd, IPAM_TMP, 0);
		return qp_fail(err, e, "write IPAM file");
	}
	if (renameat(dirfd, IPAM_TMP, dirfd, IPAM_FILE) < 0) {
		int e = errno;
		unlinkat(dirfd, IPAM_TMP, 0);
		return qp_fail(err, e, "replace IPAM file");
	}
	return 0;
}
