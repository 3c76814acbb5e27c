/* runtime/container/sync.c — see sync.h. */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "container/sync.h"
#include "util/fdpass.h"

static int send_msg(int fd, const struct qp_sync_msg *m, int passfd)
{
	return qp_send_with_fd(fd, m, sizeof(*m), passfd) == (ssize_t)sizeof(*m) ? 0 : -1;
}

/* qp_sync_write's one write must be atomic on a FIFO */
_Static_assert(sizeof(struct qp_sync_msg) <= PIPE_BUF, "a sync message must fit PIPE_BUF");

static void fill_msg(struct qp_sync_msg *m, uint32_t type, const qp_error *e)
{
	*m = (struct qp_sync_msg){ .type = type };
	if (e) {
		m->errnum = e->errnum;
		m->code = e->code;
		if (e->msg)
			strncpy(m->msg, e->msg, sizeof(m->msg) - 1);
	}
}

int qp_sync_send(int fd, uint32_t type, const qp_error *e)
{
	struct qp_sync_msg m;

	fill_msg(&m, type, e);
	return send_msg(fd, &m, -1);
}

int qp_sync_write(int fd, uint32_t type, const qp_error *e)
{
	struct qp_sync_msg m;

	fill_msg(&m, type, e);
	return write(fd, &m, sizeof(m)) == (ssize_t)sizeof(m) ? 0 : -1;
}

/* Poll fd for input: 0 when readable (or hung up), -1 with errno. */
static int wait_readable(int fd, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	for (;;) {
		int r = poll(&p, 1, timeout_ms);
		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0)
			errno = ETIMEDOUT;
		return r > 0 ? 0 : -1;
	}
}

int qp_sync_read(int fd, struct qp_sync_msg *m, int timeout_ms)
{
	ssize_t n;

	if (wait_readable(fd, timeout_ms) < 0)
		return -1;
	do
		n = read(fd, m, sizeof(*m));
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return n < 0 ? -1 : 0;
	if (n != (ssize_t)sizeof(*m)) {
		errno = EPROTO;
		return -1;
	}
	m->msg[sizeof(m->msg) - 1] = '\0';
	return 1;
}

int qp_sync_send_fd(int fd, uint32_t type, int passfd)
{
	struct qp_sync_msg m = { .type = type };
	return send_msg(fd, &m, passfd);
}

int qp_sync_recv_fd(int fd, struct qp_sync_msg *m, int timeout_ms, int *passfd)
{
	ssize_t n;

	if (passfd)
		*passfd = -1;
	if (wait_readable(fd, timeout_ms) < 0)
		return -1;
	n = qp_recv_with_fd(fd, m, sizeof(*m), passfd);
	if (n == 0)
		return 0;
	if (n != (ssize_t)sizeof(*m)) {
		if (n >= 0)
			errno = EPROTO;
		return -1;
	}
	m->msg[sizeof(m->msg) - 1] = '\0';
	return 1;
}

int qp_sync_recv(int fd, struct qp_sync_msg *m, int timeout_ms)
{
	return qp_sync_recv_fd(fd, m, timeout_ms, NULL);
}
