/* runtime/vm/initrd.c — the microVM initramfs: a cpio "newc" archive with
 * guest-init as /init, written into the pod's state dir. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "vm/vm.h"

#define INIT_MAX (64u << 20)

struct cpio_out {
	int fd;
	uint32_t ino;
	size_t off; /* bytes written so far, for the 4-byte padding */
};

static int out_write(struct cpio_out *o, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(o->fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
		o->off += (size_t)n;
	}
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

int vm_write_initrd(int dirfd, const char *name, const char *init_path, qp_error **err)
{
	static const char *const dirs[] = { "dev", "proc", "sys", "newroot", "tmp" };
	_cleanup_close_ int in = -1;
	struct cpio_out o = { .fd = -1 };
	struct stat st;
	char tmp[256], buf[65536];
	uint32_t left;

	in = open(init_path, O_RDONLY | O_CLOEXEC);
	if (in < 0 || fstat(in, &st) < 0)
		return qp_fail(err, errno, "open guest init \"%s\"", init_path);
	if (!S_ISREG(st.st_mode) || st.st_size <= 0 || (uint64_t)st.st_size > INIT_MAX)
		return qp_error_set(err, QP_E_INVALID, 0, "guest init \"%s\": not a regular file of 1 B..64 MiB",
				    init_path);
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", name) >= sizeof(tmp))
		return qp_error_set(err, QP_E_INVALID, 0, "initrd name too long");
	o.fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (o.fd < 0)
		return qp_fail(err, errno, "create \"%s\"", tmp);

	for (size_t i = 0; i < QP_ARRAY_SIZE(dirs); i++)
		if (out_header(&o, dirs[i], S_IFDIR | 0755, 0, 0, 0) < 0)
			goto fail;
	if (out_header(&o, "dev/console", S_IFCHR | 0600, 0, 5, 1) < 0 ||
	    out_header(&o, "init", S_IFREG | 0755, (uint32_t)st.st_size, 0, 0) < 0)
		goto fail;
	for (left = (uint32_t)st.st_size; left;) {
		ssize_t n = read(in, buf, left < sizeof(buf) ? left : sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = EIO; /* the file shrank under us */
			goto fail;
		}
		if (out_write(&o, buf, (size_t)n) < 0)
			goto fail;
		left -= (uint32_t)n;
	}
	if (out_pad4(&o) < 0 || out_header(&o, "TRAILER!!!", 0, 0, 0, 0) < 0)
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
	return qp_fail(err, e, "write the initramfs \"%s\"", name);
}
