/* guest-init/exec.c — extra processes in a microVM pod (`qpod exec`): the
 * EXEC message starts one, its stdout/stderr go back as EXEC_OUT, its end as
 * EXEC_EXIT.  Runs in the relay thread; tinyinit (main thread) reaps the
 * processes and hands their codes over through the event pipe.
 *
 * At most GI_MAX_EXECS run at once; each keeps a copy of its EXEC strings
 * only until it has exec'd (the child uses them), so memory is bounded.
 * Each has at most QP_PROTO_EXEC_OUT_WINDOW bytes of EXEC_OUT out that the
 * host has not credited back (EXEC_OUT_CREDIT): past that its pipes are
 * not read, and a process writing more waits, as on a full pipe. */
#include <fcntl.h>
#include <stdbool.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "guest-init/tinyinit.h"
#include "guest-init/guest.h"

#define EXEC_DRAIN_MS 1000        /* after exit, stdio held open by leftovers */
#define EXEC_DRAIN_STALL_MS 10000 /* after exit, the host's credit waited for */

struct gi_exec {
	uint32_t id;             /* 0 = free slot */
	pid_t pid;
	int out_r, err_r, rep_r; /* -1 once closed */
	int in_w;                /* QP_RUN_F_STDIN: its stdin (exec_in), -1 once closed */
	int pty;                 /* QP_RUN_F_TERMINAL: the pty's master, else -1 */
	int has_stdin;
	int exited, code, errnum;
	uint32_t out_credit;     /* EXEC_OUT bytes the host may still take */
	uint32_t out_frames;     /* and messages (protocol.h, EXEC_OUT_CREDIT) */
	int64_t exit_ms, drain_deadline;
	char argv0[128], cwd[128]; /* for the error text (bounded copies) */
	char ctr[QP_PROTO_MAX_TAG + 1]; /* CONTAINER: its name (its cgroup's), else "" */
	char text[256];
};

static struct gi_exec execs[GI_MAX_EXECS];
/* apart from execs: each is 64 KiB, never copied */
static struct gi_inbuf exec_in[GI_MAX_EXECS];

#define FREE_SLOT ((struct gi_exec){ .out_r = -1, .err_r = -1, .rep_r = -1, .in_w = -1, .pty = -1 })

static void send_exit(uint32_t id, int code, int errnum, const char *text)
{
	struct qp_msg m = { .type = QP_MSG_EXEC_EXIT };

	m.u.exec_exit.id = id;
	m.u.exec_exit.code = code;
	m.u.exec_exit.errnum = errnum;
	m.u.exec_exit.text = text;
	gi_send_or_die(&m);
}

void gi_exec_child(const struct qp_run *r, int in, int out, int err, int rep_w)
{
	struct gi_exec_report rep = { GI_STEP_STDIO, 0 };

	tinyinit_reset_signals();
	if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
		goto fail;
	setsid();
	if (r->flags & QP_RUN_F_PAUSE) {
		/* the pod's pause: until a signal ends it; no exec closes
		 * guest-init's fds (the report pipe's end among them): closed here */
		for (int fd = 3; fd < 1024; fd++)
			close(fd);
		(void)rep_w;
		for (;;)
			pause();
	}
	if ((r->flags & QP_RUN_F_TERMINAL) && ioctl(0, TIOCSCTTY, 0) < 0)
		goto fail;
	rep.step = GI_STEP_IDS;
	if (setgroups(0, NULL) < 0 || setgid(r->gid) < 0 || setuid(r->uid) < 0)
		goto fail;
	rep.step = GI_STEP_CWD;
	if (chdir(r->cwd && r->cwd[0] ? r->cwd : "/") < 0)
		goto fail;
	rep.step = GI_STEP_EXEC;
	environ = (char **)r->env; /* execvp searches the process's own PATH */
	execvp(r->argv[0], (char *const *)r->argv);
fail:
	rep.errnum = errno;
	if (write(rep_w, &rep, sizeof(rep)) < 0)
		_exit(127);
	_exit(rep.step == GI_STEP_EXEC && (rep.errnum == ENOENT || rep.errnum == ENOTDIR) ? 127 : 126);
}

void gi_exec_ctr_child(const struct qp_run *r, struct gi_ctr *c, int in, int out, int err, int rep_w)
{
	if (gi_ctr_enter(r, c) < 0) {
		struct gi_exec_report rep = { GI_STEP_CONTAINER, errno };
		if (write(rep_w, &rep, sizeof(rep)) < 0)
			_exit(127);
		_exit(126);
	}
	gi_exec_child(r, in, out, err, rep_w);
}

