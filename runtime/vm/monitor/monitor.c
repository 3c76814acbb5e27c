/* runtime/vm/monitor/monitor.c — the monitor of one microVM pod (see vm.h for the
 * process model; monitor.h for how it is split): QEMU's lifecycle and the
 * reason the VM stopped, pause and signals, the serve loop that drives the
 * other parts until the VM is over, and the teardown. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pod.h"
#include "util/cleanup.h"
#include "util/io.h"
#include "util/log.h"
#include "vm/libvirt/libvirt.h"
#include "vm/monitor/monitor.h"
#include "vm/qemu/qemu.h"

pid_t vm_mon_qemu_pid(const struct vm_mon *m)
{
	return m->qemu;
}

const char *vm_mon_accel(const struct vm_mon *m)
{
	return m->kvm ? "kvm" : "tcg";
}

int mon_vmdir(const struct vm_mon *m)
{
	return m->vmdir >= 0 ? m->vmdir : m->pod->dirfd;
}

void mon_ctl_close(struct vm_mon *m)
{
	if (m->listen_fd >= 0)
		close(m->listen_fd);
	m->listen_fd = -1;
	unlinkat(m->pod->dirfd, QP_VM_CTL_SOCK, 0);
}

/* A taken spare's holder says how QEMU ended ("exit STATUS"), soon after
 * it did; false if it does not. */
static bool holder_status(struct vm_mon *m, int *status)
{
	char line[64];
	struct pollfd p = { .fd = m->holder_fd, .events = POLLIN };
	ssize_t n;

	if (m->holder_fd < 0 || poll(&p, 1, 500) != 1 || (n = read(m->holder_fd, line, sizeof(line) - 1)) <= 0)
		return false;
	line[n] = '\0';
	return sscanf(line, "exit %d", status) == 1;
}

int vm_mon_poll_fd(struct vm_mon *m)
{
	if (m->ready_fd < 0)
		m->ready_fd = eventfd(1, EFD_CLOEXEC);
	return m->ready_fd;
}

void mon_set_reason(struct vm_mon *m, const char *fmt, ...)
{
	va_list ap;

	if (m->reason[0])
		return; /* the first cause wins */
	va_start(ap, fmt);
	vsnprintf(m->reason, sizeof(m->reason), fmt, ap);
	va_end(ap);
}

/* Reap QEMU if it has exited; true once it is gone. */
bool mon_qemu_gone(struct vm_mon *m)
{
	if (m->qemu <= 0 || m->qemu_reaped)
		return true;
	if (m->qemu_foreign) { /* not our child: its pidfd says when it is gone */
		struct pollfd p = { .fd = m->qemu_pidfd, .events = POLLIN };
		if (m->qemu_pidfd >= 0 ? poll(&p, 1, 0) != 1 : kill(m->qemu, 0) == 0 || errno != ESRCH)
			return false;
		m->qemu_reaped = true;
		return true;
	}
	if (waitpid(m->qemu, &m->qemu_status, WNOHANG) != m->qemu)
		return false;
	m->qemu_reaped = true;
	return true;
}

