/* runtime/vm/qemu/qmp.c — the monitor's QMP client: QEMU's machine protocol on
 * qmp.sock in the state dir, QEMU the server, the monitor its only client
 * (a second connection waits until the first closes, so no other process
 * can drive the VM behind the monitor's back).  Used for pause and resume
 * ("stop", "cont") and for templates (migrate to and from a file passed
 * with getfd).  QEMU is trusted more than the guest, but its answers
 * are still bounded: one JSON object per line, at most QMP_LINE_MAX bytes,
 * every exchange under a deadline; events ({"event": ...}) are skipped. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/fdpass.h"
#include "util/io.h"
#include "util/json.h"
#include "vm/qemu/qemu.h"
#include "vm/vm.h"

#define QMP_LINE_MAX 65536
#define QMP_TIMEOUT_MS 5000

struct vm_qmp {
	int fd;
	size_t len;
	size_t used;   /* buf[0..used) is the line last handed out: dropped next */
	char buf[QMP_LINE_MAX];
};

void vm_qmp_free(struct vm_qmp *q)
{
	if (!q)
		return;
	if (q->fd >= 0)
		close(q->fd);
	free(q);
}

/* The next line (NUL-terminated in q->buf, "\r\n" cut); it is consumed by
 * the following call, whatever exchange that is part of. */
static int read_line(struct vm_qmp *q, long long deadline_ms, qp_error **err)
{
	char *nl;

	if (q->used) {
		memmove(q->buf, q->buf + q->used, q->len - q->used);
		q->len -= q->used;
		q->used = 0;
	}
	while (!(nl = memchr(q->buf, '\n', q->len))) {
		struct pollfd p = { .fd = q->fd, .events = POLLIN };
		long long left = deadline_ms - qp_now_ms();
		ssize_t n;

		if (q->len >= sizeof(q->buf) - 1)
			return qp_error_set(err, QP_E_GENERIC, 0, "QMP: a line longer than %d bytes",
					    QMP_LINE_MAX);
		if (left <= 0 || poll(&p, 1, (int)left) == 0)
			return qp_error_set(err, QP_E_TIMEOUT, 0, "QMP: qemu did not answer within %d ms",
					    QMP_TIMEOUT_MS);
		n = read(q->fd, q->buf + q->len, sizeof(q->buf) - 1 - q->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return qp_fail(err, n < 0 ? errno : EPIPE, "QMP: read");
		q->len += (size_t)n;
	}
	q->used = (size_t)(nl - q->buf) + 1;
	*nl = '\0';
	if (nl > q->buf && nl[-1] == '\r')
		nl[-1] = '\0';
	return 0;
}

/* Send one command (with passfd >= 0 as SCM_RIGHTS) and wait for its
 * answer ("return" or "error"); *ret (may be NULL) gets a copy of the
 * "return" value's "status" string, when it has one. */
static int exchange_fd(struct vm_qmp *q, const char *json, int passfd, char *status, size_t status_size,
		       qp_error **err)
{
	long long deadline = qp_now_ms() + QMP_TIMEOUT_MS;
	size_t len = strlen(json);

	if (status && status_size)
		status[0] = '\0';
	if (passfd >= 0) {
		if (qp_send_with_fd(q->fd, json, len, passfd) != (ssize_t)len)
			return qp_fail(err, errno, "QMP: send an fd");
	} else if (qp_send_all(q->fd, json, len) < 0)
		return qp_fail(err, errno, "QMP: write");
	for (;;) {
		yajl_val v = NULL, e;
		int r = 1;

		if (read_line(q, deadline, err) < 0)
			return -1;
		if (qp_json_parse(q->buf, "QMP answer", &v, err) < 0)
			return -1;
		yajl_val ret = qp_json_get(v, "return");
		if (ret) {
			const char *st = YAJL_IS_OBJECT(ret) ? qp_json_get_str(ret, "status") : NULL;
			if (st && status && status_size)
				snprintf(status, status_size, "%s", st);
			r = 0;
		}
		else if ((e = qp_json_get(v, "error"))) {
			const char *desc = qp_json_get_str(e, "desc");
			char shown[QP_SHOWN_MAX];
			r = qp_error_set(err, QP_E_GENERIC, 0, "qemu: %s",
					 qp_shown(desc ? desc : "error", shown));
		}
		yajl_tree_free(v);
		if (r <= 0) /* else an event or the greeting: read on */
			return r;
	}
}

static int exchange(struct vm_qmp *q, const char *json, qp_error **err)
{
	return exchange_fd(q, json, -1, NULL, 0, err);
}

int vm_qmp_connect(int dirfd, struct vm_qmp **out, qp_error **err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct vm_qmp *q = calloc(1, sizeof(*q));

	if (!q)
		return qp_fail(err, ENOMEM, "QMP");
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/%s", dirfd, QP_VM_QMP_SOCK);
	q->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	/* a QEMU just started may not listen yet (its channel socket can come
	 * first): retry for a bounded while */
	long long deadline = qp_now_ms() + QMP_TIMEOUT_MS;
	int r = -1;
	while (q->fd >= 0 && (r = connect(q->fd, (struct sockaddr *)&sa, sizeof(sa))) < 0 &&
	       (errno == ENOENT || errno == ECONNREFUSED || errno == EINTR) && qp_now_ms() < deadline)
		usleep(2000);
	if (q->fd < 0 || r < 0) {
		qp_fail(err, errno, "connect to qemu's QMP socket %s", QP_VM_QMP_SOCK);
		vm_qmp_free(q);
		return -1;
	}
	/* the greeting comes first; qmp_capabilities leaves negotiation mode */
	if (exchange(q, "{\"execute\":\"qmp_capabilities\"}\n", err) < 0) {
		vm_qmp_free(q);
		return -1;
	}
	*out = q;
	return 0;
}

int vm_qmp_execute(struct vm_qmp *q, const char *command, qp_error **err)
{
	char json[128];

	if ((size_t)snprintf(json, sizeof(json), "{\"execute\":\"%s\"}\n", command) >= sizeof(json))
		return qp_error_set(err, QP_E_INVALID, 0, "QMP: command too long");
	return exchange(q, json, err);
}

int vm_qmp_command(struct vm_qmp *q, const char *json, int passfd, char *status, size_t status_size,
		   qp_error **err)
{
	char line[1024];

	if ((size_t)snprintf(line, sizeof(line), "%s\n", json) >= sizeof(line))
		return qp_error_set(err, QP_E_INVALID, 0, "QMP: command too long");
	return exchange_fd(q, line, passfd, status, status_size, err);
}
