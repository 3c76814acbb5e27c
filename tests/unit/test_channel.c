/* tests/unit/test_channel.c — the host<->guest control-channel protocol
 * (guest-init/protocol.h, channel.c): every message type round-trips; each
 * kind of malformed input is a clean QP_E_GUEST error; the encoder refuses
 * what the decoder would; the reader keeps its deadline against a stalled
 * peer; a fake guest on a socketpair sending garbage, dribbling bytes or
 * hanging up cannot crash or hang the host side. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guest-init/channel.h"

static struct qp_msg_store store;
static uint8_t frame[QP_PROTO_FRAME_MAX + 64];

#define assert_fails(call, want)                         \
	do {                                              \
		qp_error *e_ = NULL;                      \
		qp_error **err = &e_;                     \
		assert_int_equal((call), -1);             \
		assert_non_null(e_);                      \
		assert_non_null(e_->msg);                 \
		assert_null(strchr(e_->msg, '\n'));       \
		assert_int_equal(e_->code, (want));       \
		qp_error_free(&e_);                       \
	} while (0)

/* encode then decode; the decoded message is returned in *out */
static size_t round_trip(const struct qp_msg *in, struct qp_msg *out)
{
	qp_error *err = NULL;
	ssize_t n = qp_msg_encode(in, frame, sizeof(frame), &err);

	assert_null(err);
	assert_true(n >= QP_PROTO_HDR_SIZE);
	assert_int_equal(qp_msg_decode(frame, (size_t)n, out, &store, &err), 0);
	assert_null(err);
	assert_int_equal(out->type, in->type);
	return (size_t)n;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = v, p[1] = v >> 8, p[2] = v >> 16, p[3] = v >> 24;
}

static void header(uint8_t *p, uint32_t magic, uint16_t version, uint16_t type, uint32_t len)
{
	put32(p, magic);
	p[4] = version, p[5] = version >> 8;
	p[6] = type, p[7] = type >> 8;
	put32(p + 8, len);
}

static void test_header_layout(void **state)
{
	struct qp_msg m = { .type = QP_MSG_SHUTDOWN };
	qp_error *err = NULL;
	static const uint8_t want[] = { 'Q', 'P', 'O', 'D', QP_PROTO_VERSION, 0, QP_MSG_SHUTDOWN, 0, 0, 0, 0, 0 };

	(void)state;
	assert_int_equal(qp_msg_encode(&m, frame, sizeof(frame), &err), QP_PROTO_HDR_SIZE);
	assert_memory_equal(frame, want, sizeof(want));
	assert_string_equal(qp_msg_type_name(QP_MSG_MEMINFO_REQ), "MEMINFO_REQ");
	assert_string_equal(qp_msg_type_name(999), "unknown");
}

