/* guest-init/supervise.c — what runs in the guest, once booted: the
 * workload started through tinyinit (the main thread reaps and forwards
 * signals), and a relay thread that serves it and the EXECs (exec.c) in one
 * poll loop: stdio both ways, signals, MEMINFO, exit status; a RUN after
 * the workload's EXIT replaces it in the same root, network and hostname. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "guest-init/channel.h"
#include "guest-init/guest.h"
#include "guest-init/tinyinit.h"

#define DRAIN_MS 1000            /* after exit, stdio held open by leftovers */
#define DRAIN_STALL_MS 10000     /* after exit, the host's credit waited for */

/* ---- the workload ---- */

enum { EV_SPAWNED = 1, EV_EXITED, EV_OTHER_EXITED };
struct event {
	int kind, a, b; /* SPAWNED: pid; EXITED: code, errno; OTHER_EXITED: pid, code */
};

struct workload {
	struct qp_run run;
	int stdin_r, stdin_w, out_r, out_w, err_r, err_w, exec_r, exec_w, ev_r, ev_w;
	int null_fd;
	int pty;  /* QP_RUN_F_TERMINAL: the pty's master (for TIOCSWINSZ), else -1 */
	pid_t pid;
	uint64_t spawn_ns;
};

/* In the forked child (tinyinit_run's fn). */
static void exec_workload(void *arg)
{
	struct workload *w = arg;

	gi_exec_child(&w->run, w->run.flags & QP_RUN_F_STDIN ? w->stdin_r : w->null_fd, w->out_w,
		      w->err_w, w->exec_w);
}

static void post_event(struct workload *w, int kind, int a, int b)
{
	struct event ev = { kind, a, b };

	if (write(w->ev_w, &ev, sizeof(ev)) != sizeof(ev))
		die("event pipe");
}

static void on_spawn(pid_t pid, void *arg)
{
	struct workload *w = arg;

	w->spawn_ns = gi_boot_ns();
	/* the parent keeps only its ends, so EOFs arrive */
	gi_close_fd(&w->stdin_r);
	gi_close_fd(&w->out_w);
	gi_close_fd(&w->err_w);
	gi_close_fd(&w->exec_w);
	post_event(w, EV_SPAWNED, pid, 0);
}

/* main thread: an exec'd process (or an orphan) was reaped */
static void on_other_exit(pid_t pid, int code, void *arg)
{
	post_event(arg, EV_OTHER_EXITED, pid, code);
}

static void make_pipe(int *r, int *w)
{
	int p[2];

	if (pipe2(p, O_CLOEXEC) < 0)
		die("pipe2");
	*r = p[0];
	*w = p[1];
}

/* ---- the relay thread: workload stdio/exit <-> channel ---- */

struct relay {
	struct workload *w;
	struct gi_inbuf in;     /* STDIN the workload has not read yet */
	int exited, exit_code, exit_sent;
	int started_pending;   /* exec succeeded; STARTED waits for the pid */
	int64_t exit_ms;       /* when it exited: the drain's start */
	int64_t credit_ms;     /* the host's last OUT_CREDIT */
	int next;              /* a RUN after EXIT: the next workload (replace) */
	struct qp_run next_run;
};

/* STDOUT and STDERR the host may still take (protocol.h, OUT_CREDIT): the
 * guest's for its whole life, a replace's workload inherits it */
static uint32_t out_credit = QP_PROTO_OUT_WINDOW;

/* Relay a chunk of the workload's stdout or stderr, within the credit;
 * EOF closes it. */
static void relay_output(int *fd, uint16_t type)
{
	static uint8_t buf[QP_PROTO_MAX_PAYLOAD];
	struct qp_msg m = { .type = type };
	ssize_t n = gi_read_chunk(fd, buf, out_credit < sizeof(buf) ? out_credit : sizeof(buf));

	if (n <= 0)
		return;
	out_credit -= (uint32_t)n;
	m.u.data.data = buf;
	m.u.data.len = (uint32_t)n;
	gi_send_or_die(&m);
}

/* After the workload's exit, its output is drained until the pipes end, or
 * for DRAIN_MS after the exit or the host's last credit, whichever is later
 * (a leftover may hold the pipes open for ever); with no credit left, the
 * host's is waited for DRAIN_STALL_MS (a slow reader), but never past
 * DRAIN_STALL_MS after the exit (a terminal's client that does not read);
 * then the rest is dropped. */
