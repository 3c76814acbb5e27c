/* tests/unit/test_devices.c — device access control: the rules emulator
 * (deny all + rules + runc's default devices, wildcard hole refusal,
 * devices.list parsing, v1 transitions), the eBPF program generator (its
 * instruction shape, and its verdicts run through a small interpreter of
 * the instructions it emits, compared with the v1 semantics for every case
 * of a table), then for real as root: a pod cgroup on the host's v1 devices
 * hierarchy (devices.list) and on the unified cgroup2 tree of this hybrid
 * host (the filter loaded with BPF_PROG_LOAD and attached), with a child
 * moved in that opens /dev/null (allowed) and mknods + opens c 10:237 and
 * b 7:0 (denied, EPERM).  Update replaces the filter: one stays attached. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "host/cgroup/cgroup.h"
#include "host/cgroup/devices_bpf.h"
#include "host/cgroup/devrules.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif
#define UNIFIED "/sys/fs/cgroup/unified"

#define ALLOW(t, maj, min, acc) { true, t, maj, min, acc }
#define DENY(t, maj, min, acc) { false, t, maj, min, acc }
#define ANY QP_DEV_ANY
#define RWM QP_DEV_RWM

static const struct qp_dev_rule deny_all = DENY('a', ANY, ANY, RWM);

/* ------------------------------------------------------------- emulator */

/* exception I of ST as a devices.list line */
static const char *exc_str(const struct qp_dev_state *st, size_t i, char *buf)
{
	struct qp_dev_rule r = { true, st->exc[i].type, st->exc[i].major, st->exc[i].minor, st->exc[i].access };
	return qp_dev_rule_str(&r, buf);
}

static void test_defaults(void **state)
{
	struct qp_dev_state st;
	qp_error *err = NULL;
	char buf[QP_DEV_RULE_STR];

	(void)state;
	assert_int_equal(qp_dev_state_build(&deny_all, 1, &st, &err), 0);
	assert_false(st.default_allow);
	assert_int_equal(st.n, qp_dev_n_defaults);
	/* in runc's order of its AllowedDevices */
	assert_string_equal(exc_str(&st, 0, buf), "c *:* m");
	assert_string_equal(exc_str(&st, st.n - 1, buf), "c 10:200 rwm");
	qp_dev_state_free(&st);
	/* the spec's rules first, in the listed order (runtime-tools'
	 * linux_cgroups_devices reads them so from devices.list) */
	struct qp_dev_rule listed[] = { deny_all, { true, 'c', 10, 229, RWM },
					{ true, 'b', 8, 20, QP_DEV_READ | QP_DEV_WRITE },
					{ true, 'b', 10, 200, QP_DEV_READ } };
	assert_int_equal(qp_dev_state_build(listed, 4, &st, &err), 0);
	assert_string_equal(exc_str(&st, 0, buf), "c 10:229 rwm");
	assert_string_equal(exc_str(&st, 1, buf), "b 8:20 rw");
	assert_string_equal(exc_str(&st, 2, buf), "b 10:200 r");
	assert_string_equal(exc_str(&st, 3, buf), "c *:* m");
	qp_dev_state_free(&st);
	/* no rules at all: still deny all but the defaults, as runc */
	assert_int_equal(qp_dev_state_build(NULL, 0, &st, &err), 0);
	assert_false(st.default_allow);
	assert_int_equal(st.n, qp_dev_n_defaults);
	qp_dev_state_free(&st);
	assert_string_equal(qp_dev_rule_str(&deny_all, buf), "a *:* rwm");
}

static const struct qp_dev_exc *find(const struct qp_dev_state *st, char t, int64_t maj, int64_t min)
{
	for (size_t i = 0; i < st->n; i++)
		if (st->exc[i].type == t && st->exc[i].major == maj && st->exc[i].minor == min)
			return &st->exc[i];
	return NULL;
}

