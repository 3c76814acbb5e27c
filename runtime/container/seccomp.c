/* runtime/container/seccomp.c — linux.seccomp to a libseccomp filter.
 *
 * The profile is hostile input: every name is looked up in a fixed table,
 * sizes are bounded, errnoRet is range-checked, and nothing unknown is
 * silently accepted except syscall names this architecture does not have
 * (profiles list syscalls of every architecture; runc skips those too).
 */
#include <errno.h>
#include <string.h>
#include <sys/prctl.h>
#include <seccomp.h>

#include "container/seccomp.h"
#include "util/cleanup.h"
#include "util/log.h"

#define SCMP_HAS(maj, min) (SCMP_VER_MAJOR > (maj) || (SCMP_VER_MAJOR == (maj) && SCMP_VER_MINOR >= (min)))

#define QP_SCMP_NAME_MAX 64     /* longest action/op/arch/flag/syscall name we read */
#define QP_SCMP_MAX_ERRNO 4095  /* the kernel caps SECCOMP_RET_ERRNO data at MAX_ERRNO */
#define QP_SCMP_MAX_ARGS 6

/* --- name tables -------------------------------------------------------- */

enum act_kind { ACT_PLAIN, ACT_ERRNO, ACT_TRACE, ACT_UNSUPPORTED };

static const struct {
	const char *name;
	uint32_t action;
	enum act_kind kind;
} actions[] = {
	{ "SCMP_ACT_KILL", SCMP_ACT_KILL, ACT_PLAIN },
	{ "SCMP_ACT_KILL_THREAD", SCMP_ACT_KILL_THREAD, ACT_PLAIN },
	{ "SCMP_ACT_KILL_PROCESS", SCMP_ACT_KILL_PROCESS, ACT_PLAIN },
	{ "SCMP_ACT_TRAP", SCMP_ACT_TRAP, ACT_PLAIN },
	{ "SCMP_ACT_ERRNO", 0, ACT_ERRNO },
	{ "SCMP_ACT_TRACE", 0, ACT_TRACE },
	{ "SCMP_ACT_ALLOW", SCMP_ACT_ALLOW, ACT_PLAIN },
	{ "SCMP_ACT_LOG", SCMP_ACT_LOG, ACT_PLAIN },
	{ "SCMP_ACT_NOTIFY", 0, ACT_UNSUPPORTED },
};

const char *const qp_seccomp_action_names[] = {
	"SCMP_ACT_KILL", "SCMP_ACT_KILL_THREAD", "SCMP_ACT_KILL_PROCESS", "SCMP_ACT_TRAP",
	"SCMP_ACT_ERRNO", "SCMP_ACT_TRACE", "SCMP_ACT_ALLOW", "SCMP_ACT_LOG", NULL,
};

static const struct {
	const char *name;
	enum scmp_compare op;
} ops[] = {
	{ "SCMP_CMP_NE", SCMP_CMP_NE },
	{ "SCMP_CMP_LT", SCMP_CMP_LT },
	{ "SCMP_CMP_LE", SCMP_CMP_LE },
	{ "SCMP_CMP_EQ", SCMP_CMP_EQ },
	{ "SCMP_CMP_GE", SCMP_CMP_GE },
	{ "SCMP_CMP_GT", SCMP_CMP_GT },
	{ "SCMP_CMP_MASKED_EQ", SCMP_CMP_MASKED_EQ },
};

const char *const qp_seccomp_op_names[] = {
	"SCMP_CMP_NE", "SCMP_CMP_LT", "SCMP_CMP_LE", "SCMP_CMP_EQ",
	"SCMP_CMP_GE", "SCMP_CMP_GT", "SCMP_CMP_MASKED_EQ", NULL,
};