static int64_t drain_deadline(const struct relay *rl)
{
	int64_t from = rl->credit_ms > rl->exit_ms ? rl->credit_ms : rl->exit_ms;
	int64_t d = from + (out_credit ? DRAIN_MS : DRAIN_STALL_MS);

	return d < rl->exit_ms + DRAIN_STALL_MS ? d : rl->exit_ms + DRAIN_STALL_MS;
}

/* The exec pipe: EOF alone means exec succeeded; a report means it failed. */
static void send_started(struct workload *w)
{
	struct qp_msg m = { .type = QP_MSG_STARTED };

	m.u.started.pid = (uint32_t)w->pid;
	m.u.started.spawn_ns = w->spawn_ns;
	m.u.started.exec_ns = gi_boot_ns();
	gi_send_or_die(&m);
}

static void relay_exec(struct relay *rl)
{
	struct workload *w = rl->w;
	char text[512];
	int errnum, r = gi_exec_report_read(w->exec_r, &w->run, &errnum, text, sizeof(text));

	if (r < 0)
		return;
	gi_close_fd(&w->exec_r);
	if (r != 0) {
		gi_send_error(QP_PERR_EXEC, errnum, "%s", text);
		return;
	}
	/* on_spawn closes its end of the exec pipe before it posts the spawn
	 * event, so the exec's EOF can come first: STARTED then waits for the
	 * pid (relay_event), never blocking this loop, and never carries -1 */
	if (w->pid > 0)
		send_started(w);
	else
		rl->started_pending = 1;
}

static void relay_message(struct relay *rl, const struct qp_msg *m)
{
	struct workload *w = rl->w;

	switch (m->type) {
	case QP_MSG_STDIN:
		if (!(w->run.flags & QP_RUN_F_STDIN))
			gi_send_error(QP_PERR_STATE, 0, "STDIN without the stdin flag in RUN");
		else if (w->pty >= 0 && m->u.data.len == 0)
			gi_pty_hangup(&rl->in, &w->stdin_w, &w->out_r, &w->pty);
		else
			gi_inbuf_put(&rl->in, &w->stdin_w, m->u.data.data, m->u.data.len);
		break;
	case QP_MSG_EXEC_OUT_CREDIT:
		gi_exec_out_credit(m);
		break;
	case QP_MSG_EXEC_STDIN:
		gi_exec_stdin(m);
		break;
	case QP_MSG_EXEC_SIGNAL:
		gi_exec_signal(m);
		break;
	case QP_MSG_CTR_STATS_REQ:
		gi_ctr_stats(m);
		break;
	case QP_MSG_CTR_UPDATE:
		gi_ctr_update(m);
		break;
	case QP_MSG_SIGNAL:
		if (w->pid <= 0 || rl->exited)
			gi_send_error(QP_PERR_STATE, 0, "SIGNAL %u: no workload running", m->u.signal.signo);
		else if (kill(w->pid, (int)m->u.signal.signo) < 0)
			gi_send_error(QP_PERR_STATE, errno, "kill %d %u", w->pid, m->u.signal.signo);
		break;
	case QP_MSG_OUT_CREDIT:
		if (out_credit + m->u.credit.bytes > QP_PROTO_OUT_WINDOW)
			gi_fatal(QP_PERR_PROTOCOL, 0, "control channel: OUT_CREDIT beyond the output sent");
		out_credit += m->u.credit.bytes;
		rl->credit_ms = gi_mono_ms();
		break;
	case QP_MSG_WINSIZE:
		if (m->u.winsize.id)
			gi_exec_winsize(m);
		else
			gi_pty_winsize(w->pty, m->u.winsize.rows, m->u.winsize.cols);
		break;
	case QP_MSG_MEMINFO_REQ:
		gi_send_meminfo();
		break;
	case QP_MSG_EXEC:
		gi_exec_start(&m->u.run);
		break;
	case QP_MSG_RUN:
		if (!rl->exit_sent) {
			gi_send_error(QP_PERR_STATE, 0, "RUN while a workload runs");
			break;
		}
		rl->next_run = m->u.run;
		gi_keep_run(&rl->next_run);
		rl->next = 1;
		break;
	case QP_MSG_SHUTDOWN:
		gi_power_off();
	default:
		gi_fatal(QP_PERR_PROTOCOL, 0, "control channel: unexpected %s message",
		      qp_msg_type_name(m->type));
	}
}

