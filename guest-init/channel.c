/* guest-init/channel.c — the channel (channel.h): incremental receive
 * (qp_chan_fill / qp_chan_next), receive and send with deadlines, on the
 * frames of codec.c.  Never raises SIGPIPE, never waits past a deadline. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "guest-init/channel.h"

void qp_chan_init(struct qp_chan *c, int fd)
{
	c->fd = fd;
	c->broken = 0;
	c->not_socket = 0;
	c->start = c->have = 0;
}

struct qp_chan *qp_chan_new(int fd)
{
	struct qp_chan *c = malloc(sizeof(*c));
	if (c)
		qp_chan_init(c, fd);
	return c;
}

void qp_chan_free(struct qp_chan *c)
{
	free(c);
}

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* the stream position is lost: every later call fails */
static int broken(struct qp_chan *c)
{
	c->broken = 1;
	return -1;
}

ssize_t qp_chan_fill(struct qp_chan *c, qp_error **err)
{
	ssize_t n;

	if (c->broken)
		return qp_error_set(err, QP_E_GUEST, 0, "control channel: unusable after an earlier error");
	if (c->start > 0) { /* compact only here, so handing out messages stays linear */
		memmove(c->in, c->in + c->start, c->have - c->start);
		c->have -= c->start;
		c->start = 0;
	}
	if (c->have == sizeof(c->in))
		return qp_error_set(err, QP_E_INVALID, 0, "control channel: receive buffer full");
	n = read(c->fd, c->in + c->have, sizeof(c->in) - c->have);
	if (n < 0) {
		if (errno == EAGAIN || errno == EINTR)
			return 0;
		qp_fail(err, errno, "control channel: read");
		return broken(c);
	}
	if (n == 0) {
		qp_error_set(err, QP_E_GUEST, 0, "control channel: peer closed the connection%s",
			     c->have ? " in the middle of a message" : "");
		return broken(c);
	}
	c->have += (size_t)n;
	return n;
}

int qp_chan_next(struct qp_chan *c, struct qp_msg *m, qp_error **err)
{
	struct qp_msg_hdr h;
	size_t avail = c->have - c->start, frame;

	if (c->broken)
		return qp_error_set(err, QP_E_GUEST, 0, "control channel: unusable after an earlier error");
	if (avail < QP_PROTO_HDR_SIZE)
		return 0;
	if (qp_msg_decode_header(c->in + c->start, &h, err) < 0)
		return broken(c);
	frame = QP_PROTO_HDR_SIZE + (size_t)h.length;
	if (avail < frame)
		return 0;
	if (qp_msg_decode(c->in + c->start, frame, m, &c->store, err) < 0)
		return broken(c);
	c->start += frame;
	if (c->start == c->have)
		c->start = c->have = 0;
	return 1;
}

int qp_chan_recv(struct qp_chan *c, struct qp_msg *m, int timeout_ms, qp_error **err)
{
	int64_t deadline = now_ms() + (timeout_ms > 0 ? timeout_ms : 0);

	for (;;) {
		struct pollfd p = { .fd = c->fd, .events = POLLIN };
		int r = qp_chan_next(c, m, err);
		int64_t left;

		if (r != 0)
			return r < 0 ? -1 : 0;
		left = deadline - now_ms();
		r = poll(&p, 1, left > 0 ? (int)left : 0);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return qp_fail(err, errno, "control channel: poll");
		}
		if (r == 0) {
			if (now_ms() < deadline)
				continue;
			return qp_error_set(err, QP_E_TIMEOUT, ETIMEDOUT,
					    "control channel: no complete message within %d ms (%zu bytes pending)",
					    timeout_ms, c->have - c->start);
		}
		if (qp_chan_fill(c, err) < 0)
			return -1;
	}
}

static ssize_t write_some(struct qp_chan *c, const uint8_t *p, size_t n)
{
	ssize_t w;

	if (!c->not_socket) {
		/* MSG_NOSIGNAL: a vanished peer is an error, not a SIGPIPE */
		w = send(c->fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w >= 0 || errno != ENOTSOCK)
			return w;
		c->not_socket = 1;
	}
	return write(c->fd, p, n);
}

static int write_all(struct qp_chan *c, const uint8_t *p, size_t n, int timeout_ms,
		     const char *what, qp_error **err)
{
	int64_t deadline = now_ms() + (timeout_ms > 0 ? timeout_ms : 0);

	while (n > 0) {
		struct pollfd pf = { .fd = c->fd, .events = POLLOUT };
		int left = (int)(deadline - now_ms()), r;
		ssize_t w;

		/* a socket is tried first (MSG_DONTWAIT), polled only when full:
		 * a Unix socket polls writable only while under a quarter of
		 * its buffer is used, and a reader that is behind would be
		 * taken for one that does not read */
		if (!c->not_socket) {
			w = send(c->fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
			if (w > 0) {
				p += w;
				n -= (size_t)w;
				continue;
			}
			if (w < 0 && errno == ENOTSOCK)
				c->not_socket = 1; /* a device: polled, then written */
			else if (w < 0 && errno == EINTR)
				continue;
			else if (w < 0 && errno != EAGAIN)
				return qp_fail(err, errno, "control channel: %s: write", what);
		}
		if (left < 0)
			left = 0;
		r = poll(&pf, 1, left);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return qp_fail(err, errno, "control channel: poll");
		}
		if (r == 0)
			return qp_error_set(err, QP_E_TIMEOUT, ETIMEDOUT,
					    "control channel: %s: peer did not take data within %d ms",
					    what, timeout_ms);
		if (!(pf.revents & POLLOUT)) /* POLLHUP/POLLERR: nobody is listening */
			return qp_error_set(err, QP_E_GENERIC, EPIPE, "control channel: %s: peer not connected",
					    what);
		w = write_some(c, p, n);
		if (w < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			return qp_fail(err, errno, "control channel: %s: write", what);
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int qp_chan_send(struct qp_chan *c, const struct qp_msg *m, int timeout_ms, qp_error **err)
{
	ssize_t n = qp_msg_encode(m, c->out, sizeof(c->out), err);

	if (n < 0)
		return -1;
	return write_all(c, c->out, (size_t)n, timeout_ms, qp_msg_type_name(m->type), err);
}

int qp_chan_send_error(struct qp_chan *c, uint32_t code, int errnum, const char *text,
		       int timeout_ms, qp_error **err)
{
	char buf[QP_PROTO_MAX_TEXT + 1];
	struct qp_msg m = { .type = QP_MSG_ERROR };
	size_t i;

	for (i = 0; text && text[i] && i < QP_PROTO_MAX_TEXT; i++)
		buf[i] = text[i] == '\n' || text[i] == '\r' ? ' ' : text[i];
	buf[i] = '\0';
	m.u.error.code = code;
	m.u.error.errnum = errnum;
	m.u.error.text = buf;
	return qp_chan_send(c, &m, timeout_ms, err);
}
