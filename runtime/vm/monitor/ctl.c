/* runtime/vm/monitor/ctl.c — the client side of a VM pod's ctl.sock: how `qpod
 * start`, `kill`, `delete`, `exec` and the benchmarks reach the pod's
 * monitor from another process.  The monitor is trusted no more than
 * necessary: its frames go through the same bounded decoder. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>

#include "host/console.h"
#include "util/io.h"
#include "util/cleanup.h"
#include "util/report.h"
#include "vm/vm.h"

static int ctl_connect(int dirfd, qp_error **err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return qp_fail(err, errno, "socket");
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/%s", dirfd, QP_VM_CTL_SOCK);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;
		close(fd);
		return qp_error_set(err, e == ENOENT || e == ECONNREFUSED ? QP_E_STATE : QP_E_GENERIC, e,
				    "the pod's VM monitor does not answer (%s)", strerror(e));
	}
	return fd;
}

/* A CTL_REPLY error -> -1 with that error. */
static int reply_status(const struct qp_msg *m, qp_error **err)
{
	char text[QP_PROTO_MAX_TEXT + 1];

	if (m->u.reply.status == 0)
		return 0;
	snprintf(text, sizeof(text), "%s", m->u.reply.text ? m->u.reply.text : "failed");
	qp_error_set(err, m->u.reply.status > 0 && m->u.reply.status < 64 ? m->u.reply.status : QP_E_GENERIC,
		     0, "%s", text);
	if (err && *err)
		(*err)->errnum = m->u.reply.errnum;
	return -1;
}

int vm_ctl_call(int dirfd, const struct qp_msg *req, struct qp_msg *reply, char **text,
		int timeout_ms, qp_error **err)
{
	_cleanup_close_ int fd = ctl_connect(dirfd, err);
	struct qp_chan *ch;
	struct qp_msg m;
	int r = -1;

	if (fd < 0)
		return -1;
	if (!(ch = qp_chan_new(fd)))
		return qp_fail(err, ENOMEM, "ctl");
	if (qp_chan_send(ch, req, timeout_ms, err) < 0 || qp_chan_recv(ch, &m, timeout_ms, err) < 0 ||
	    qp_msg_check_sender(&m, QP_SENDER_GUEST | QP_SENDER_CTL, err) < 0)
		goto out;
	if (m.type == QP_MSG_CTL_REPLY) {
		r = reply_status(&m, err);
		if (r == 0 && text && !(*text = strdup(m.u.reply.text ? m.u.reply.text : "")))
			r = qp_fail(err, ENOMEM, "ctl");
	}
	else if ((m.type == QP_MSG_MEMINFO && req->type == QP_MSG_MEMINFO_REQ) ||
		 (m.type == QP_MSG_CTR_STATS && req->type == QP_MSG_CTR_STATS_REQ)) {
		if (reply)
			*reply = m; /* integers (a CTR_STATS's name does not outlive the channel) */
		if (reply && m.type == QP_MSG_CTR_STATS)
			reply->u.ctr_stats.name = NULL;
		r = 0;
	} else if (m.type == QP_MSG_CTR_UPDATED && req->type == QP_MSG_CTR_UPDATE) {
		r = 0;
		if (m.u.ctr_update.errnum) {
			char t[QP_PROTO_MAX_TEXT + 1];
			snprintf(t, sizeof(t), "%s", m.u.ctr_update.text ? m.u.ctr_update.text : "");
			r = qp_error_set(err, QP_E_GENERIC, m.u.ctr_update.errnum, "%s", t);
		}
	} else
		qp_error_set(err, QP_E_GUEST, 0, "the monitor answered %s", qp_msg_type_name(m.type));
out:
	qp_chan_free(ch);
	return r;
}

#define FIRST_SIZE_WAIT_MS 500

/* An exec in progress, as its client sees it. */
struct ctl_exec {
	int dirfd, started_fd;
	int out_fd, err_fd;      /* where EXEC_OUT streams 1 and 2 go */
	int tty;                 /* the terminal's slave, -1: none */
	int in_fd;               /* the input to send (the terminal's or our stdin), -1: none (or its end) */
	uint32_t credit;         /* EXEC_STDIN the guest may still take */
	uint16_t rows, cols;     /* the terminal's size last sent */
	bool restore;            /* our own terminal: saved is how it was */
	bool veof;               /* an EOF typed before it went raw: send VEOF */
	struct termios saved;
	int *status;
	bool *started;           /* set once the guest started it (may be NULL) */
	struct qp_chan *ch;      /* to the monitor */
};