static void relay_event(struct relay *rl)
{
	struct event ev;
	ssize_t n = read(rl->w->ev_r, &ev, sizeof(ev)); /* non-blocking */

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n != sizeof(ev))
		die("event pipe");
	if (ev.kind == EV_SPAWNED) {
		rl->w->pid = ev.a;
		if (rl->started_pending) {
			rl->started_pending = 0;
			send_started(rl->w);
		}
	} else if (ev.kind == EV_OTHER_EXITED) {
		gi_exec_reaped(ev.a, ev.b);
	} else {
		if (ev.a < 0)
			gi_fatal(QP_PERR_SYSCALL, ev.b, "fork the workload");
		rl->exited = 1;
		rl->exit_code = ev.a;
		rl->exit_ms = gi_mono_ms();
	}
}

static void *relay_main(void *arg)
{
	struct relay *rl = arg;
	struct workload *w = rl->w;
	qp_error *err = NULL;

	for (;;) {
		struct pollfd p[6 + GI_EXEC_POLLFDS];
		int timeout = -1, t;
		struct qp_msg m;
		int r;

		if (rl->exited && !rl->exit_sent && w->exec_r < 0 && !rl->started_pending &&
		    ((w->out_r < 0 && w->err_r < 0) || gi_mono_ms() >= drain_deadline(rl))) {
			struct qp_msg ex = { .type = QP_MSG_EXIT };
			ex.u.exit.code = rl->exit_code;
			ex.u.exit.exit_ns = gi_boot_ns();
			gi_close_fd(&w->out_r);
			gi_close_fd(&w->err_r);
			gi_send_or_die(&ex);
			rl->exit_sent = 1;
			if (!(w->run.flags & QP_RUN_F_WAIT_SHUTDOWN))
				return NULL;
		}
		if (rl->exited && !rl->exit_sent) {
			int64_t left = drain_deadline(rl) - gi_mono_ms();
			timeout = left > 0 ? (int)left : 0;
		}
		/* the channel is always read: STDIN has a window (protocol.h) */
		p[0] = (struct pollfd){ .fd = gi_chan.fd, .events = POLLIN };
		p[1] = (struct pollfd){ .fd = w->exec_r, .events = POLLIN };
		/* output within the host's credit (protocol.h, OUT_CREDIT) */
		p[2] = (struct pollfd){ .fd = out_credit ? w->out_r : -1, .events = POLLIN };
		p[3] = (struct pollfd){ .fd = out_credit ? w->err_r : -1, .events = POLLIN };
		p[4] = (struct pollfd){ .fd = w->ev_r, .events = POLLIN };
		p[5] = (struct pollfd){ .fd = rl->in.len ? w->stdin_w : -1, .events = POLLOUT };
		t = gi_exec_pollfds(p + 6);
		if (t >= 0 && (timeout < 0 || t < timeout))
			timeout = t;
		r = poll(p, sizeof(p) / sizeof(p[0]), timeout);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			die("poll");
		}
		gi_exec_handle(p + 6);
		if (r == 0)
			continue;
		/* exec first: STARTED goes out before any output */
		if (p[1].revents)
			relay_exec(rl);
		if (p[2].revents)
			relay_output(&w->out_r, QP_MSG_STDOUT);
		if (p[3].revents)
			relay_output(&w->err_r, QP_MSG_STDERR);
		if (p[4].revents)
			relay_event(rl);
		if (p[5].revents)
			gi_inbuf_flush(&rl->in, &w->stdin_w);
		if (p[0].revents && qp_chan_fill(&gi_chan, &err) < 0)
			gi_fatal_err(QP_PERR_PROTOCOL, err);
		r = 0;
		while (!rl->next && (r = qp_chan_next(&gi_chan, &m, &err)) > 0) {
			if (qp_msg_check_sender(&m, QP_SENDER_HOST, &err) < 0)
				gi_fatal_err(QP_PERR_PROTOCOL, err);
			relay_message(rl, &m);
		}
		if (r < 0)
			gi_fatal_err(QP_PERR_PROTOCOL, err);
		if (rl->next)
			return NULL;
	}
}

