/* runtime/host/cgroup/devices_bpf.c — the cgroup v2 device filter: program
 * generator, loader and installer (see devices_bpf.h). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "host/cgroup/devices_bpf.h"
#include "util/cleanup.h"

#define QP_DEVBPF_MAX_PROGS 64 /* the kernel's limit of programs per cgroup and type */

static int sys_bpf(int cmd, union bpf_attr *attr)
{
	return (int)syscall(SYS_bpf, cmd, attr, sizeof(*attr));
}

#define INSN(c, d, s, o, i) ((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) })
#define LDX_W(dst, src, off) INSN(BPF_LDX | BPF_W | BPF_MEM, dst, src, off, 0)
#define ALU32_IMM(op, dst, imm) INSN(BPF_ALU | (op) | BPF_K, dst, 0, 0, imm)
#define MOV32_REG(dst, src) INSN(BPF_ALU | BPF_MOV | BPF_X, dst, src, 0, 0)
#define JNE_IMM(dst, imm, off) INSN(BPF_JMP | BPF_JNE | BPF_K, dst, 0, off, imm)
#define JNE_REG(dst, src, off) INSN(BPF_JMP | BPF_JNE | BPF_X, dst, src, off, 0)
#define MOV64_IMM(dst, imm) INSN(BPF_ALU64 | BPF_MOV | BPF_K, dst, 0, 0, imm)
#define EXIT() INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

/* room for the longest program: prologue, 8 per exception, 2 at the end */
struct prog {
	struct bpf_insn *v;
	size_t n;
};

static void emit(struct prog *p, struct bpf_insn i)
{
	p->v[p->n++] = i;
}

static unsigned bpf_access(unsigned a)
{
	return (a & QP_DEV_READ ? BPF_DEVCG_ACC_READ : 0) | (a & QP_DEV_WRITE ? BPF_DEVCG_ACC_WRITE : 0) |
	       (a & QP_DEV_MKNOD ? BPF_DEVCG_ACC_MKNOD : 0);
}

/* One exception: a failed check jumps to the first instruction after the
 * block (offsets count from the next instruction). */
static void block(struct prog *p, const struct qp_dev_exc *e, bool verdict)
{
	bool acc = e->access != QP_DEV_RWM, maj = e->major != QP_DEV_ANY, min = e->minor != QP_DEV_ANY;
	int size = 1 + (acc ? 3 : 0) + maj + min + 2, at = 0; /* at: the next index in the block */
	int type = e->type == 'b' ? BPF_DEVCG_DEV_BLOCK : BPF_DEVCG_DEV_CHAR;
#define TO_NEXT(k) (size - (k) - 1)

	/* a device number never exceeds 32 bits (12 major, 20 minor in
	 * practice); a rule beyond INT32_MAX, which a sign-extended immediate
	 * cannot hold, matches no device at all */
	if (e->major > INT32_MAX || e->minor > INT32_MAX)
		return;
	emit(p, JNE_IMM(BPF_REG_2, type, TO_NEXT(at)));
	at++;
	if (acc) { /* the requested access must be a subset of the rule's (R1 is free) */
		emit(p, MOV32_REG(BPF_REG_1, BPF_REG_3));
		emit(p, ALU32_IMM(BPF_AND, BPF_REG_1, (int)bpf_access(e->access)));
		emit(p, JNE_REG(BPF_REG_1, BPF_REG_3, TO_NEXT(at + 2)));
		at += 3;
	}
	if (maj)
		emit(p, JNE_IMM(BPF_REG_4, (int32_t)e->major, TO_NEXT(at++)));
	if (min)
		emit(p, JNE_IMM(BPF_REG_5, (int32_t)e->minor, TO_NEXT(at++)));
#undef TO_NEXT
	emit(p, MOV64_IMM(BPF_REG_0, verdict));
	emit(p, EXIT());
}

int qp_devbpf_build(const struct qp_dev_state *st, struct bpf_insn **out, size_t *n, qp_error **err)
{
	/* struct bpf_cgroup_dev_ctx { u32 access_type; u32 major; u32 minor; } */
	const struct bpf_insn prologue[QP_DEVBPF_PROLOGUE] = {
		LDX_W(BPF_REG_2, BPF_REG_1, 0),  ALU32_IMM(BPF_AND, BPF_REG_2, 0xffff),
		LDX_W(BPF_REG_3, BPF_REG_1, 0),  ALU32_IMM(BPF_RSH, BPF_REG_3, 16),
		LDX_W(BPF_REG_4, BPF_REG_1, 4),  LDX_W(BPF_REG_5, BPF_REG_1, 8),
	};
	struct prog p = { malloc((QP_DEVBPF_PROLOGUE + 8 * st->n + 2) * sizeof(*p.v)), 0 };

	if (!p.v)
		return qp_fail(err, ENOMEM, "device filter");
	for (size_t i = 0; i < QP_DEVBPF_PROLOGUE; i++)
		emit(&p, prologue[i]);
	for (size_t i = 0; i < st->n; i++)
		block(&p, &st->exc[i], !st->default_allow);
	emit(&p, MOV64_IMM(BPF_REG_0, st->default_allow));
	emit(&p, EXIT());
	*out = p.v;
	*n = p.n;
	return 0;
}