#define ARCH(x) { "SCMP_ARCH_" #x, SCMP_ARCH_##x }
static const struct {
	const char *name;
	uint32_t arch;
} arches[] = {
	ARCH(X86), ARCH(X86_64), ARCH(X32), ARCH(ARM), ARCH(AARCH64),
	ARCH(MIPS), ARCH(MIPS64), ARCH(MIPS64N32), ARCH(MIPSEL), ARCH(MIPSEL64), ARCH(MIPSEL64N32),
	ARCH(PPC), ARCH(PPC64), ARCH(PPC64LE), ARCH(S390), ARCH(S390X),
#ifdef SCMP_ARCH_PARISC
	ARCH(PARISC), ARCH(PARISC64),
#endif
#ifdef SCMP_ARCH_RISCV64
	ARCH(RISCV64),
#endif
#ifdef SCMP_ARCH_LOONGARCH64
	ARCH(LOONGARCH64),
#endif
#ifdef SCMP_ARCH_M68K
	ARCH(M68K),
#endif
#ifdef SCMP_ARCH_SH
	ARCH(SH), ARCH(SHEB),
#endif
};
#undef ARCH

const char *const qp_seccomp_arch_names[] = {
	"SCMP_ARCH_X86", "SCMP_ARCH_X86_64", "SCMP_ARCH_X32", "SCMP_ARCH_ARM", "SCMP_ARCH_AARCH64",
	"SCMP_ARCH_MIPS", "SCMP_ARCH_MIPS64", "SCMP_ARCH_MIPS64N32", "SCMP_ARCH_MIPSEL",
	"SCMP_ARCH_MIPSEL64", "SCMP_ARCH_MIPSEL64N32", "SCMP_ARCH_PPC", "SCMP_ARCH_PPC64",
	"SCMP_ARCH_PPC64LE", "SCMP_ARCH_S390", "SCMP_ARCH_S390X",
#ifdef SCMP_ARCH_PARISC
	"SCMP_ARCH_PARISC", "SCMP_ARCH_PARISC64",
#endif
#ifdef SCMP_ARCH_RISCV64
	"SCMP_ARCH_RISCV64",
#endif
#ifdef SCMP_ARCH_LOONGARCH64
	"SCMP_ARCH_LOONGARCH64",
#endif
#ifdef SCMP_ARCH_M68K
	"SCMP_ARCH_M68K",
#endif
#ifdef SCMP_ARCH_SH
	"SCMP_ARCH_SH", "SCMP_ARCH_SHEB",
#endif
	NULL,
};

/* Seccomp filter flags as libseccomp filter attributes; supported == false
 * means the name is a real kernel flag this libseccomp cannot set. */
static const struct {
	const char *name;
	bool supported;
	int attr; /* enum scmp_filter_attr */
} flags[] = {
	{ "SECCOMP_FILTER_FLAG_TSYNC", true, SCMP_FLTATR_CTL_TSYNC },
	{ "SECCOMP_FILTER_FLAG_LOG", true, SCMP_FLTATR_CTL_LOG },
#if SCMP_HAS(2, 5)
	{ "SECCOMP_FILTER_FLAG_SPEC_ALLOW", true, SCMP_FLTATR_CTL_SSB },
#else
	{ "SECCOMP_FILTER_FLAG_SPEC_ALLOW", false, 0 },
#endif
#if SCMP_HAS(2, 6)
	{ "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV", true, SCMP_FLTATR_CTL_WAITKILL },
#else
	{ "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV", false, 0 },
#endif
};

const char *const qp_seccomp_flag_names[] = {
	"SECCOMP_FILTER_FLAG_TSYNC", "SECCOMP_FILTER_FLAG_LOG",
#if SCMP_HAS(2, 5)
	"SECCOMP_FILTER_FLAG_SPEC_ALLOW",
#endif
#if SCMP_HAS(2, 6)
	"SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV",
#endif
	NULL,
};

static bool name_ok(const char *s)
{
	return s && strnlen(s, QP_SCMP_NAME_MAX) < QP_SCMP_NAME_MAX;
}

bool qp_seccomp_arch_from_name(const char *name, uint32_t *arch)
{
	if (!name_ok(name))
		return false;
	for (size_t i = 0; i < QP_ARRAY_SIZE(arches); i++)
		if (strcmp(name, arches[i].name) == 0) {
			*arch = arches[i].arch;
			return true;
		}
	return false;
}

bool qp_seccomp_op_from_name(const char *name, enum scmp_compare *op)
{
	if (!name_ok(name))
		return false;
	for (size_t i = 0; i < QP_ARRAY_SIZE(ops); i++)
		if (strcmp(name, ops[i].name) == 0) {
			*op = ops[i].op;
			return true;
		}
	return false;
}