/* One message of the monitor: 1 = the exec is over (*status set), 0 = go
 * on, -1 = failed with *err. */
static int exec_message(struct ctl_exec *x, const struct qp_msg *m, qp_error **err)
{
	switch (m->type) {
	case QP_MSG_CTL_REPLY:
		if (reply_status(m, err) == 0)
			qp_error_set(err, QP_E_GUEST, 0, "the monitor ended the exec without a status");
		return -1;
	case QP_MSG_EXEC_STARTED:
		/* running: the pod's lock is not held for the exec's
		 * life, or a delete --force would wait for its end */
		flock(x->dirfd, LOCK_UN);
		if (x->started)
			*x->started = true;
		if (x->started_fd >= 0) {
			qp_report_ok(x->started_fd, "started");
			close(x->started_fd);
			x->started_fd = -1;
		}
		return 0;
	case QP_MSG_EXEC_OUT: {
		/* passed on (or dropped, where it goes being gone): the guest
		 * may send as much more (protocol.h, EXEC_OUT_CREDIT) */
		struct qp_msg c = { .type = QP_MSG_EXEC_OUT_CREDIT };
		qp_write_all(m->u.exec_out.stream == 1 ? x->out_fd : x->err_fd, m->u.exec_out.data,
			     m->u.exec_out.len);
		c.u.exec_out_credit.id = 1; /* the monitor sets the guest's id */
		c.u.exec_out_credit.bytes = m->u.exec_out.len;
		c.u.exec_out_credit.frames = 1;
		return qp_chan_send(x->ch, &c, QP_VM_SEND_TIMEOUT_MS, err);
	}
	case QP_MSG_EXEC_CREDIT:
		if (x->credit + m->u.exec_credit.bytes > QP_PROTO_STDIN_WINDOW)
			return qp_error_set(err, QP_E_GUEST, 0, "exec: more input credited than sent");
		x->credit += m->u.exec_credit.bytes;
		return 0;
	case QP_MSG_EXEC_EXIT:
		if (m->u.exec_exit.errnum) {
			char text[QP_PROTO_MAX_TEXT + 1];
			snprintf(text, sizeof(text), "%s", m->u.exec_exit.text ? m->u.exec_exit.text : "");
			qp_error_set(err, QP_E_EXEC, 0, "%s", text);
			if (err && *err)
				(*err)->errnum = m->u.exec_exit.errnum;
			return -1;
		}
		*x->status = m->u.exec_exit.code;
		return 1;
	default:
		return 0;
	}
}

/* The exec's input (the terminal's, or our stdin), within the credit (its
 * end: an empty EXEC_STDIN). */
static int exec_input(struct ctl_exec *x, struct qp_chan *ch, qp_error **err)
{
	static uint8_t buf[16384];
	struct qp_msg m = { .type = QP_MSG_EXEC_STDIN };
	ssize_t n = read(x->in_fd, buf, x->credit < sizeof(buf) ? x->credit : sizeof(buf));

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0)
		x->in_fd = -1;
	else
		x->credit -= (uint32_t)n;
	m.u.exec_stdin.id = 1; /* the monitor sets the guest's id */
	m.u.exec_stdin.data = buf;
	m.u.exec_stdin.len = n > 0 ? (uint32_t)n : 0;
	return qp_chan_send(ch, &m, QP_VM_SEND_TIMEOUT_MS, err);
}

/* The signals an exec's client passes on to its process, as runc's exec
 * (and `qpod run`) do: a shim's or a user's signal to the pid it holds
 * reaches what runs in the guest. */
static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };

/* A signalfd of forwarded[], blocked meanwhile (*old: the mask before). */
static int forward_open(sigset_t *old)
{
	sigset_t set;

	sigemptyset(&set);
	for (size_t i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
		sigaddset(&set, forwarded[i]);
	int fd;

	if (sigprocmask(SIG_BLOCK, &set, old) < 0)
		return -1;
	if ((fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK)) < 0)
		sigprocmask(SIG_SETMASK, old, NULL); /* not forwarded, as before */
	return fd;
}

