/* guest-init/inbuf.c — a process's input from the host (STDIN for the
 * workload, EXEC_STDIN for an exec) on its way to the process's stdin:
 * held here while the process does not read, credited back to the host as
 * it is passed on (STDIN_CREDIT / EXEC_CREDIT), so the host never has more
 * than QP_PROTO_STDIN_WINDOW bytes out and the channel is always read. */
#include <string.h>
#include <unistd.h>

#include "guest-init/guest.h"

static void credit(const struct gi_inbuf *b, size_t n)
{
	struct qp_msg c = { .type = b->id ? QP_MSG_EXEC_CREDIT : QP_MSG_STDIN_CREDIT };

	while (n) {
		uint32_t k = (uint32_t)(n < QP_PROTO_STDIN_WINDOW ? n : QP_PROTO_STDIN_WINDOW);
		if (b->id) {
			c.u.exec_credit.id = b->id;
			c.u.exec_credit.bytes = k;
		} else {
			c.u.credit.bytes = k;
		}
		gi_send_or_die(&c);
		n -= k;
	}
}

void gi_inbuf_flush(struct gi_inbuf *b, int *fd)
{
	ssize_t n = write(*fd, b->buf + b->off, b->len - b->off);

	if (n < 0) {
		if (errno == EAGAIN || errno == EINTR)
			return;
		/* EPIPE: the process closed its stdin; what is buffered and
		 * what comes later is dropped, and credited as passed on */
		credit(b, b->len - b->off);
		b->off = b->len = 0;
		gi_close_fd(fd);
		return;
	}
	b->off += (size_t)n;
	credit(b, (size_t)n);
	if (b->off == b->len) {
		b->off = b->len = 0;
		if (b->eof)
			gi_close_fd(fd);
	}
}

void gi_inbuf_put(struct gi_inbuf *b, int *fd, const uint8_t *data, uint32_t len)
{
	if (len == 0) {
		b->eof = 1;
		if (b->len == 0)
			gi_close_fd(fd);
	} else if (*fd < 0) {
		credit(b, len); /* the process closed its stdin */
	} else {
		/* the host keeps within the window: the buffer holds it */
		if (b->len - b->off + len > sizeof(b->buf))
			gi_fatal(QP_PERR_PROTOCOL, 0, "control channel: %s beyond its credit of %d bytes",
				 b->id ? "EXEC_STDIN" : "STDIN", QP_PROTO_STDIN_WINDOW);
		memmove(b->buf, b->buf + b->off, b->len - b->off);
		b->len -= b->off;
		b->off = 0;
		memcpy(b->buf + b->len, data, len);
		b->len += len;
		gi_inbuf_flush(b, fd);
	}
}