static int flag_index(const char *name)
{
	if (!name_ok(name))
		return -1;
	for (size_t i = 0; i < QP_ARRAY_SIZE(flags); i++)
		if (strcmp(name, flags[i].name) == 0)
			return (int)i;
	return -1;
}

/* Action name (+ errnoRet) -> libseccomp action.  `base` is the JSON object
 * ("linux.seccomp" or "linux.seccomp.syscalls[3]"), act_field/ret_field the
 * member names, for messages. */
static int resolve_action(const char *name, bool has_ret, uint32_t ret, const char *base,
			  const char *act_field, const char *ret_field, uint32_t *out, qp_error **err)
{
	size_t i;

	if (!name)
		return qp_error_set(err, QP_E_INVALID, 0, "%s.%s: missing", base, act_field);
	for (i = 0; i < QP_ARRAY_SIZE(actions); i++)
		if (name_ok(name) && strcmp(name, actions[i].name) == 0)
			break;
	if (i == QP_ARRAY_SIZE(actions))
		return qp_error_set(err, QP_E_INVALID, 0, "%s.%s: unknown action \"%.*s\"", base, act_field,
				    QP_SCMP_NAME_MAX, name);
	switch (actions[i].kind) {
	case ACT_UNSUPPORTED:
		return qp_error_set(err, QP_E_INVALID, 0, "%s.%s: %s is not supported by qpod", base,
				    act_field, name);
	case ACT_PLAIN:
		if (has_ret)
			return qp_error_set(err, QP_E_INVALID, 0,
					    "%s.%s: only valid with SCMP_ACT_ERRNO or SCMP_ACT_TRACE, not %s",
					    base, ret_field, name);
		*out = actions[i].action;
		return 0;
	case ACT_ERRNO:
	case ACT_TRACE:
		if (!has_ret)
			ret = EPERM;
		if (ret > QP_SCMP_MAX_ERRNO)
			return qp_error_set(err, QP_E_INVALID, 0, "%s.%s: %u is out of range (0-%d)", base,
					    ret_field, ret, QP_SCMP_MAX_ERRNO);
		*out = actions[i].kind == ACT_ERRNO ? SCMP_ACT_ERRNO(ret) : SCMP_ACT_TRACE(ret);
		return 0;
	}
	return -1; /* not reached */
}

/* --- validation ---------------------------------------------------------- */

static int validate_rule(const struct qp_seccomp_rule *r, size_t ri, qp_error **err)
{
	char base[64];
	uint32_t act;
	size_t i;

	snprintf(base, sizeof(base), "linux.seccomp.syscalls[%zu]", ri);
	for (i = 0; r->names && r->names[i]; i++) {
		if (i >= QP_SPEC_MAX_ITEMS)
			return qp_error_set(err, QP_E_INVALID, 0, "%s.names: more than %u entries", base,
					    QP_SPEC_MAX_ITEMS);
		if (!name_ok(r->names[i]))
			return qp_error_set(err, QP_E_INVALID, 0, "%s.names[%zu]: longer than %d bytes", base, i,
					    QP_SCMP_NAME_MAX - 1);
	}
	if (resolve_action(r->action, r->has_errno_ret, r->errno_ret, base, "action", "errnoRet", &act,
			   err) < 0)
		return -1;
	if (r->n_args > QP_SCMP_MAX_ARGS)
		return qp_error_set(err, QP_E_INVALID, 0, "%s.args: more than %d entries", base,
				    QP_SCMP_MAX_ARGS);
	for (i = 0; i < r->n_args; i++) {
		enum scmp_compare op;

		if (r->args[i].index >= QP_SCMP_MAX_ARGS)
			return qp_error_set(err, QP_E_INVALID, 0, "%s.args[%zu].index: %u is out of range (0-%d)",
					    base, i, r->args[i].index, QP_SCMP_MAX_ARGS - 1);
		if (!r->args[i].op)
			return qp_error_set(err, QP_E_INVALID, 0, "%s.args[%zu].op: missing", base, i);
		if (!qp_seccomp_op_from_name(r->args[i].op, &op))
			return qp_error_set(err, QP_E_INVALID, 0, "%s.args[%zu].op: unknown operator \"%.*s\"",
					    base, i, QP_SCMP_NAME_MAX, r->args[i].op);
	}
	return 0;
}

