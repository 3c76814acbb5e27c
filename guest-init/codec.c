/* guest-init/codec.c — protocol.h frames (channel.h declares it): type
 * names and senders, validation, encoding and decoding.
 *
 * The decoder reads through a bounds-checked cursor: every field asks for
 * its bytes first, so no input can read past the frame; strings land in the
 * fixed qp_msg_store, so no input can make us allocate. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>

#include "guest-init/channel.h"

#define MAX_CWD 4096

static const char *const type_names[] = {
	[QP_MSG_HELLO] = "HELLO",       [QP_MSG_RUN] = "RUN",
	[QP_MSG_STARTED] = "STARTED",   [QP_MSG_STDOUT] = "STDOUT",
	[QP_MSG_STDERR] = "STDERR",     [QP_MSG_STDIN] = "STDIN",
	[QP_MSG_SIGNAL] = "SIGNAL",     [QP_MSG_EXIT] = "EXIT",
	[QP_MSG_MEMINFO_REQ] = "MEMINFO_REQ", [QP_MSG_MEMINFO] = "MEMINFO",
	[QP_MSG_SHUTDOWN] = "SHUTDOWN", [QP_MSG_ERROR] = "ERROR",
	[QP_MSG_EXEC] = "EXEC",         [QP_MSG_EXEC_STARTED] = "EXEC_STARTED",
	[QP_MSG_EXEC_OUT] = "EXEC_OUT", [QP_MSG_EXEC_EXIT] = "EXEC_EXIT",
	[QP_MSG_CTL_START] = "CTL_START", [QP_MSG_CTL_REPLY] = "CTL_REPLY",
	[QP_MSG_CTL_REPLACE] = "CTL_REPLACE", [QP_MSG_CTL_PAUSE] = "CTL_PAUSE",
	[QP_MSG_CTL_RESUME] = "CTL_RESUME", [QP_MSG_CLONE] = "CLONE",
	[QP_MSG_WARM] = "WARM", [QP_MSG_STDIN_CREDIT] = "STDIN_CREDIT",
	[QP_MSG_WINSIZE] = "WINSIZE", [QP_MSG_EXEC_STDIN] = "EXEC_STDIN",
	[QP_MSG_EXEC_CREDIT] = "EXEC_CREDIT", [QP_MSG_EXEC_SIGNAL] = "EXEC_SIGNAL",
	[QP_MSG_CTR_STATS_REQ] = "CTR_STATS_REQ", [QP_MSG_CTR_STATS] = "CTR_STATS",
	[QP_MSG_OUT_CREDIT] = "OUT_CREDIT",
	[QP_MSG_CTR_UPDATE] = "CTR_UPDATE", [QP_MSG_CTR_UPDATED] = "CTR_UPDATED",
	[QP_MSG_EXEC_OUT_CREDIT] = "EXEC_OUT_CREDIT",
};

static const unsigned char senders[] = {
	[QP_MSG_HELLO] = QP_SENDER_GUEST,   [QP_MSG_RUN] = QP_SENDER_HOST,
	[QP_MSG_STARTED] = QP_SENDER_GUEST, [QP_MSG_STDOUT] = QP_SENDER_GUEST,
	[QP_MSG_STDERR] = QP_SENDER_GUEST,  [QP_MSG_STDIN] = QP_SENDER_HOST,
	[QP_MSG_SIGNAL] = QP_SENDER_HOST,   [QP_MSG_EXIT] = QP_SENDER_GUEST,
	[QP_MSG_MEMINFO_REQ] = QP_SENDER_HOST, [QP_MSG_MEMINFO] = QP_SENDER_GUEST,
	[QP_MSG_SHUTDOWN] = QP_SENDER_HOST,
	[QP_MSG_ERROR] = QP_SENDER_GUEST | QP_SENDER_HOST,
	[QP_MSG_EXEC] = QP_SENDER_HOST,     [QP_MSG_EXEC_STARTED] = QP_SENDER_GUEST,
	[QP_MSG_EXEC_OUT] = QP_SENDER_GUEST, [QP_MSG_EXEC_EXIT] = QP_SENDER_GUEST,
	[QP_MSG_CTL_START] = QP_SENDER_CTL, [QP_MSG_CTL_REPLY] = QP_SENDER_CTL,
	[QP_MSG_CTL_REPLACE] = QP_SENDER_CTL, [QP_MSG_CTL_PAUSE] = QP_SENDER_CTL,
	[QP_MSG_CTL_RESUME] = QP_SENDER_CTL, [QP_MSG_CLONE] = QP_SENDER_HOST,
	[QP_MSG_WARM] = QP_SENDER_HOST, [QP_MSG_STDIN_CREDIT] = QP_SENDER_GUEST,
	[QP_MSG_WINSIZE] = QP_SENDER_HOST | QP_SENDER_CTL,
	[QP_MSG_EXEC_STDIN] = QP_SENDER_HOST | QP_SENDER_CTL, [QP_MSG_EXEC_CREDIT] = QP_SENDER_GUEST,
	[QP_MSG_EXEC_SIGNAL] = QP_SENDER_HOST | QP_SENDER_CTL,
	[QP_MSG_CTR_STATS_REQ] = QP_SENDER_HOST | QP_SENDER_CTL, [QP_MSG_CTR_STATS] = QP_SENDER_GUEST,
	[QP_MSG_OUT_CREDIT] = QP_SENDER_HOST,
	[QP_MSG_CTR_UPDATE] = QP_SENDER_HOST | QP_SENDER_CTL, [QP_MSG_CTR_UPDATED] = QP_SENDER_GUEST,
	[QP_MSG_EXEC_OUT_CREDIT] = QP_SENDER_HOST | QP_SENDER_CTL,
};

uint32_t qp_seed_check(const uint8_t seed[QP_PROTO_SEED_SIZE])
{
	uint32_t h = 2166136261u; /* FNV-1a */

	for (size_t i = 0; i < QP_PROTO_SEED_SIZE; i++)
		h = (h ^ seed[i]) * 16777619u;
	return h ? h : 1; /* 0 means "no seed" */
}

const char *qp_msg_type_name(uint16_t type)
{
	return type >= 1 && type <= QP_MSG_TYPE_MAX ? type_names[type] : "unknown";
}

int qp_msg_sender(uint16_t type)
{
	return type >= 1 && type <= QP_MSG_TYPE_MAX ? senders[type] : 0;
}