static void test_round_trip_simple(void **state)
{
	struct qp_msg in, out;

	(void)state;
	in = (struct qp_msg){ .type = QP_MSG_HELLO };
	in.u.hello.version = QP_PROTO_VERSION;
	in.u.hello.init_ns = 123456789012345ull;
	in.u.hello.hello_ns = UINT64_MAX;
	round_trip(&in, &out);
	assert_int_equal(out.u.hello.version, QP_PROTO_VERSION);
	assert_int_equal(out.u.hello.flags, 0);
	assert_int_equal(out.u.hello.seed_check, 0);
	assert_true(out.u.hello.init_ns == 123456789012345ull);
	assert_true(out.u.hello.hello_ns == UINT64_MAX);
	/* the HELLO that answers a CLONE: what the guest did, of which seed */
	in.u.hello.flags = QP_HELLO_F_CLONED;
	in.u.hello.seed_check = 0xdeadbeef;
	round_trip(&in, &out);
	assert_int_equal(out.u.hello.flags, QP_HELLO_F_CLONED);
	assert_int_equal(out.u.hello.seed_check, 0xdeadbeef);

	in = (struct qp_msg){ .type = QP_MSG_STARTED };
	in.u.started.pid = 42, in.u.started.spawn_ns = 7, in.u.started.exec_ns = 9;
	round_trip(&in, &out);
	assert_int_equal(out.u.started.pid, 42);
	assert_int_equal(out.u.started.spawn_ns, 7);
	assert_int_equal(out.u.started.exec_ns, 9);

	for (uint16_t t = QP_MSG_STDOUT; t <= QP_MSG_STDIN; t++) {
		static uint8_t big[QP_PROTO_MAX_PAYLOAD];
		memset(big, 0, sizeof(big)); /* NULs are fine in data */
		big[sizeof(big) - 1] = 0xff;
		in = (struct qp_msg){ .type = t };
		in.u.data.data = big;
		in.u.data.len = sizeof(big);
		assert_int_equal(round_trip(&in, &out), QP_PROTO_FRAME_MAX);
		assert_int_equal(out.u.data.len, sizeof(big));
		assert_memory_equal(out.u.data.data, big, sizeof(big));
	}
	in = (struct qp_msg){ .type = QP_MSG_STDIN }; /* EOF */
	round_trip(&in, &out);
	assert_int_equal(out.u.data.len, 0);

	in = (struct qp_msg){ .type = QP_MSG_SIGNAL };
	in.u.signal.signo = SIGTERM;
	round_trip(&in, &out);
	assert_int_equal(out.u.signal.signo, SIGTERM);

	in = (struct qp_msg){ .type = QP_MSG_EXIT };
	in.u.exit.code = 137, in.u.exit.exit_ns = 99;
	round_trip(&in, &out);
	assert_int_equal(out.u.exit.code, 137);
	assert_int_equal(out.u.exit.exit_ns, 99);

	in = (struct qp_msg){ .type = QP_MSG_MEMINFO_REQ };
	assert_int_equal(round_trip(&in, &out), QP_PROTO_HDR_SIZE);

	in = (struct qp_msg){ .type = QP_MSG_MEMINFO };
	in.u.meminfo.total_kb = 1, in.u.meminfo.free_kb = 2, in.u.meminfo.available_kb = 3;
	in.u.meminfo.buffers_kb = 4, in.u.meminfo.cached_kb = 1ull << 40;
	round_trip(&in, &out);
	assert_int_equal(out.u.meminfo.total_kb, 1);
	assert_int_equal(out.u.meminfo.free_kb, 2);
	assert_int_equal(out.u.meminfo.available_kb, 3);
	assert_int_equal(out.u.meminfo.buffers_kb, 4);
	assert_true(out.u.meminfo.cached_kb == 1ull << 40);

	in = (struct qp_msg){ .type = QP_MSG_SHUTDOWN };
	round_trip(&in, &out);

	in = (struct qp_msg){ .type = QP_MSG_ERROR };
	in.u.error.code = QP_PERR_SYSCALL, in.u.error.errnum = ENOENT;
	in.u.error.text = "mount 9p: No such file or directory";
	round_trip(&in, &out);
	assert_int_equal(out.u.error.code, QP_PERR_SYSCALL);
	assert_int_equal(out.u.error.errnum, ENOENT);
	assert_string_equal(out.u.error.text, in.u.error.text);

	in = (struct qp_msg){ .type = QP_MSG_WARM };
	in.u.warm.tag = "rootfs";
	round_trip(&in, &out);
	assert_string_equal(out.u.warm.tag, "rootfs");

	in = (struct qp_msg){ .type = QP_MSG_STDIN_CREDIT };
	in.u.credit.bytes = QP_PROTO_STDIN_WINDOW;
	round_trip(&in, &out);
	assert_int_equal(out.u.credit.bytes, QP_PROTO_STDIN_WINDOW);

	in = (struct qp_msg){ .type = QP_MSG_WINSIZE };
	in.u.winsize.id = 7, in.u.winsize.rows = 1, in.u.winsize.cols = 65535;
	assert_int_equal(round_trip(&in, &out), QP_PROTO_HDR_SIZE + 8);
	assert_int_equal(out.u.winsize.id, 7);
	assert_int_equal(out.u.winsize.rows, 1);
	assert_int_equal(out.u.winsize.cols, 65535);
	/* a size of nothing is refused both ways */
	in.u.winsize.rows = 0;
	assert_fails(qp_msg_encode(&in, frame, sizeof(frame), err), QP_E_INVALID);
	in.u.winsize.rows = 1;
	ssize_t n = qp_msg_encode(&in, frame, sizeof(frame), NULL);
	assert_true(n > 0);
	frame[QP_PROTO_HDR_SIZE + 6] = frame[QP_PROTO_HDR_SIZE + 7] = 0; /* cols 0 */
	assert_fails(qp_msg_decode(frame, (size_t)n, &out, &store, err), QP_E_GUEST);

	/* an exec's input and its credit */
	in = (struct qp_msg){ .type = QP_MSG_EXEC_STDIN };
	in.u.exec_stdin.id = 3, in.u.exec_stdin.data = (const uint8_t *)"ls\r", in.u.exec_stdin.len = 3;
	assert_int_equal(round_trip(&in, &out), QP_PROTO_HDR_SIZE + 7);
	assert_int_equal(out.u.exec_stdin.id, 3);
	assert_int_equal(out.u.exec_stdin.len, 3);
	assert_memory_equal(out.u.exec_stdin.data, "ls\r", 3);
	in.u.exec_stdin.len = 0; /* its end */
	round_trip(&in, &out);
	assert_int_equal(out.u.exec_stdin.len, 0);
	in.u.exec_stdin.id = 0;
	assert_fails(qp_msg_encode(&in, frame, sizeof(frame), err), QP_E_INVALID);
	in = (struct qp_msg){ .type = QP_MSG_EXEC_CREDIT };
	in.u.exec_credit.id = 3, in.u.exec_credit.bytes = QP_PROTO_STDIN_WINDOW;
	round_trip(&in, &out);
	assert_int_equal(out.u.exec_credit.id, 3);
	assert_int_equal(out.u.exec_credit.bytes, QP_PROTO_STDIN_WINDOW);
	in.u.exec_credit.bytes = QP_PROTO_STDIN_WINDOW + 1;
	assert_fails(qp_msg_encode(&in, frame, sizeof(frame), err), QP_E_INVALID);
	/* who sends them */
	assert_int_equal(qp_msg_sender(QP_MSG_EXEC_CREDIT), QP_SENDER_GUEST);
	assert_int_equal(qp_msg_sender(QP_MSG_EXEC_STDIN), QP_SENDER_HOST | QP_SENDER_CTL);
	assert_int_equal(qp_msg_sender(QP_MSG_WINSIZE), QP_SENDER_HOST | QP_SENDER_CTL);

	/* the output's credit: the host's, up to its window */
	in = (struct qp_msg){ .type = QP_MSG_OUT_CREDIT };
	in.u.credit.bytes = QP_PROTO_OUT_WINDOW;
	assert_int_equal(round_trip(&in, &out), QP_PROTO_HDR_SIZE + 4);
	assert_int_equal(out.u.credit.bytes, QP_PROTO_OUT_WINDOW);
	in.u.credit.bytes = QP_PROTO_OUT_WINDOW + 1;
	assert_fails(qp_msg_encode(&in, frame, sizeof(frame), err), QP_E_INVALID);
	assert_int_equal(qp_msg_sender(QP_MSG_OUT_CREDIT), QP_SENDER_HOST);
	assert_string_equal(qp_msg_type_name(QP_MSG_OUT_CREDIT), "OUT_CREDIT");
}

static void test_round_trip_run(void **state)
{
	static const char *argv[] = { "/bin/sh", "-c", "echo hi", "", NULL };
	static const char *env[] = { "PATH=/bin:/usr/bin", "EMPTY=", NULL };
	struct qp_msg in = { .type = QP_MSG_RUN }, out;
	struct qp_run *r = &in.u.run;

	(void)state;
	r->flags = QP_RUN_F_STDIN | QP_RUN_F_ROOTFS_RO;
	r->uid = 1000, r->gid = 100;
	r->rootfs = QP_ROOTFS_9P, r->rootfs_tag = "rootfs";
	r->cwd = "/work", r->hostname = "pod-1";
	r->argc = 4, r->argv = argv, r->envc = 2, r->env = env;
	memcpy(r->ip, (uint8_t[]){ 10, 88, 0, 2 }, 4);
	r->prefix = 24;
	memcpy(r->gateway, (uint8_t[]){ 10, 88, 0, 1 }, 4);
	memcpy(r->mac, (uint8_t[]){ 0x52, 0x54, 0, 1, 2, 3 }, 6);
	round_trip(&in, &out);
	assert_int_equal(out.u.run.flags, r->flags);
	assert_int_equal(out.u.run.uid, 1000);
	assert_int_equal(out.u.run.gid, 100);
	assert_int_equal(out.u.run.rootfs, QP_ROOTFS_9P);
	assert_string_equal(out.u.run.rootfs_tag, "rootfs");
	assert_string_equal(out.u.run.cwd, "/work");
	assert_string_equal(out.u.run.hostname, "pod-1");
	assert_int_equal(out.u.run.argc, 4);
	for (int i = 0; i < 4; i++)
		assert_string_equal(out.u.run.argv[i], argv[i]);
	assert_null(out.u.run.argv[4]);
	assert_int_equal(out.u.run.envc, 2);
	assert_string_equal(out.u.run.env[1], "EMPTY=");
	assert_null(out.u.run.env[2]);
	assert_memory_equal(out.u.run.ip, r->ip, 4);
	assert_int_equal(out.u.run.prefix, 24);
	assert_memory_equal(out.u.run.gateway, r->gateway, 4);
	assert_memory_equal(out.u.run.mac, r->mac, 6);

	/* a spare's share: the rootfs is its subdirectory */
	r->rootfs = QP_ROOTFS_9P_SUBDIR;
	round_trip(&in, &out);
	assert_int_equal(out.u.run.rootfs, QP_ROOTFS_9P_SUBDIR);
	assert_string_equal(out.u.run.rootfs_tag, "rootfs");

	/* a terminal and its first window size */
	r->flags |= QP_RUN_F_TERMINAL;
	r->rows = 24, r->cols = 80;
	round_trip(&in, &out);
	assert_int_equal(out.u.run.flags & QP_RUN_F_TERMINAL, QP_RUN_F_TERMINAL);
	assert_int_equal(out.u.run.rows, 24);
	assert_int_equal(out.u.run.cols, 80);
	/* a terminal needs stdin; a size needs a terminal */
	r->flags &= ~(uint32_t)QP_RUN_F_STDIN;
	assert_fails(qp_msg_encode(&in, frame, sizeof(frame), err), QP_E_INVALID);
	r->flags = QP_RUN_F_STDIN;
	assert_fails(qp_msg_encode(&in, frame, sizeof(frame), err), QP_E_INVALID);
}