int qp_seccomp_validate(const struct qp_seccomp *sc, qp_error **err)
{
	uint32_t act, arch;
	size_t i;

	if (!sc)
		return 0;
	if (resolve_action(sc->default_action, sc->has_default_errno_ret, sc->default_errno_ret,
			   "linux.seccomp", "defaultAction", "defaultErrnoRet", &act, err) < 0)
		return -1;
	for (i = 0; sc->architectures && sc->architectures[i]; i++) {
		if (i >= QP_SPEC_MAX_ITEMS)
			return qp_error_set(err, QP_E_INVALID, 0, "linux.seccomp.architectures: more than %u entries",
					    QP_SPEC_MAX_ITEMS);
		if (!qp_seccomp_arch_from_name(sc->architectures[i], &arch))
			return qp_error_set(err, QP_E_INVALID, 0,
					    "linux.seccomp.architectures: unknown architecture \"%.*s\"",
					    QP_SCMP_NAME_MAX, sc->architectures[i]);
	}
	for (i = 0; sc->flags && sc->flags[i]; i++) {
		int f;

		if (i >= QP_SPEC_MAX_ITEMS)
			return qp_error_set(err, QP_E_INVALID, 0, "linux.seccomp.flags: more than %u entries",
					    QP_SPEC_MAX_ITEMS);
		f = flag_index(sc->flags[i]);
		if (f < 0)
			return qp_error_set(err, QP_E_INVALID, 0, "linux.seccomp.flags: unknown flag \"%.*s\"",
					    QP_SCMP_NAME_MAX, sc->flags[i]);
		if (!flags[f].supported)
			return qp_error_set(err, QP_E_INVALID, 0,
					    "linux.seccomp.flags: %s is not supported by libseccomp %d.%d.%d",
					    flags[f].name, SCMP_VER_MAJOR, SCMP_VER_MINOR, SCMP_VER_MICRO);
	}
	if (sc->n_rules > QP_SPEC_MAX_ITEMS)
		return qp_error_set(err, QP_E_INVALID, 0, "linux.seccomp.syscalls: more than %u entries",
				    QP_SPEC_MAX_ITEMS);
	for (i = 0; i < sc->n_rules; i++)
		if (validate_rule(&sc->rules[i], i, err) < 0)
			return -1;
	return 0;
}

/* --- building ------------------------------------------------------------ */

static void seccomp_releasep(scmp_filter_ctx *ctx)
{
	int e = errno;
	if (*ctx)
		seccomp_release(*ctx);
	errno = e;
}
#define _cleanup_seccomp_ __attribute__((cleanup(seccomp_releasep)))

/* One syscall of one rule.  Comparisons on distinct arguments are ANDed in
 * one rule; if an argument is compared twice, each comparison becomes its
 * own rule (ORed), which is what runc does and what profiles expect. */
static int add_syscall(scmp_filter_ctx ctx, uint32_t act, int nr, const struct qp_seccomp_rule *r,
		       size_t ri, const char *name, qp_error **err)
{
	struct scmp_arg_cmp cmp[QP_SCMP_MAX_ARGS];
	unsigned used = 0;
	bool repeated = false;
	int rc = 0;

	for (size_t i = 0; i < r->n_args; i++) {
		enum scmp_compare op = SCMP_CMP_EQ;

		qp_seccomp_op_from_name(r->args[i].op, &op); /* validated */
		cmp[i] = (struct scmp_arg_cmp){
			.arg = r->args[i].index,
			.op = op,
			.datum_a = r->args[i].value,     /* the mask for MASKED_EQ */
			.datum_b = r->args[i].value_two, /* the value for MASKED_EQ */
		};
		if (used & (1u << r->args[i].index))
			repeated = true;
		used |= 1u << r->args[i].index;
	}
	if (!repeated) {
		rc = seccomp_rule_add_array(ctx, act, nr, (unsigned)r->n_args, cmp);
	} else {
		for (size_t i = 0; i < r->n_args && rc == 0; i++)
			rc = seccomp_rule_add_array(ctx, act, nr, 1, &cmp[i]);
	}
	if (rc < 0)
		return qp_fail(err, -rc, "linux.seccomp.syscalls[%zu]: add rule for \"%s\"", ri, name);
	return 0;
}