int gi_exec_report_read(int fd, const struct qp_run *r, int *errnum, char *text, size_t size)
{
	static const char *const steps[] = { "", "set up stdio", "set uid/gid", "chdir", "exec",
					     "enter the container for" };
	struct gi_exec_report rep;
	char shown[QP_SHOWN_MAX];
	ssize_t n = read(fd, &rep, sizeof(rep));

	if (n < 0 && errno == EINTR)
		return -1;
	if (n == 0)
		return 0;
	if (n != sizeof(rep) || rep.step < GI_STEP_STDIO || rep.step > GI_STEP_CONTAINER) {
		*errnum = EIO;
		snprintf(text, size, "setup of the process failed");
		return 1;
	}
	*errnum = rep.errnum ? rep.errnum : EIO;
	snprintf(text, size, "%s \"%s\": %s", steps[rep.step],
		 qp_shown(rep.step == GI_STEP_CWD ? r->cwd : r->argv[0], shown), strerror(*errnum));
	return 1;
}

/* The stdio of an exec: a pty (TERMINAL), or pipes (stdin one only with
 * STDIN, else /dev/null); in[1] and *pty non-blocking ends for the relay. */
static int exec_stdio(const struct qp_run *r, int in[2], int out[2], int errp[2], int *pty)
{
	if (r->flags & QP_RUN_F_TERMINAL)
		return gi_pty_open(r, pty, &in[0], &in[1], &out[0], &out[1], &errp[1]);
	if (pipe2(out, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0)
		return -1;
	if (r->flags & QP_RUN_F_STDIN)
		return pipe2(in, O_CLOEXEC) < 0 || fcntl(in[1], F_SETFL, O_NONBLOCK) < 0 ? -1 : 0;
	return (in[0] = open("/dev/null", O_RDWR | O_CLOEXEC)) < 0 ? -1 : 0;
}

/* The running container named name, or NULL. */
static struct gi_exec *container_named(const char *name)
{
	for (int i = 0; i < GI_MAX_EXECS; i++)
		if (execs[i].id && !execs[i].exited && !strcmp(execs[i].ctr, name))
			return &execs[i];
	return NULL;
}

/* CONTAINER and JOIN: what the child needs, or EXEC_EXIT and -1. */
static int prepare_container(const struct qp_run *r, struct gi_ctr *c)
{
	struct gi_exec *target = NULL;
	char why[200];

	if (!(r->flags & (QP_RUN_F_CONTAINER | QP_RUN_F_JOIN)))
		return 0;
	target = container_named(r->rootfs_tag);
	if ((r->flags & QP_RUN_F_CONTAINER) && target) {
		send_exit(r->id, 126, EEXIST, "a container of this name is running");
		return -1;
	}
	if ((r->flags & QP_RUN_F_JOIN) && !target) {
		send_exit(r->id, 126, ESRCH, "no container of this name is running");
		return -1;
	}
	if (gi_ctr_prepare(r, target ? target->pid : 0, c, why, sizeof(why)) < 0) {
		int e = errno;
		send_exit(r->id, 126, e ? e : EIO, why);
		return -1;
	}
	return 0;
}

void gi_exec_start(const struct qp_run *r)
{
	struct gi_exec *e = NULL;
	int in[2] = { -1, -1 }, out[2] = { -1, -1 }, errp[2] = { -1, -1 }, rep[2] = { -1, -1 };
	int pty = -1, slot = -1;
	bool ctr = r->flags & (QP_RUN_F_CONTAINER | QP_RUN_F_JOIN);
	struct gi_ctr c;
	pid_t pid;

	gi_ctr_init(&c);
	for (int i = 0; i < GI_MAX_EXECS; i++) {
		if (execs[i].id == r->id) {
			send_exit(r->id, 126, EEXIST, "an exec with this id is running");
			return;
		}
		if (!execs[i].id && slot < 0)
			slot = i;
	}
	if (slot < 0) {
		send_exit(r->id, 126, EAGAIN, "too many execs running in the pod");
		return;
	}
	e = &execs[slot];
	if (exec_stdio(r, in, out, errp, &pty) < 0 || pipe2(rep, O_CLOEXEC) < 0) {
		int err = errno;
		send_exit(r->id, 126, err, r->flags & QP_RUN_F_TERMINAL ? "open a pty" : "pipe");
		goto out;
	}
	if (prepare_container(r, &c) < 0)
		goto out;
	pid = ctr ? gi_ctr_fork(r, &c) : fork();
	if (pid < 0) {
		send_exit(r->id, 126, errno, "fork");
		if (r->flags & QP_RUN_F_CONTAINER)
			gi_ctr_end(r->rootfs_tag);
		goto out;
	}
	if (pid == 0) {
		if (ctr)
			gi_exec_ctr_child(r, &c, in[0], out[1], errp[1], rep[1]);
		gi_exec_child(r, in[0], out[1], errp[1], rep[1]);
	}
	*e = FREE_SLOT;
	if (r->flags & QP_RUN_F_CONTAINER)
		snprintf(e->ctr, sizeof(e->ctr), "%s", r->rootfs_tag);
	e->id = r->id, e->pid = pid, e->code = -1;
	e->out_credit = QP_PROTO_EXEC_OUT_WINDOW;
	e->out_frames = QP_PROTO_EXEC_OUT_FRAMES;
	e->out_r = out[0], e->err_r = errp[0], e->rep_r = rep[0];
	e->in_w = in[1], e->pty = pty;
	e->has_stdin = !!(r->flags & QP_RUN_F_STDIN);
	exec_in[slot].id = r->id;
	exec_in[slot].off = exec_in[slot].len = 0;
	exec_in[slot].eof = 0;
	snprintf(e->argv0, sizeof(e->argv0), "%s", r->argv[0]);
	snprintf(e->cwd, sizeof(e->cwd), "%s", r->cwd && r->cwd[0] ? r->cwd : "/");
	out[0] = errp[0] = rep[0] = in[1] = pty = -1;
out:
	for (int i = 0; i < 2; i++) {
		gi_close_fd(&in[i]);
		gi_close_fd(&out[i]);
		gi_close_fd(&errp[i]);
		gi_close_fd(&rep[i]);
	}
	gi_close_fd(&pty);
	gi_ctr_close(&c);
}

/* Whether the host's credit lets more of e's output go. */
static bool may_send(const struct gi_exec *e)
{
	return e->out_credit && e->out_frames;
}

int gi_exec_pollfds(struct pollfd *p)
{
	int64_t now = gi_mono_ms();
	int timeout = -1;

	for (int i = 0; i < GI_MAX_EXECS; i++) {
		struct gi_exec *e = &execs[i];
		p[4 * i] = (struct pollfd){ .fd = e->id ? e->rep_r : -1, .events = POLLIN };
		p[4 * i + 1] = (struct pollfd){ .fd = e->id && may_send(e) ? e->out_r : -1, .events = POLLIN };
		p[4 * i + 2] = (struct pollfd){ .fd = e->id && may_send(e) ? e->err_r : -1, .events = POLLIN };
		p[4 * i + 3] = (struct pollfd){ .fd = e->id && exec_in[i].len ? e->in_w : -1, .events = POLLOUT };
		if (e->id && e->exited) {
			/* done already (its output ended before its reaping was
			 * heard of): its EXEC_EXIT goes now, not at the deadline */
			bool done = e->rep_r < 0 && e->out_r < 0 && e->err_r < 0;
			int64_t left = done ? 0 : e->drain_deadline - now;
			int t = left > 0 ? (int)left : 0;
			if (timeout < 0 || t < timeout)
				timeout = t;
		}
	}
	return timeout;
}

static void relay_out(struct gi_exec *e, int *fd, uint8_t stream)
{
	static uint8_t buf[QP_PROTO_MAX_PAYLOAD - 5];
	struct qp_msg m = { .type = QP_MSG_EXEC_OUT };
	ssize_t n = gi_read_chunk(fd, buf, e->out_credit < sizeof(buf) ? e->out_credit : sizeof(buf));

	if (n <= 0)
		return;
	e->out_credit -= (uint32_t)n;
	e->out_frames--;
	m.u.exec_out.id = e->id;
	m.u.exec_out.stream = stream;
	m.u.exec_out.data = buf;
	m.u.exec_out.len = (uint32_t)n;
	gi_send_or_die(&m);
}

static void read_report(struct gi_exec *e)
{
	struct qp_run what = { .cwd = e->cwd, .argv = (const char *const[]){ e->argv0, NULL } };
	int r = gi_exec_report_read(e->rep_r, &what, &e->errnum, e->text, sizeof(e->text));

	if (r < 0)
		return;
	gi_close_fd(&e->rep_r);
	if (r == 0) {
		struct qp_msg m = { .type = QP_MSG_EXEC_STARTED };
		m.u.exec_started.id = e->id;
		m.u.exec_started.pid = (uint32_t)e->pid;
		gi_send_or_die(&m);
	}
}

void gi_exec_handle(const struct pollfd *p)
{
	int64_t now = gi_mono_ms();

	for (int i = 0; i < GI_MAX_EXECS; i++) {
		struct gi_exec *e = &execs[i];
		if (!e->id)
			continue;
		if (p[4 * i].fd >= 0 && p[4 * i].revents)
			read_report(e);
		if (p[4 * i + 1].fd >= 0 && p[4 * i + 1].revents)
			relay_out(e, &e->out_r, 1);
		if (p[4 * i + 2].fd >= 0 && p[4 * i + 2].revents && may_send(e))
			relay_out(e, &e->err_r, 2);
		if (p[4 * i + 3].fd >= 0 && p[4 * i + 3].revents)
			gi_inbuf_flush(&exec_in[i], &e->in_w);
		/* done when reaped, the report read and the output drained (or
		 * its drain time is up: a leftover child may hold the pipes) */
		if (e->exited && e->rep_r < 0 &&
		    ((e->out_r < 0 && e->err_r < 0) || now >= e->drain_deadline)) {
			gi_close_fd(&e->out_r);
			gi_close_fd(&e->err_r);
			gi_close_fd(&e->in_w);
			gi_close_fd(&e->pty);
			if (e->ctr[0])
				gi_ctr_end(e->ctr);
			send_exit(e->id, e->code, e->errnum, e->text);
			*e = FREE_SLOT;
		}
	}
}

/* How long an exited exec's output is waited for: EXEC_DRAIN_MS after its
 * exit or the host's last credit (leftovers holding its pipes), or, while
 * the host's credit is waited for (a slow reader), EXEC_DRAIN_STALL_MS, but
 * never past EXEC_DRAIN_STALL_MS after the exit. */
static void drain_from(struct gi_exec *e, int64_t from)
{
	int64_t d = from + (may_send(e) ? EXEC_DRAIN_MS : EXEC_DRAIN_STALL_MS);

	e->drain_deadline = d < e->exit_ms + EXEC_DRAIN_STALL_MS ? d : e->exit_ms + EXEC_DRAIN_STALL_MS;
}

void gi_exec_reaped(pid_t pid, int code)
{
	for (int i = 0; i < GI_MAX_EXECS; i++) {
		struct gi_exec *e = &execs[i];
		if (e->id && e->pid == pid && !e->exited) {
			e->exited = 1;
			e->code = code;
			e->exit_ms = gi_mono_ms();
			drain_from(e, e->exit_ms);
			return;
		}
	}
}

static struct gi_exec *exec_by_id(uint32_t id, int *slot)
{
	for (int i = 0; i < GI_MAX_EXECS; i++)
		if (execs[i].id && execs[i].id == id) {
			*slot = i;
			return &execs[i];
		}
	return NULL;
}

void gi_exec_winsize(const struct qp_msg *m)
{
	int i;
	struct gi_exec *e = exec_by_id(m->u.winsize.id, &i);

	if (!e)
		gi_send_error(QP_PERR_STATE, 0, "WINSIZE: no exec %u", m->u.winsize.id);
	else
		gi_pty_winsize(e->pty, m->u.winsize.rows, m->u.winsize.cols);
}

/* A signal for an exec that already ended (its EXEC_EXIT on its way) is
 * the race every kill has with an exit: nothing to do. */
void gi_exec_signal(const struct qp_msg *m)
{
	int i;
	struct gi_exec *e = exec_by_id(m->u.exec_signal.id, &i);

	if (e && !e->exited)
		kill(e->pid, (int)m->u.exec_signal.signo);
}

void gi_exec_stdin(const struct qp_msg *m)
{
	int i;
	struct gi_exec *e = exec_by_id(m->u.exec_stdin.id, &i);

	/* an exec that ended has no credit to give: its client is done */
	if (!e || !e->has_stdin)
		gi_send_error(QP_PERR_STATE, 0, "EXEC_STDIN: exec %u %s", m->u.exec_stdin.id,
			      e ? "has no stdin flag" : "is not running");
	else if (e->pty >= 0 && m->u.exec_stdin.len == 0)
		gi_pty_hangup(&exec_in[i], &e->in_w, &e->out_r, &e->pty);
	else
		gi_inbuf_put(&exec_in[i], &e->in_w, m->u.exec_stdin.data, m->u.exec_stdin.len);
}

void gi_exec_out_credit(const struct qp_msg *m)
{
	int i;
	struct gi_exec *e = exec_by_id(m->u.exec_out_credit.id, &i);

	if (!e)
		return; /* it ended: its EXEC_EXIT crossed the credit */
	if (e->out_credit + m->u.exec_out_credit.bytes > QP_PROTO_EXEC_OUT_WINDOW ||
	    e->out_frames + m->u.exec_out_credit.frames > QP_PROTO_EXEC_OUT_FRAMES)
		gi_fatal(QP_PERR_PROTOCOL, 0, "control channel: EXEC_OUT_CREDIT beyond the output sent");
	e->out_credit += m->u.exec_out_credit.bytes;
	e->out_frames += m->u.exec_out_credit.frames;
	if (e->exited)
		drain_from(e, gi_mono_ms());
}
