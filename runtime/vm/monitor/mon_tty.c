/* runtime/vm/monitor/mon_tty.c — a VM pod's terminal on the host side
 * (process.terminal): the terminal is the monitor's fd 0 and 1, either a
 * pty pair made here whose master went to --console-socket (its slave raw:
 * the guest's own pty does the line discipline), or qpod's own terminal
 * (`qpod run -t`, raw while the pod runs).  The bytes go through the stdin
 * and stdout relay as they are; the window size is read from fd 0 at RUN
 * and then every QP_CONSOLE_SIZE_POLL_MS, and a change goes to the guest as
 * WINSIZE (docs/DECISIONS.md: why a timer and not SIGWINCH). */
#include <errno.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "host/console.h"
#include "pod.h"
#include "util/cleanup.h"
#include "vm/monitor/monitor.h"

int mon_tty_setup(struct vm_mon *m, qp_error **err)
{
	const char *sock = m->pod->io.console_socket;
	_cleanup_close_ int master = -1, slave = -1;

	if (!m->pod->spec->process.terminal)
		return 0;
	if (!sock) {
		if (!m->pod->io.tty_stdin)
			return qp_error_set(err, QP_E_INVALID, 0,
					    "process.terminal is true but no --console-socket was given");
		/* `qpod run -t`: our own stdin's terminal */
		int eof = qp_console_own_raw(&m->tty_saved, err);
		if (eof < 0)
			return -1;
		m->tty_veof = eof; /* sent once RUN is */
		m->tty_restore = true;
		m->tty = true;
		return 0;
	}
	if (qp_console_pair(&master, &slave, err) < 0 || qp_console_raw(slave, NULL, err) < 0 ||
	    qp_console_send(sock, master, err) < 0)
		return -1;
	/* stderr too, as runc's process has the pty as 0, 1 and 2: a caller
	 * (containerd's shim) reads its create's output to EOF, which would
	 * never come while the monitor kept that pipe */
	if (dup2(slave, 0) < 0 || dup2(slave, 1) < 0 || dup2(slave, 2) < 0)
		return qp_fail(err, errno, "the terminal as the monitor's stdio");
	m->tty = true;
	return 0;
}

void mon_tty_run(struct vm_mon *m, struct qp_run *r)
{
	if (!m->tty)
		return;
	r->flags |= QP_RUN_F_TERMINAL | QP_RUN_F_STDIN;
	m->stdin_fd = 0;
	m->stdin_credit = QP_PROTO_STDIN_WINDOW;
	if (qp_console_size_changed(0, &m->tty_rows, &m->tty_cols) > 0) {
		r->rows = m->tty_rows;
		r->cols = m->tty_cols;
	}
}

int mon_tty_poll(struct vm_mon *m)
{
	struct qp_msg msg = { .type = QP_MSG_WINSIZE };

	if (!m->tty || !m->run_sent || m->exited || m->stopping || m->chan->broken)
		return -1;
	if (m->tty_veof && m->stdin_fd >= 0 && m->stdin_credit) {
		/* an EOF typed before qpod's terminal went raw, as typed */
		struct qp_msg in = { .type = QP_MSG_STDIN };
		in.u.data.data = (const uint8_t *)&m->tty_saved.c_cc[VEOF];
		in.u.data.len = 1;
		m->tty_veof = false;
		m->stdin_credit--;
		qp_chan_send(m->chan, &in, QP_VM_SEND_TIMEOUT_MS, NULL);
	}
	if (qp_console_size_changed(0, &m->tty_rows, &m->tty_cols) > 0) {
		msg.u.winsize.rows = m->tty_rows;
		msg.u.winsize.cols = m->tty_cols;
		/* a lost size is not worth the pod: the next change sends again */
		qp_chan_send(m->chan, &msg, QP_VM_SEND_TIMEOUT_MS, NULL);
	}
	return QP_CONSOLE_SIZE_POLL_MS;
}

void mon_tty_restore(struct vm_mon *m)
{
	if (m->tty_restore) {
		tcsetattr(0, TCSADRAIN, &m->tty_saved);
		m->tty_restore = false;
	}
}