static void test_rules_in_order(void **state)
{
	const struct qp_dev_rule rules[] = {
		deny_all,
		ALLOW('c', 10, 237, QP_DEV_READ | QP_DEV_WRITE),
		DENY('c', 10, 237, QP_DEV_WRITE),
		ALLOW('b', 7, ANY, QP_DEV_READ),
		ALLOW('b', 7, ANY, QP_DEV_WRITE), /* merged with the one before */
	};
	const struct qp_dev_rule allow_all[] = { ALLOW('a', ANY, ANY, RWM), DENY('c', 10, 237, RWM) };
	struct qp_dev_state st;
	qp_error *err = NULL;

	(void)state;
	assert_int_equal(qp_dev_state_build(rules, 5, &st, &err), 0);
	assert_int_equal(st.n, qp_dev_n_defaults + 2);
	assert_int_equal(find(&st, 'c', 10, 237)->access, QP_DEV_READ);
	assert_int_equal(find(&st, 'b', 7, ANY)->access, QP_DEV_READ | QP_DEV_WRITE);
	qp_dev_state_free(&st);
	/* allow-all: a deny list, which the defaults cannot shorten */
	assert_int_equal(qp_dev_state_build(allow_all, 2, &st, &err), 0);
	assert_true(st.default_allow);
	assert_int_equal(st.n, 1);
	assert_int_equal(find(&st, 'c', 10, 237)->access, RWM);
	qp_dev_state_free(&st);
}

static void test_hole_refused(void **state)
{
	const struct qp_dev_rule rules[] = { deny_all, ALLOW('c', ANY, ANY, RWM), DENY('c', 10, 237, QP_DEV_READ) };
	const struct qp_dev_rule bad_type = { true, 'u', 1, 3, RWM };
	const struct qp_dev_rule no_access = { true, 'c', 1, 3, 0 };
	struct qp_dev_state st;
	qp_error *err = NULL;

	(void)state;
	assert_int_equal(qp_dev_state_build(rules, 3, &st, &err), -1);
	assert_non_null(strstr(err->msg, "linux.resources.devices[2]: \"c 10:237 r\" cannot punch a hole "
					 "into the wildcard rule \"c *:* rwm\""));
	qp_error_free(&err);
	qp_dev_state_free(&st);
	assert_int_equal(qp_dev_state_build(&bad_type, 1, &st, &err), -1);
	assert_non_null(strstr(err->msg, "devices[0]: type 'u'"));
	qp_error_free(&err);
	qp_dev_state_free(&st);
	assert_int_equal(qp_dev_state_build(&no_access, 1, &st, &err), -1);
	assert_non_null(strstr(err->msg, "access"));
	qp_error_free(&err);
	qp_dev_state_free(&st);
}

