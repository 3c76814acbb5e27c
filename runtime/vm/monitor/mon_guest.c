/* runtime/vm/monitor/mon_guest.c — the monitor's relay of guest messages: HELLO's
 * followers (STARTED, EXITED, exec output and status, meminfo), each
 * checked before it is believed, and handed to the client it belongs to. */
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

/* ---- guest messages ---- */

/* A bounded printable copy of guest text. */
static void clean_text(const char *s, char *out, size_t size)
{
	size_t i = 0;
	for (; s && s[i] && i + 1 < size; i++)
		out[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
	out[i] = '\0';
}

void mon_answer_start(struct vm_mon *m, qp_error *e)
{
	for (int i = 0; i < MAX_CLIENTS; i++) {
		struct vm_client *c = &m->cl[i];
		if (c->ch && c->want_start) {
			c->want_start = false;
			if (e)
				mon_client_reply_err(c, e);
			else
				mon_client_reply(c, 0, 0, "");
		}
	}
}

/* One message from the guest; -1 ends the pod with *err. */
static int guest_message(struct vm_mon *m, const struct qp_msg *msg, qp_error **err)
{
	struct vm_client *c;
	char text[512];

	switch (msg->type) {
	case QP_MSG_STDOUT:
	case QP_MSG_STDERR:
		/* held while our reader does not take it, within the window */
		return mon_out_put(m, msg->type == QP_MSG_STDOUT ? 1 : 2, msg->u.data.data, msg->u.data.len,
				   err);
	case QP_MSG_STDIN_CREDIT:
		if (m->stdin_credit + msg->u.credit.bytes > QP_PROTO_STDIN_WINDOW)
			return qp_error_set(err, QP_E_GUEST, 0,
					    "the VM credited more STDIN than it was sent (%u + %u bytes)",
					    m->stdin_credit, msg->u.credit.bytes);
		m->stdin_credit += msg->u.credit.bytes;
		return 0;
	case QP_MSG_STARTED:
		m->started = true;
		if (m->replacing) {
			mon_replace_done(m, NULL);
			return 0;
		}
		m->tl.started = qp_now_ns();
		m->tl.guest_exec_ns = msg->u.started.exec_ns;
		/* now, for `qpod state`; with create + start, the request is
		 * create's, so start_total includes the wait for start */
		vm_tl_save(m->pod->dirfd, &m->tl);
		mon_answer_start(m, NULL);
		return 0;
	case QP_MSG_EXIT:
		if (m->replacing) {
			mon_replace_exit(m);
			return 0;
		}
		m->exited = true;
		m->exit_code = msg->u.exit.code;
		mon_set_reason(m, "exited with status %d", msg->u.exit.code);
		return 0;
	case QP_MSG_ERROR:
		clean_text(msg->u.error.text, text, sizeof(text));
		if (msg->u.error.code == QP_PERR_EXEC) {
			/* EXIT 127 follows; the error gives qpod's exit code */
			qp_error_free(&m->exec_err);
			qp_error_set(&m->exec_err, QP_E_EXEC, 0, "%s", text);
			if (m->exec_err)
				m->exec_err->errnum = msg->u.error.errnum;
			if (m->replacing)
				mon_replace_done(m, m->exec_err);
			else
				mon_answer_start(m, m->exec_err);
			return 0;
		}
		if (msg->u.error.code == QP_PERR_STATE) {
			qp_debug("vm %s: guest: %s", m->pod->id, text);
			return 0;
		}
		return qp_error_set(err, QP_E_GUEST, msg->u.error.errnum, "the VM failed: %s", text);
	case QP_MSG_MEMINFO:
		for (int i = 0; i < MAX_CLIENTS; i++)
			if (m->cl[i].ch && m->cl[i].want_meminfo) {
				m->cl[i].want_meminfo = false;
				mon_client_send(&m->cl[i], msg);
			}
		return 0;
	case QP_MSG_CTR_STATS:
	case QP_MSG_CTR_UPDATED:
		for (int i = 0; i < MAX_CLIENTS; i++)
			if (m->cl[i].ch && !strcmp(m->cl[i].want_ctr_stats, msg->type == QP_MSG_CTR_STATS
									? msg->u.ctr_stats.name
									: msg->u.ctr_update.name)) {
				m->cl[i].want_ctr_stats[0] = '\0';
				mon_client_send(&m->cl[i], msg);
			}
		return 0;
	case QP_MSG_EXEC_STARTED:
		if ((c = mon_exec_client(m, msg->u.exec_started.id)))
			mon_client_send(c, msg);
		return 0;
	case QP_MSG_EXEC_OUT:
		if ((c = mon_exec_client(m, msg->u.exec_out.id))) {
			if (c->out_owed + msg->u.exec_out.len > QP_PROTO_EXEC_OUT_WINDOW ||
			    c->out_owed_frames + 1 > QP_PROTO_EXEC_OUT_FRAMES)
				return qp_error_set(err, QP_E_GUEST, 0, "the VM sent more EXEC_OUT than credited");
			c->out_owed += msg->u.exec_out.len;
			c->out_owed_frames++;
			mon_client_send(c, msg);
		} else {
			mon_exec_out_credit(m, msg->u.exec_out.id, msg->u.exec_out.len, 1); /* dropped */
		}
		return 0;
	case QP_MSG_EXEC_CREDIT:
		if ((c = mon_exec_client(m, msg->u.exec_credit.id))) {
			if (c->stdin_credit + msg->u.exec_credit.bytes > QP_PROTO_STDIN_WINDOW)
				return qp_error_set(err, QP_E_GUEST, 0,
						    "the VM credited more EXEC_STDIN than it was sent");
			c->stdin_credit += msg->u.exec_credit.bytes;
			mon_client_send(c, msg);
		}
		return 0;
	case QP_MSG_EXEC_EXIT:
		if ((c = mon_exec_client(m, msg->u.exec_exit.id))) {
			c->exec_id = 0; /* ended: no credit goes back for it */
			c->out_owed = c->out_owed_frames = 0;
			mon_client_send(c, msg);
		}
		return 0;
	default: /* a late HELLO: harmless */
		return 0;
	}
}

int mon_guest_input(struct vm_mon *m, qp_error **err)
{
	struct qp_msg msg;
	int k;

	if (qp_chan_fill(m->chan, err) < 0)
		return -1;
	while ((k = qp_chan_next(m->chan, &msg, err)) != 0) {
		if (k < 0 || qp_msg_check_sender(&msg, QP_SENDER_GUEST, err) < 0)
			return qp_error_prefix(err, "VM channel");
		if (guest_message(m, &msg, err) < 0)
			return -1;
	}
	return 0;
}
