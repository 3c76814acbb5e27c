/* runtime/vm/monitor/ctl.c — the client side of a VM pod's ctl.sock: how `qpod
 * start`, `kill`, `delete`, `exec` and the benchmarks reach the pod's
 * monitor from another process.  The monitor is trusted no more than
 * necessary: its frames go through the same bounded decoder. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

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
	else if (m.type == QP_MSG_MEMINFO && req->type == QP_MSG_MEMINFO_REQ) {
		if (reply)
			*reply = m; /* only integers: it outlives the channel */
		r = 0;
	} else
		qp_error_set(err, QP_E_GUEST, 0, "the monitor answered %s", qp_msg_type_name(m.type));
out:
	qp_chan_free(ch);
	return r;
}

int vm_ctl_exec(int dirfd, const struct qp_process *proc, int started_fd, int *status,
		qp_error **err)
{
	_cleanup_close_ int fd = ctl_connect(dirfd, err);
	struct qp_msg m = { .type = QP_MSG_EXEC };
	struct qp_chan *ch;
	int r = -1;

	if (fd < 0)
		return -1;
	if (proc->terminal)
		return qp_error_set(err, QP_E_INVALID, 0, "exec with a terminal is not supported for vm pods");
	if (!(ch = qp_chan_new(fd)))
		return qp_fail(err, ENOMEM, "ctl");
	vm_run_from_process(proc, &m.u.run);
	m.u.run.id = 1; /* the monitor assigns the guest's id */
	m.u.run.rootfs = QP_ROOTFS_INITRAMFS;
	m.u.run.rootfs_tag = "";
	m.u.run.hostname = "";
	if (qp_chan_send(ch, &m, QP_VM_SEND_TIMEOUT_MS, err) < 0)
		goto out;
	for (;;) {
		/* no deadline on the process itself: it runs as long as it runs */
		if (qp_chan_recv(ch, &m, 0x7fffffff, err) < 0) {
			qp_error_prefix(err, "exec: the pod's monitor went away");
			goto out;
		}
		if (qp_msg_check_sender(&m, QP_SENDER_GUEST | QP_SENDER_CTL, err) < 0)
			goto out;
		switch (m.type) {
		case QP_MSG_CTL_REPLY:
			r = reply_status(&m, err);
			if (r == 0)
				qp_error_set(err, QP_E_GUEST, 0, "the monitor ended the exec without a status");
			r = -1;
			goto out;
		case QP_MSG_EXEC_STARTED:
			/* running: the pod's lock is not held for the exec's
			 * life, or a delete --force would wait for its end */
			flock(dirfd, LOCK_UN);
			if (started_fd >= 0) {
				qp_report_ok(started_fd, "started");
				close(started_fd);
				started_fd = -1;
			}
			break;
		case QP_MSG_EXEC_OUT:
			qp_write_all(m.u.exec_out.stream == 1 ? 1 : 2, m.u.exec_out.data, m.u.exec_out.len);
			break;
		case QP_MSG_EXEC_EXIT:
			if (m.u.exec_exit.errnum) {
				char text[QP_PROTO_MAX_TEXT + 1];
				snprintf(text, sizeof(text), "%s", m.u.exec_exit.text ? m.u.exec_exit.text : "");
				qp_error_set(err, QP_E_EXEC, 0, "%s", text);
				if (err && *err)
					(*err)->errnum = m.u.exec_exit.errnum;
				goto out;
			}
			*status = m.u.exec_exit.code;
			r = 0;
			goto out;
		default:
			break;
		}
	}
out:
	qp_chan_free(ch);
	return r;
}
