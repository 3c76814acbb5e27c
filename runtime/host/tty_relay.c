/* runtime/host/tty_relay.c — see tty_relay.h. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "host/console.h"
#include "host/tty_relay.h"
#include "util/io.h"

int qp_tty_relay_start(struct qp_tty_relay *r, int master, qp_error **err)
{
	*r = (struct qp_tty_relay){ .master = master, .in = 0 };
	if (!isatty(0) || !isatty(1))
		return qp_error_set(err, QP_E_INVALID, 0, "a terminal (-t) needs qpod's stdin and stdout to be one");
	if (fcntl(master, F_SETFL, O_NONBLOCK) < 0)
		return qp_fail(err, errno, "the terminal's master");
	if (qp_console_raw(0, &r->saved, err) < 0)
		return -1;
	r->raw = true;
	qp_tty_relay_size(r);
	return 0;
}

void qp_tty_relay_size(struct qp_tty_relay *r)
{
	struct winsize ws;

	if (r->master >= 0 && qp_console_size_changed(0, &r->rows, &r->cols) > 0) {
		ws = (struct winsize){ .ws_row = r->rows, .ws_col = r->cols };
		ioctl(r->master, TIOCSWINSZ, &ws);
	}
}

int qp_tty_relay_pollfds(const struct qp_tty_relay *r, struct pollfd p[2])
{
	p[0] = (struct pollfd){ .fd = r->master >= 0 ? r->in : -1, .events = POLLIN };
	p[1] = (struct pollfd){ .fd = r->master, .events = POLLIN };
	return r->master >= 0 ? QP_CONSOLE_SIZE_POLL_MS : -1;
}

/* Copy what from has to to; 0 at its end (or an error). */
static int copy(int from, int to)
{
	char buf[16384];
	ssize_t n = read(from, buf, sizeof(buf));

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 1;
	if (n <= 0)
		return 0;
	/* the pty's input is written whole: the workload reads its terminal */
	return qp_write_all(to, buf, (size_t)n) < 0 ? 0 : 1;
}

void qp_tty_relay_handle(struct qp_tty_relay *r, const struct pollfd p[2])
{
	if (r->master < 0)
		return;
	if (p[0].fd >= 0 && p[0].revents && !copy(r->in, r->master))
		r->in = -1; /* our input ended: the terminal stays the pod's */
	if (p[1].revents && !copy(r->master, 1)) {
		close(r->master); /* EIO: every end of the pod's side closed */
		r->master = -1;
	}
	qp_tty_relay_size(r);
}

void qp_tty_relay_end(struct qp_tty_relay *r)
{
	/* the workload is gone: what its terminal still holds, then ours back */
	while (r->master >= 0) {
		struct pollfd p = { .fd = r->master, .events = POLLIN };
		if (poll(&p, 1, 100) <= 0 || !copy(r->master, 1))
			break;
	}
	if (r->master >= 0)
		close(r->master);
	r->master = -1;
	if (r->raw)
		tcsetattr(0, TCSADRAIN, &r->saved);
	r->raw = false;
}
