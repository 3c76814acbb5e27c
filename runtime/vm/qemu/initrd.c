/* runtime/vm/qemu/initrd.c — the microVM initramfs: a cpio "newc" archive with
 * guest-init as /init, written into the pod's state dir, optionally with
 * extra host directory trees (kernel modules for a modular guest kernel, a
 * small rootfs) copied in first.  One entry writer for every kind of file. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/io.h"
#include "vm/qemu/qemu.h"
#include "vm/vm.h"

#define FILE_MAX (64u << 20)   /* /init and each tree file */
#define TREE_ENTRIES_MAX 65536 /* entries of all trees together */
#define TREE_DEPTH_MAX 32
#define ARCHIVE_MAX (1u << 30) /* the whole initramfs */

struct cpio_out {
	int fd;
	uint32_t ino, entries;
	size_t off; /* bytes written so far, for the 4-byte padding */
};

static int out_write(struct cpio_out *o, const void *buf, size_t len)
{
	if (qp_write_all(o->fd, buf, len) < 0)
		return -1;
	o->off += len;
	return 0;
}

static int out_pad4(struct cpio_out *o)
{
	static const char zero[4];
	size_t pad = (4 - o->off % 4) % 4;
	return pad ? out_write(o, zero, pad) : 0;
}

/* One newc header + name (padded); the caller writes `size` data bytes and pads. */
static int out_header(struct cpio_out *o, const char *name, uint32_t mode, uint32_t size,
		      uint32_t rmaj, uint32_t rmin)
{
	char hdr[111];
	size_t namesize = strlen(name) + 1;

	/* magic, ino, mode, uid, gid, nlink, mtime, filesize, devmajor,
	 * devminor, rdevmajor, rdevminor, namesize, check */
	snprintf(hdr, sizeof(hdr), "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
		 ++o->ino, mode, 0u, 0u, S_ISDIR(mode) ? 2u : 1u, 0u, size, 0u, 0u, rmaj, rmin,
		 (uint32_t)namesize, 0u);
	if (out_write(o, hdr, 110) < 0 || out_write(o, name, namesize) < 0)
		return -1;
	return out_pad4(o);
}

/* One regular file: header, then `size` bytes copied from `in`, padded. */
static int out_file(struct cpio_out *o, const char *name, uint32_t mode, int in, uint32_t size)
{
	char buf[65536];

	if (size > FILE_MAX || o->off + size > ARCHIVE_MAX)
		return errno = EFBIG, -1;
	if (out_header(o, name, S_IFREG | (mode & 07777), size, 0, 0) < 0)
		return -1;
	for (uint32_t left = size; left;) {
		ssize_t n = read(in, buf, left < sizeof(buf) ? left : sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = EIO; /* the file shrank under us */
			return -1;
		}
		if (out_write(o, buf, (size_t)n) < 0)
			return -1;
		left -= (uint32_t)n;
	}
	return out_pad4(o);
}

/* The directories of a relative path, each once ("lib", "lib/modules"). */
static int out_parents(struct cpio_out *o, const char *path)
{
	char dir[PATH_MAX];

	for (const char *p = path; (p = strchr(p, '/')); p++) {
		snprintf(dir, sizeof(dir), "%.*s", (int)(p - path), path);
		if (out_header(o, dir, S_IFDIR | 0755, 0, 0, 0) < 0)
			return -1;
	}
	return out_header(o, path, S_IFDIR | 0755, 0, 0, 0);
}

/* The entries of the open directory dfd, as prefix/NAME (prefix "" = the
 * archive root): directories (recursively), regular files and symlinks;
 * device nodes, sockets and fifos are skipped.  Links are not followed.
 * On failure errno is set and `bad` names the entry. */
