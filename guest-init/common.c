/* guest-init/common.c — what every part of the guest binary uses (guest.h):
 * the control channel and sending on it (thread-safe), the fatal-error path
 * (report on the console and the channel, then power off), clocks, a RUN's
 * strings kept beyond the next message, /proc/meminfo to the host. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/reboot.h>
#include <time.h>
#include <unistd.h>

#include "guest-init/channel.h"
#include "guest-init/guest.h"
#include "util/log.h"

#define SEND_TIMEOUT_MS 10000

struct qp_chan gi_chan; /* in static storage: ~200 KiB, fixed, whatever the host sends */
int gi_chan_ready;
static pthread_mutex_t send_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- time, console, power ---- */

uint64_t gi_boot_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int64_t gi_mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* util/error.c reports through qp_log; here that is the console. */
void qp_log(enum qp_log_level lvl, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	(void)lvl;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	dprintf(2, "qpod-init: %s\n", buf);
}

void gi_power_off(void)
{
	sync();
	reboot(RB_AUTOBOOT); /* QEMU runs with -no-reboot: this ends it */
	_exit(1);            /* PID 1 exiting panics; panic=-1 reboots too */
}

int gi_send(const struct qp_msg *m, qp_error **err)
{
	int r;

	pthread_mutex_lock(&send_lock);
	r = qp_chan_send(&gi_chan, m, SEND_TIMEOUT_MS, err);
	pthread_mutex_unlock(&send_lock);
	return r;
}

void gi_fatal(uint32_t code, int errnum, const char *fmt, ...)
{
	char msg[QP_PROTO_MAX_TEXT / 2], text[QP_PROTO_MAX_TEXT];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (errnum)
		snprintf(text, sizeof(text), "%s: %s", msg, strerror(errnum));
	else
		snprintf(text, sizeof(text), "%s", msg);
	qp_log(QP_LOG_ERROR, "%s", text);
	if (gi_chan_ready) {
		pthread_mutex_lock(&send_lock);
		qp_chan_send_error(&gi_chan, code, errnum, text, SEND_TIMEOUT_MS, NULL);
		pthread_mutex_unlock(&send_lock);
	}
	gi_power_off();
}

void gi_fatal_err(uint32_t code, qp_error *e)
{
	gi_fatal(code, 0, "%s", e && e->msg ? e->msg : "unknown error");
}

void gi_close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

ssize_t gi_read_chunk(int *fd, void *buf, size_t size)
{
	ssize_t n = read(*fd, buf, size);

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return 0;
	if (n <= 0)
		gi_close_fd(fd);
	return n > 0 ? n : 0;
}

void gi_send_or_die(const struct qp_msg *m)
{
	qp_error *err = NULL;

	if (gi_send(m, &err) < 0)
		gi_fatal_err(QP_PERR_SYSCALL, err);
}

void gi_send_error(uint32_t code, int errnum, const char *fmt, ...)
{
	char text[512];
	qp_error *err = NULL;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&send_lock);
	if (qp_chan_send_error(&gi_chan, code, errnum, text, SEND_TIMEOUT_MS, &err) < 0) {
		pthread_mutex_unlock(&send_lock);
		gi_fatal_err(QP_PERR_SYSCALL, err);
	}
	pthread_mutex_unlock(&send_lock);
}

/* A small proc/sys file, NUL-terminated (one read: these files are
 * generated whole). */
void gi_read_text(const char *path, char *buf, size_t size)
{
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		die("open %s", path);
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		die("read %s", path);
	buf[n] = '\0';
}

void gi_send_meminfo(void)
{
	static const char *const keys[] = { "MemTotal:", "MemFree:", "MemAvailable:", "Buffers:",
					    "Cached:" };
	struct qp_msg m = { .type = QP_MSG_MEMINFO };
	uint64_t *vals[] = { &m.u.meminfo.total_kb, &m.u.meminfo.free_kb,
			     &m.u.meminfo.available_kb, &m.u.meminfo.buffers_kb,
			     &m.u.meminfo.cached_kb };
	char buf[8192];
	qp_error *err = NULL;

	gi_read_text("/proc/meminfo", buf, sizeof(buf));
	for (char *line = buf; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
			if (strncmp(line, keys[i], strlen(keys[i])) == 0)
				*vals[i] = strtoull(line + strlen(keys[i]), NULL, 10);
	if (gi_send(&m, &err) < 0)
		gi_fatal_err(QP_PERR_SYSCALL, err);
}

/* RUN's strings live in the channel's store, which the next message reuses:
 * keep a copy of the store for the workload and point into it. */
static struct qp_msg_store run_store;

static const char *rebase(const char *p)
{
	return p ? run_store.bytes + (p - gi_chan.store.bytes) : NULL;
}

void gi_keep_run(struct qp_run *r)
{
	memcpy(&run_store, &gi_chan.store, sizeof(run_store));
	r->rootfs_tag = rebase(r->rootfs_tag);
	r->cwd = rebase(r->cwd);
	r->hostname = rebase(r->hostname);
	for (uint32_t i = 0; i < r->argc; i++)
		run_store.argv[i] = rebase(r->argv[i]);
	for (uint32_t i = 0; i < r->envc; i++)
		run_store.env[i] = rebase(r->env[i]);
	r->argv = run_store.argv;
	r->env = run_store.env;
}
