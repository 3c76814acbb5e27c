/* runtime/vm/monitor/mon_replace.c — warm replace: the running workload is
 * stopped and a new one RUN in the same VM, timed (replace, stop, gap). */
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

/* ---- replace: a new workload in the running VM ---- */

#define REPLACE_KILL_MS 5000 /* SIGTERM, then SIGKILL after this */

void mon_replace_free(struct vm_mon *m)
{
	if (m->rep_argv) {
		for (char **a = m->rep_argv; *a; a++)
			free(*a);
		free(m->rep_argv);
	}
	m->rep_argv = NULL;
	m->rep_client = NULL;
	m->replacing = false;
}

int mon_replace_begin(struct vm_mon *m, struct vm_client *c, const struct qp_msg *msg, qp_error **err)
{
	struct qp_msg sig = { .type = QP_MSG_SIGNAL, .u.signal.signo = SIGTERM };

	if (!m->started || m->exited || m->stopping || m->over)
		return qp_error_set(err, QP_E_STATE, 0, "pod \"%s\" is not running", m->pod->id);
	if (m->replacing)
		return qp_error_set(err, QP_E_STATE, 0, "a replace of pod \"%s\" is in progress", m->pod->id);
	if (m->paused)
		return qp_error_set(err, QP_E_STATE, 0, "pod \"%s\" is paused", m->pod->id);
	if (msg->u.replace.argc) {
		if (!(m->rep_argv = calloc(msg->u.replace.argc + 1, sizeof(char *))))
			return qp_fail(err, ENOMEM, "replace");
		for (uint32_t i = 0; i < msg->u.replace.argc; i++)
			if (!(m->rep_argv[i] = strdup(msg->u.replace.argv[i]))) {
				mon_replace_free(m);
				return qp_fail(err, ENOMEM, "replace");
			}
	}
	m->rep_request = qp_now_ns();
	m->rep_kill_at = qp_now_ms() + REPLACE_KILL_MS;
	if (qp_chan_send(m->chan, &sig, QP_VM_SEND_TIMEOUT_MS, err) < 0) {
		mon_replace_free(m);
		return qp_error_prefix(err, "send a signal to the VM");
	}
	m->rep_client = c;
	m->replacing = true;
	m->rep_exit = 0;
	return 0;
}

/* The old workload's EXIT arrived during a replace: start the new one. */
void mon_replace_exit(struct vm_mon *m)
{
	qp_error *e = NULL;

	m->rep_exit = qp_now_ns();
	m->started = false;
	if (mon_send_run(m, m->rep_argv, &e) < 0) {
		mon_client_reply_err(m->rep_client, e);
		qp_error_free(&e);
		mon_replace_free(m);
		m->exited = true; /* nothing runs: the pod ends */
		mon_set_reason(m, "replace failed");
	}
}

/* STARTED (or the exec error) of the new workload: answer the client. */
void mon_replace_done(struct vm_mon *m, qp_error *e)
{
	long long t = qp_now_ns();
	const struct qp_phase ph[] = {
		{ "replace_ms", qp_ms_between(m->rep_request, t) },
		{ "stop_ms", qp_ms_between(m->rep_request, m->rep_exit) },
		{ "gap_ms", qp_ms_between(m->rep_exit, t) },
	};
	_cleanup_free_ char *text = NULL;

	if (!e && qp_timeline_json(ph, 3, &text, NULL) < 0)
		qp_fail(&e, ENOMEM, "replace");
	if (e)
		mon_client_reply_err(m->rep_client, e);
	else
		mon_client_reply(m->rep_client, 0, 0, text);
	mon_replace_free(m);
}