static int out_tree(struct cpio_out *o, int dfd, const char *prefix, int depth, char *bad,
		    size_t badsize)
{
	_cleanup_closedir_ DIR *d = fdopendir(dfd);
	struct dirent *de;

	if (!d) {
		close(dfd);
		return -1;
	}
	while ((errno = 0, de = readdir(d))) {
		char path[PATH_MAX];
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(bad, badsize, "%s%s%s", prefix, *prefix ? "/" : "", de->d_name);
		if ((size_t)snprintf(path, sizeof(path), "%s", bad) >= sizeof(path) - 1)
			return errno = ENAMETOOLONG, -1;
		if (++o->entries > TREE_ENTRIES_MAX)
			return errno = EFBIG, -1;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			return -1;
		if (S_ISDIR(st.st_mode)) {
			int sub;
			if (depth >= TREE_DEPTH_MAX)
				return errno = ELOOP, -1;
			if (out_header(o, path, S_IFDIR | (st.st_mode & 07777), 0, 0, 0) < 0)
				return -1;
			sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub < 0 || out_tree(o, sub, path, depth + 1, bad, badsize) < 0)
				return -1;
		} else if (S_ISREG(st.st_mode)) {
			_cleanup_close_ int in = openat(dirfd(d), de->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
			if (in < 0 || fstat(in, &st) < 0)
				return -1;
			if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size > FILE_MAX)
				return errno = EFBIG, -1;
			if (out_file(o, path, st.st_mode, in, (uint32_t)st.st_size) < 0)
				return -1;
		} else if (S_ISLNK(st.st_mode)) {
			char target[PATH_MAX];
			ssize_t n = readlinkat(dirfd(d), de->d_name, target, sizeof(target));
			if (n < 0)
				return -1;
			if ((size_t)n >= sizeof(target))
				return errno = ENAMETOOLONG, -1;
			if (out_header(o, path, S_IFLNK | 0777, (uint32_t)n, 0, 0) < 0 ||
			    out_write(o, target, (size_t)n) < 0 || out_pad4(o) < 0)
				return -1;
		}
	}
	return errno ? -1 : 0;
}

int vm_write_initrd_trees(int dirfd, const char *name, const char *init_path,
			  const struct vm_initrd_tree *trees, size_t ntrees, qp_error **err)
{
	static const char *const dirs[] = { "dev", "proc", "sys", "newroot", "tmp" };
	_cleanup_close_ int in = -1;
	struct cpio_out o = { .fd = -1 };
	struct stat st;
	char tmp[256], bad[PATH_MAX] = "";
	const char *what = NULL;

	for (size_t i = 0; i < ntrees; i++) {
		const char *dst = trees[i].dst;
		if (*dst == '/' || strstr(dst, "..") || strstr(dst, "//") ||
		    (*dst && dst[strlen(dst) - 1] == '/'))
			return qp_error_set(err, QP_E_INVALID, 0,
					    "initramfs path \"%s\": must be relative, without \"..\"", dst);
	}
	in = open(init_path, O_RDONLY | O_CLOEXEC);
	if (in < 0 || fstat(in, &st) < 0)
		return qp_fail(err, errno, "open guest init \"%s\"", init_path);
	if (!S_ISREG(st.st_mode) || st.st_size <= 0 || (uint64_t)st.st_size > FILE_MAX)
		return qp_error_set(err, QP_E_INVALID, 0, "guest init \"%s\": not a regular file of 1 B..64 MiB",
				    init_path);
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", name) >= sizeof(tmp))
		return qp_error_set(err, QP_E_INVALID, 0, "initrd name too long");
	o.fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (o.fd < 0)
		return qp_fail(err, errno, "create \"%s\"", tmp);

	/* the trees first: the kernel unpacks in order, so /init, /dev/console
	 * and the mount points below win over anything a tree holds */
	for (size_t i = 0; i < ntrees; i++) {
		int dfd = open(trees[i].src, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		what = trees[i].src;
		if (dfd < 0 || (*trees[i].dst && out_parents(&o, trees[i].dst) < 0) ||
		    out_tree(&o, dfd, trees[i].dst, 0, bad, sizeof(bad)) < 0)
			goto fail;
		what = NULL;
		bad[0] = '\0';
	}
	for (size_t i = 0; i < QP_ARRAY_SIZE(dirs); i++)
		if (out_header(&o, dirs[i], S_IFDIR | 0755, 0, 0, 0) < 0)
			goto fail;
	if (out_header(&o, "dev/console", S_IFCHR | 0600, 0, 5, 1) < 0 ||
	    out_file(&o, "init", 0755, in, (uint32_t)st.st_size) < 0 ||
	    out_header(&o, "TRAILER!!!", 0, 0, 0, 0) < 0)
		goto fail;
	if (close(o.fd) < 0) {
		o.fd = -1;
		goto fail;
	}
	o.fd = -1;
	if (renameat(dirfd, tmp, dirfd, name) < 0)
		goto fail;
	return 0;
fail:;
	int e = errno;
	if (o.fd >= 0)
		close(o.fd);
	unlinkat(dirfd, tmp, 0);
	if (what)
		return qp_fail(err, e, "write the initramfs \"%s\": copy \"%s\"%s%s%s", name, what,
			       bad[0] ? " (at \"" : "", bad, bad[0] ? "\")" : "");
	return qp_fail(err, e, "write the initramfs \"%s\"", name);
}

int vm_write_initrd(int dirfd, const char *name, const char *init_path, qp_error **err)
{
	return vm_write_initrd_trees(dirfd, name, init_path, NULL, 0, err);
}