static int set_attr(scmp_filter_ctx ctx, enum scmp_filter_attr attr, uint32_t value, const char *what,
		    qp_error **err)
{
	int rc = seccomp_attr_set(ctx, attr, value);
	if (rc < 0)
		return qp_fail(err, -rc, "seccomp: set %s", what);
	return 0;
}

int qp_seccomp_build(const struct qp_seccomp *sc, scmp_filter_ctx *out, qp_error **err)
{
	_cleanup_seccomp_ scmp_filter_ctx ctx = NULL;
	uint32_t def;
	size_t i, skipped = 0;
	int rc;

	if (!sc)
		return qp_error_set(err, QP_E_INVALID, 0, "linux.seccomp: no profile to build");
	if (qp_seccomp_validate(sc, err) < 0)
		return -1;
	if (resolve_action(sc->default_action, sc->has_default_errno_ret, sc->default_errno_ret,
			   "linux.seccomp", "defaultAction", "defaultErrnoRet", &def, err) < 0)
		return -1;

	errno = 0;
	ctx = seccomp_init(def);
	if (!ctx)
		return qp_fail(err, errno ? errno : EINVAL, "seccomp_init (default action %s)",
			       sc->default_action);

	/* no_new_privs is process.noNewPrivileges' business, not libseccomp's */
	if (set_attr(ctx, SCMP_FLTATR_CTL_NNP, 0, "no_new_privs off", err) < 0)
		return -1;
#if SCMP_HAS(2, 5)
	/* report the kernel's errno from seccomp_load, not -ECANCELED */
	if (set_attr(ctx, SCMP_FLTATR_API_SYSRAWRC, 1, "raw return codes", err) < 0)
		return -1;
#endif

	for (i = 0; sc->architectures && sc->architectures[i]; i++) {
		uint32_t arch = 0;

		qp_seccomp_arch_from_name(sc->architectures[i], &arch); /* validated */
		rc = seccomp_arch_add(ctx, arch);
		if (rc < 0 && rc != -EEXIST) /* the native arch is always there */
			return qp_fail(err, -rc, "linux.seccomp.architectures: add %s", sc->architectures[i]);
	}

	for (i = 0; sc->flags && sc->flags[i]; i++) {
		int f = flag_index(sc->flags[i]);

		if (set_attr(ctx, (enum scmp_filter_attr)flags[f].attr, 1, flags[f].name, err) < 0)
			return -1;
	}

	for (i = 0; i < sc->n_rules; i++) {
		const struct qp_seccomp_rule *r = &sc->rules[i];
		char base[64];
		uint32_t act;

		snprintf(base, sizeof(base), "linux.seccomp.syscalls[%zu]", i);
		if (resolve_action(r->action, r->has_errno_ret, r->errno_ret, base, "action", "errnoRet",
				   &act, err) < 0)
			return -1;
		if (act == def) /* libseccomp refuses rules that repeat the default; they change nothing */
			continue;
		for (size_t j = 0; r->names && r->names[j]; j++) {
			int nr = seccomp_syscall_resolve_name(r->names[j]);

			if (nr == __NR_SCMP_ERROR) {
				skipped++;
				continue;
			}
			if (add_syscall(ctx, act, nr, r, i, r->names[j], err) < 0)
				return -1;
		}
	}
	if (skipped)
		qp_debug("seccomp: %zu syscall name(s) unknown on this architecture were skipped", skipped);

	*out = steal_ptr(&ctx);
	return 0;
}

int qp_seccomp_apply(const struct qp_seccomp *sc, qp_error **err)
{
	_cleanup_seccomp_ scmp_filter_ctx ctx = NULL;
	int rc;

	if (!sc)
		return 0;
	if (qp_seccomp_build(sc, &ctx, err) < 0)
		return -1;
	rc = seccomp_load(ctx);
	if (rc < 0) {
		if (-rc == EACCES && prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 0)
			return qp_fail(err, -rc,
				       "load seccomp filter (without no_new_privs this needs CAP_SYS_ADMIN; "
				       "load it before dropping capabilities)");
		return qp_fail(err, -rc, "load seccomp filter");
	}
	return 0;
}
