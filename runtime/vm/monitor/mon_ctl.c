/* runtime/vm/monitor/mon_ctl.c — the monitor's ctl.sock server: accepting other
 * qpod processes (start, kill, exec, meminfo, replace, shutdown) and
 * answering them; a broken client only loses its own connection. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
#include "vm/monitor/monitor.h"

/* ---- clients ---- */

void mon_exec_out_credit(struct vm_mon *m, uint32_t id, uint32_t bytes, uint32_t frames)
{
	struct qp_msg msg = { .type = QP_MSG_EXEC_OUT_CREDIT };

	if (!m->chan || m->exited || !id || !frames)
		return;
	msg.u.exec_out_credit.id = id;
	msg.u.exec_out_credit.bytes = bytes;
	msg.u.exec_out_credit.frames = frames;
	qp_chan_send(m->chan, &msg, QP_VM_SEND_TIMEOUT_MS, NULL);
}

void mon_client_close(struct vm_client *c)
{
	if (!c || !c->ch)
		return;
	/* a client with an exec (killed, dropped, or its container's
	 * delete): the pid the caller held was it, so what runs in the guest
	 * goes too, as runc's exec'd process or container would; its output
	 * in flight is dropped, and credited so the exec's end comes at once */
	if (c->mon && c->exec_id && c->mon->chan && !c->mon->exited && !c->mon->over) {
		struct qp_msg kill_msg = { .type = QP_MSG_EXEC_SIGNAL };
		kill_msg.u.exec_signal.id = c->exec_id;
		kill_msg.u.exec_signal.signo = SIGKILL;
		qp_chan_send(c->mon->chan, &kill_msg, QP_VM_SEND_TIMEOUT_MS, NULL);
		mon_exec_out_credit(c->mon, c->exec_id, c->out_owed, c->out_owed_frames);
	}
	close(c->ch->fd);
	qp_chan_free(c->ch);
	*c = (struct vm_client){ 0 };
}

void mon_client_send(struct vm_client *c, const struct qp_msg *msg)
{
	if (!c)
		return;
	/* a client that does not read within the deadline loses its link */
	if (c->ch && qp_chan_send(c->ch, msg, 1000, NULL) < 0)
		mon_client_close(c);
}

void mon_client_reply(struct vm_client *c, int status, int errnum, const char *text)
{
	struct qp_msg msg = { .type = QP_MSG_CTL_REPLY };
	char buf[QP_PROTO_MAX_TEXT + 1];

	snprintf(buf, sizeof(buf), "%s", text ? text : "");
	msg.u.reply.status = status;
	msg.u.reply.errnum = errnum;
	msg.u.reply.text = buf;
	mon_client_send(c, &msg);
}

void mon_client_reply_err(struct vm_client *c, qp_error *e)
{
	mon_client_reply(c, e ? e->code : QP_E_GENERIC, e ? e->errnum : 0, e && e->msg ? e->msg : "failed");
}

