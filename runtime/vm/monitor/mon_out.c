/* runtime/vm/monitor/mon_out.c — the workload's output (STDOUT, STDERR) on
 * its way to the monitor's stdout and stderr: written without blocking,
 * held while a reader does not take it, and credited back to the guest
 * (OUT_CREDIT) as it is passed on.  The guest never has more than
 * QP_PROTO_OUT_WINDOW bytes out, so what is held is bounded and a reader
 * that stops (a terminal's client that does not read its master) stops the
 * workload, not the monitor: signals, execs and clients are still served.
 * Pipes, FIFOs and terminals are reopened through /proc with O_NONBLOCK (a
 * file description of our own: the caller's stays as it was); regular
 * files are written as they are (they never stall), sockets with
 * MSG_DONTWAIT. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pod.h"
#include "util/io.h"
#include "util/clock.h"
#include "vm/monitor/monitor.h"

/* credit is sent back in pieces of at least this (or when all is written) */
#define OUT_CREDIT_BATCH (QP_PROTO_OUT_WINDOW / 4)

void mon_out_open(struct vm_mon *m)
{
	for (int i = 0; i < 2; i++) {
		struct vm_out *o = &m->out[i];
		int fd = i + 1, nfd = -1;
		char path[32];
		struct stat st;

		o->fd = fd;
		if (fstat(fd, &st) < 0) {
			o->fd = -1; /* closed: what comes is dropped */
			continue;
		}
		o->sock = S_ISSOCK(st.st_mode);
		if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) {
			snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
			nfd = open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		}
		/* not reopened (a FIFO without a reader, no /proc): blocking
		 * writes, as before there was a window */
		if (nfd >= 0) {
			o->fd = nfd;
			o->own = true;
		}
	}
}

void mon_out_close(struct vm_mon *m)
{
	for (int i = 0; i < 2; i++) {
		struct vm_out *o = &m->out[i];
		if (o->own && o->fd >= 0)
			close(o->fd);
		free(o->buf);
		*o = (struct vm_out){ .fd = -1 };
	}
}

static size_t held(const struct vm_out *o)
{
	return o->len - o->off;
}

/* Credit back what was passed on, in batches (sending fails only with the
 * channel, which ends the pod anyway). */
static void credit(struct vm_mon *m)
{
	struct qp_msg msg = { .type = QP_MSG_OUT_CREDIT };

	if (!m->out_due || (m->out_due < OUT_CREDIT_BATCH && (held(&m->out[0]) || held(&m->out[1]))))
		return;
	if (!m->chan || m->chan->broken)
		return;
	msg.u.credit.bytes = m->out_due;
	m->out_inflight -= m->out_due;
	m->out_due = 0;
	qp_chan_send(m->chan, &msg, QP_VM_SEND_TIMEOUT_MS, NULL);
}

/* One write that does not wait: bytes written, 0 = not now, -1 = gone. */
static ssize_t out_write(const struct vm_out *o, const uint8_t *p, size_t n)
{
	ssize_t k;

	do
		k = o->sock ? send(o->fd, p, n, MSG_DONTWAIT | MSG_NOSIGNAL) : write(o->fd, p, n);
	while (k < 0 && errno == EINTR);
	if (k < 0 && errno == EAGAIN)
		return 0;
	return k;
}

/* Stream i's reader is gone (EPIPE, EIO: a terminal's client closed it):
 * what it holds and what comes later is dropped, and credited. */
static void out_gone(struct vm_mon *m, struct vm_out *o)
{
	m->out_due += held(o);
	o->off = o->len = 0;
	if (o->own)
		close(o->fd);
	o->fd = -1;
	o->own = false;
}

void mon_out_flush(struct vm_mon *m, int i)
{
	struct vm_out *o = &m->out[i];

	while (o->fd >= 0 && held(o)) {
		ssize_t k = out_write(o, o->buf + o->off, held(o));
		if (k < 0)
			out_gone(m, o);
		if (k <= 0)
			break;
		o->off += (size_t)k;
		m->out_due += (uint32_t)k;
	}
	if (!held(o))
		o->off = o->len = 0;
	credit(m);
}

int mon_out_put(struct vm_mon *m, int stream, const uint8_t *data, uint32_t len, qp_error **err)
{
	struct vm_out *o = &m->out[stream == 2];
	ssize_t k = 0;

	if (m->out_inflight + len > QP_PROTO_OUT_WINDOW)
		return qp_error_set(err, QP_E_GUEST, 0, "the VM sent more output than its credit (%u + %u bytes)",
				    m->out_inflight, len);
	m->out_inflight += len;
	/* nothing held: straight to the reader, only the rest is kept */
	if (o->fd >= 0 && !held(o) && (k = out_write(o, data, len)) < 0)
		out_gone(m, o);
	if (o->fd < 0 || k < 0) {
		m->out_due += len;
		credit(m);
		return 0;
	}
	m->out_due += (uint32_t)k;
	if ((size_t)k < len) {
		size_t rest = len - (size_t)k;
		if (o->off)
			memmove(o->buf, o->buf + o->off, held(o));
		o->len -= o->off;
		o->off = 0;
		if (o->len + rest > o->cap) {
			/* at most the window: the guest keeps within it */
			uint8_t *nb = realloc(o->buf, o->len + rest);
			if (!nb)
				return qp_fail(err, ENOMEM, "hold the VM's output");
			o->buf = nb;
			o->cap = o->len + rest;
		}
		memcpy(o->buf + o->len, data + k, rest);
		o->len += rest;
	}
	credit(m);
	return 0;
}

int mon_out_pollfd(const struct vm_mon *m, int i)
{
	return held(&m->out[i]) ? m->out[i].fd : -1;
}

void mon_out_drain(struct vm_mon *m)
{
	long long stall_end = qp_now_ms() + QP_VM_OUT_DRAIN_MS;

	for (int i = 0; i < 2; i++) {
		struct vm_out *o = &m->out[i];
		while (o->fd >= 0 && held(o)) {
			size_t before = held(o);
			struct pollfd p = { .fd = o->fd, .events = POLLOUT };
			long long left = stall_end - qp_now_ms();
			if (left <= 0 || poll(&p, 1, (int)left) == 0)
				break;
			mon_out_flush(m, i);
			if (held(o) < before)
				stall_end = qp_now_ms() + QP_VM_OUT_DRAIN_MS;
		}
	}
}
