/* runtime/util/io.c — see io.h. */
#include <errno.h>
#include <unistd.h>

#include "util/io.h"

int qp_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);
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
