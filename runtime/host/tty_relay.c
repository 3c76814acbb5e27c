/* runtime/host/tty_relay.c — see tty_relay.h. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "host/console.h"
#include "host/tty_relay.h"
#include "util/fdpass.h"
#include "util/io.h"

int qp_tty_relay_start(struct qp_tty_relay *r, int master, qp_error **err)
{
	*r = (struct qp_tty_relay){ .master = master, .in = 0 };
	if (fcntl(master, F_SETFL, O_NONBLOCK) < 0)
		return qp_fail(err, errno, "the terminal's master");
	int eof = qp_console_own_raw(&r->saved, err);

	if (eof < 0)
		return -1;
	r->raw = true;
	qp_tty_relay_size(r);
	/* an EOF typed before: the pod's terminal gets it as typed */
	if (eof)
		qp_write_all(master, &r->saved.c_cc[VEOF], 1);
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

int qp_tty_relay_own(struct qp_tty_relay *r, int sock, pid_t pid, qp_error **err)
{
	char buf[64];
	int master = -1, pidfd;

	if (qp_recv_with_fd(sock, buf, sizeof(buf), &master) < 0 || master < 0)
		return qp_error_set(err, QP_E_GENERIC, errno, "no terminal came back from the pod");
	if (qp_tty_relay_start(r, master, err) < 0)
		return -1;
	if ((pidfd = (int)syscall(SYS_pidfd_open, pid, 0)) < 0) {
		qp_tty_relay_end(r);
		return qp_fail(err, errno, "pidfd_open");
	}
	for (;;) {
		struct pollfd p[3];
		int timeout = qp_tty_relay_pollfds(r, p);
		p[2] = (struct pollfd){ .fd = pidfd, .events = POLLIN };
		if (poll(p, 3, timeout) < 0 && errno != EINTR)
			break;
		qp_tty_relay_handle(r, p);
		if (p[2].revents)
			break;
	}
	close(pidfd);
	qp_tty_relay_end(r);
	return 0;
}