static void test_run_max_entries(void **state)
{
	static const char *argv[QP_PROTO_MAX_STRV + 2];
	struct qp_msg in = { .type = QP_MSG_RUN }, out;
	qp_error *e = NULL;

	(void)state;
	for (int i = 0; i <= QP_PROTO_MAX_STRV; i++)
		argv[i] = "a";
	in.u.run.argc = QP_PROTO_MAX_STRV, in.u.run.argv = argv;
	in.u.run.envc = 0, in.u.run.env = (const char *[]){ NULL };
	round_trip(&in, &out);
	assert_int_equal(out.u.run.argc, QP_PROTO_MAX_STRV);
	assert_string_equal(out.u.run.argv[QP_PROTO_MAX_STRV - 1], "a");
	/* one more is refused by the encoder... */
	in.u.run.argc = QP_PROTO_MAX_STRV + 1;
	assert_fails(qp_msg_encode(&in, frame, sizeof(frame), err), QP_E_INVALID);
	/* ...and by the decoder: patch the argv count of a valid frame */
	in.u.run.argc = 1;
	ssize_t n = qp_msg_encode(&in, frame, sizeof(frame), &e);
	assert_true(n > 0);
	/* flags, uid, gid, rootfs, 3 empty strings -> argv count */
	size_t at = QP_PROTO_HDR_SIZE + 12 + 1 + 3 * 4;
	put32(frame + at, QP_PROTO_MAX_STRV + 1);
	assert_fails(qp_msg_decode(frame, (size_t)n, &out, &store, err), QP_E_GUEST);
	/* a count within the bound but beyond the bytes present */
	put32(frame + at, 1000);
	assert_fails(qp_msg_decode(frame, (size_t)n, &out, &store, err), QP_E_GUEST);
}

static void test_encoder_refuses(void **state)
{
	static uint8_t big[QP_PROTO_MAX_PAYLOAD + 1];
	static const char *argv[] = { "x", NULL };
	static const char *bad_env[] = { "NOEQUALS", NULL };
	struct qp_msg m = { .type = QP_MSG_STDOUT };

	(void)state;
	m.u.data.data = big, m.u.data.len = sizeof(big);
	assert_fails(qp_msg_encode(&m, frame, sizeof(frame), err), QP_E_INVALID);
	m.u.data.len = 0; /* STDOUT chunks are never empty */
	assert_fails(qp_msg_encode(&m, frame, sizeof(frame), err), QP_E_INVALID);
	m.u.data.len = 10; /* does not fit the caller's buffer */
	assert_fails(qp_msg_encode(&m, frame, 15, err), QP_E_INVALID);

	m = (struct qp_msg){ .type = QP_MSG_SIGNAL };
	assert_fails(qp_msg_encode(&m, frame, sizeof(frame), err), QP_E_INVALID);
	m.u.signal.signo = 65;
	assert_fails(qp_msg_encode(&m, frame, sizeof(frame), err), QP_E_INVALID);

	m = (struct qp_msg){ .type = QP_MSG_RUN };
	assert_fails(qp_msg_encode(&m, frame, sizeof(frame), err), QP_E_INVALID); /* no argv */
	m.u.run.argc = 1, m.u.run.argv = argv;
	m.u.run.envc = 1, m.u.run.env = bad_env;
	assert_fails(qp_msg_encode(&m, frame, sizeof(frame), err), QP_E_INVALID);
	m.u.run.envc = 0;
	m.u.run.rootfs = QP_ROOTFS_9P; /* without a tag */
	assert_fails(qp_msg_encode(&m, frame, sizeof(frame), err), QP_E_INVALID);
	m.u.run.rootfs = 7;
	assert_fails(qp_msg_encode(&m, frame, sizeof(frame), err), QP_E_INVALID);
	m.u.run.rootfs = 0, m.u.run.flags = 1u << 31;
	assert_fails(qp_msg_encode(&m, frame, sizeof(frame), err), QP_E_INVALID);
	m.u.run.flags = 0, m.u.run.cwd = "relative";
	assert_fails(qp_msg_encode(&m, frame, sizeof(frame), err), QP_E_INVALID);
	m.u.run.cwd = NULL, m.u.run.prefix = 33;
	assert_fails(qp_msg_encode(&m, frame, sizeof(frame), err), QP_E_INVALID);

	m = (struct qp_msg){ .type = QP_MSG_EXIT };
	m.u.exit.code = 256;
	assert_fails(qp_msg_encode(&m, frame, sizeof(frame), err), QP_E_INVALID);
	m = (struct qp_msg){ .type = 0 };
	assert_fails(qp_msg_encode(&m, frame, sizeof(frame), err), QP_E_INVALID);
}

/* A valid ERROR frame to corrupt: header + code + errnum + str "abc". */
static size_t error_frame(void)
{
	struct qp_msg m = { .type = QP_MSG_ERROR };
	qp_error *err = NULL;

	m.u.error.code = QP_PERR_EXEC;
	m.u.error.text = "abc";
	return (size_t)qp_msg_encode(&m, frame, sizeof(frame), &err);
}

/* A CTL_REPLACE frame of exactly `payload` bytes after the header, every
 * one accounted for (flags, argc 1, one argument filling the rest), so that
 * only the payload limit can refuse it. */
static size_t replace_frame(uint32_t payload)
{
	uint32_t arg = payload - 12;

	header(frame, QP_PROTO_MAGIC, QP_PROTO_VERSION, QP_MSG_CTL_REPLACE, payload);
	put32(frame + QP_PROTO_HDR_SIZE, 0);
	put32(frame + QP_PROTO_HDR_SIZE + 4, 1);
	put32(frame + QP_PROTO_HDR_SIZE + 8, arg);
	memset(frame + QP_PROTO_HDR_SIZE + 12, 'a', arg);
	return QP_PROTO_HDR_SIZE + payload;
}

