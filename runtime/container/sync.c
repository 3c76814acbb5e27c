/* runtime/container/sync.c — see sync.h. */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>

#include "container/sync.h"

int qp_sync_send(int fd, uint32_t type, const qp_error *e)
{
	struct qp_sync_msg m = { .type = type };

	if (e) {
		m.errnum = e->errnum;
		m.code = e->code;
		if (e->msg)
			strncpy(m.msg, e->msg, sizeof(m.msg) - 1);
	}
	/* MSG_NOSIGNAL: a parent that went away must not turn into SIGPIPE */
	return send(fd, &m, sizeof(m), MSG_NOSIGNAL) == (ssize_t)sizeof(m) ? 0 : -1;
}

int qp_sync_recv(int fd, struct qp_sync_msg *m, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	ssize_t n;

	for (;;) {
		int r = poll(&p, 1, timeout_ms);
		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		if (r < 0)
			return -1;
		break;
	}
	do
		n = recv(fd, m, sizeof(*m), 0);
	while (n < 0 && errno == EINTR);
	if (n == 0)
		return 0;
	if (n != (ssize_t)sizeof(*m)) {
		errno = EPROTO;
		return -1;
	}
	m->msg[sizeof(m->msg) - 1] = '\0';
	return 1;
}
