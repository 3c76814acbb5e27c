/* runtime/vm/monitor/mon_fwmark.c — the firmware's boundary markers
 * (qboot/qpod_abi.h): a pipe from QEMU's debugcon that the monitor polls
 * while it waits for the boot, each marker timestamped as it arrives (the
 * timeline's vmm_init and firmware phases), and the firmware's error line
 * kept for the pod's error. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "qboot/qpod_abi.h"
#include "util/log.h"
#include "vm/monitor/monitor.h"
#include "vm/qemu/qemu.h"

int mon_fwmark_open(struct vm_mon *m, struct vm_qemu_opts *o, qp_error **err)
{
	int p[2], w;

	mon_fwmark_close(m);
	if (pipe2(p, O_CLOEXEC) < 0)
		return qp_fail(err, errno, "pipe for the firmware's markers");
	/* the write end keeps its number in QEMU: not one of stdio's */
	w = p[1] < 3 ? fcntl(p[1], F_DUPFD_CLOEXEC, 3) : p[1];
	if (w < 0 || fcntl(p[0], F_SETFL, O_NONBLOCK) < 0) {
		int e = errno;
		close(p[0]);
		close(p[1]);
		if (w >= 0 && w != p[1])
			close(w);
		return qp_fail(err, e, "pipe for the firmware's markers");
	}
	if (w != p[1])
		close(p[1]);
	m->fw = (struct vm_fwmark){ .fd = p[0] };
	m->tl.fw_reset = m->tl.fw_jump = 0;
	o->fw_markers = true;
	o->fw_mark_fd = w;
	return 0;
}

void mon_fwmark_close(struct vm_mon *m)
{
	if (m->fw.fd >= 0)
		close(m->fw.fd);
	m->fw.fd = -1;
}

static void take(struct vm_mon *m, char c, long long now)
{
	struct vm_fwmark *f = &m->fw;

	if (f->in_error) {
		if (c == '\n')
			f->in_error = false;
		else if (f->error_len < MARK_ERROR_MAX)
			f->error[f->error_len++] = c >= ' ' && c < 0x7f ? c : '?';
		f->error[f->error_len] = '\0';
		return;
	}
	if (c == MARK_RESET && !m->tl.fw_reset)
		m->tl.fw_reset = now;
	else if (c == MARK_JUMP && !m->tl.fw_jump)
		m->tl.fw_jump = now;
	else if (c == MARK_ERROR) {
		f->in_error = true;
		f->error_len = 0;
	}
}

/* Everything in the pipe now; at its end (QEMU gone) the pipe is closed. */
static void fwmark_read(struct vm_mon *m)
{
	char buf[256];

	while (m->fw.fd >= 0) {
		ssize_t n = read(m->fw.fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			mon_fwmark_close(m);
			return;
		}
		long long now = qp_now_ns();
		for (ssize_t i = 0; i < n; i++)
			take(m, buf[i], now);
	}
}

int mon_fwmark_wait(struct vm_mon *m, int fd, int timeout_ms)
{
	long long deadline = qp_now_ms() + timeout_ms;

	for (;;) {
		struct pollfd p[2] = { { .fd = fd, .events = POLLIN }, { .fd = m->fw.fd, .events = POLLIN } };
		long long left = deadline - qp_now_ms();
		int r = poll(p, 2, left > 0 ? (int)left : 0);
		if (r < 0 && errno != EINTR)
			return 0;
		if (r > 0 && p[1].revents)
			fwmark_read(m);
		if (r > 0 && p[0].revents)
			return 1;
		if (left <= 0)
			return 0;
	}
}

int mon_fwmark_error(struct vm_mon *m, qp_error **err)
{
	/* QEMU is gone or going: the rest of the pipe, to its end */
	long long deadline = qp_now_ms() + 200;
	while (m->fw.fd >= 0 && qp_now_ms() < deadline)
		mon_fwmark_wait(m, -1, 20);
	if (!m->fw.error_len)
		return 0;
	mon_set_reason(m, "the firmware stopped the VM: %s", m->fw.error);
	qp_error_free(err);
	return qp_error_set(err, QP_E_GENERIC, 0, "%s", m->reason);
}