static void test_decode_malformed(void **state)
{
	struct qp_msg m;
	size_t n;

	(void)state;
	n = error_frame();
	assert_int_equal(n, QP_PROTO_HDR_SIZE + 4 + 4 + 4 + 3);
	assert_int_equal(qp_msg_decode(frame, n, &m, &store, NULL), 0);

	frame[0] = 'X'; /* bad magic */
	assert_fails(qp_msg_decode(frame, n, &m, &store, err), QP_E_GUEST);
	n = error_frame();
	frame[4] = QP_PROTO_VERSION + 1; /* a version this side does not speak */
	assert_fails(qp_msg_decode(frame, n, &m, &store, err), QP_E_GUEST);
	n = error_frame();
	frame[6] = 0; /* type 0 */
	assert_fails(qp_msg_decode(frame, n, &m, &store, err), QP_E_GUEST);
	frame[6] = QP_MSG_TYPE_MAX + 1; /* unknown type */
	assert_fails(qp_msg_decode(frame, n, &m, &store, err), QP_E_GUEST);
	n = error_frame();
	put32(frame + 8, QP_PROTO_MAX_PAYLOAD + 1); /* oversize length */
	assert_fails(qp_msg_decode(frame, n, &m, &store, err), QP_E_GUEST);
	put32(frame + 8, UINT32_MAX);
	assert_fails(qp_msg_decode(frame, n, &m, &store, err), QP_E_GUEST);
	/* header and frame agree, the payload is well formed: at the limit it
	 * decodes, one byte over it is refused for its size */
	n = replace_frame(QP_PROTO_MAX_PAYLOAD);
	assert_int_equal(qp_msg_decode(frame, n, &m, &store, NULL), 0);
	assert_int_equal(m.u.replace.argc, 1);
	assert_int_equal(strlen(m.u.replace.argv[0]), QP_PROTO_MAX_PAYLOAD - 12);
	n = replace_frame(QP_PROTO_MAX_PAYLOAD + 1);
	{
		qp_error *e = NULL;
		char want[64];
		snprintf(want, sizeof(want), "exceeds the %d byte limit", QP_PROTO_MAX_PAYLOAD);
		assert_int_equal(qp_msg_decode(frame, n, &m, &store, &e), -1);
		assert_non_null(e);
		assert_int_equal(e->code, QP_E_GUEST);
		assert_non_null(strstr(e->msg, want));
		qp_error_free(&e);
	}

	n = error_frame(); /* truncated header */
	for (size_t k = 0; k < QP_PROTO_HDR_SIZE; k++)
		assert_fails(qp_msg_decode(frame, k, &m, &store, err), QP_E_GUEST);
	/* truncated payload: header promises more than the frame holds */
	assert_fails(qp_msg_decode(frame, n - 1, &m, &store, err), QP_E_GUEST);
	/* fields cut short: header and frame agree, payload too short */
	for (size_t k = 0; k < n - QP_PROTO_HDR_SIZE; k++) {
		put32(frame + 8, (uint32_t)k);
		assert_fails(qp_msg_decode(frame, QP_PROTO_HDR_SIZE + k, &m, &store, err), QP_E_GUEST);
	}
	/* string length past the end */
	n = error_frame();
	put32(frame + QP_PROTO_HDR_SIZE + 8, 4);
	assert_fails(qp_msg_decode(frame, n, &m, &store, err), QP_E_GUEST);
	put32(frame + QP_PROTO_HDR_SIZE + 8, UINT32_MAX);
	assert_fails(qp_msg_decode(frame, n, &m, &store, err), QP_E_GUEST);
	/* trailing bytes */
	n = error_frame();
	put32(frame + QP_PROTO_HDR_SIZE + 8, 2);
	assert_fails(qp_msg_decode(frame, n, &m, &store, err), QP_E_GUEST);
	/* NUL inside a string */
	n = error_frame();
	frame[n - 2] = '\0';
	assert_fails(qp_msg_decode(frame, n, &m, &store, err), QP_E_GUEST);
	/* an unknown error code */
	n = error_frame();
	put32(frame + QP_PROTO_HDR_SIZE, 99);
	assert_fails(qp_msg_decode(frame, n, &m, &store, err), QP_E_GUEST);
	/* HELLO: an unknown flag; a seed check without a seed added */
	{
		struct qp_msg h = { .type = QP_MSG_HELLO };
		qp_error *e = NULL;
		h.u.hello.version = QP_PROTO_VERSION;
		h.u.hello.flags = QP_HELLO_F_SEEDED;
		h.u.hello.seed_check = 7;
		n = (size_t)qp_msg_encode(&h, frame, sizeof(frame), &e);
		assert_null(e);
		assert_int_equal(qp_msg_decode(frame, n, &m, &store, NULL), 0);
		frame[QP_PROTO_HDR_SIZE + 2] = 0x8; /* flags: not a QP_HELLO_F_* */
		assert_fails(qp_msg_decode(frame, n, &m, &store, err), QP_E_GUEST);
		frame[QP_PROTO_HDR_SIZE + 2] = QP_HELLO_F_RESEEDED | QP_HELLO_F_CLOCK;
		assert_fails(qp_msg_decode(frame, n, &m, &store, err), QP_E_GUEST);
		assert_int_equal(qp_seed_check((const uint8_t[QP_PROTO_SEED_SIZE]){ 0 }) != 0, 1);
	}
	/* fixed-size message with a payload */
	header(frame, QP_PROTO_MAGIC, QP_PROTO_VERSION, QP_MSG_SHUTDOWN, 1);
	frame[12] = 0;
	assert_fails(qp_msg_decode(frame, 13, &m, &store, err), QP_E_GUEST);
	/* empty STDOUT */
	header(frame, QP_PROTO_MAGIC, QP_PROTO_VERSION, QP_MSG_STDOUT, 0);
	assert_fails(qp_msg_decode(frame, 12, &m, &store, err), QP_E_GUEST);
	/* a STDIN_CREDIT of nothing, or of more than the window */
	header(frame, QP_PROTO_MAGIC, QP_PROTO_VERSION, QP_MSG_STDIN_CREDIT, 4);
	put32(frame + 12, 0);
	assert_fails(qp_msg_decode(frame, 16, &m, &store, err), QP_E_GUEST);
	put32(frame + 12, QP_PROTO_STDIN_WINDOW + 1);
	assert_fails(qp_msg_decode(frame, 16, &m, &store, err), QP_E_GUEST);
	/* an OUT_CREDIT of nothing, or of more than its window */
	header(frame, QP_PROTO_MAGIC, QP_PROTO_VERSION, QP_MSG_OUT_CREDIT, 4);
	put32(frame + 12, 0);
	assert_fails(qp_msg_decode(frame, 16, &m, &store, err), QP_E_GUEST);
	put32(frame + 12, QP_PROTO_OUT_WINDOW + 1);
	assert_fails(qp_msg_decode(frame, 16, &m, &store, err), QP_E_GUEST);
}