int qp_msg_check_sender(const struct qp_msg *m, enum qp_sender from, qp_error **err)
{
	if (!(qp_msg_sender(m->type) & from))
		return qp_error_set(err, QP_E_GUEST, 0, "control channel: %s message from the %s",
				    qp_msg_type_name(m->type),
				    from == QP_SENDER_GUEST ? "guest" : from == QP_SENDER_HOST ? "host" : "client");
	return 0;
}

/* ---- validation shared by the encoder and the decoder ---- */

static int invalid(qp_error **err, int code, const struct qp_msg *m, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int invalid(qp_error **err, int code, const struct qp_msg *m, const char *fmt, ...)
{
	char buf[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return qp_error_set(err, code, 0, "control channel: %s message: %s",
			    qp_msg_type_name(m->type), buf);
}

/* A container's directory in the pod share: one path component. */
bool qp_proto_dir_name_ok(const char *n)
{
	size_t len = n ? strlen(n) : 0;

	if (!len || len > QP_PROTO_MAX_TAG || !strcmp(n, ".") || !strcmp(n, ".."))
		return false;
	for (const char *p = n; *p; p++)
		if (*p == '/' || (unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f)
			return false;
	return true;
}

/* A cgroup entry "FILE=VALUE" (protocol.h). */
static bool cgroup_entry_ok(const char *e)
{
	static const char *const files[] = { "memory.max=", "memory.swap.max=", "pids.max=", "cpu.max=",
					     "cpu.weight=", "cpuset.cpus=", "cpuset.mems=" };
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		size_t k = strlen(files[i]), n;
		if (strncmp(e, files[i], k))
			continue;
		n = strlen(e + k);
		if (n < 1 || n > 64)
			return false;
		for (const char *p = e + k; *p; p++)
			if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f || *p == '/')
				return false;
		return true;
	}
	return false;
}

/* RUN's and EXEC's mount kinds: pod only in a container's EXEC, podshare
 * only in RUN. */
static int validate_run_extras(const struct qp_run *r, int code, const struct qp_msg *m, qp_error **err)
{
	bool container = r->flags & QP_RUN_F_CONTAINER;

	if ((r->flags & QP_RUN_F_NEW_NS) && !container)
		return invalid(err, code, m, "namespace flags without a container");
	if (r->cgroupc > QP_PROTO_MAX_CGROUP || (r->cgroupc && !container))
		return invalid(err, code, m, "cgroup entries without a container");
	for (uint32_t i = 0; i < r->cgroupc; i++)
		if (!r->cgroup || !r->cgroup[i] || !cgroup_entry_ok(r->cgroup[i]))
			return invalid(err, code, m, "cgroup[%u] is not a known FILE=VALUE", i);
	bool share = false;
	for (uint32_t i = 0; i < r->mountc; i++) {
		struct qp_run_mount rm;
		if (qp_run_mount_parse(r->mounts[i], &rm) == 0 && rm.kind == QP_RM_PODSHARE)
			share = true;
	}
	for (uint32_t i = 0; i < r->mountc; i++) {
		struct qp_run_mount rm;
		if (qp_run_mount_parse(r->mounts[i], &rm) < 0)
			continue; /* validate_run names it */
		if (rm.kind == QP_RM_POD && !container && !share)
			return invalid(err, code, m, "mounts[%u]: a pod mount without the pod share", i);
		if (container && rm.kind != QP_RM_POD && rm.kind != QP_RM_TMPFS)
			return invalid(err, code, m, "mounts[%u]: a container takes tmpfs and pod mounts", i);
		if (rm.kind == QP_RM_PODSHARE && m->type != QP_MSG_RUN)
			return invalid(err, code, m, "mounts[%u]: the pod share only in RUN", i);
	}
	return 0;
}

static int validate_run(const struct qp_run *r, int code, const struct qp_msg *m, qp_error **err)
{
	static const uint8_t zero[4];

	if (r->flags & ~(uint32_t)QP_RUN_F_ALL)
		return invalid(err, code, m, "unknown flags 0x%x", r->flags & ~(uint32_t)QP_RUN_F_ALL);
	if (r->rootfs == QP_ROOTFS_9P || r->rootfs == QP_ROOTFS_9P_SUBDIR) {
		size_t n = r->rootfs_tag ? strlen(r->rootfs_tag) : 0;
		if (n == 0 || n > QP_PROTO_MAX_TAG)
			return invalid(err, code, m, "9p rootfs tag must have 1..%d bytes, not %zu",
				       QP_PROTO_MAX_TAG, n);
	} else if (r->rootfs == QP_ROOTFS_INITRAMFS) {
		if (r->rootfs_tag && r->rootfs_tag[0])
			return invalid(err, code, m, "rootfs tag given for an initramfs rootfs");
	} else {
		return invalid(err, code, m, "unknown rootfs kind %u", r->rootfs);
	}
	if (r->cwd && r->cwd[0] && (r->cwd[0] != '/' || strlen(r->cwd) > MAX_CWD))
		return invalid(err, code, m, "cwd must be an absolute path of at most %d bytes",
			       MAX_CWD);
	if (r->hostname && strlen(r->hostname) > QP_PROTO_MAX_HOSTNAME)
		return invalid(err, code, m, "hostname longer than %d bytes", QP_PROTO_MAX_HOSTNAME);
	if (r->argc < 1 || !r->argv || !r->argv[0] || !r->argv[0][0])
		return invalid(err, code, m, "argv is empty");
	if (r->argc > QP_PROTO_MAX_STRV || r->envc > QP_PROTO_MAX_STRV)
		return invalid(err, code, m, "more than %d argv or env entries", QP_PROTO_MAX_STRV);
	for (uint32_t i = 0; i < r->envc; i++) {
		const char *eq = strchr(r->env[i], '=');
		if (!eq || eq == r->env[i])
			return invalid(err, code, m, "env entry %u is not NAME=value", i);
	}
	if (r->prefix > 32)
		return invalid(err, code, m, "prefix length %u > 32", r->prefix);
	if (r->mountc > QP_PROTO_MAX_MOUNTS)
		return invalid(err, code, m, "more than %d mounts", QP_PROTO_MAX_MOUNTS);
	for (uint32_t i = 0; i < r->mountc; i++)
		if (!r->mounts || !r->mounts[i] || qp_run_mount_parse(r->mounts[i], NULL) < 0)
			return invalid(err, code, m, "mounts[%u] is malformed", i);
	if (r->prefix == 0 && memcmp(r->gateway, zero, 4) != 0)
		return invalid(err, code, m, "gateway without an address");
	if (r->routec > QP_PROTO_MAX_ROUTES)
		return invalid(err, code, m, "more than %d routes", QP_PROTO_MAX_ROUTES);
	if (r->addr6c > QP_PROTO_MAX_ADDRS6)
		return invalid(err, code, m, "more than %d IPv6 addresses", QP_PROTO_MAX_ADDRS6);
	for (uint32_t i = 0; i < r->addr6c; i++)
		if (!r->addrs6 || !r->addrs6[i] || qp_run_addr6_parse(r->addrs6[i], NULL) < 0)
			return invalid(err, code, m, "addrs6[%u] is malformed", i);
	for (uint32_t i = 0; i < r->routec; i++) {
		struct qp_run_route rt;
		if (!r->routes || !r->routes[i] || qp_run_route_parse(r->routes[i], &rt) < 0)
			return invalid(err, code, m, "routes[%u] is malformed", i);
		if (rt.family == AF_INET ? r->prefix == 0 : r->addr6c == 0)
			return invalid(err, code, m, "routes[%u] without an address of its family", i);
	}
	if (r->mtu && (r->mtu < 68 || (r->prefix == 0 && r->addr6c == 0)))
		return invalid(err, code, m, "mtu %u (68..65535, with an address)", r->mtu);
	if ((r->flags & QP_RUN_F_TERMINAL) && !(r->flags & QP_RUN_F_STDIN))
		return invalid(err, code, m, "a terminal without stdin");
	if (!(r->flags & QP_RUN_F_TERMINAL) && (r->rows || r->cols))
		return invalid(err, code, m, "a window size without a terminal");
	return validate_run_extras(r, code, m, err);
}

/* Semantic checks of a message whose strings are NUL-terminated. */
static int validate(const struct qp_msg *m, int code, qp_error **err)
{
	switch (m->type) {
	case QP_MSG_RUN:
		if (m->u.run.flags & (QP_RUN_F_CONTAINER | QP_RUN_F_JOIN))
			return invalid(err, code, m, "a container or join flag in RUN");
		if ((m->u.run.flags & QP_RUN_F_PAUSE) && (m->u.run.flags & QP_RUN_F_TERMINAL))
			return invalid(err, code, m, "a pause on a terminal");
		return validate_run(&m->u.run, code, m, err);
	case QP_MSG_EXEC: {
		static const uint8_t zero[6];
		const struct qp_run *r = &m->u.run;
		bool container = r->flags & QP_RUN_F_CONTAINER, join = r->flags & QP_RUN_F_JOIN;
		if (r->id == 0)
			return invalid(err, code, m, "id 0");
		if (r->prefix || r->addr6c || memcmp(r->mac, zero, 6) || memcmp(r->ip, zero, 4))
			return invalid(err, code, m, "an exec cannot set the network");
		if (container && join)
			return invalid(err, code, m, "a container that joins a container");
		if (r->flags & QP_RUN_F_PAUSE)
			return invalid(err, code, m, "a pause is a RUN's");
		if (container || join) {
			if (r->rootfs != QP_ROOTFS_9P_SUBDIR || !qp_proto_dir_name_ok(r->rootfs_tag))
				return invalid(err, code, m, "a container names its directory in the pod share");
			if (join && r->mountc)
				return invalid(err, code, m, "a join cannot set mounts");
		} else if (r->rootfs != QP_ROOTFS_INITRAMFS || r->mountc) {
			return invalid(err, code, m, "an exec cannot set the rootfs or mounts");
		}
		return validate_run(r, code, m, err);
	}
	case QP_MSG_CTR_UPDATE:
	case QP_MSG_CTR_UPDATED:
		if (!qp_proto_dir_name_ok(m->u.ctr_update.name))
			return invalid(err, code, m, "not a container's name");
		if (m->type == QP_MSG_CTR_UPDATED)
			return m->u.ctr_update.text && strlen(m->u.ctr_update.text) > QP_PROTO_MAX_TEXT
				       ? invalid(err, code, m, "text longer than %d bytes", QP_PROTO_MAX_TEXT)
				       : 0;
		if (m->u.ctr_update.cgroupc < 1 || m->u.ctr_update.cgroupc > QP_PROTO_MAX_CGROUP)
			return invalid(err, code, m, "%u cgroup entries", m->u.ctr_update.cgroupc);
		for (uint32_t i = 0; i < m->u.ctr_update.cgroupc; i++)
			if (!m->u.ctr_update.cgroup || !m->u.ctr_update.cgroup[i] ||
			    !cgroup_entry_ok(m->u.ctr_update.cgroup[i]))
				return invalid(err, code, m, "cgroup[%u] is not a known FILE=VALUE", i);
		return 0;
	case QP_MSG_CTR_STATS_REQ:
	case QP_MSG_CTR_STATS:
		if (!qp_proto_dir_name_ok(m->u.ctr_stats.name))
			return invalid(err, code, m, "not a container's name");
		if (m->type == QP_MSG_CTR_STATS && m->u.ctr_stats.found > 1)
			return invalid(err, code, m, "found %u", m->u.ctr_stats.found);
		return 0;
	case QP_MSG_EXEC_SIGNAL:
		if (m->u.exec_signal.id == 0 || m->u.exec_signal.signo < 1 ||
		    m->u.exec_signal.signo > QP_PROTO_MAX_SIGNAL)
			return invalid(err, code, m, "id 0 or signal %u out of range", m->u.exec_signal.signo);
		return 0;
	case QP_MSG_EXEC_STARTED:
		if (m->u.exec_started.id == 0 || m->u.exec_started.pid == 0 ||
		    m->u.exec_started.pid > INT32_MAX)
			return invalid(err, code, m, "id or pid out of range");
		return 0;
	case QP_MSG_EXEC_OUT:
		if (m->u.exec_out.id == 0 || (m->u.exec_out.stream != 1 && m->u.exec_out.stream != 2))
			return invalid(err, code, m, "id 0 or stream %u", m->u.exec_out.stream);
		if (m->u.exec_out.len == 0 || m->u.exec_out.len > QP_PROTO_MAX_PAYLOAD - 5 ||
		    !m->u.exec_out.data)
			return invalid(err, code, m, "data length %u out of range", m->u.exec_out.len);
		return 0;
	case QP_MSG_EXEC_EXIT:
		if (m->u.exec_exit.id == 0 || m->u.exec_exit.code < 0 || m->u.exec_exit.code > 255)
			return invalid(err, code, m, "id 0 or exit code %d out of range",
				       m->u.exec_exit.code);
		/* fall through - the text */
	case QP_MSG_CTL_REPLY: {
		const char *t = m->type == QP_MSG_EXEC_EXIT ? m->u.exec_exit.text : m->u.reply.text;
		if (t && strlen(t) > QP_PROTO_MAX_TEXT)
			return invalid(err, code, m, "text longer than %d bytes", QP_PROTO_MAX_TEXT);
		return 0;
	}
	case QP_MSG_CTL_START:
	case QP_MSG_CTL_PAUSE:
	case QP_MSG_CTL_RESUME:
		return 0;
	case QP_MSG_CTL_REPLACE:
		if (m->u.replace.flags)
			return invalid(err, code, m, "unknown flags 0x%x", m->u.replace.flags);
		if (m->u.replace.argc > QP_PROTO_MAX_STRV)
			return invalid(err, code, m, "more than %d argv entries", QP_PROTO_MAX_STRV);
		for (uint32_t i = 0; i < m->u.replace.argc; i++)
			if (!m->u.replace.argv || !m->u.replace.argv[i] || (i == 0 && !m->u.replace.argv[0][0]))
				return invalid(err, code, m, "argv[%u] empty", i);
		return 0;
	case QP_MSG_STARTED:
		if (m->u.started.pid == 0 || m->u.started.pid > INT32_MAX)
			return invalid(err, code, m, "pid %u out of range", m->u.started.pid);
		return 0;
	case QP_MSG_STDOUT:
	case QP_MSG_STDERR:
		if (m->u.data.len == 0)
			return invalid(err, code, m, "empty data chunk");
		/* fall through */
	case QP_MSG_STDIN:
		if (m->u.data.len > QP_PROTO_MAX_PAYLOAD || (m->u.data.len && !m->u.data.data))
			return invalid(err, code, m, "data length %u out of range", m->u.data.len);
		return 0;
	case QP_MSG_STDIN_CREDIT:
		if (m->u.credit.bytes < 1 || m->u.credit.bytes > QP_PROTO_STDIN_WINDOW)
			return invalid(err, code, m, "credit %u out of range", m->u.credit.bytes);
		return 0;
	case QP_MSG_OUT_CREDIT:
		if (m->u.credit.bytes < 1 || m->u.credit.bytes > QP_PROTO_OUT_WINDOW)
			return invalid(err, code, m, "credit %u out of range", m->u.credit.bytes);
		return 0;
	case QP_MSG_WINSIZE:
		if (m->u.winsize.rows < 1 || m->u.winsize.cols < 1)
			return invalid(err, code, m, "window size %ux%u", m->u.winsize.rows, m->u.winsize.cols);
		return 0;
	case QP_MSG_EXEC_STDIN:
		if (m->u.exec_stdin.id == 0 || m->u.exec_stdin.len > QP_PROTO_MAX_PAYLOAD - 4 ||
		    (m->u.exec_stdin.len && !m->u.exec_stdin.data))
			return invalid(err, code, m, "id 0 or data length %u out of range", m->u.exec_stdin.len);
		return 0;
	case QP_MSG_EXEC_CREDIT:
		if (m->u.exec_credit.id == 0 || m->u.exec_credit.bytes < 1 ||
		    m->u.exec_credit.bytes > QP_PROTO_STDIN_WINDOW)
			return invalid(err, code, m, "id 0 or credit %u out of range", m->u.exec_credit.bytes);
		return 0;
	case QP_MSG_EXEC_OUT_CREDIT:
		if (m->u.exec_out_credit.id == 0 || m->u.exec_out_credit.frames < 1 ||
		    m->u.exec_out_credit.frames > QP_PROTO_EXEC_OUT_FRAMES ||
		    m->u.exec_out_credit.bytes < m->u.exec_out_credit.frames ||
		    m->u.exec_out_credit.bytes > QP_PROTO_EXEC_OUT_WINDOW)
			return invalid(err, code, m, "id 0 or credit %u bytes in %u messages out of range",
				       m->u.exec_out_credit.bytes, m->u.exec_out_credit.frames);
		return 0;
	case QP_MSG_SIGNAL:
		if (m->u.signal.signo < 1 || m->u.signal.signo > QP_PROTO_MAX_SIGNAL)
			return invalid(err, code, m, "signal %u out of range", m->u.signal.signo);
		return 0;
	case QP_MSG_EXIT:
		if (m->u.exit.code < 0 || m->u.exit.code > 255)
			return invalid(err, code, m, "exit code %d out of range", m->u.exit.code);
		return 0;
	case QP_MSG_ERROR:
		if (m->u.error.code < 1 || m->u.error.code > QP_PERR_MAX)
			return invalid(err, code, m, "unknown error code %u", m->u.error.code);
		if (!m->u.error.text || strlen(m->u.error.text) > QP_PROTO_MAX_TEXT)
			return invalid(err, code, m, "text missing or longer than %d bytes",
				       QP_PROTO_MAX_TEXT);
		return 0;
	case QP_MSG_WARM: {
		size_t n = m->u.warm.tag ? strlen(m->u.warm.tag) : 0;
		if (n == 0 || n > QP_PROTO_MAX_TAG)
			return invalid(err, code, m, "9p tag must have 1..%d bytes, not %zu", QP_PROTO_MAX_TAG, n);
		return 0;
	}
	case QP_MSG_HELLO:
		if (m->u.hello.flags & ~QP_HELLO_F_CLONED)
			return invalid(err, code, m, "unknown flags 0x%x", m->u.hello.flags);
		if (!(m->u.hello.flags & QP_HELLO_F_SEEDED) && m->u.hello.seed_check)
			return invalid(err, code, m, "a seed check without a seed added");
		return 0;
	case QP_MSG_MEMINFO_REQ:
	case QP_MSG_MEMINFO:
	case QP_MSG_SHUTDOWN:
	case QP_MSG_CLONE:
		return 0;
	default:
		return qp_error_set(err, code, 0, "control channel: unknown message type %u", m->type);
	}
}

/* ---- encoder ---- */

struct wr {
	uint8_t *p;
	size_t cap, off;
	bool full;
};

static void put(struct wr *w, const void *src, size_t n)
{
	if (w->full || n > w->cap - w->off) {
		w->full = true;
		return;
	}
	if (n) /* an empty field may have no bytes at all (src NULL) */
		memcpy(w->p + w->off, src, n);
	w->off += n;
}

static void put_u8(struct wr *w, uint8_t v)
{
	put(w, &v, 1);
}

static void put_u16(struct wr *w, uint16_t v)
{
	uint8_t b[2] = { v & 0xff, v >> 8 };
	put(w, b, 2);
}

static void put_u32(struct wr *w, uint32_t v)
{
	uint8_t b[4];
	for (int i = 0; i < 4; i++)
		b[i] = v >> (8 * i);
	put(w, b, 4);
}

static void put_u64(struct wr *w, uint64_t v)
{
	put_u32(w, (uint32_t)v);
	put_u32(w, (uint32_t)(v >> 32));
}

static void put_str(struct wr *w, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	if (n > UINT32_MAX) {
		w->full = true;
		return;
	}
	put_u32(w, (uint32_t)n);
	put(w, s, n);
}

static void put_strv(struct wr *w, const char *const *v, uint32_t n)
{
	put_u32(w, n);
	for (uint32_t i = 0; i < n; i++)
		put_str(w, v[i]);
}

static void put_payload(struct wr *w, const struct qp_msg *m)
{
	const struct qp_run *r = &m->u.run;

	switch (m->type) {
	case QP_MSG_HELLO:
		put_u16(w, m->u.hello.version);
		put_u16(w, m->u.hello.flags);
		put_u32(w, m->u.hello.seed_check);
		put_u64(w, m->u.hello.init_ns);
		put_u64(w, m->u.hello.hello_ns);
		break;
	case QP_MSG_EXEC:
		put_u32(w, r->id);
		/* fall through - the RUN payload */
	case QP_MSG_RUN:
		put_u32(w, r->flags);
		put_u32(w, r->uid);
		put_u32(w, r->gid);
		put_u8(w, r->rootfs);
		put_str(w, r->rootfs_tag);
		put_str(w, r->cwd);
		put_str(w, r->hostname);
		put_strv(w, r->argv, r->argc);
		put_strv(w, r->env, r->envc);
		put(w, r->ip, 4);
		put_u8(w, r->prefix);
		put(w, r->gateway, 4);
		put(w, r->mac, 6);
		put_strv(w, r->mounts, r->mountc);
		put_u16(w, r->rows);
		put_u16(w, r->cols);
		put_strv(w, r->cgroup, r->cgroupc);
		put_u16(w, r->mtu);
		put_strv(w, r->routes, r->routec);
		put_strv(w, r->addrs6, r->addr6c);
		break;
	case QP_MSG_EXEC_SIGNAL:
		put_u32(w, m->u.exec_signal.id);
		put_u32(w, m->u.exec_signal.signo);
		break;
	case QP_MSG_CTR_STATS_REQ:
		put_str(w, m->u.ctr_stats.name);
		break;
	case QP_MSG_CTR_UPDATE:
		put_str(w, m->u.ctr_update.name);
		put_strv(w, m->u.ctr_update.cgroup, m->u.ctr_update.cgroupc);
		break;
	case QP_MSG_CTR_UPDATED:
		put_str(w, m->u.ctr_update.name);
		put_u32(w, (uint32_t)m->u.ctr_update.errnum);
		put_str(w, m->u.ctr_update.text ? m->u.ctr_update.text : "");
		break;
	case QP_MSG_CTR_STATS:
		put_str(w, m->u.ctr_stats.name);
		put_u8(w, m->u.ctr_stats.found);
		put_u64(w, m->u.ctr_stats.cpu_usec);
		put_u64(w, m->u.ctr_stats.cpu_user_usec);
		put_u64(w, m->u.ctr_stats.cpu_system_usec);
		put_u64(w, m->u.ctr_stats.memory);
		put_u64(w, m->u.ctr_stats.memory_max);
		put_u64(w, m->u.ctr_stats.pids);
		put_u64(w, m->u.ctr_stats.pids_max);
		put_u64(w, m->u.ctr_stats.oom_kills);
		break;
	case QP_MSG_STARTED:
		put_u32(w, m->u.started.pid);
		put_u64(w, m->u.started.spawn_ns);
		put_u64(w, m->u.started.exec_ns);
		break;
	case QP_MSG_STDOUT:
	case QP_MSG_STDERR:
	case QP_MSG_STDIN:
		put(w, m->u.data.data, m->u.data.len);
		break;
	case QP_MSG_SIGNAL:
		put_u32(w, m->u.signal.signo);
		break;
	case QP_MSG_STDIN_CREDIT:
	case QP_MSG_OUT_CREDIT:
		put_u32(w, m->u.credit.bytes);
		break;
	case QP_MSG_WINSIZE:
		put_u32(w, m->u.winsize.id);
		put_u16(w, m->u.winsize.rows);
		put_u16(w, m->u.winsize.cols);
		break;
	case QP_MSG_EXEC_STDIN:
		put_u32(w, m->u.exec_stdin.id);
		put(w, m->u.exec_stdin.data, m->u.exec_stdin.len);
		break;
	case QP_MSG_EXEC_CREDIT:
		put_u32(w, m->u.exec_credit.id);
		put_u32(w, m->u.exec_credit.bytes);
		break;
	case QP_MSG_EXEC_OUT_CREDIT:
		put_u32(w, m->u.exec_out_credit.id);
		put_u32(w, m->u.exec_out_credit.bytes);
		put_u32(w, m->u.exec_out_credit.frames);
		break;
	case QP_MSG_EXIT:
		put_u32(w, (uint32_t)m->u.exit.code);
		put_u64(w, m->u.exit.exit_ns);
		break;
	case QP_MSG_MEMINFO:
		put_u64(w, m->u.meminfo.total_kb);
		put_u64(w, m->u.meminfo.free_kb);
		put_u64(w, m->u.meminfo.available_kb);
		put_u64(w, m->u.meminfo.buffers_kb);
		put_u64(w, m->u.meminfo.cached_kb);
		break;
	case QP_MSG_ERROR:
		put_u32(w, m->u.error.code);
		put_u32(w, (uint32_t)m->u.error.errnum);
		put_str(w, m->u.error.text);
		break;
	case QP_MSG_EXEC_STARTED:
		put_u32(w, m->u.exec_started.id);
		put_u32(w, m->u.exec_started.pid);
		break;
	case QP_MSG_CLONE:
		put_u64(w, m->u.clone.realtime_ns);
		put(w, m->u.clone.seed, QP_PROTO_SEED_SIZE);
		break;
	case QP_MSG_WARM:
		put_str(w, m->u.warm.tag);
		break;
	case QP_MSG_EXEC_OUT:
		put_u32(w, m->u.exec_out.id);
		put_u8(w, m->u.exec_out.stream);
		put(w, m->u.exec_out.data, m->u.exec_out.len);
		break;
	case QP_MSG_EXEC_EXIT:
		put_u32(w, m->u.exec_exit.id);
		put_u32(w, (uint32_t)m->u.exec_exit.code);
		put_u32(w, (uint32_t)m->u.exec_exit.errnum);
		put_str(w, m->u.exec_exit.text);
		break;
	case QP_MSG_CTL_REPLACE:
		put_u32(w, m->u.replace.flags);
		put_strv(w, m->u.replace.argv, m->u.replace.argc);
		break;
	case QP_MSG_CTL_REPLY:
		put_u32(w, (uint32_t)m->u.reply.status);
		put_u32(w, (uint32_t)m->u.reply.errnum);
		put_str(w, m->u.reply.text);
		break;
	default: /* MEMINFO_REQ, SHUTDOWN, CTL_START, CTL_PAUSE, CTL_RESUME: empty */
		break;
	}
}

ssize_t qp_msg_encode(const struct qp_msg *m, uint8_t *out, size_t cap, qp_error **err)
{
	struct wr w = { .p = out, .cap = cap };
	size_t payload;

	if (validate(m, QP_E_INVALID, err) < 0)
		return -1;
	if (m->type == QP_MSG_RUN || m->type == QP_MSG_EXEC) {
		const struct qp_run *r = &m->u.run;
		for (uint32_t i = 0; i < r->argc; i++)
			if (!r->argv[i])
				return invalid(err, QP_E_INVALID, m, "argv[%u] is NULL", i);
	}
	if (cap < QP_PROTO_HDR_SIZE)
		return invalid(err, QP_E_INVALID, m, "buffer of %zu bytes too small", cap);
	w.off = QP_PROTO_HDR_SIZE;
	put_payload(&w, m);
	payload = w.off - QP_PROTO_HDR_SIZE;
	if (w.full || payload > QP_PROTO_MAX_PAYLOAD)
		return invalid(err, QP_E_INVALID, m, "payload larger than %d bytes",
			       QP_PROTO_MAX_PAYLOAD);
	w.off = 0;
	put_u32(&w, QP_PROTO_MAGIC);
	put_u16(&w, QP_PROTO_VERSION);
	put_u16(&w, m->type);
	put_u32(&w, (uint32_t)payload);
	return (ssize_t)(QP_PROTO_HDR_SIZE + payload);
}

/* ---- decoder ---- */

struct rd {
	const uint8_t *p;
	size_t len, off;
	const struct qp_msg *m; /* for error messages */
	struct qp_msg_store *st;
	size_t st_used; /* bytes of st->bytes in use */
};

static int need(struct rd *r, size_t n, const char *field, qp_error **err)
{
	if (n > r->len - r->off)
		return invalid(err, QP_E_GUEST, r->m, "%s: truncated (%zu bytes needed, %zu left)",
			       field, n, r->len - r->off);
	return 0;
}

static uint32_t le32(const uint8_t *b)
{
	return b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static int get_u8(struct rd *r, uint8_t *v, const char *field, qp_error **err)
{
	if (need(r, 1, field, err) < 0)
		return -1;
	*v = r->p[r->off++];
	return 0;
}

static int get_u16(struct rd *r, uint16_t *v, const char *field, qp_error **err)
{
	if (need(r, 2, field, err) < 0)
		return -1;
	*v = (uint16_t)(r->p[r->off] | r->p[r->off + 1] << 8);
	r->off += 2;
	return 0;
}

static int get_u32(struct rd *r, uint32_t *v, const char *field, qp_error **err)
{
	if (need(r, 4, field, err) < 0)
		return -1;
	*v = le32(r->p + r->off);
	r->off += 4;
	return 0;
}

static int get_u64(struct rd *r, uint64_t *v, const char *field, qp_error **err)
{
	if (need(r, 8, field, err) < 0)
		return -1;
	*v = le32(r->p + r->off) | (uint64_t)le32(r->p + r->off + 4) << 32;
	r->off += 8;
	return 0;
}

static int get_bytes(struct rd *r, uint8_t *dst, size_t n, const char *field, qp_error **err)
{
	if (need(r, n, field, err) < 0)
		return -1;
	memcpy(dst, r->p + r->off, n);
	r->off += n;
	return 0;
}

/* Copy n bytes into the store, NUL-terminated. */
static char *store(struct rd *r, const uint8_t *src, size_t n, const char *field, qp_error **err)
{
	char *dst;

	if (n >= sizeof(r->st->bytes) - r->st_used) { /* cannot happen within the bounds */
		invalid(err, QP_E_GUEST, r->m, "%s: message store full", field);
		return NULL;
	}
	dst = r->st->bytes + r->st_used;
	memcpy(dst, src, n);
	dst[n] = '\0';
	r->st_used += n + 1;
	return dst;
}

static int get_str(struct rd *r, const char **out, const char *field, qp_error **err)
{
	uint32_t n;
	const uint8_t *s;

	if (get_u32(r, &n, field, err) < 0 || need(r, n, field, err) < 0)
		return -1;
	s = r->p + r->off;
	if (memchr(s, '\0', n))
		return invalid(err, QP_E_GUEST, r->m, "%s: NUL byte inside a string", field);
	if (!(*out = store(r, s, n, field, err)))
		return -1;
	r->off += n;
	return 0;
}

static int get_strv_max(struct rd *r, const char **vec, uint32_t *count, uint32_t max,
			const char *field, qp_error **err)
{
	uint32_t n;

	if (get_u32(r, &n, field, err) < 0)
		return -1;
	if (n > max)
		return invalid(err, QP_E_GUEST, r->m, "%s: %u entries, at most %u allowed", field, n,
			       max);
	if (need(r, (size_t)n * 4, field, err) < 0) /* every entry has a length word */
		return -1;
	for (uint32_t i = 0; i < n; i++)
		if (get_str(r, &vec[i], field, err) < 0)
			return -1;
	vec[n] = NULL;
	*count = n;
	return 0;
}

static int get_strv(struct rd *r, const char **vec, uint32_t *count, const char *field,
		    qp_error **err)
{
	return get_strv_max(r, vec, count, QP_PROTO_MAX_STRV, field, err);
}

static int get_payload(struct rd *r, struct qp_msg *m, qp_error **err)
{
	struct qp_run *run = &m->u.run;
	uint32_t u32;
	const uint8_t *data;

	switch (m->type) {
	case QP_MSG_HELLO:
		return get_u16(r, &m->u.hello.version, "version", err) < 0 ||
		       get_u16(r, &m->u.hello.flags, "flags", err) < 0 ||
		       get_u32(r, &m->u.hello.seed_check, "seed_check", err) < 0 ||
		       get_u64(r, &m->u.hello.init_ns, "init_ns", err) < 0 ||
		       get_u64(r, &m->u.hello.hello_ns, "hello_ns", err) < 0 ? -1 : 0;
	case QP_MSG_EXEC:
		if (get_u32(r, &run->id, "id", err) < 0)
			return -1;
		/* fall through - the RUN payload */
	case QP_MSG_RUN:
		if (get_u32(r, &run->flags, "flags", err) < 0 || get_u32(r, &run->uid, "uid", err) < 0 ||
		    get_u32(r, &run->gid, "gid", err) < 0 || get_u8(r, &run->rootfs, "rootfs", err) < 0 ||
		    get_str(r, &run->rootfs_tag, "rootfs_tag", err) < 0 ||
		    get_str(r, &run->cwd, "cwd", err) < 0 ||
		    get_str(r, &run->hostname, "hostname", err) < 0 ||
		    get_strv(r, r->st->argv, &run->argc, "argv", err) < 0 ||
		    get_strv(r, r->st->env, &run->envc, "env", err) < 0 ||
		    get_bytes(r, run->ip, 4, "ip", err) < 0 || get_u8(r, &run->prefix, "prefix", err) < 0 ||
		    get_bytes(r, run->gateway, 4, "gateway", err) < 0 ||
		    get_bytes(r, run->mac, 6, "mac", err) < 0 ||
		    get_strv_max(r, r->st->mounts, &run->mountc, QP_PROTO_MAX_MOUNTS, "mounts", err) < 0 ||
		    get_u16(r, &run->rows, "rows", err) < 0 || get_u16(r, &run->cols, "cols", err) < 0 ||
		    get_strv_max(r, r->st->cgroup, &run->cgroupc, QP_PROTO_MAX_CGROUP, "cgroup", err) < 0 ||
		    get_u16(r, &run->mtu, "mtu", err) < 0 ||
		    get_strv_max(r, r->st->routes, &run->routec, QP_PROTO_MAX_ROUTES, "routes", err) < 0 ||
		    get_strv_max(r, r->st->addrs6, &run->addr6c, QP_PROTO_MAX_ADDRS6, "addrs6", err) < 0)
			return -1;
		run->argv = r->st->argv;
		run->env = r->st->env;
		run->mounts = r->st->mounts;
		run->cgroup = r->st->cgroup;
		run->routes = r->st->routes;
		run->addrs6 = r->st->addrs6;
		return 0;
	case QP_MSG_STARTED:
		return get_u32(r, &m->u.started.pid, "pid", err) < 0 ||
		       get_u64(r, &m->u.started.spawn_ns, "spawn_ns", err) < 0 ||
		       get_u64(r, &m->u.started.exec_ns, "exec_ns", err) < 0 ? -1 : 0;
	case QP_MSG_STDOUT:
	case QP_MSG_STDERR:
	case QP_MSG_STDIN:
		m->u.data.len = (uint32_t)(r->len - r->off);
		data = r->p + r->off;
		/* copied so that the message outlives the receive buffer */
		if (!(m->u.data.data = (const uint8_t *)store(r, data, m->u.data.len, "data", err)))
			return -1;
		r->off = r->len;
		return 0;
	case QP_MSG_SIGNAL:
		return get_u32(r, &m->u.signal.signo, "signo", err);
	case QP_MSG_STDIN_CREDIT:
	case QP_MSG_OUT_CREDIT:
		return get_u32(r, &m->u.credit.bytes, "bytes", err);
	case QP_MSG_EXEC_STDIN:
		if (get_u32(r, &m->u.exec_stdin.id, "id", err) < 0)
			return -1;
		m->u.exec_stdin.len = (uint32_t)(r->len - r->off);
		if (!(m->u.exec_stdin.data = (const uint8_t *)store(r, r->p + r->off, m->u.exec_stdin.len,
								     "data", err)))
			return -1;
		r->off = r->len;
		return 0;
	case QP_MSG_EXEC_SIGNAL:
		return get_u32(r, &m->u.exec_signal.id, "id", err) < 0 ||
		       get_u32(r, &m->u.exec_signal.signo, "signo", err) < 0 ? -1 : 0;
	case QP_MSG_CTR_STATS_REQ:
		return get_str(r, &m->u.ctr_stats.name, "name", err);
	case QP_MSG_CTR_UPDATE:
		if (get_str(r, &m->u.ctr_update.name, "name", err) < 0 ||
		    get_strv_max(r, r->st->cgroup, &m->u.ctr_update.cgroupc, QP_PROTO_MAX_CGROUP, "cgroup", err) < 0)
			return -1;
		m->u.ctr_update.cgroup = r->st->cgroup;
		return 0;
	case QP_MSG_CTR_UPDATED:
		if (get_str(r, &m->u.ctr_update.name, "name", err) < 0 || get_u32(r, &u32, "errnum", err) < 0)
			return -1;
		m->u.ctr_update.errnum = (int32_t)u32;
		return get_str(r, &m->u.ctr_update.text, "text", err);
	case QP_MSG_CTR_STATS:
		return get_str(r, &m->u.ctr_stats.name, "name", err) < 0 ||
		       get_u8(r, &m->u.ctr_stats.found, "found", err) < 0 ||
		       get_u64(r, &m->u.ctr_stats.cpu_usec, "cpu_usec", err) < 0 ||
		       get_u64(r, &m->u.ctr_stats.cpu_user_usec, "cpu_user_usec", err) < 0 ||
		       get_u64(r, &m->u.ctr_stats.cpu_system_usec, "cpu_system_usec", err) < 0 ||
		       get_u64(r, &m->u.ctr_stats.memory, "memory", err) < 0 ||
		       get_u64(r, &m->u.ctr_stats.memory_max, "memory_max", err) < 0 ||
		       get_u64(r, &m->u.ctr_stats.pids, "pids", err) < 0 ||
		       get_u64(r, &m->u.ctr_stats.pids_max, "pids_max", err) < 0 ||
		       get_u64(r, &m->u.ctr_stats.oom_kills, "oom_kills", err) < 0 ? -1 : 0;
	case QP_MSG_EXEC_CREDIT:
		return get_u32(r, &m->u.exec_credit.id, "id", err) < 0 ||
		       get_u32(r, &m->u.exec_credit.bytes, "bytes", err) < 0 ? -1 : 0;
	case QP_MSG_EXEC_OUT_CREDIT:
		return get_u32(r, &m->u.exec_out_credit.id, "id", err) < 0 ||
		       get_u32(r, &m->u.exec_out_credit.bytes, "bytes", err) < 0 ||
		       get_u32(r, &m->u.exec_out_credit.frames, "frames", err) < 0 ? -1 : 0;
	case QP_MSG_WINSIZE:
		return get_u32(r, &m->u.winsize.id, "id", err) < 0 ||
		       get_u16(r, &m->u.winsize.rows, "rows", err) < 0 ||
		       get_u16(r, &m->u.winsize.cols, "cols", err) < 0 ? -1 : 0;
	case QP_MSG_EXIT:
		if (get_u32(r, &u32, "code", err) < 0)
			return -1;
		m->u.exit.code = (int32_t)u32;
		return get_u64(r, &m->u.exit.exit_ns, "exit_ns", err);
	case QP_MSG_MEMINFO:
		return get_u64(r, &m->u.meminfo.total_kb, "total", err) < 0 ||
		       get_u64(r, &m->u.meminfo.free_kb, "free", err) < 0 ||
		       get_u64(r, &m->u.meminfo.available_kb, "available", err) < 0 ||
		       get_u64(r, &m->u.meminfo.buffers_kb, "buffers", err) < 0 ||
		       get_u64(r, &m->u.meminfo.cached_kb, "cached", err) < 0 ? -1 : 0;
	case QP_MSG_ERROR:
		if (get_u32(r, &m->u.error.code, "code", err) < 0 || get_u32(r, &u32, "errnum", err) < 0)
			return -1;
		m->u.error.errnum = (int32_t)u32;
		return get_str(r, &m->u.error.text, "text", err);
	case QP_MSG_EXEC_STARTED:
		return get_u32(r, &m->u.exec_started.id, "id", err) < 0 ||
		       get_u32(r, &m->u.exec_started.pid, "pid", err) < 0 ? -1 : 0;
	case QP_MSG_CLONE:
		return get_u64(r, &m->u.clone.realtime_ns, "realtime_ns", err) < 0 ||
		       get_bytes(r, m->u.clone.seed, QP_PROTO_SEED_SIZE, "seed", err) < 0 ? -1 : 0;
	case QP_MSG_WARM:
		return get_str(r, &m->u.warm.tag, "tag", err);
	case QP_MSG_EXEC_OUT:
		if (get_u32(r, &m->u.exec_out.id, "id", err) < 0 ||
		    get_u8(r, &m->u.exec_out.stream, "stream", err) < 0)
			return -1;
		m->u.exec_out.len = (uint32_t)(r->len - r->off);
		if (!(m->u.exec_out.data = (const uint8_t *)store(r, r->p + r->off, m->u.exec_out.len,
								   "data", err)))
			return -1;
		r->off = r->len;
		return 0;
	case QP_MSG_EXEC_EXIT:
		if (get_u32(r, &m->u.exec_exit.id, "id", err) < 0 || get_u32(r, &u32, "code", err) < 0)
			return -1;
		m->u.exec_exit.code = (int32_t)u32;
		if (get_u32(r, &u32, "errnum", err) < 0)
			return -1;
		m->u.exec_exit.errnum = (int32_t)u32;
		return get_str(r, &m->u.exec_exit.text, "text", err);
	case QP_MSG_CTL_REPLACE:
		if (get_u32(r, &m->u.replace.flags, "flags", err) < 0 ||
		    get_strv(r, r->st->argv, &m->u.replace.argc, "argv", err) < 0)
			return -1;
		m->u.replace.argv = r->st->argv;
		return 0;
	case QP_MSG_CTL_REPLY:
		if (get_u32(r, &u32, "status", err) < 0)
			return -1;
		m->u.reply.status = (int32_t)u32;
		if (get_u32(r, &u32, "errnum", err) < 0)
			return -1;
		m->u.reply.errnum = (int32_t)u32;
		return get_str(r, &m->u.reply.text, "text", err);
	default: /* MEMINFO_REQ, SHUTDOWN, CTL_START, CTL_PAUSE, CTL_RESUME */
		return 0;
	}
}

int qp_msg_decode_header(const uint8_t hdr[QP_PROTO_HDR_SIZE], struct qp_msg_hdr *h,
			 qp_error **err)
{
	h->magic = le32(hdr);
	h->version = (uint16_t)(hdr[4] | hdr[5] << 8);
	h->type = (uint16_t)(hdr[6] | hdr[7] << 8);
	h->length = le32(hdr + 8);
	if (h->magic != QP_PROTO_MAGIC)
		return qp_error_set(err, QP_E_GUEST, 0,
				    "control channel: bad magic 0x%08x (want 0x%08x): not a qpod peer, or out of step",
				    h->magic, QP_PROTO_MAGIC);
	if (h->version != QP_PROTO_VERSION)
		return qp_error_set(err, QP_E_GUEST, 0,
				    "control channel: protocol version %u not supported (this side speaks %d)",
				    h->version, QP_PROTO_VERSION);
	if (h->type < 1 || h->type > QP_MSG_TYPE_MAX)
		return qp_error_set(err, QP_E_GUEST, 0, "control channel: unknown message type %u",
				    h->type);
	if (h->length > QP_PROTO_MAX_PAYLOAD)
		return qp_error_set(err, QP_E_GUEST, 0,
				    "control channel: %s message: payload of %u bytes exceeds the %d byte limit",
				    qp_msg_type_name(h->type), h->length, QP_PROTO_MAX_PAYLOAD);
	return 0;
}

int qp_msg_decode(const uint8_t *frame, size_t len, struct qp_msg *m, struct qp_msg_store *st,
		  qp_error **err)
{
	struct qp_msg_hdr h;
	struct rd r = { .p = frame, .m = m, .st = st };

	memset(m, 0, sizeof(*m));
	if (len < QP_PROTO_HDR_SIZE)
		return qp_error_set(err, QP_E_GUEST, 0,
				    "control channel: truncated header (%zu of %d bytes)", len,
				    QP_PROTO_HDR_SIZE);
	if (qp_msg_decode_header(frame, &h, err) < 0)
		return -1;
	m->type = h.type;
	if (len - QP_PROTO_HDR_SIZE != h.length)
		return invalid(err, QP_E_GUEST, m, "header says %u payload bytes, frame has %zu",
			       h.length, len - QP_PROTO_HDR_SIZE);
	r.off = QP_PROTO_HDR_SIZE;
	r.len = len;
	if (get_payload(&r, m, err) < 0)
		return -1;
	if (r.off != r.len)
		return invalid(err, QP_E_GUEST, m, "%zu trailing bytes", r.len - r.off);
	return validate(m, QP_E_GUEST, err);
}
