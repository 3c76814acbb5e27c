/* runtime/vm/member/member_keeper.c — a container's host process (member.h):
 * forked by create with the container's stdio (the shim's fifos, a
 * terminal's slave), it waits on VM_KEEPER_SOCK for "start", runs the
 * container in its pod's guest through the pod's monitor, passes on
 * "kill N" while it runs, and exits with the container's status.  When
 * it dies, the monitor kills the container (its connection's end); when
 * the VM or its monitor dies, it exits 137 with the reason on stderr. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/report.h"
#include "vm/member/member.h"

#define REQ_MS 2000 /* a client sends its one line at once */

/* One request from the socket: the connection (its line in buf); -1: a
 * client that said nothing; -2: the socket failed. */
static int next_request(int listen_fd, char *buf, size_t size)
{
	int c = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);

	if (c < 0)
		return errno == EINTR || errno == ECONNABORTED || errno == EAGAIN ? -1 : -2;
	if (qp_report_read(c, REQ_MS, buf, size) <= 0) {
		close(c);
		return -1;
	}
	buf[strcspn(buf, "\n")] = '\0';
	return c;
}

static int parse_kill(const char *line, int *sig)
{
	char *end;
	long n;

	if (strncmp(line, "kill ", 5))
		return -1;
	n = strtol(line + 5, &end, 10);
	if (*end || n < 1 || n > QP_PROTO_MAX_SIGNAL)
		return -1;
	*sig = (int)n;
	return 0;
}

static void refuse(int c, const char *what)
{
	qp_error *e = NULL;

	qp_error_set(&e, QP_E_INVALID, 0, "the container's keeper: %s", what);
	qp_report_err(c, e, what);
	qp_error_free(&e);
}

/* While the container runs: "kill N" becomes an EXEC_SIGNAL. */
static int on_request(void *ctx, struct qp_chan *ch, qp_error **err)
{
	char line[128];
	int sig, c = next_request(*(int *)ctx, line, sizeof(line));
	struct qp_msg m = { .type = QP_MSG_EXEC_SIGNAL };

	if (c == -2)
		return qp_fail(err, errno, "the container's keeper socket");
	if (c < 0)
		return 0;
	if (parse_kill(line, &sig) < 0) {
		refuse(c, !strcmp(line, "start") ? "the container was started already" : "unknown request");
		close(c);
		return 0;
	}
	m.u.exec_signal.id = 1; /* the monitor sets the guest's id */
	m.u.exec_signal.signo = (uint32_t)sig;
	if (qp_chan_send(ch, &m, QP_VM_SEND_TIMEOUT_MS, err) < 0) {
		refuse(c, "the pod's monitor does not answer");
		close(c);
		return -1;
	}
	qp_report_ok(c, "sent");
	close(c);
	return 0;
}

void vm_keeper_main(const struct vm_keeper *k)
{
	char line[128];
	int c, sig, status = 0, lfd = k->listen_fd;
	bool started = false;
	qp_error *e = NULL;

	signal(SIGPIPE, SIG_IGN);
	/* created: until start, a kill ends the container that never ran */
	for (;;) {
		if ((c = next_request(lfd, line, sizeof(line))) == -2)
			_exit(125);
		if (c < 0)
			continue;
		if (!strcmp(line, "start"))
			break;
		if (parse_kill(line, &sig) == 0) {
			qp_report_ok(c, "sent");
			_exit(128 + sig);
		}
		refuse(c, "unknown request");
		close(c);
	}
	_cleanup_close_ int sbfd = openat(k->rootfd, k->sandbox, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	struct vm_exec_opts o = { .tty = k->tty, .started_fd = c, .ctr = k->ctr, .extra_fd = lfd,
				  .extra = on_request, .ctx = &lfd, .started = &started };
	if (sbfd < 0)
		qp_fail(&e, errno, "the pod \"%s\" is gone", k->sandbox);
	if (sbfd >= 0 && vm_ctl_exec_opts(sbfd, k->proc, &o, &status, &e) == 0)
		_exit(status);
	if (!started) {
		/* start fails as runc's does: the container is stopped */
		qp_report_err(c, e, "the container did not start");
		_exit(e && e->code == QP_E_EXEC ? (e->errnum == ENOENT ? 127 : 126) : 125);
	}
	/* its VM (or the VM's monitor) went away under it: killed */
	fprintf(stderr, "qpod: container: %s\n", e && e->msg ? e->msg : "the pod's VM ended");
	_exit(137);
}

int vm_keeper_call(int dirfd, const char *req, int timeout_ms, qp_error **err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	_cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	char buf[QP_REPORT_MAX];
	const char *rest;

	if (fd < 0)
		return qp_fail(err, errno, "socket");
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/" VM_KEEPER_SOCK, dirfd);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return qp_error_set(err, QP_E_STATE, errno, "container not running (its keeper does not answer: %s)",
				    strerror(errno));
	if (dprintf(fd, "%s\n", req) < 0)
		return qp_fail(err, errno, "%s", req);
	if (qp_report_read(fd, timeout_ms, buf, sizeof(buf)) < 0)
		return qp_error_set(err, QP_E_TIMEOUT, 0, "%s: no answer within %d s", req, timeout_ms / 1000);
	return qp_report_parse(buf, &rest, "the container ended", err);
}