static void test_sender_check(void **state)
{
	struct qp_msg m = { .type = QP_MSG_RUN };

	(void)state;
	assert_fails(qp_msg_check_sender(&m, QP_SENDER_GUEST, err), QP_E_GUEST);
	assert_int_equal(qp_msg_check_sender(&m, QP_SENDER_HOST, NULL), 0);
	m.type = QP_MSG_EXIT;
	assert_fails(qp_msg_check_sender(&m, QP_SENDER_HOST, err), QP_E_GUEST);
	m.type = QP_MSG_ERROR;
	assert_int_equal(qp_msg_check_sender(&m, QP_SENDER_HOST, NULL), 0);
	assert_int_equal(qp_msg_check_sender(&m, QP_SENDER_GUEST, NULL), 0);
}

/* ---- on a socketpair ---- */

static struct qp_chan *host_end(int sv[2])
{
	struct qp_chan *c;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	c = qp_chan_new(sv[0]);
	assert_non_null(c);
	return c;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void test_deadline_half_header(void **state)
{
	int sv[2];
	struct qp_chan *c = host_end(sv);
	struct qp_msg m;
	double t0;

	(void)state;
	assert_int_equal(write(sv[1], "QPOD\1\0", 6), 6); /* half a header, then silence */
	t0 = now_s();
	assert_fails(qp_chan_recv(c, &m, 200, err), QP_E_TIMEOUT);
	assert_true(now_s() - t0 >= 0.19);
	assert_true(now_s() - t0 < 2);
	/* nothing at all: the same */
	qp_chan_init(c, sv[0]);
	assert_fails(qp_chan_recv(c, &m, 0, err), QP_E_TIMEOUT);
	close(sv[1]);
	qp_chan_free(c);
	close(sv[0]);
}

/* fork a fake guest that runs fn(fd) and exits */
static pid_t fake_guest(int fd, void (*fn)(int fd))
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		fn(fd);
		_exit(0);
	}
	close(fd);
	return pid;
}

static void reap(pid_t pid)
{
	int status;
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
}

static void send_garbage(int fd)
{
	uint8_t buf[4096];
	unsigned seed = 1;

	for (int i = 0; i < 64; i++) {
		for (size_t k = 0; k < sizeof(buf); k++)
			buf[k] = (uint8_t)(rand_r(&seed) >> 7);
		if (write(fd, buf, sizeof(buf)) < 0)
			return;
	}
}

static void test_fake_guest_garbage(void **state)
{
	int sv[2];
	struct qp_chan *c = host_end(sv);
	struct qp_msg m;
	pid_t pid = fake_guest(sv[1], send_garbage);

	(void)state;
	assert_fails(qp_chan_recv(c, &m, 5000, err), QP_E_GUEST);
	/* the channel stays refused afterwards */
	assert_fails(qp_chan_recv(c, &m, 5000, err), QP_E_GUEST);
	reap(pid);
	qp_chan_free(c);
	close(sv[0]);
}

static void send_huge_length(int fd)
{
	uint8_t h[QP_PROTO_HDR_SIZE];

	header(h, QP_PROTO_MAGIC, QP_PROTO_VERSION, QP_MSG_STDOUT, 0x7fffffff);
	if (write(fd, h, sizeof(h)) < 0)
		return;
	pause(); /* and never sends the payload */
}

static void test_fake_guest_huge_length(void **state)
{
	int sv[2];
	struct qp_chan *c = host_end(sv);
	struct qp_msg m;
	pid_t pid = fake_guest(sv[1], send_huge_length);

	(void)state;
	/* refused at the header, without waiting for (or allocating) 2 GiB */
	assert_fails(qp_chan_recv(c, &m, 5000, err), QP_E_GUEST);
	reap(pid);
	qp_chan_free(c);
	close(sv[0]);
}

/* A well-behaved guest that writes its frames one byte at a time, then
 * half a frame, then hangs up. */
static void send_dribble(int fd)
{
	static uint8_t buf[QP_PROTO_FRAME_MAX];
	struct qp_msg m = { .type = QP_MSG_EXIT };
	ssize_t n;

	m.u.exit.code = 3;
	n = qp_msg_encode(&m, buf, sizeof(buf), NULL);
	for (ssize_t i = 0; i < n; i++) {
		if (write(fd, buf + i, 1) != 1)
			return;
		usleep(200);
	}
	if (write(fd, buf, 15) != 15)
		return;
}

static void test_fake_guest_dribble_then_hangup(void **state)
{
	int sv[2];
	struct qp_chan *c = host_end(sv);
	struct qp_msg m;
	pid_t pid = fake_guest(sv[1], send_dribble);
	qp_error *e = NULL;

	(void)state;
	assert_int_equal(qp_chan_recv(c, &m, 5000, &e), 0);
	assert_null(e);
	assert_int_equal(m.type, QP_MSG_EXIT);
	assert_int_equal(m.u.exit.code, 3);
	assert_fails(qp_chan_recv(c, &m, 5000, err), QP_E_GUEST); /* closed mid-message */
	reap(pid);
	qp_chan_free(c);
	close(sv[0]);
}

/* Many messages in one read, and a maximum-size one, through the fd. */
static void send_many(int fd)
{
	static struct qp_chan out;
	static uint8_t big[QP_PROTO_MAX_PAYLOAD];
	struct qp_msg m = { .type = QP_MSG_STDERR };

	qp_chan_init(&out, fd);
	m.u.data.data = (const uint8_t *)"x", m.u.data.len = 1;
	for (int i = 0; i < 10000; i++)
		if (qp_chan_send(&out, &m, 5000, NULL) < 0)
			_exit(1);
	memset(big, 'b', sizeof(big));
	m.u.data.data = big, m.u.data.len = sizeof(big);
	if (qp_chan_send(&out, &m, 5000, NULL) < 0)
		_exit(1);
	m = (struct qp_msg){ .type = QP_MSG_EXIT };
	if (qp_chan_send(&out, &m, 5000, NULL) < 0)
		_exit(1);
}

static void test_stream_many_and_max(void **state)
{
	int sv[2];
	struct qp_chan *c = host_end(sv);
	struct qp_msg m;
	qp_error *err = NULL;
	pid_t pid = fake_guest(sv[1], send_many);
	int small = 0;

	(void)state;
	for (;;) {
		assert_int_equal(qp_chan_recv(c, &m, 5000, &err), 0);
		if (m.type != QP_MSG_STDERR || m.u.data.len != 1)
			break;
		small++;
	}
	assert_int_equal(small, 10000);
	assert_int_equal(m.type, QP_MSG_STDERR);
	assert_int_equal(m.u.data.len, QP_PROTO_MAX_PAYLOAD);
	assert_int_equal(m.u.data.data[QP_PROTO_MAX_PAYLOAD - 1], 'b');
	assert_int_equal(qp_chan_recv(c, &m, 5000, &err), 0);
	assert_int_equal(m.type, QP_MSG_EXIT);
	waitpid(pid, NULL, 0);
	qp_chan_free(c);
	close(sv[0]);
}

