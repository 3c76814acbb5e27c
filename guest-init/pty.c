/* guest-init/pty.c — a process's terminal in the guest (QP_RUN_F_TERMINAL):
 * a pty pair whose slave becomes the process's stdio and controlling
 * terminal, whose master the relay reads and writes; WINSIZE sets its size;
 * the end of its input is the terminal's hangup. */
#include <fcntl.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "guest-init/guest.h"

static int dup_cloexec(int fd)
{
	return fcntl(fd, F_DUPFD_CLOEXEC, 0);
}

int gi_pty_open(const struct qp_run *r, int *keep, int *in_r, int *in_w, int *out_r, int *out_w,
		int *err_w)
{
	int unlock = 0, m, s;

	/* non-blocking: the relay never waits on a full pty */
	m = open("/dev/pts/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
	if (m < 0)
		return -1;
	if (ioctl(m, TIOCSPTLCK, &unlock) < 0 ||
	    (s = ioctl(m, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0) {
		close(m);
		return -1;
	}
	if (r->rows && r->cols)
		gi_pty_winsize(m, r->rows, r->cols);
	/* one fd each, as the pipes were: each end is closed on its own */
	*in_r = s;
	*out_r = m;
	if ((*out_w = dup_cloexec(s)) < 0 || (*err_w = dup_cloexec(s)) < 0 ||
	    (*in_w = dup_cloexec(m)) < 0 || (*keep = dup_cloexec(m)) < 0)
		return -1;
	return 0;
}

void gi_pty_winsize(int master, uint16_t rows, uint16_t cols)
{
	struct winsize ws = { .ws_row = rows, .ws_col = cols };

	if (master < 0)
		gi_send_error(QP_PERR_STATE, 0, "WINSIZE: the process has no terminal");
	else if (ioctl(master, TIOCSWINSZ, &ws) < 0)
		gi_send_error(QP_PERR_STATE, errno, "set the terminal's size %ux%u", rows, cols);
}

void gi_pty_hangup(struct gi_inbuf *b, int *in_w, int *out_r, int *keep)
{
	/* the last master fd closed: the kernel hangs the slave up (SIGHUP and
	 * SIGCONT to the session's leader and its foreground group) */
	b->off = b->len = 0;
	b->eof = 1;
	gi_close_fd(in_w);
	gi_close_fd(out_r);
	gi_close_fd(keep);
}
