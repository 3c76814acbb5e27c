/* runtime/util/log.c — see log.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <yajl/yajl_gen.h>

#include "util/log.h"

static int log_fd = -1;
static int log_json;
static int log_debug;

static const char *const level_names[] = { "error", "warning", "info", "debug" };

int qp_log_init(const char *path, int json, int debug)
{
	log_json = json;
	log_debug = debug;
	if (!path)
		return 0;
	log_fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	return log_fd < 0 ? -1 : 0;
}

static void write_file_line(enum qp_log_level lvl, const char *msg)
{
	char ts[64];
	struct timespec now;
	struct tm tm;

	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	snprintf(ts, sizeof(ts), "%04d-%02d-%02dT%02d:%02d:%02d.%09ldZ", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, now.tv_nsec);
	if (log_json) {
		yajl_gen g = yajl_gen_alloc(NULL);
		const unsigned char *buf;
		size_t len;

		if (!g)
			return;
		yajl_gen_map_open(g);
		yajl_gen_string(g, (const unsigned char *)"level", 5);
		yajl_gen_string(g, (const unsigned char *)level_names[lvl], strlen(level_names[lvl]));
		yajl_gen_string(g, (const unsigned char *)"msg", 3);
		yajl_gen_string(g, (const unsigned char *)msg, strlen(msg));
		yajl_gen_string(g, (const unsigned char *)"time", 4);
		yajl_gen_string(g, (const unsigned char *)ts, strlen(ts));
		yajl_gen_map_close(g);
		if (yajl_gen_get_buf(g, &buf, &len) == yajl_gen_status_ok)
			dprintf(log_fd, "%.*s\n", (int)len, buf);
		yajl_gen_free(g);
	} else {
		dprintf(log_fd, "%s %s: %s\n", ts, level_names[lvl], msg);
	}
}

void qp_log(enum qp_log_level lvl, const char *fmt, ...)
{
	char *msg = NULL;
	va_list ap;
	int saved = errno;

	if (lvl == QP_LOG_DEBUG && !log_debug)
		return;
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	if (!msg)
		return;
	/* as runc: with --log, warnings go there only (a pod's stderr is often
	 * qpod's, e.g. under containerd's shim: it is the workload's) */
	if (lvl == QP_LOG_ERROR || (lvl == QP_LOG_WARN && log_fd < 0) || log_debug)
		fprintf(stderr, "qpod: %s%s\n", lvl == QP_LOG_WARN ? "warning: " : "", msg);
	if (log_fd >= 0)
		write_file_line(lvl, msg);
	free(msg);
	errno = saved;
}