static void test_transition(void **state)
{
	const struct qp_dev_rule loop = ALLOW('c', 10, 237, RWM);
	const struct qp_dev_rule rules[] = { deny_all, loop };
	struct qp_dev_state target, cur;
	struct qp_dev_rule *steps = NULL;
	size_t n = 0;
	qp_error *err = NULL;
	char buf[QP_DEV_RULE_STR];

	(void)state;
	assert_int_equal(qp_dev_state_build(rules, 2, &target, &err), 0);
	/* a new v1 cgroup allows all: deny all first, then every allow */
	assert_int_equal(qp_dev_state_from_list("a *:* rwm\n", &cur, &err), 0);
	assert_true(cur.default_allow);
	assert_int_equal(qp_dev_state_transition(&cur, &target, &steps, &n, &err), 0);
	assert_int_equal(n, 1 + target.n);
	assert_false(steps[0].allow);
	assert_string_equal(qp_dev_rule_str(&steps[0], buf), "a *:* rwm");
	for (size_t i = 1; i < n; i++)
		assert_true(steps[i].allow);
	free(steps);
	qp_dev_state_free(&cur);
	/* what the kernel lists afterwards is the target: nothing to write */
	assert_int_equal(qp_dev_state_from_list("b *:* m\nc *:* m\nc 1:3 rwm\nc 1:5 rwm\nc 1:7 rwm\n"
						"c 1:8 rwm\nc 1:9 rwm\nc 5:0 rwm\nc 5:2 rwm\n"
						"c 10:200 rwm\nc 10:237 rwm\nc 136:* rwm\n",
						&cur, &err), 0);
	assert_true(qp_dev_state_equal(&cur, &target));
	assert_int_equal(qp_dev_state_transition(&cur, &target, &steps, &n, &err), 0);
	assert_int_equal(n, 0);
	free(steps);
	/* one allow less (update back to the defaults): one deny, no reset */
	qp_dev_state_free(&target);
	assert_int_equal(qp_dev_state_build(&deny_all, 1, &target, &err), 0);
	assert_int_equal(qp_dev_state_transition(&cur, &target, &steps, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_false(steps[0].allow);
	assert_string_equal(qp_dev_rule_str(&steps[0], buf), "c 10:237 rwm");
	free(steps);
	qp_dev_state_free(&cur);
	qp_dev_state_free(&target);
	assert_int_equal(qp_dev_state_from_list("c 1:3 rwx\n", &cur, &err), -1);
	qp_error_free(&err);
	qp_dev_state_free(&cur);
}

/* ---------------------------------------------------------- eBPF program */

/* Run PROG on a bpf_cgroup_dev_ctx: only the instructions the generator
 * emits are known; anything else fails the test. */
static int run(const struct bpf_insn *p, size_t n, unsigned type, unsigned access, unsigned maj,
	       unsigned min)
{
	uint64_t r[11] = { 0 };
	const uint32_t ctx[3] = { type | access << 16, maj, min };

	for (size_t pc = 0; pc < n; pc++) {
		const struct bpf_insn *i = &p[pc];
		switch (i->code) {
		case BPF_LDX | BPF_W | BPF_MEM:
			assert_int_equal(i->src_reg, BPF_REG_1);
			assert_true(i->off == 0 || i->off == 4 || i->off == 8);
			r[i->dst_reg] = ctx[i->off / 4];
			break;
		case BPF_ALU | BPF_AND | BPF_K:
			r[i->dst_reg] = (uint32_t)(r[i->dst_reg] & (uint32_t)i->imm);
			break;
		case BPF_ALU | BPF_RSH | BPF_K:
			r[i->dst_reg] = (uint32_t)r[i->dst_reg] >> i->imm;
			break;
		case BPF_ALU | BPF_MOV | BPF_X:
			r[i->dst_reg] = (uint32_t)r[i->src_reg];
			break;
		case BPF_ALU64 | BPF_MOV | BPF_K:
			r[i->dst_reg] = (uint64_t)(int64_t)i->imm;
			break;
		case BPF_JMP | BPF_JNE | BPF_K:
			if (r[i->dst_reg] != (uint64_t)(int64_t)i->imm)
				pc += i->off;
			break;
		case BPF_JMP | BPF_JNE | BPF_X:
			if (r[i->dst_reg] != r[i->src_reg])
				pc += i->off;
			break;
		case BPF_JMP | BPF_EXIT:
			return (int)r[0];
		default:
			fail_msg("unexpected instruction %#x at %zu", i->code, pc);
		}
		assert_true(pc + 1 <= n);
	}
	fail_msg("the program ran off its end");
	return -1;
}

/* v1's verdict: the access must be a subset of one matching exception */
static int v1_verdict(const struct qp_dev_state *st, char type, unsigned access, int64_t maj, int64_t min)
{
	for (size_t i = 0; i < st->n; i++) {
		const struct qp_dev_exc *e = &st->exc[i];
		if (e->type == type && (e->major == ANY || e->major == maj) &&
		    (e->minor == ANY || e->minor == min) && !(access & ~e->access))
			return !st->default_allow;
	}
	return st->default_allow;
}

static unsigned to_bpf(unsigned a)
{
	return (a & QP_DEV_READ ? BPF_DEVCG_ACC_READ : 0) | (a & QP_DEV_WRITE ? BPF_DEVCG_ACC_WRITE : 0) |
	       (a & QP_DEV_MKNOD ? BPF_DEVCG_ACC_MKNOD : 0);
}

static void check_all_verdicts(const struct qp_dev_state *st)
{
	static const int64_t nums[][2] = { { 1, 3 }, { 1, 4 }, { 10, 237 }, { 10, 200 }, { 7, 0 },
					   { 7, 5 }, { 136, 9 }, { 5, 2 }, { 254, 0 }, { 4095, 1048575 } };
	struct bpf_insn *p = NULL;
	size_t n = 0;
	qp_error *err = NULL;

	assert_int_equal(qp_devbpf_build(st, &p, &n, &err), 0);
	for (size_t k = 0; k < sizeof(nums) / sizeof(nums[0]); k++)
		for (unsigned a = 1; a <= RWM; a++)
			for (int b = 0; b < 2; b++) {
				char t = b ? 'b' : 'c';
				int got = run(p, n, b ? BPF_DEVCG_DEV_BLOCK : BPF_DEVCG_DEV_CHAR, to_bpf(a),
					      (unsigned)nums[k][0], (unsigned)nums[k][1]);
				int want = v1_verdict(st, t, a, nums[k][0], nums[k][1]);
				if (got != want)
					fail_msg("%c %lld:%lld access %u: program says %d, v1 %d", t,
						 (long long)nums[k][0], (long long)nums[k][1], a, got, want);
			}
	free(p);
}

static void test_program_shape(void **state)
{
	const struct qp_dev_rule rules[] = { deny_all, ALLOW('c', 10, 237, RWM), ALLOW('b', 7, ANY, QP_DEV_READ) };
	struct qp_dev_state st = { .default_allow = false };
	struct bpf_insn *p = NULL;
	size_t n = 0;
	qp_error *err = NULL;

	(void)state;
	/* deny all, one exception c 10:237 rwm: prologue, a 5-instruction block, the end */
	assert_int_equal(qp_dev_state_apply(&st, &rules[1], &err), 0);
	assert_int_equal(qp_devbpf_build(&st, &p, &n, &err), 0);
	assert_int_equal(n, QP_DEVBPF_PROLOGUE + 5 + 2);
	assert_int_equal(p[6].code, BPF_JMP | BPF_JNE | BPF_K);
	assert_int_equal(p[6].dst_reg, BPF_REG_2);
	assert_int_equal(p[6].imm, BPF_DEVCG_DEV_CHAR);
	assert_int_equal(p[6].off, 4);
	assert_int_equal(p[7].dst_reg, BPF_REG_4);
	assert_int_equal(p[7].imm, 10);
	assert_int_equal(p[7].off, 3);
	assert_int_equal(p[8].dst_reg, BPF_REG_5);
	assert_int_equal(p[8].imm, 237);
	assert_int_equal(p[8].off, 2);
	assert_int_equal(p[9].code, BPF_ALU64 | BPF_MOV | BPF_K);
	assert_int_equal(p[9].imm, 1);
	assert_int_equal(p[10].code, BPF_JMP | BPF_EXIT);
	assert_int_equal(p[11].imm, 0); /* the default: deny */
	assert_int_equal(p[12].code, BPF_JMP | BPF_EXIT);
	free(p);
	/* b 7:* r: access checked (3 more), no minor check */
	assert_int_equal(qp_dev_state_apply(&st, &rules[2], &err), 0);
	assert_int_equal(qp_devbpf_build(&st, &p, &n, &err), 0);
	assert_int_equal(n, QP_DEVBPF_PROLOGUE + 5 + 7 + 2);
	assert_int_equal(p[13].code, BPF_ALU | BPF_AND | BPF_K);
	assert_int_equal(p[13].imm, BPF_DEVCG_ACC_READ);
	assert_int_equal(p[14].code, BPF_JMP | BPF_JNE | BPF_X);
	assert_int_equal(p[14].off, 3);
	free(p);
	qp_dev_state_free(&st);
}

static void test_program_verdicts(void **state)
{
	const struct qp_dev_rule loop[] = { deny_all, ALLOW('c', 10, 237, RWM), ALLOW('b', 7, ANY, QP_DEV_READ),
					    DENY('c', 1, 3, QP_DEV_WRITE) };
	const struct qp_dev_rule blacklist[] = { ALLOW('a', ANY, ANY, RWM), DENY('c', 10, 237, QP_DEV_WRITE),
						 DENY('b', ANY, ANY, QP_DEV_READ | QP_DEV_WRITE) };
	struct qp_dev_state st;
	qp_error *err = NULL;

	(void)state;
	assert_int_equal(qp_dev_state_build(&deny_all, 1, &st, &err), 0);
	check_all_verdicts(&st);
	qp_dev_state_free(&st);
	assert_int_equal(qp_dev_state_build(loop, 4, &st, &err), 0);
	check_all_verdicts(&st);
	qp_dev_state_free(&st);
	assert_int_equal(qp_dev_state_build(blacklist, 3, &st, &err), 0);
	check_all_verdicts(&st);
	qp_dev_state_free(&st);
}

/* ------------------------------------------------------------ for real */

static void need_root(void)
{
	if (geteuid() != 0)
		skip();
}

/* In the child, moved into the cgroup: 0 = what the rules say happened;
 * otherwise a bit per surprise. */
static int probe(const char *dir, bool loop_allowed)
{
	char path[256];
	int bad = 0, fd;

	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		bad |= 1;
	close(fd);
	snprintf(path, sizeof(path), "%s/loop-control", dir);
	if (mknod(path, S_IFCHR | 0600, makedev(10, 237)) < 0) /* mknod of any node is allowed */
		bad |= 2;
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (loop_allowed ? fd < 0 : (fd >= 0 || errno != EPERM))
		bad |= 4;
	close(fd);
	snprintf(path, sizeof(path), "%s/loop0", dir);
	if (mknod(path, S_IFBLK | 0600, makedev(7, 0)) < 0)
		bad |= 8;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 || errno != EPERM)
		bad |= 16;
	close(fd);
	return bad;
}

/* a child in CG runs probe(); its exit status */
static int probe_in(struct qp_cgroup *cg, const char *dir, bool loop_allowed)
{
	int go[2], status;
	qp_error *err = NULL;
	char c;
	pid_t pid;

	assert_int_equal(pipe(go), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct qp_cgroup_entry e = QP_CGROUP_ENTRY_INIT;
		close(go[1]);
		if (qp_cgroup_entry_open(cg, &e, &err) < 0 || qp_cgroup_entry_use(&e, &err) < 0) {
			print_message("enter: %s\n", err->msg);
			_exit(101);
		}
		qp_cgroup_entry_close(&e);
		if (read(go[0], &c, 1) != 1)
			_exit(100);
		_exit(probe(dir, loop_allowed));
	}
	close(go[0]);
	assert_int_equal(write(go[1], "g", 1), 1);
	close(go[1]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	for (size_t i = 0; i < 2; i++) {
		char path[300];
		snprintf(path, sizeof(path), "%s/%s", dir, i ? "loop0" : "loop-control");
		unlink(path);
	}
	return WEXITSTATUS(status);
}

struct real {
	char path[128];
	char dir[64];
	struct qp_cgroup *cg;
};

static int real_setup(void **state)
{
	struct real *f = calloc(1, sizeof(*f));

	snprintf(f->path, sizeof(f->path), "qpod-unittest-dev-%d", (int)getpid());
	strcpy(f->dir, "/tmp/qpod-devtest.XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	*state = f;
	return 0;
}

static int real_teardown(void **state)
{
	struct real *f = *state;

	if (f->cg) {
		qp_cgroup_destroy(f->cg, NULL);
		qp_cgroup_free(f->cg);
	}
	rmdir(f->dir);
	unsetenv("QPOD_CGROUP_ROOT");
	free(f);
	return 0;
}

/* the pod's v1 devices.list, through the library's bounded reader */
static char *devices_list(const char *path)
{
	static char buf[4096];
	char dir[256];
	int fd;

	snprintf(dir, sizeof(dir), "/sys/fs/cgroup/devices/%s", path);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || qp_cg_read(fd, "devices.list", buf, sizeof(buf), NULL) < 0)
		buf[0] = '\0';
	if (fd >= 0)
		close(fd);
	return buf;
}

static void test_v1_devices(void **state)
{
	struct real *f = *state;
	struct qp_dev_rule loop = ALLOW('c', 10, 237, RWM);
	struct qp_resources r = { .dev_rules = (struct qp_dev_rule[]){ deny_all }, .n_dev_rules = 1 };
	qp_error *err = NULL;
	char *list;

	need_root();
	if (qp_cgroup_detect() != QP_CGROUP_V1 || access("/sys/fs/cgroup/devices/devices.list", F_OK) < 0) {
		print_message("no v1 devices hierarchy: skipped\n");
		skip();
	}
	if (qp_cgroup_create(f->path, &r, &f->cg, &err) < 0)
		fail_msg("create: %s", err->msg);
	list = devices_list(f->path);
	assert_null(strstr(list, "a *:* rwm"));
	assert_non_null(strstr(list, "c 1:3 rwm\n"));
	assert_non_null(strstr(list, "c *:* m\n"));
	assert_null(strstr(list, "c 10:237"));
	assert_int_equal(probe_in(f->cg, f->dir, false), 0);
	/* the same rules again (update): nothing changes */
	if (qp_cgroup_update(f->cg, &r, &err) < 0)
		fail_msg("update: %s", err->msg);
	assert_int_equal(probe_in(f->cg, f->dir, false), 0);
	/* a pod allowed loop-control opens it */
	qp_cgroup_destroy(f->cg, NULL);
	qp_cgroup_free(f->cg);
	f->cg = NULL;
	r.dev_rules = (struct qp_dev_rule[]){ deny_all, loop };
	r.n_dev_rules = 2;
	if (qp_cgroup_create(f->path, &r, &f->cg, &err) < 0)
		fail_msg("create: %s", err->msg);
	assert_non_null(strstr(devices_list(f->path), "c 10:237 rwm\n"));
	assert_int_equal(probe_in(f->cg, f->dir, true), 0);
}

static void test_v2_devices(void **state)
{
	struct real *f = *state;
	struct qp_dev_rule loop = ALLOW('c', 10, 237, RWM);
	struct qp_resources r = { .dev_rules = (struct qp_dev_rule[]){ deny_all }, .n_dev_rules = 1 };
	struct statfs sf;
	qp_error *err = NULL;
	char dir[256];
	size_t n = 0;
	int fd;

	need_root();
	if (statfs(UNIFIED, &sf) < 0 || sf.f_type != CGROUP2_SUPER_MAGIC) {
		print_message(UNIFIED " is not a cgroup2 tree: skipped\n");
		skip();
	}
	setenv("QPOD_CGROUP_ROOT", UNIFIED, 1);
	if (qp_cgroup_create(f->path, &r, &f->cg, &err) < 0)
		fail_msg("create: %s", err->msg);
	assert_int_equal(qp_cgroup_mode_of(f->cg), QP_CGROUP_V2);
	snprintf(dir, sizeof(dir), UNIFIED "/%s", f->path);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(qp_devbpf_count(fd, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(probe_in(f->cg, f->dir, false), 0);
	/* update replaces the filter: still one, now allowing loop-control */
	r.dev_rules = (struct qp_dev_rule[]){ deny_all, loop };
	r.n_dev_rules = 2;
	if (qp_cgroup_update(f->cg, &r, &err) < 0)
		fail_msg("update: %s", err->msg);
	assert_int_equal(qp_devbpf_count(fd, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_int_equal(probe_in(f->cg, f->dir, true), 0);
	close(fd);
}

/* A program the verifier refuses (R0 never set before exit) fails with the
 * verifier's verdict, not the first line of its log. */
static void test_load_refused(void **state)
{
	const struct bpf_insn exit_only[] = { { .code = BPF_JMP | BPF_EXIT } };
	qp_error *err = NULL;

	(void)state;
	need_root();
	assert_int_equal(qp_devbpf_load(exit_only, 1, &err), -1);
	assert_non_null(err);
	if (!strstr(err->msg, "verifier: ") || !strstr(err->msg, "R0"))
		fail_msg("no verdict: %s", err->msg);
	qp_error_free(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_rules_in_order),
		cmocka_unit_test(test_hole_refused),
		cmocka_unit_test(test_transition),
		cmocka_unit_test(test_program_shape),
		cmocka_unit_test(test_program_verdicts),
		cmocka_unit_test(test_load_refused),
		cmocka_unit_test_setup_teardown(test_v1_devices, real_setup, real_teardown),
		cmocka_unit_test_setup_teardown(test_v2_devices, real_setup, real_teardown),
	};
	return cmocka_run_group_tests_name("devices", tests, NULL, NULL);
}