/* The signals that came, as EXEC_SIGNAL. */
static int exec_forward(int sfd, struct qp_chan *ch, qp_error **err)
{
	struct signalfd_siginfo si;
	struct qp_msg m = { .type = QP_MSG_EXEC_SIGNAL };

	while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		m.u.exec_signal.id = 1; /* the monitor sets the guest's id */
		m.u.exec_signal.signo = si.ssi_signo;
		if (qp_chan_send(ch, &m, QP_VM_SEND_TIMEOUT_MS, err) < 0)
			return -1;
	}
	return 0;
}

/* The terminal's size, when it changed, as WINSIZE. */
static int exec_winsize(struct ctl_exec *x, struct qp_chan *ch, qp_error **err)
{
	struct qp_msg m = { .type = QP_MSG_WINSIZE };

	if (qp_console_size_changed(x->out_fd, &x->rows, &x->cols) <= 0)
		return 0;
	m.u.winsize.id = 1;
	m.u.winsize.rows = x->rows;
	m.u.winsize.cols = x->cols;
	return qp_chan_send(ch, &m, QP_VM_SEND_TIMEOUT_MS, err);
}

/* The exec on a terminal: its flags, its input credit, the first size (of
 * x->out_fd: the slave, or our own terminal). */
static void terminal_run(struct ctl_exec *x, struct qp_run *r)
{
	x->credit = QP_PROTO_STDIN_WINDOW;
	r->flags |= QP_RUN_F_TERMINAL | QP_RUN_F_STDIN;
	if (qp_console_size_changed(x->out_fd, &x->rows, &x->cols) > 0) {
		r->rows = x->rows;
		r->cols = x->cols;
	}
}

/* A terminal whose slave is ours (and closed with the exec): raw (the
 * guest's pty does the line discipline). */
static int tty_slave(struct ctl_exec *x, int slave, qp_error **err)
{
	x->tty = x->in_fd = x->out_fd = x->err_fd = slave;
	return qp_console_raw(slave, NULL, err);
}

/* A terminal whose master went to the client already (a container's, at
 * create). */
static int exec_tty(struct ctl_exec *x, int slave, struct qp_run *r, qp_error **err)
{
	if (tty_slave(x, slave, err) < 0)
		return -1;
	terminal_run(x, r);
	return 0;
}

/* A terminal: the master to the console socket, the slave (raw: the
 * guest's pty does the line discipline) our end of it; without a console
 * socket, our own terminal (raw meanwhile, restored by the caller). */
static int exec_terminal(struct ctl_exec *x, const char *console, struct qp_run *r, qp_error **err)
{
	_cleanup_close_ int master = -1;
	int slave = -1;

	if (!console) {
		int eof = qp_console_own_raw(&x->saved, err);
		if (eof < 0)
			return -1;
		x->veof = eof; /* sent after EXEC */
		x->restore = true;
		x->in_fd = 0;
		x->out_fd = x->err_fd = 1;
		terminal_run(x, r);
		return 0;
	}
	/* the size after the master went: the client sets it on the master
	 * it receives (a later change is polled for); a process that asks at
	 * once (stty size) must not find 0x0, so a client that has not set
	 * one yet gets FIRST_SIZE_WAIT_MS for it */
	if (qp_console_pair(&master, &slave, err) < 0 || tty_slave(x, slave, err) < 0 ||
	    qp_console_send(console, master, err) < 0)
		return -1;
	for (int waited = 0; waited < FIRST_SIZE_WAIT_MS; waited += 10) {
		struct winsize ws = { 0 };
		if (ioctl(slave, TIOCGWINSZ, &ws) < 0 || ws.ws_row || ws.ws_col)
			break;
		usleep(10000);
	}
	terminal_run(x, r);
	return 0;
}

/* The container's or join's own fields over what proc gave. */
static void exec_container_fields(struct qp_run *r, const struct qp_run *c)
{
	r->flags |= c->flags;
	r->rootfs = QP_ROOTFS_9P_SUBDIR;
	r->rootfs_tag = c->rootfs_tag;
	r->hostname = c->hostname ? c->hostname : "";
	r->mounts = c->mounts;
	r->mountc = c->mountc;
	r->cgroup = c->cgroup;
	r->cgroupc = c->cgroupc;
}

int vm_ctl_exec(int dirfd, const struct qp_process *proc, const char *console, int started_fd,
		int *status, qp_error **err)
{
	struct vm_exec_opts o = { .console = console, .tty = -1, .started_fd = started_fd, .extra_fd = -1 };

	return vm_ctl_exec_opts(dirfd, proc, &o, status, err);
}