static struct workload wl;
static struct relay rl;

/* The first workload's relay thread is made before the first HELLO and
 * waits behind a gate: a template holds it, so a clone does not create it
 * (pthread_create took 10-15 ms of a TCG clone's start, 2-4 ms of a cold
 * boot's).  Later workloads (replace) make their own. */
static int relay_gate_r = -1, relay_gate_w = -1;
static pthread_t relay_early;
static int relay_early_ready;

static void *relay_behind_gate(void *arg)
{
	char c;

	while (read(relay_gate_r, &c, 1) < 0 && errno == EINTR)
		;
	close(relay_gate_r);
	return relay_main(arg);
}

/* With every signal blocked, as run_workload makes its relay threads:
 * signals are for tinyinit's sigwaitinfo in the main thread. */
void gi_supervise_prepare(void)
{
	sigset_t all, old;

	make_pipe(&relay_gate_r, &relay_gate_w);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if ((errno = pthread_create(&relay_early, NULL, relay_behind_gate, &rl)) != 0)
		die("pthread_create");
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	relay_early_ready = 1;
}

static void run_workload(void)
{
	pthread_t th;
	sigset_t all;
	int code;

	wl.pid = -1;
	wl.stdin_r = wl.stdin_w = -1;
	wl.exec_r = wl.exec_w = -1;
	wl.pty = -1;
	if (wl.run.flags & QP_RUN_F_TERMINAL) {
		/* the pty's slave is the workload's stdio, its master our end
		 * both ways (no stderr of its own: the pty merges them) */
		if (gi_pty_open(&wl.run, &wl.pty, &wl.stdin_r, &wl.stdin_w, &wl.out_r, &wl.out_w,
				&wl.err_w) < 0)
			die("open a pty for the workload");
		wl.err_r = -1;
	} else {
		if (wl.run.flags & QP_RUN_F_STDIN) {
			make_pipe(&wl.stdin_r, &wl.stdin_w);
			if (fcntl(wl.stdin_w, F_SETFL, O_NONBLOCK) < 0)
				die("fcntl stdin pipe");
		}
		make_pipe(&wl.out_r, &wl.out_w);
		make_pipe(&wl.err_r, &wl.err_w);
	}
	make_pipe(&wl.exec_r, &wl.exec_w);
	make_pipe(&wl.ev_r, &wl.ev_w);
	/* events are read as they come, never waited for in a read (a poll
	 * round may have seen one that is already consumed) */
	if (fcntl(wl.ev_r, F_SETFL, O_NONBLOCK) < 0)
		die("fcntl event pipe");
	if ((wl.null_fd = open("/dev/null", O_RDWR | O_CLOEXEC)) < 0)
		die("open /dev/null");

	/* the relay thread inherits a full mask: every signal reaches
	 * tinyinit's sigwaitinfo in this thread */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, NULL);
	rl.w = &wl;
	if (relay_early_ready) {
		relay_early_ready = 0;
		th = relay_early;
		if (write(relay_gate_w, "", 1) != 1)
			die("start the relay thread");
		close(relay_gate_w);
	} else if ((errno = pthread_create(&th, NULL, relay_main, &rl)) != 0)
		die("pthread_create");
	code = tinyinit_run(exec_workload, &wl,
			    &(struct tinyinit_hooks){ .on_spawn = on_spawn, .on_other_exit = on_other_exit });
	post_event(&wl, EV_EXITED, code, code < 0 ? errno : 0);
	pthread_join(th, NULL);
}


void gi_supervise(const struct qp_run *first)
{
	wl.run = *first;
	run_workload();
	/* replace: the next RUN runs in the same root, network and hostname */
	while (rl.next) {
		struct qp_run next = rl.next_run;
		gi_close_fd(&wl.stdin_w);
		gi_close_fd(&wl.pty);
		gi_close_fd(&wl.ev_r);
		gi_close_fd(&wl.ev_w);
		gi_close_fd(&wl.null_fd);
		memset(&rl, 0, sizeof(rl));
		next.rootfs = wl.run.rootfs;
		next.rootfs_tag = wl.run.rootfs_tag;
		wl.run = next;
		run_workload();
	}
}