static int prog_load(const struct bpf_insn *insns, size_t n, char *log, size_t log_size)
{
	/* the kernel reads the license only to gate GPL-only helpers; the
	 * program calls none */
	static const char license[] = "qpod";
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
	attr.insns = (uint64_t)(uintptr_t)insns;
	attr.insn_cnt = (uint32_t)n;
	attr.license = (uint64_t)(uintptr_t)license;
	if (log) {
		attr.log_buf = (uint64_t)(uintptr_t)log;
		attr.log_size = (uint32_t)log_size;
		attr.log_level = 1;
	}
	return sys_bpf(BPF_PROG_LOAD, &attr);
}

/* the verifier's verdict: the last line of its log, above the statistics
 * line ("processed N insns ...") it ends with */
static const char *verdict(char *log)
{
	for (;;) {
		size_t len = strlen(log);
		char *p;

		while (len > 0 && log[len - 1] == '\n')
			log[--len] = '\0';
		p = strrchr(log, '\n');
		if (!p || strncmp(p + 1, "processed ", 10))
			return p ? p + 1 : log;
		*p = '\0';
	}
}

int qp_devbpf_load(const struct bpf_insn *insns, size_t n, qp_error **err)
{
	char log[4096] = "";
	int fd, e;

	/* verified once, without a log: with one, every load logs each
	 * instruction and overflowed the buffer (ENOSPC), which cost a second
	 * verification at every pod start; the log is asked for only to say
	 * why a load failed */
	fd = prog_load(insns, n, NULL, 0);
	if (fd >= 0)
		return fd;
	e = errno;
	fd = prog_load(insns, n, log, sizeof(log));
	if (fd >= 0)
		return fd;
	if (errno != ENOSPC)
		e = errno;
	log[sizeof(log) - 1] = '\0';
	if (!log[0])
		return qp_fail(err, e, "load the device filter (%zu instructions)", n);
	return qp_fail(err, e, "load the device filter (%zu instructions; verifier: %.200s)", n,
		       verdict(log));
}

static int query(int cgfd, uint32_t *ids, size_t *n, qp_error **err)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.query.target_fd = (uint32_t)cgfd;
	attr.query.attach_type = BPF_CGROUP_DEVICE;
	attr.query.prog_ids = (uint64_t)(uintptr_t)ids;
	attr.query.prog_cnt = QP_DEVBPF_MAX_PROGS;
	if (sys_bpf(BPF_PROG_QUERY, &attr) < 0)
		return qp_fail(err, errno, "query the cgroup's device filters");
	*n = attr.query.prog_cnt;
	return 0;
}

int qp_devbpf_count(int cgfd, size_t *n, qp_error **err)
{
	uint32_t ids[QP_DEVBPF_MAX_PROGS];

	return query(cgfd, ids, n, err);
}

static int detach(int cgfd, uint32_t id, qp_error **err)
{
	_cleanup_close_ int fd = -1;
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.prog_id = id;
	fd = sys_bpf(BPF_PROG_GET_FD_BY_ID, &attr);
	if (fd < 0)
		return errno == ENOENT ? 0 : qp_fail(err, errno, "open the old device filter %u", id);
	memset(&attr, 0, sizeof(attr));
	attr.target_fd = (uint32_t)cgfd;
	attr.attach_bpf_fd = (uint32_t)fd;
	attr.attach_type = BPF_CGROUP_DEVICE;
	if (sys_bpf(BPF_PROG_DETACH, &attr) < 0 && errno != ENOENT)
		return qp_fail(err, errno, "detach the old device filter %u", id);
	return 0;
}

int qp_devbpf_install(int cgfd, int prog_fd, qp_error **err)
{
	uint32_t old[QP_DEVBPF_MAX_PROGS];
	size_t n_old = 0;
	union bpf_attr attr;

	if (query(cgfd, old, &n_old, err) < 0)
		return -1;
	memset(&attr, 0, sizeof(attr));
	attr.target_fd = (uint32_t)cgfd;
	attr.attach_bpf_fd = (uint32_t)prog_fd;
	attr.attach_type = BPF_CGROUP_DEVICE;
	attr.attach_flags = BPF_F_ALLOW_MULTI;
	if (sys_bpf(BPF_PROG_ATTACH, &attr) < 0)
		return qp_fail(err, errno, "attach the device filter");
	for (size_t i = 0; i < n_old; i++)
		if (detach(cgfd, old[i], err) < 0)
			return -1;
	return 0;
}