static void test_send_to_gone_peer(void **state)
{
	int sv[2];
	struct qp_chan *c = host_end(sv);
	struct qp_msg m = { .type = QP_MSG_SHUTDOWN };

	(void)state;
	close(sv[1]);
	/* an error, not a SIGPIPE that kills the runtime */
	assert_fails(qp_chan_send(c, &m, 1000, err), QP_E_GENERIC);
	assert_fails(qp_chan_send_error(c, QP_PERR_STATE, 0, "x", 1000, err), QP_E_GENERIC);
	qp_chan_free(c);
	close(sv[0]);
}

static void test_send_deadline_full_peer(void **state)
{
	int sv[2];
	struct qp_chan *c = host_end(sv);
	static uint8_t big[QP_PROTO_MAX_PAYLOAD];
	struct qp_msg m = { .type = QP_MSG_STDIN };
	qp_error *e = NULL;
	int r = 0;

	(void)state;
	m.u.data.data = big, m.u.data.len = sizeof(big);
	/* the peer never reads: sends must stop at their deadline */
	for (int i = 0; i < 200 && r == 0; i++)
		r = qp_chan_send(c, &m, 100, &e);
	assert_int_equal(r, -1);
	assert_int_equal(e->code, QP_E_TIMEOUT);
	qp_error_free(&e);
	qp_chan_free(c);
	close(sv[0]);
	close(sv[1]);
}

/* A RUN of `true` from the initramfs, the rest zero: what a test of one
 * field starts from. */
static struct qp_msg true_run(void)
{
	static const char *const argv[] = { "true", NULL };
	struct qp_msg m = { .type = QP_MSG_RUN };

	m.u.run.rootfs = QP_ROOTFS_INITRAMFS;
	m.u.run.rootfs_tag = "";
	m.u.run.argv = argv;
	m.u.run.argc = 1;
	return m;
}

/* RUN's mounts: entries parsed strictly, formatted and parsed back, and a
 * RUN carrying them survives encode/decode; an EXEC may carry none */
