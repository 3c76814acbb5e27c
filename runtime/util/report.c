/* runtime/util/report.c — see report.h. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "util/report.h"
#include "vm/timeline.h"

static int send_line(int fd, char *buf, int n, size_t size)
{
	if (n < 0)
		return -1;
	if ((size_t)n > size - 2)
		n = (int)size - 2;
	for (int i = 0; i < n; i++)
		if (buf[i] == '\n')
			buf[i] = ' ';
	buf[n++] = '\n';
	return write(fd, buf, (size_t)n) == n ? 0 : -1;
}

int qp_report_ok(int fd, const char *fmt, ...)
{
	char buf[QP_REPORT_MAX];
	va_list ap;
	int n = snprintf(buf, sizeof(buf), "ok ");

	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
	va_end(ap);
	return send_line(fd, buf, n, sizeof(buf));
}

int qp_report_err(int fd, const qp_error *e, const char *fallback)
{
	char buf[QP_REPORT_MAX];
	int n = snprintf(buf, sizeof(buf), "err %d %d %s", e ? e->code : QP_E_GENERIC,
			 e ? e->errnum : 0, e && e->msg ? e->msg : fallback);

	return send_line(fd, buf, n, sizeof(buf));
}

pid_t qp_report_fork(int *fd, const char *what, qp_error **err)
{
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return qp_fail(err, errno, "%s: pipe", what);
	pid = fork();
	if (pid < 0) {
		int e = errno;
		close(p[0]);
		close(p[1]);
		return qp_fail(err, e, "fork %s", what);
	}
	close(pid == 0 ? p[0] : p[1]);
	*fd = pid == 0 ? p[1] : p[0];
	return pid;
}

int qp_report_parse(char *line, const char **rest, const char *none, qp_error **err)
{
	int code = 0, errnum = 0, off = 0;

	line[strcspn(line, "\n")] = '\0';
	if (!strncmp(line, "ok", 2) && (line[2] == ' ' || line[2] == '\0')) {
		*rest = line[2] ? line + 3 : line + 2;
		return 0;
	}
	if (sscanf(line, "err %d %d %n", &code, &errnum, &off) == 2 && off > 0) {
		qp_error_set(err, code > 0 && code < 64 ? code : QP_E_GENERIC, 0, "%s", line + off);
		if (err && *err)
			(*err)->errnum = errnum >= 0 && errnum < 4096 ? errnum : 0;
		return -1;
	}
	return qp_error_set(err, QP_E_GENERIC, 0, "%s", none);
}

static long long now_ms(void)
{
	return vm_tl_now() / 1000000; /* the project's one monotonic clock */
}

int qp_report_read(int fd, int timeout_ms, char *buf, size_t size)
{
	long long deadline = now_ms() + timeout_ms;
	size_t have = 0;

	buf[0] = '\0';
	while (have + 1 < size && !memchr(buf, '\n', have)) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		long long left = timeout_ms < 0 ? -1 : deadline - now_ms();
		if (timeout_ms >= 0 && left <= 0)
			return -1;
		int r = poll(&p, 1, (int)left);
		if (r == 0)
			return -1;
		if (r < 0 && errno == EINTR)
			continue;
		ssize_t n = read(fd, buf + have, size - 1 - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		have += (size_t)n;
		buf[have] = '\0';
	}
	buf[have] = '\0';
	return (int)have;
}