void mon_client_accept(struct vm_mon *m)
{
	int fd = accept4(m->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

	if (fd < 0)
		return;
	for (int i = 0; i < MAX_CLIENTS; i++) {
		if (!m->cl[i].ch) {
			/* room for an exec's whole window (protocol.h, EXEC_OUT):
			 * best effort, the default holds it too */
			int sndbuf = 2 * QP_PROTO_EXEC_OUT_WINDOW;
			setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
			if (!(m->cl[i].ch = qp_chan_new(fd)))
				break;
			m->cl[i].mon = m;
			return;
		}
	}
	close(fd); /* full: the client sees EOF */
}

static void client_request(struct vm_mon *m, struct vm_client *c, struct qp_msg *msg)
{
	qp_error *e = NULL;

	switch (msg->type) {
	case QP_MSG_CTL_START:
		if (m->over || m->stopping)
			qp_error_set(&e, QP_E_STATE, 0, "pod \"%s\" is stopped", m->pod->id);
		else if (vm_mon_run(m, &e) == 0) {
			c->want_start = true; /* answered on STARTED or the exec error */
			return;
		}
		break;
	case QP_MSG_SIGNAL:
		vm_mon_signal(m, (int)msg->u.signal.signo, &e);
		break;
	case QP_MSG_CTL_PAUSE:
	case QP_MSG_CTL_RESUME:
		vm_mon_pause(m, msg->type == QP_MSG_CTL_PAUSE, &e);
		break;
	case QP_MSG_SHUTDOWN:
		mon_set_reason(m, "stopped on request");
		mon_begin_stop(m);
		break;
	case QP_MSG_CTL_REPLACE:
		if (mon_replace_begin(m, c, msg, &e) == 0)
			return; /* answered when the new workload runs */
		break;
	case QP_MSG_CTR_STATS_REQ:
	case QP_MSG_CTR_UPDATE:
		/* answered by CTR_STATS or CTR_UPDATED, routed by the name */
		if (m->paused)
			qp_error_set(&e, QP_E_STATE, 0, "pod \"%s\" is paused: its guest cannot answer", m->pod->id);
		else if (c->want_ctr_stats[0])
			qp_error_set(&e, QP_E_STATE, 0, "one container request at a time");
		else if (qp_chan_send(m->chan, msg, QP_VM_SEND_TIMEOUT_MS, &e) == 0) {
			snprintf(c->want_ctr_stats, sizeof(c->want_ctr_stats), "%s",
				 msg->type == QP_MSG_CTR_UPDATE ? msg->u.ctr_update.name : msg->u.ctr_stats.name);
			return;
		}
		break;
	case QP_MSG_MEMINFO_REQ:
		if (m->paused) {
			qp_error_set(&e, QP_E_STATE, 0, "pod \"%s\" is paused: its guest cannot answer",
				     m->pod->id);
			break;
		}
		if (!c->want_meminfo && qp_chan_send(m->chan, msg, QP_VM_SEND_TIMEOUT_MS, &e) == 0)
			c->want_meminfo = true;
		if (!e)
			return;
		break;
	case QP_MSG_EXEC:
		if (!m->started || m->exited || m->stopping)
			qp_error_set(&e, QP_E_STATE, 0, "pod \"%s\" is not running", m->pod->id);
		else if (m->paused) /* as runc: no exec into a paused pod */
			qp_error_set(&e, QP_E_STATE, 0, "pod \"%s\" is paused", m->pod->id);
		else if (c->exec_id)
			qp_error_set(&e, QP_E_STATE, 0, "one exec per connection");
		else {
			msg->u.run.id = ++m->next_exec ? m->next_exec : ++m->next_exec;
			if (qp_chan_send(m->chan, msg, QP_VM_SEND_TIMEOUT_MS, &e) == 0) {
				c->exec_id = msg->u.run.id;
				c->stdin_credit = msg->u.run.flags & QP_RUN_F_STDIN ? QP_PROTO_STDIN_WINDOW : 0;
				return;
			}
		}
		break;
	case QP_MSG_EXEC_STDIN:
	case QP_MSG_EXEC_SIGNAL:
	case QP_MSG_EXEC_OUT_CREDIT:
	case QP_MSG_WINSIZE:
		/* the client's exec, whatever id it names; its input within its
		 * credit, its output's credit within what it was sent (more
		 * would end the guest: the monitor checks) */
		if (!c->exec_id)
			qp_error_set(&e, QP_E_STATE, 0, "%s without an exec", qp_msg_type_name(msg->type));
		else if (msg->type == QP_MSG_EXEC_STDIN && msg->u.exec_stdin.len > c->stdin_credit)
			qp_error_set(&e, QP_E_INVALID, 0, "EXEC_STDIN beyond its credit");
		else if (msg->type == QP_MSG_EXEC_OUT_CREDIT && (msg->u.exec_out_credit.bytes > c->out_owed ||
								 msg->u.exec_out_credit.frames > c->out_owed_frames))
			qp_error_set(&e, QP_E_INVALID, 0, "EXEC_OUT_CREDIT beyond the output sent");
		else {
			if (msg->type == QP_MSG_EXEC_OUT_CREDIT) {
				msg->u.exec_out_credit.id = c->exec_id;
				c->out_owed -= msg->u.exec_out_credit.bytes;
				c->out_owed_frames -= msg->u.exec_out_credit.frames;
			} else if (msg->type == QP_MSG_EXEC_STDIN) {
				msg->u.exec_stdin.id = c->exec_id;
				c->stdin_credit -= msg->u.exec_stdin.len;
			} else if (msg->type == QP_MSG_EXEC_SIGNAL) {
				msg->u.exec_signal.id = c->exec_id;
			} else {
				msg->u.winsize.id = c->exec_id;
			}
			if (qp_chan_send(m->chan, msg, QP_VM_SEND_TIMEOUT_MS, &e) == 0)
				return;
		}
		break;
	default:
		qp_error_set(&e, QP_E_INVALID, 0, "%s is not a request", qp_msg_type_name(msg->type));
		break;
	}
	if (e)
		mon_client_reply_err(c, e);
	else
		mon_client_reply(c, 0, 0, "");
	qp_error_free(&e);
}

void mon_client_input(struct vm_mon *m, struct vm_client *c)
{
	struct qp_msg msg;
	qp_error *e = NULL;
	int k;

	if (qp_chan_fill(c->ch, &e) < 0) {
		qp_error_free(&e);
		if (m->rep_client == c)
			m->rep_client = NULL;
		mon_client_close(c);
		return;
	}
	while (c->ch && (k = qp_chan_next(c->ch, &msg, &e)) != 0) {
		if (k < 0 || qp_msg_check_sender(&msg, QP_SENDER_HOST | QP_SENDER_CTL, &e) < 0) {
			mon_client_reply_err(c, e);
			qp_error_free(&e);
			mon_client_close(c);
			return;
		}
		client_request(m, c, &msg);
	}
}

struct vm_client *mon_exec_client(struct vm_mon *m, uint32_t id)
{
	for (int i = 0; i < MAX_CLIENTS; i++)
		if (m->cl[i].ch && m->cl[i].exec_id == id)
			return &m->cl[i];
	return NULL;
}