static void test_run_mounts(void **state)
{
	struct qp_run_mount m;
	char buf[2048];
	static const char *const bad[] = {
		"9p\tm0\t/data", "9p\tm0\t/data\tro\textra", "9p\tm-0\t/data\t", "9p\tm0\tdata\t",
		"9p\tm0\t/a/../b\t", "9p\tm0\t/..\t", "9pfile\tm0\t/etc/hosts\t", "9pfile\tm0/a/b\t/x\t",
		"9pfile\tm0/..\t/x\t", "tmpfs\tsize=1m\t/s\tro,bogus", "nfs\tx\t/y\t", "9p\tm0\t/\t", "",
	};

	(void)state;
	assert_int_equal(qp_run_mount_parse("9pfile\tm1/hosts\t/etc/hosts\tro,nosuid", &m), 0);
	assert_int_equal(m.kind, QP_RM_9PFILE);
	assert_string_equal(m.tag, "m1");
	assert_string_equal(m.name, "hosts");
	assert_string_equal(m.dest, "/etc/hosts");
	assert_true(m.flags == (MS_RDONLY | MS_NOSUID));
	assert_int_equal(qp_run_mount_format(&m, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "9pfile\tm1/hosts\t/etc/hosts\tro,nosuid");
	assert_int_equal(qp_run_mount_parse("tmpfs\tsize=1m,mode=755\t/scratch\t", &m), 0);
	assert_int_equal(m.kind, QP_RM_TMPFS);
	assert_string_equal(m.data, "size=1m,mode=755");
	assert_int_equal(qp_run_mount_parse("9p\tm0\t/a..b/c\tnoexec", &m), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (qp_run_mount_parse(bad[i], NULL) == 0)
			fail_msg("accepted the malformed mount entry \"%s\"", bad[i]);

	const char *mounts[] = { "9p\tm0\t/data\tro", "tmpfs\t\t/s\t", NULL };
	struct qp_msg in = true_run(), out;
	struct qp_msg_store *st = calloc(1, sizeof(*st));
	uint8_t wire[QP_PROTO_FRAME_MAX];
	qp_error *err = NULL;
	in.u.run.mounts = mounts;
	in.u.run.mountc = 2;
	ssize_t n = qp_msg_encode(&in, wire, sizeof(wire), &err);
	assert_true(n > 0);
	assert_int_equal(qp_msg_decode(wire, (size_t)n, &out, st, &err), 0);
	assert_int_equal(out.u.run.mountc, 2);
	assert_string_equal(out.u.run.mounts[1], "tmpfs\t\t/s\t");
	mounts[1] = "9p\tm0\t/../etc\t"; /* the encoder refuses it too */
	assert_true(qp_msg_encode(&in, wire, sizeof(wire), &err) < 0);
	qp_error_free(&err);
	free(st);
}

/* one VM per pod: a container's EXEC, its signal and stats, the pod
 * share's mount kinds, and what is refused */
static void test_container_messages(void **state)
{
	static const char *argv[] = { "sleep", "9", NULL };
	const char *mounts[] = { "pod\tc1/m0\t/data\tro", "tmpfs\t\t/s\t", NULL };
	const char *cg[] = { "memory.max=67108864", "pids.max=20", NULL };
	struct qp_msg in = { .type = QP_MSG_EXEC }, out;
	struct qp_run *r = &in.u.run;
	struct qp_run_mount m;

	(void)state;
	assert_int_equal(qp_run_mount_parse("pod\tc1/f0/hosts\t/etc/hosts\tro", &m), 0);
	assert_int_equal(m.kind, QP_RM_POD);
	assert_string_equal(m.name, "c1/f0/hosts");
	assert_int_equal(qp_run_mount_parse("podshare\tm3\t" QP_PROTO_POD_DEST "\t", &m), 0);
	assert_int_equal(m.kind, QP_RM_PODSHARE);
	static const char *const bad[] = { "pod\t../x\t/d\t", "pod\ta/../b\t/d\t", "pod\t/a\t/d\t",
					   "pod\ta/b/c/d\t/d\t", "pod\ta//b\t/d\t", "pod\ta/\t/d\t",
					   "podshare\tm3\t/elsewhere\t", "podshare\tm3\t" QP_PROTO_POD_DEST "\tro" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (qp_run_mount_parse(bad[i], NULL) == 0)
			fail_msg("accepted the malformed mount entry \"%s\"", bad[i]);

	r->id = 7;
	r->flags = QP_RUN_F_CONTAINER | QP_RUN_F_NEW_PID | QP_RUN_F_NEW_IPC | QP_RUN_F_ROOTFS_RO;
	r->rootfs = QP_ROOTFS_9P_SUBDIR;
	r->rootfs_tag = "c1";
	r->cwd = r->hostname = "";
	r->argv = argv, r->argc = 2;
	r->mounts = mounts, r->mountc = 2;
	r->cgroup = cg, r->cgroupc = 2;
	round_trip(&in, &out);
	assert_int_equal(out.u.run.flags, r->flags);
	assert_string_equal(out.u.run.rootfs_tag, "c1");
	assert_int_equal(out.u.run.cgroupc, 2);
	assert_string_equal(out.u.run.cgroup[1], "pids.max=20");
	assert_string_equal(out.u.run.mounts[0], mounts[0]);
	/* refused: an unknown cgroup file, a path as the container's name,
	 * namespace flags or a pod mount without a container, a RUN container */
	cg[1] = "cpu.rt_runtime_us=0";
	assert_fails(qp_msg_encode(&in, frame, sizeof(frame), err), QP_E_INVALID);
	cg[1] = "pids.max=20";
	r->rootfs_tag = "c1/root";
	assert_fails(qp_msg_encode(&in, frame, sizeof(frame), err), QP_E_INVALID);
	r->rootfs_tag = "c1";
	r->flags = QP_RUN_F_NEW_PID;
	assert_fails(qp_msg_encode(&in, frame, sizeof(frame), err), QP_E_INVALID);
	r->flags = QP_RUN_F_JOIN;
	r->cgroupc = 0;
	assert_fails(qp_msg_encode(&in, frame, sizeof(frame), err), QP_E_INVALID); /* a join with mounts */
	r->mountc = 0;
	round_trip(&in, &out);
	in.type = QP_MSG_RUN;
	r->flags = QP_RUN_F_CONTAINER;
	assert_fails(qp_msg_encode(&in, frame, sizeof(frame), err), QP_E_INVALID);
	r->flags = 0;
	r->mounts = mounts, r->mountc = 1; /* a pod mount in RUN without the pod share */
	assert_fails(qp_msg_encode(&in, frame, sizeof(frame), err), QP_E_INVALID);

	in = (struct qp_msg){ .type = QP_MSG_EXEC_SIGNAL };
	in.u.exec_signal.id = 7, in.u.exec_signal.signo = 9;
	round_trip(&in, &out);
	assert_int_equal(out.u.exec_signal.signo, 9);
	in.u.exec_signal.signo = QP_PROTO_MAX_SIGNAL + 1;
	assert_fails(qp_msg_encode(&in, frame, sizeof(frame), err), QP_E_INVALID);
	in = (struct qp_msg){ .type = QP_MSG_CTR_STATS };
	in.u.ctr_stats.name = "c1", in.u.ctr_stats.found = 1, in.u.ctr_stats.memory = 1ull << 33;
	in.u.ctr_stats.pids = 3, in.u.ctr_stats.oom_kills = 2;
	round_trip(&in, &out);
	assert_string_equal(out.u.ctr_stats.name, "c1");
	assert_true(out.u.ctr_stats.memory == 1ull << 33 && out.u.ctr_stats.pids == 3 && out.u.ctr_stats.oom_kills == 2);
	in.u.ctr_stats.name = "..";
	assert_fails(qp_msg_encode(&in, frame, sizeof(frame), err), QP_E_INVALID);
	assert_int_equal(qp_msg_sender(QP_MSG_CTR_STATS), QP_SENDER_GUEST);
	assert_int_equal(qp_msg_sender(QP_MSG_CTR_STATS_REQ), QP_SENDER_HOST | QP_SENDER_CTL);
	assert_int_equal(qp_msg_sender(QP_MSG_EXEC_SIGNAL), QP_SENDER_HOST | QP_SENDER_CTL);
	/* new limits for a running container, and the answer */
	const char *limits[] = { "pids.max=5", "memory.max=max", NULL };
	in = (struct qp_msg){ .type = QP_MSG_CTR_UPDATE };
	in.u.ctr_update.name = "c1", in.u.ctr_update.cgroup = limits, in.u.ctr_update.cgroupc = 2;
	round_trip(&in, &out);
	assert_int_equal(out.u.ctr_update.cgroupc, 2);
	assert_string_equal(out.u.ctr_update.cgroup[1], "memory.max=max");
	in.u.ctr_update.cgroupc = 0; /* nothing to write */
	assert_fails(qp_msg_encode(&in, frame, sizeof(frame), err), QP_E_INVALID);
	limits[0] = "cgroup.procs=1", in.u.ctr_update.cgroupc = 1;
	assert_fails(qp_msg_encode(&in, frame, sizeof(frame), err), QP_E_INVALID);
	in = (struct qp_msg){ .type = QP_MSG_CTR_UPDATED };
	in.u.ctr_update.name = "c1", in.u.ctr_update.errnum = 2, in.u.ctr_update.text = "write pids.max 5";
	round_trip(&in, &out);
	assert_int_equal(out.u.ctr_update.errnum, 2);
	assert_string_equal(out.u.ctr_update.text, "write pids.max 5");
	assert_int_equal(qp_msg_sender(QP_MSG_CTR_UPDATED), QP_SENDER_GUEST);
}

/* RUN's routes and MTU (a mirrored network namespace): entries parsed
 * strictly and formatted back, a RUN with them survives encode/decode, and
 * routes or an MTU without an address are refused */
static void test_run_routes(void **state)
{
	struct qp_run_route r;
	char buf[QP_PROTO_MAX_ROUTE];
	static const char *const bad[] = {
		"10.88.0.0/16", "10.88.0.1/16 10.77.0.1", "10.88.0.0/33 0.0.0.0", "10.88.0.0/x 0.0.0.0",
		"10.88.0.0 /16 0.0.0.0", "10.88.0.0/16 10.77.0", "10.88.0.0/16 0.0.0.0 x", "",
		"fd00::/8 10.77.0.1", "10.88.0.0/16 ::", "fd00::1/8 ::", "fd00::/129 ::", "fd00::/8 fd00::x",
	};

	(void)state;
	assert_int_equal(qp_run_route_parse("10.88.0.0/16 10.77.0.1", &r), 0);
	assert_int_equal(r.prefix, 16);
	assert_int_equal(r.dst[1], 88);
	assert_int_equal(r.gateway[3], 1);
	assert_int_equal(qp_run_route_format(&r, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "10.88.0.0/16 10.77.0.1");
	assert_int_equal(qp_run_route_parse("10.77.0.1/32 0.0.0.0", NULL), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (qp_run_route_parse(bad[i], NULL) == 0)
			fail_msg("accepted the malformed route entry \"%s\"", bad[i]);

	const char *routes[] = { "10.77.0.1/32 0.0.0.0", "10.88.0.0/16 10.77.0.1", NULL };
	struct qp_msg in = true_run(), out;
	in.u.run.ip[0] = 10, in.u.run.prefix = 32;
	in.u.run.routes = routes;
	in.u.run.routec = 2;
	in.u.run.mtu = 1400;
	round_trip(&in, &out);
	assert_int_equal(out.u.run.routec, 2);
	assert_int_equal(out.u.run.mtu, 1400);
	assert_string_equal(out.u.run.routes[1], "10.88.0.0/16 10.77.0.1");
	in.u.run.mtu = 67; /* below IPv4's minimum */
	assert_fails(qp_msg_encode(&in, frame, sizeof(frame), err), QP_E_INVALID);
	in.u.run.mtu = 0;
	in.u.run.prefix = 0; /* routes without an address */
	assert_fails(qp_msg_encode(&in, frame, sizeof(frame), err), QP_E_INVALID);
}

/* RUN's IPv6 (a dual-stack or IPv6-only mirrored namespace): addresses and
 * IPv6 routes parsed strictly and formatted back, an IPv6-only RUN (no
 * IPv4 prefix) survives encode/decode with its MTU, and an IPv6 route
 * without an IPv6 address, an IPv4 route without an IPv4 one, too many
 * addresses and an EXEC that sets addresses are refused */
static void test_run_ipv6(void **state)
{
	struct qp_run_route r;
	struct qp_run_addr6 a;
	char buf[QP_PROTO_MAX_ROUTE];
	static const char *const bad[] = {
		"fd00::5", "fd00::5/129", "fe80::1/64", "ff02::1/64", "::1/128", "::/0", "10.0.0.1/8",
		"fd00::5/64 x", "fd00::5/", "",
	};

	(void)state;
	assert_int_equal(qp_run_route_parse("::/0 fd00:10::1", &r), 0);
	assert_int_equal(r.family, AF_INET6);
	assert_int_equal(r.prefix, 0);
	assert_int_equal(r.gateway[15], 1);
	assert_int_equal(qp_run_route_format(&r, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "::/0 fd00:10::1");
	assert_int_equal(qp_run_route_parse("::/0 fe80::1", NULL), 0); /* a link-local gateway */
	r.prefix = 128; /* the longest entry fits */
	memset(r.dst, 0xfd, 16), memset(r.gateway, 0xfd, 16);
	assert_int_equal(qp_run_route_format(&r, buf, sizeof(buf)), 0);
	assert_int_equal(qp_run_addr6_parse("fd00:10::5/64", &a), 0);
	assert_int_equal(a.prefix, 64);
	assert_int_equal(a.addr[15], 5);
	assert_int_equal(qp_run_addr6_format(&a, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "fd00:10::5/64");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (qp_run_addr6_parse(bad[i], NULL) == 0)
			fail_msg("accepted the malformed IPv6 address entry \"%s\"", bad[i]);

	const char *addrs[QP_PROTO_MAX_ADDRS6 + 2] = { "fd00:10::5/64", "2001:db8::5/64" };
	const char *routes[] = { "::/0 fd00:10::1", "fd00:20::/48 fd00:10::2", NULL };
	struct qp_msg in = true_run(), out;
	in.u.run.addrs6 = addrs;
	in.u.run.addr6c = 2;
	in.u.run.routes = routes;
	in.u.run.routec = 2;
	in.u.run.mtu = 1400; /* IPv6 only: no IPv4 prefix */
	round_trip(&in, &out);
	assert_int_equal(out.u.run.prefix, 0);
	assert_int_equal(out.u.run.addr6c, 2);
	assert_string_equal(out.u.run.addrs6[1], "2001:db8::5/64");
	assert_string_equal(out.u.run.routes[0], "::/0 fd00:10::1");
	assert_int_equal(out.u.run.mtu, 1400);

	const char *v4route[] = { "10.88.0.0/16 0.0.0.0", NULL };
	in.u.run.routes = v4route; /* an IPv4 route, no IPv4 address */
	in.u.run.routec = 1;
	assert_fails(qp_msg_encode(&in, frame, sizeof(frame), err), QP_E_INVALID);
	in.u.run.routes = routes;
	in.u.run.routec = 2;
	in.u.run.addr6c = 0; /* IPv6 routes, no IPv6 address */
	in.u.run.ip[0] = 10, in.u.run.prefix = 8;
	assert_fails(qp_msg_encode(&in, frame, sizeof(frame), err), QP_E_INVALID);
	in.u.run.routec = 0;
	for (int i = 2; i <= QP_PROTO_MAX_ADDRS6; i++)
		addrs[i] = "fd00:10::5/64";
	in.u.run.addr6c = QP_PROTO_MAX_ADDRS6 + 1;
	assert_fails(qp_msg_encode(&in, frame, sizeof(frame), err), QP_E_INVALID);
	in.u.run.addr6c = 1;
	in.u.run.prefix = 0, in.u.run.ip[0] = 0, in.u.run.mtu = 0;
	in.type = QP_MSG_EXEC; /* an exec cannot set the network */
	in.u.run.id = 1;
	assert_fails(qp_msg_encode(&in, frame, sizeof(frame), err), QP_E_INVALID);
}

/* EXEC_OUT_CREDIT (an exec's output window): id, bytes and messages
 * survive encode/decode; id 0, no message, more messages or bytes than the
 * window, fewer bytes than messages are refused; only the host sends it */
static void test_exec_out_credit(void **state)
{
	struct qp_msg in = { .type = QP_MSG_EXEC_OUT_CREDIT }, out;
	static const uint32_t bad[][3] = {
		{ 0, 10, 1 }, { 3, 10, 0 }, { 3, 100, QP_PROTO_EXEC_OUT_FRAMES + 1 },
		{ 3, QP_PROTO_EXEC_OUT_WINDOW + 1, 1 }, { 3, 1, 2 },
	};

	(void)state;
	in.u.exec_out_credit.id = 3;
	in.u.exec_out_credit.bytes = QP_PROTO_EXEC_OUT_WINDOW;
	in.u.exec_out_credit.frames = QP_PROTO_EXEC_OUT_FRAMES;
	round_trip(&in, &out);
	assert_int_equal(out.u.exec_out_credit.id, 3);
	assert_int_equal(out.u.exec_out_credit.bytes, QP_PROTO_EXEC_OUT_WINDOW);
	assert_int_equal(out.u.exec_out_credit.frames, QP_PROTO_EXEC_OUT_FRAMES);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		in.u.exec_out_credit.id = bad[i][0];
		in.u.exec_out_credit.bytes = bad[i][1];
		in.u.exec_out_credit.frames = bad[i][2];
		assert_fails(qp_msg_encode(&in, frame, sizeof(frame), err), QP_E_INVALID);
	}
	assert_int_equal(qp_msg_sender(QP_MSG_EXEC_OUT_CREDIT), QP_SENDER_HOST | QP_SENDER_CTL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_header_layout),
		cmocka_unit_test(test_round_trip_simple),
		cmocka_unit_test(test_round_trip_run),
		cmocka_unit_test(test_run_max_entries),
		cmocka_unit_test(test_encoder_refuses),
		cmocka_unit_test(test_decode_malformed),
		cmocka_unit_test(test_sender_check),
		cmocka_unit_test(test_deadline_half_header),
		cmocka_unit_test(test_fake_guest_garbage),
		cmocka_unit_test(test_fake_guest_huge_length),
		cmocka_unit_test(test_fake_guest_dribble_then_hangup),
		cmocka_unit_test(test_stream_many_and_max),
		cmocka_unit_test(test_send_to_gone_peer),
		cmocka_unit_test(test_send_deadline_full_peer),
		cmocka_unit_test(test_run_mounts),
		cmocka_unit_test(test_container_messages),
		cmocka_unit_test(test_run_routes),
		cmocka_unit_test(test_run_ipv6),
		cmocka_unit_test(test_exec_out_credit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