int vm_ctl_exec_opts(int dirfd, const struct qp_process *proc, const struct vm_exec_opts *o, int *status,
		     qp_error **err)
{
	_cleanup_close_ int fd = ctl_connect(dirfd, err);
	struct ctl_exec x = { .dirfd = dirfd, .started_fd = o->started_fd, .out_fd = 1, .err_fd = 2,
			      .tty = -1, .in_fd = -1, .status = status, .started = o->started };
	struct qp_msg m = { .type = QP_MSG_EXEC };
	struct qp_chan *ch;
	sigset_t oldmask;
	int r = -1, sfd = -1;

	if (fd < 0)
		return -1;
	if (!(ch = qp_chan_new(fd)))
		return qp_fail(err, ENOMEM, "ctl");
	x.ch = ch;
	vm_run_from_process(proc, &m.u.run);
	m.u.run.id = 1; /* the monitor assigns the guest's id */
	m.u.run.rootfs = QP_ROOTFS_INITRAMFS;
	m.u.run.rootfs_tag = "";
	m.u.run.hostname = "";
	if (o->ctr)
		exec_container_fields(&m.u.run, o->ctr);
	if (proc->terminal && o->tty >= 0 && exec_tty(&x, o->tty, &m.u.run, err) < 0)
		goto out;
	if (proc->terminal && o->tty < 0 && exec_terminal(&x, o->console, &m.u.run, err) < 0)
		goto out;
	/* without a terminal, our stdin, as runc's exec'd process gets its
	 * caller's (unless it is /dev/null or closed) */
	if (!proc->terminal && qp_fd_relayable(0)) {
		x.in_fd = 0;
		x.credit = QP_PROTO_STDIN_WINDOW;
		m.u.run.flags |= QP_RUN_F_STDIN;
	}
	if (qp_chan_send(ch, &m, QP_VM_SEND_TIMEOUT_MS, err) < 0)
		goto out;
	if (x.veof) { /* the EOF typed before, as typed */
		struct qp_msg in = { .type = QP_MSG_EXEC_STDIN };
		in.u.exec_stdin.id = 1;
		in.u.exec_stdin.data = (const uint8_t *)&x.saved.c_cc[VEOF];
		in.u.exec_stdin.len = 1;
		x.credit--;
		if (qp_chan_send(ch, &in, QP_VM_SEND_TIMEOUT_MS, err) < 0)
			goto out;
	}
	/* no deadline on the process itself: it runs as long as it runs; a
	 * terminal's size is looked at every QP_CONSOLE_SIZE_POLL_MS */
	sfd = forward_open(&oldmask);
	while (r < 0) {
		struct pollfd p[4] = { { .fd = fd, .events = POLLIN },
				       { .fd = x.credit ? x.in_fd : -1, .events = POLLIN },
				       { .fd = o->extra_fd, .events = POLLIN },
				       { .fd = sfd, .events = POLLIN } };
		int k;
		if (poll(p, 4, proc->terminal ? QP_CONSOLE_SIZE_POLL_MS : -1) < 0 && errno != EINTR) {
			qp_fail(err, errno, "exec: poll");
			goto out;
		}
		if ((p[1].revents && exec_input(&x, ch, err) < 0) ||
		    (proc->terminal && exec_winsize(&x, ch, err) < 0) ||
		    (p[2].revents && o->extra(o->ctx, ch, err) < 0) ||
		    (p[3].revents && exec_forward(sfd, ch, err) < 0))
			goto out;
		if (!p[0].revents)
			continue;
		if (qp_chan_fill(ch, err) < 0) {
			qp_error_prefix(err, "exec: the pod's monitor went away");
			goto out;
		}
		while ((k = qp_chan_next(ch, &m, err)) > 0) {
			if (qp_msg_check_sender(&m, QP_SENDER_GUEST | QP_SENDER_CTL, err) < 0 ||
			    (k = exec_message(&x, &m, err)) < 0)
				goto out;
			if (k == 1) {
				r = 0;
				break;
			}
		}
		if (k < 0)
			goto out;
	}
out:
	if (sfd >= 0) {
		close(sfd);
		sigprocmask(SIG_SETMASK, &oldmask, NULL);
	}
	if (x.tty >= 0)
		close(x.tty);
	if (x.restore)
		tcsetattr(0, TCSADRAIN, &x.saved);
	qp_chan_free(ch);
	return r;
}