void mon_qemu_reason(struct vm_mon *m)
{
	int st = m->qemu_status;

	char tail[200];

	if (m->lv) { /* no exit status of libvirtd's child: libvirt's event says */
		if (m->reason[0])
			return; /* known already (the workload's exit): no wait for the event */
		vm_lv_stop_reason(m->lv, 5000, tail, sizeof(tail));
		mon_set_reason(m, "%s", tail[0] ? tail : "qemu (run by libvirtd) ended");
		return;
	}
	if (m->qemu_foreign && !m->reason[0] && !holder_status(m, &st)) {
		mon_set_reason(m, "qemu (a spare's, its holder gone) ended");
		return;
	}
	vm_qemu_log_tail(mon_vmdir(m), tail, sizeof(tail));
	/* QEMU's own last words, unless it was killed from outside */
	if (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)
		mon_set_reason(m, "qemu killed by signal %d (%s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
	else if (WIFSIGNALED(st))
		mon_set_reason(m, "qemu killed by signal %d (%s)%s%s", WTERMSIG(st), strsignal(WTERMSIG(st)),
			   tail[0] ? ": " : "", tail);
	else if (WIFEXITED(st) && WEXITSTATUS(st) != 0)
		mon_set_reason(m, "qemu exited with status %d%s%s", WEXITSTATUS(st), tail[0] ? ": " : "",
			   tail);
	else
		mon_set_reason(m, "the VM powered off");
}

/* SIGKILL QEMU and reap it (bounded: it is our child and cannot resist). */
static void qemu_kill(struct vm_mon *m)
{
	if (mon_qemu_gone(m))
		return;
	if (m->lv) { /* libvirt kills and reaps it, and returns when it is gone */
		vm_lv_destroy(m->lv);
		for (int i = 0; i < 500 && !mon_qemu_gone(m); i++)
			usleep(10000);
		return;
	}
	if (m->qemu_foreign) { /* a spare's: its holder reaps it */
		struct pollfd p = { .fd = m->qemu_pidfd, .events = POLLIN };
		syscall(SYS_pidfd_send_signal, m->qemu_pidfd, SIGKILL, NULL, 0);
		poll(&p, 1, 2000);
		mon_qemu_gone(m);
		return;
	}
	kill(m->qemu, SIGKILL);
	if (waitpid(m->qemu, &m->qemu_status, 0) == m->qemu)
		m->qemu_reaped = true;
}

void mon_qemu_discard(struct vm_mon *m)
{
	qemu_kill(m);
	if (m->chan) {
		close(m->chan->fd);
		qp_chan_free(m->chan);
		m->chan = NULL;
	}
	if (m->qemu_pidfd >= 0)
		close(m->qemu_pidfd);
	m->qemu_pidfd = -1;
	vm_qmp_free(m->qmp);
	m->qmp = NULL;
	m->qemu = 0;
	m->qemu_reaped = false;
	m->qemu_status = 0;
	m->reason[0] = '\0';
	unlinkat(mon_vmdir(m), QP_VM_CHAN_SOCK, 0);
	unlinkat(mon_vmdir(m), QP_VM_QMP_SOCK, 0);
}

/* Wait up to timeout_ms for QEMU to exit by itself, then kill it. */
static void qemu_stop(struct vm_mon *m, int timeout_ms)
{
	long long deadline = qp_now_ms() + timeout_ms;

	while (!mon_qemu_gone(m) && qp_now_ms() < deadline) {
		struct pollfd p = { .fd = m->qemu_pidfd, .events = POLLIN };
		poll(&p, m->qemu_pidfd >= 0 ? 1 : 0, 10);
	}
	qemu_kill(m);
}

/* Add the end of qemu.log to an error: QEMU says there why it stopped. */
int mon_with_qemu_log(struct vm_mon *m, qp_error **err)
{
	char tail[256];

	vm_qemu_log_tail(mon_vmdir(m), tail, sizeof(tail));
	if (tail[0] && err && *err)
		qp_error_prefix(err, "qemu: %s; then", tail);
	return -1;
}

int vm_mon_pause(struct vm_mon *m, bool pause, qp_error **err)
{
	if (m->over || m->stopping)
		return qp_error_set(err, QP_E_STATE, 0, "pod \"%s\" is stopped", m->pod->id);
	if (pause == m->paused)
		return qp_error_set(err, QP_E_STATE, 0, "pod \"%s\" is %s", m->pod->id,
				    pause ? "paused already" : "not paused");
	if (m->lv) {
		if (vm_lv_pause(m->lv, pause, err) < 0)
			return -1;
	} else {
		if (!m->qmp && vm_qmp_connect(mon_vmdir(m), &m->qmp, err) < 0)
			return -1;
		if (vm_qmp_execute(m->qmp, pause ? "stop" : "cont", err) < 0)
			return qp_error_prefix(err, "%s the VM", pause ? "pause" : "resume");
	}
	m->paused = pause;
	if (pause)
		return state_write_file(m->pod->dirfd, QP_VM_PAUSED, "1\n", 2, err);
	unlinkat(m->pod->dirfd, QP_VM_PAUSED, 0);
	return 0;
}

void mon_begin_stop(struct vm_mon *m)
{
	struct qp_msg msg = { .type = QP_MSG_SHUTDOWN };

	if (m->stopping)
		return;
	/* a paused guest would not see SHUTDOWN: let it run again first */
	if (m->paused)
		vm_mon_pause(m, false, NULL);
	m->stopping = true;
	m->stop_deadline = qp_now_ms() + QP_VM_STOP_TIMEOUT_MS;
	/* no channel yet (QEMU never opened it): nothing to tell the guest */
	if (m->chan && !m->chan->broken)
		qp_chan_send(m->chan, &msg, 100, NULL);
}

int vm_mon_signal(struct vm_mon *m, int sig, qp_error **err)
{
	struct qp_msg msg = { .type = QP_MSG_SIGNAL };

	if (m->over || m->exited)
		return qp_error_set(err, QP_E_STATE, 0, "pod \"%s\" is stopped", m->pod->id);
	if (!m->run_sent) {
		/* created, nothing runs yet: the signal ends the pod (OCI kill of
		 * a created container) unless it is one that would not kill */
		if (sig == SIGCHLD || sig == SIGCONT || sig == SIGURG || sig == SIGWINCH || sig == 0)
			return 0;
		mon_set_reason(m, "killed by signal %d before start", sig);
		mon_begin_stop(m);
		return 0;
	}
	if (sig < 1 || sig > QP_PROTO_MAX_SIGNAL)
		return qp_error_set(err, QP_E_INVALID, 0, "signal %d out of range", sig);
	msg.u.signal.signo = (uint32_t)sig;
	if (qp_chan_send(m->chan, &msg, QP_VM_SEND_TIMEOUT_MS, err) < 0)
		return qp_error_prefix(err, "send a signal to the VM");
	return 0;
}

/* ---- the loop ---- */

static void write_stopped(struct vm_mon *m)
{
	char line[300];
	int n = snprintf(line, sizeof(line), "%s\n", m->reason[0] ? m->reason : "stopped");

	state_write_file(m->pod->dirfd, QP_VM_STOPPED, line, (size_t)n, NULL);
}

int vm_mon_serve(struct vm_mon *m, int sigfd, int *code, qp_error **err)
{
	qp_error *fail = NULL;

	*code = 0;
	while (!m->over) {
		struct pollfd p[7 + MAX_CLIENTS];
		int timeout = -1;

		if (m->exited)
			mon_begin_stop(m); /* SHUTDOWN: the guest waits for it after EXIT */
		if (m->replacing && !m->rep_exit) {
			long long left = m->rep_kill_at - qp_now_ms();
			if (left <= 0) {
				vm_mon_signal(m, SIGKILL, NULL);
				m->rep_kill_at = qp_now_ms() + 3600 * 1000LL;
			} else
				timeout = (int)left;
		}
		/* a guest that never answers RUN: a bounded, stated wait */
		if (m->run_sent && !m->started && !m->exited && !m->stopping && !m->exec_err) {
			long long left = m->start_deadline - qp_now_ms();
			if (left <= 0) {
				/* kept as the workload's failure: it is what the
				 * pod ends with, whatever the channel says next */
				qp_error_set(&m->exec_err, QP_E_TIMEOUT, 0,
					     "the VM did not start the workload within %d ms of RUN",
					     mon_start_timeout_ms(m));
				mon_set_reason(m, "%s", m->exec_err ? m->exec_err->msg : "start timeout");
				mon_answer_start(m, m->exec_err);
				mon_begin_stop(m);
			} else
				timeout = (int)left;
		}
		if (m->stopping) {
			long long left = m->stop_deadline - qp_now_ms();
			if (left <= 0) {
				qemu_kill(m);
				mon_set_reason(m, "qemu killed after a %d ms stop timeout", QP_VM_STOP_TIMEOUT_MS);
			}
			timeout = left > 0 ? (int)left : 0;
		}
		int t = mon_tty_poll(m);
		if (t >= 0 && (timeout < 0 || t < timeout))
			timeout = t;
		p[0] = (struct pollfd){ .fd = m->chan->broken ? -1 : m->chan->fd, .events = POLLIN };
		p[1] = (struct pollfd){ .fd = m->qemu_pidfd, .events = POLLIN };
		p[2] = (struct pollfd){ .fd = m->listen_fd, .events = POLLIN };
		p[3] = (struct pollfd){ .fd = sigfd, .events = POLLIN };
		for (int i = 0; i < MAX_CLIENTS; i++)
			p[4 + i] = (struct pollfd){ .fd = m->cl[i].ch ? m->cl[i].ch->fd : -1,
						    .events = POLLIN };
		/* our stdin to the workload's, within the guest's credit */
		p[4 + MAX_CLIENTS] = (struct pollfd){
			.fd = m->stdin_fd >= 0 && m->stdin_credit && !m->exited && !m->stopping ? m->stdin_fd : -1,
			.events = POLLIN };
		/* output our readers have not taken yet */
		for (int i = 0; i < 2; i++)
			p[5 + MAX_CLIENTS + i] = (struct pollfd){ .fd = mon_out_pollfd(m, i), .events = POLLOUT };
		if (m->qemu_pidfd < 0 && timeout < 0)
			timeout = 50; /* no pidfd: poll for QEMU's end */
		if (poll(p, QP_ARRAY_SIZE(p), timeout) < 0) {
			if (errno == EINTR)
				continue;
			qp_fail(&fail, errno, "poll");
			break;
		}
		if (p[3].revents & POLLIN) {
			struct signalfd_siginfo si;
			while (read(sigfd, &si, sizeof(si)) == sizeof(si))
				vm_mon_signal(m, (int)si.ssi_signo, NULL);
		}
		if (p[0].revents && mon_guest_input(m, &fail) < 0) {
			/* EOF without EXIT: QEMU died or the guest broke down */
			if (!m->exited) {
				qemu_stop(m, 200);
				if (m->qemu_reaped)
					mon_qemu_reason(m);
				mon_set_reason(m, "%s", fail ? fail->msg : "VM channel failed");
				qp_error_prefix(&fail, "the VM ended without an exit status");
			} else {
				qp_error_free(&fail);
			}
			mon_begin_stop(m);
		}
		if (p[4 + MAX_CLIENTS].revents && mon_stdin_input(m, &fail) < 0)
			mon_begin_stop(m);
		for (int i = 0; i < 2; i++)
			if (p[5 + MAX_CLIENTS + i].fd >= 0 && p[5 + MAX_CLIENTS + i].revents)
				mon_out_flush(m, i);
		if (p[2].revents)
			mon_client_accept(m);
		for (int i = 0; i < MAX_CLIENTS; i++)
			if (p[4 + i].fd >= 0 && p[4 + i].revents)
				mon_client_input(m, &m->cl[i]);
		if (mon_qemu_gone(m)) {
			mon_qemu_reason(m);
			/* the channel may still hold the last output and EXIT */
			if (!m->chan->broken)
				while (mon_guest_input(m, NULL) == 0 && !m->exited) {
					struct pollfd q = { .fd = m->chan->fd, .events = POLLIN };
					if (poll(&q, 1, 50) <= 0)
						break;
				}
			if (!m->exited && !fail && !m->exec_err)
				qp_error_set(&fail, QP_E_GENERIC, 0, "the VM ended without an exit status: %s",
					     m->reason);
			m->over = true;
		}
	}
	m->tl.ended = qp_now_ns();
	mon_tty_restore(m);
	write_stopped(m);
	vm_tl_save(m->pod->dirfd, &m->tl);
	/* clients still waiting learn the end */
	for (int i = 0; i < MAX_CLIENTS; i++) {
		struct vm_client *c = &m->cl[i];
		if (c->ch && (c->want_start || c->exec_id || c->want_meminfo || c->want_ctr_stats[0] ||
			      c == m->rep_client)) {
			qp_error *e = NULL;
			qp_error_set(&e, QP_E_STATE, 0, "the pod stopped: %s", m->reason);
			mon_client_reply_err(c, e);
			qp_error_free(&e);
		}
		mon_client_close(c);
	}
	mon_replace_free(m);
	/* what our readers have not taken yet, bounded */
	mon_out_drain(m);
	if (m->exec_err) {
		qp_error_free(&fail);
		*err = m->exec_err;
		m->exec_err = NULL;
		return -1;
	}
	if (fail) {
		*err = fail;
		return -1;
	}
	*code = m->exit_code < 0 || m->exit_code > 255 ? 255 : m->exit_code;
	return 0;
}

/* Everything but QEMU itself and the guest channel. */
static void free_rest(struct vm_mon *m)
{
	for (int i = 0; i < MAX_CLIENTS; i++)
		mon_client_close(&m->cl[i]);
	mon_ctl_close(m);
	if (m->qemu_pidfd >= 0)
		close(m->qemu_pidfd);
	if (m->ready_fd >= 0)
		close(m->ready_fd);
	if (m->holder_fd >= 0)
		close(m->holder_fd);
	mon_fwmark_close(m);
	mon_out_close(m);
	vm_qmp_free(m->qmp);
	vm_lv_free(m->lv);
	vm_mounts_free(&m->mounts);
	unlinkat(m->pod->dirfd, QP_VM_PAUSED, 0);
	qp_error_free(&m->exec_err);
}

void vm_mon_free(struct vm_mon *m)
{
	if (!m)
		return;
	mon_tty_restore(m);
	if (m->qemu > 0 && !mon_qemu_gone(m)) {
		mon_begin_stop(m);
		qemu_stop(m, m->chan ? 1000 : 0);
	}
	if (m->chan) {
		close(m->chan->fd);
		qp_chan_free(m->chan);
	}
	free_rest(m);
	unlinkat(mon_vmdir(m), QP_VM_CHAN_SOCK, 0);
	unlinkat(mon_vmdir(m), QP_VM_QMP_SOCK, 0);
	if (m->vmdir >= 0)
		close(m->vmdir);
	/* a taken spare's dir is ours to remove once its QEMU is gone */
	if (m->spares_fd >= 0) {
		if (m->spare_name[0])
			state_remove_tree(m->spares_fd, m->spare_name);
		close(m->spares_fd);
	}
	free(m);
}

int mon_release(struct vm_mon *m)
{
	int fd = -1;

	if (m->chan) {
		fd = m->chan->fd;
		qp_chan_free(m->chan);
	}
	free_rest(m);
	if (m->vmdir >= 0)
		close(m->vmdir);
	if (m->spares_fd >= 0)
		close(m->spares_fd);
	free(m);
	return fd;
}
