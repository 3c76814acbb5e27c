/* runtime/util/error.c — the error convention of error.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <ctype.h>
#include <string.h>

#include "util/error.h"
#include "util/log.h"

static int code_for_errno(int errnum)
{
	switch (errnum) {
	case ENOMEM:
	case EAGAIN:
		return QP_E_NOMEM;
	case ENOENT:
		return QP_E_NOTFOUND;
	case EEXIST:
		return QP_E_EXISTS;
	case ETIMEDOUT:
		return QP_E_TIMEOUT;
	default:
		return QP_E_GENERIC;
	}
}

static int set_v(qp_error **err, int code, int errnum, const char *fmt, va_list ap)
{
	char *msg = NULL;
	qp_error *e;

	if (!err)
		return -1;
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	if (msg && errnum) {
		char *full = NULL;
		if (asprintf(&full, "%s: %s", msg, strerror(errnum)) >= 0) {
			free(msg);
			msg = full;
		}
	}
	e = calloc(1, sizeof(*e));
	if (!e) {
		free(msg);
		return -1;
	}
	e->errnum = errnum;
	e->code = code;
	e->msg = msg ? msg : strdup("out of memory while reporting an error");
	qp_error_free(err); /* never leak an earlier error */
	*err = e;
	return -1;
}

int qp_error_set(qp_error **err, int code, int errnum, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	set_v(err, code, errnum, fmt, ap);
	va_end(ap);
	return -1;
}

int qp_fail(qp_error **err, int errnum, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	set_v(err, code_for_errno(errnum), errnum, fmt, ap);
	va_end(ap);
	return -1;
}

int qp_error_prefix(qp_error **err, const char *fmt, ...)
{
	char *ctx = NULL, *full = NULL;
	va_list ap;

	if (!err || !*err)
		return -1;
	va_start(ap, fmt);
	if (vasprintf(&ctx, fmt, ap) < 0)
		ctx = NULL;
	va_end(ap);
	if (ctx && asprintf(&full, "%s: %s", ctx, (*err)->msg) >= 0) {
		free((*err)->msg);
		(*err)->msg = full;
	}
	free(ctx);
	return -1;
}

void qp_error_free(qp_error **err)
{
	if (!err || !*err)
		return;
	free((*err)->msg);
	free(*err);
	*err = NULL;
}

int qp_error_print(qp_error *err)
{
	qp_log(QP_LOG_ERROR, "%s", err && err->msg ? err->msg : "unknown error");
	return 1;
}

const char *qp_shown(const char *s, char buf[QP_SHOWN_MAX])
{
	size_t i;

	for (i = 0; s[i] && i < QP_SHOWN_MAX - 4; i++)
		buf[i] = isprint((unsigned char)s[i]) && s[i] != '"' ? s[i] : '?';
	if (s[i])
		buf[i++] = '.', buf[i++] = '.', buf[i++] = '.';
	buf[i] = '\0';
	return buf;
}
