/* runtime/util/io.c — see io.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/io.h"

static int put_all(int fd, const void *buf, size_t len, bool sock)
{
	const char *p = buf;

	while (len) {
		ssize_t n = sock ? send(fd, p, len, MSG_NOSIGNAL) : write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int qp_write_all(int fd, const void *buf, size_t len)
{
	return put_all(fd, buf, len, false);
}

int qp_send_all(int sock, const void *buf, size_t len)
{
	return put_all(sock, buf, len, true);
}

int qp_read_all(int fd, size_t max, char **out, size_t *len)
{
	char *buf = malloc(max + 1);
	size_t n = 0;

	if (!buf)
		return -1;
	for (;;) {
		ssize_t r = read(fd, buf + n, max + 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0 || (n += (size_t)r) > max) {
			if (r < 0 || n > max) {
				int e = r < 0 ? errno : EFBIG;
				free(buf);
				errno = e;
				return -1;
			}
			break;
		}
	}
	buf[n] = '\0';
	*out = buf;
	if (len)
		*len = n;
	return 0;
}

void qp_close_fds_except(const int *keep, size_t n)
{
	unsigned int from = 3;

	for (size_t i = 0; i < n; i++) {
		if ((unsigned int)keep[i] > from)
			syscall(SYS_close_range, from, (unsigned int)keep[i] - 1, 0);
		if ((unsigned int)keep[i] + 1 > from)
			from = (unsigned int)keep[i] + 1;
	}
	syscall(SYS_close_range, from, ~0U, 0);
}

bool qp_fd_relayable(int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return false;
	return !(S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3));
}
