/* tests/unit/test_seccomp.c — seccomp profiles built by hand as struct
 * qp_seccomp: validation messages, building, and filters loaded in forked
 * children that report what their syscalls returned over a pipe. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "container/seccomp.h"
#include "util/cleanup.h"

/* errno of a raw syscall: 0 on success */
#define SYS_ERR(...) (syscall(__VA_ARGS__) < 0 ? errno : 0)

/* --- a deny-list profile: default ALLOW -------------------------------- */

static char *n_keys[] = { "keyctl", "add_key", "qpod_no_such_syscall", NULL };
static char *n_unshare[] = { "unshare", NULL };
static char *n_clone[] = { "clone", NULL };
static char *n_prio[] = { "getpriority", NULL };
static char *n_getpid[] = { "getpid", NULL };
static char *archs[] = { "SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32", NULL };
static char *sc_flags[] = { "SECCOMP_FILTER_FLAG_TSYNC", "SECCOMP_FILTER_FLAG_LOG", NULL };

static struct qp_seccomp_arg clone_ns[] = {
	/* (flags & CLONE_NEWNS) == CLONE_NEWNS */
	{ .index = 0, .value = CLONE_NEWNS, .value_two = CLONE_NEWNS, .op = "SCMP_CMP_MASKED_EQ" },
};
static struct qp_seccomp_arg prio_user_or_pgrp[] = {
	/* the same argument twice: two rules, ORed */
	{ .index = 0, .value = PRIO_USER, .op = "SCMP_CMP_EQ" },
	{ .index = 0, .value = PRIO_PGRP, .op = "SCMP_CMP_EQ" },
};

static struct qp_seccomp_rule deny_rules[] = {
	{ .names = n_keys, .action = "SCMP_ACT_ERRNO" },
	{ .names = n_unshare, .action = "SCMP_ACT_ERRNO", .has_errno_ret = true, .errno_ret = EPERM },
	{ .names = n_clone, .action = "SCMP_ACT_ERRNO", .args = clone_ns, .n_args = 1 },
	{ .names = n_prio, .action = "SCMP_ACT_ERRNO", .has_errno_ret = true, .errno_ret = ENOTTY,
	  .args = prio_user_or_pgrp, .n_args = 2 },
	{ .names = n_getpid, .action = "SCMP_ACT_ALLOW" }, /* same as default: skipped */
};

static struct qp_seccomp deny_profile = {
	.default_action = "SCMP_ACT_ALLOW",
	.architectures = archs,
	.flags = sc_flags,
	.rules = deny_rules,
	.n_rules = QP_ARRAY_SIZE(deny_rules),
};

/* --- an allow-list profile: default ERRNO(ENOSYS) ---------------------- */

static char *n_allowed[] = { "write", "exit_group", "exit", "getpid", "rt_sigreturn",
			     "brk", "mmap", "munmap", "madvise", "close", "sigaltstack",
			     "rt_sigprocmask", NULL }; /* + what sanitizers need at exit */
static struct qp_seccomp_rule allow_rules[] = {
	{ .names = n_allowed, .action = "SCMP_ACT_ALLOW" },
};
static struct qp_seccomp allow_profile = {
	.default_action = "SCMP_ACT_ERRNO",
	.has_default_errno_ret = true,
	.default_errno_ret = ENOSYS,
	.rules = allow_rules,
	.n_rules = 1,
};

/* --- running a filter in a child ---------------------------------------- */

struct report {
	int rc;
	char msg[256];
	int e[12];  /* errno per probe */
	long pid_ok;
};

typedef void (*probe_fn)(struct report *r);

/* Child: apply sc, run probe, write the report; returns the wait status. */
static int in_child(const struct qp_seccomp *sc, probe_fn probe, struct report *r)
{
	int p[2], status;
	pid_t pid;

	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct report c;
		qp_error *err = NULL;

		memset(&c, 0, sizeof(c));
		close(p[0]);
		c.rc = qp_seccomp_apply(sc, &err);
		if (err)
			snprintf(c.msg, sizeof(c.msg), "%s", err->msg);
		else
			probe(&c);
		_exit(write(p[1], &c, sizeof(c)) == (ssize_t)sizeof(c) ? 0 : 1);
	}
	close(p[1]);
	memset(r, 0, sizeof(*r));
	(void)!read(p[0], r, sizeof(*r));
	close(p[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return status;
}

static void probe_deny(struct report *r)
{
	long pid;
	int status;

	r->e[0] = SYS_ERR(SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */, -3, 0, 0, 0);
	r->e[1] = SYS_ERR(SYS_add_key, "user", "qpod", "x", 1, -3);
	r->e[2] = SYS_ERR(SYS_unshare, 0);
	r->e[3] = SYS_ERR(SYS_clone, CLONE_NEWNS | SIGCHLD, 0, 0, 0, 0);
	/* a plain fork through clone stays allowed */
	pid = syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
	if (pid == 0)
		_exit(0);
	r->e[4] = pid < 0 ? errno : (waitpid((pid_t)pid, &status, 0) == pid ? 0 : -1);
	r->e[5] = SYS_ERR(SYS_getpriority, PRIO_USER, 0);
	r->e[6] = SYS_ERR(SYS_getpriority, PRIO_PGRP, 0);
	r->e[7] = SYS_ERR(SYS_getpriority, PRIO_PROCESS, 0);
	r->pid_ok = syscall(SYS_getpid) == getpid();
	{
		/* the filter is really there */
		char line[128];
		FILE *f = fopen("/proc/self/status", "re");
		r->e[8] = -1;
		while (f && fgets(line, sizeof(line), f))
			if (strncmp(line, "Seccomp:", 8) == 0)
				r->e[8] = atoi(line + 8);
		if (f)
			fclose(f);
	}
}

static void test_deny_profile(void **state)
{
	struct report r;
	int status;

	(void)state;
	status = in_child(&deny_profile, probe_deny, &r);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_string_equal(r.msg, "");
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.e[0], EPERM);  /* keyctl */
	assert_int_equal(r.e[1], EPERM);  /* add_key */
	assert_int_equal(r.e[2], EPERM);  /* unshare(0) */
	assert_int_equal(r.e[3], EPERM);  /* clone(CLONE_NEWNS) */
	assert_int_equal(r.e[4], 0);      /* clone(SIGCHLD) */
	assert_int_equal(r.e[5], ENOTTY); /* getpriority(PRIO_USER) */
	assert_int_equal(r.e[6], ENOTTY); /* getpriority(PRIO_PGRP) */
	assert_int_equal(r.e[7], 0);      /* getpriority(PRIO_PROCESS) */
	assert_int_equal(r.pid_ok, 1);
	assert_int_equal(r.e[8], 2);      /* SECCOMP_MODE_FILTER */
}

static void probe_allow(struct report *r)
{
	r->e[0] = SYS_ERR(SYS_getppid);
	r->e[1] = SYS_ERR(SYS_uname, NULL);
	r->pid_ok = syscall(SYS_getpid) > 0;
}

static void test_allow_profile_default_errno(void **state)
{
	struct report r;
	int status;

	(void)state;
	status = in_child(&allow_profile, probe_allow, &r);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_string_equal(r.msg, "");
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.e[0], ENOSYS);
	assert_int_equal(r.e[1], ENOSYS);
	assert_int_equal(r.pid_ok, 1);
}

static void probe_killed(struct report *r)
{
	(void)r;
	syscall(SYS_getppid);
}

static void test_kill_process(void **state)
{
	char *names[] = { "getppid", NULL };
	struct qp_seccomp_rule rule = { .names = names, .action = "SCMP_ACT_KILL_PROCESS" };
	struct qp_seccomp sc = { .default_action = "SCMP_ACT_ALLOW", .rules = &rule, .n_rules = 1 };
	struct report r;
	int status;

	(void)state;
	status = in_child(&sc, probe_killed, &r);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGSYS);
}

/* --- building and validation --------------------------------------------- */

static void test_build(void **state)
{
	scmp_filter_ctx ctx = NULL;
	qp_error *err = NULL;

	(void)state;
	assert_int_equal(qp_seccomp_build(&deny_profile, &ctx, &err), 0);
	assert_null(err);
	assert_non_null(ctx);
	assert_int_equal(seccomp_arch_exist(ctx, SCMP_ARCH_X86), 0);
	assert_int_equal(seccomp_arch_exist(ctx, SCMP_ARCH_X32), 0);
	seccomp_release(ctx);

	assert_int_equal(qp_seccomp_build(NULL, &ctx, &err), -1);
	qp_error_free(&err);
	assert_int_equal(qp_seccomp_validate(NULL, &err), 0);
	assert_int_equal(qp_seccomp_apply(NULL, &err), 0);
}

static void test_name_tables(void **state)
{
	uint32_t arch;
	enum scmp_compare op;
	char *one_flag[2] = { NULL, NULL };
	struct qp_seccomp sc = { .default_action = "SCMP_ACT_ALLOW", .flags = one_flag };
	scmp_filter_ctx ctx = NULL;
	qp_error *err = NULL;

	(void)state;
	for (size_t i = 0; qp_seccomp_arch_names[i]; i++)
		assert_true(qp_seccomp_arch_from_name(qp_seccomp_arch_names[i], &arch));
	assert_true(qp_seccomp_arch_from_name("SCMP_ARCH_X86_64", &arch));
	assert_int_equal(arch, SCMP_ARCH_X86_64);
	assert_true(qp_seccomp_arch_from_name("SCMP_ARCH_AARCH64", &arch));
	assert_int_equal(arch, SCMP_ARCH_AARCH64);
	assert_false(qp_seccomp_arch_from_name("SCMP_ARCH_VAX", &arch));
	for (size_t i = 0; qp_seccomp_op_names[i]; i++)
		assert_true(qp_seccomp_op_from_name(qp_seccomp_op_names[i], &op));
	assert_true(qp_seccomp_op_from_name("SCMP_CMP_MASKED_EQ", &op));
	assert_int_equal(op, SCMP_CMP_MASKED_EQ);
	for (size_t i = 0; qp_seccomp_action_names[i]; i++) {
		struct qp_seccomp a = { .default_action = (char *)qp_seccomp_action_names[i] };
		assert_int_equal(qp_seccomp_validate(&a, &err), 0);
	}
	/* every flag qpod lists can be set on a filter */
	for (size_t i = 0; qp_seccomp_flag_names[i]; i++) {
		one_flag[0] = (char *)qp_seccomp_flag_names[i];
		assert_int_equal(qp_seccomp_build(&sc, &ctx, &err), 0);
		seccomp_release(ctx);
	}
}

/* Validation of one bad profile: expect this exact message. */
static void expect_invalid(const struct qp_seccomp *sc, const char *msg)
{
	scmp_filter_ctx ctx = NULL;
	qp_error *err = NULL;

	assert_int_equal(qp_seccomp_validate(sc, &err), -1);
	assert_non_null(err);
	assert_int_equal(err->code, QP_E_INVALID);
	assert_string_equal(err->msg, msg);
	qp_error_free(&err);
	/* build and apply refuse it the same way, without loading anything */
	assert_int_equal(qp_seccomp_build(sc, &ctx, &err), -1);
	assert_null(ctx);
	assert_string_equal(err->msg, msg);
	qp_error_free(&err);
	assert_int_equal(qp_seccomp_apply(sc, &err), -1);
	assert_string_equal(err->msg, msg);
	qp_error_free(&err);
}

static void test_bad_names(void **state)
{
	char *names[] = { "getppid", NULL };
	char *bad_arch[] = { "SCMP_ARCH_X86_64", "SCMP_ARCH_VAX", NULL };
	char *bad_flag[] = { "SECCOMP_FILTER_FLAG_FOO", NULL };
	struct qp_seccomp_arg arg = { .index = 0, .value = 1, .op = "SCMP_CMP_FOO" };
	struct qp_seccomp_rule rule = { .names = names, .action = "SCMP_ACT_BOGUS" };
	struct qp_seccomp sc = { .default_action = "SCMP_ACT_FOO" };

	(void)state;
	expect_invalid(&sc, "linux.seccomp.defaultAction: unknown action \"SCMP_ACT_FOO\"");
	sc.default_action = NULL;
	expect_invalid(&sc, "linux.seccomp.defaultAction: missing");
	sc.default_action = "SCMP_ACT_NOTIFY";
	expect_invalid(&sc, "linux.seccomp.defaultAction: SCMP_ACT_NOTIFY is not supported by qpod");

	sc.default_action = "SCMP_ACT_ALLOW";
	sc.has_default_errno_ret = true;
	sc.default_errno_ret = EPERM;
	expect_invalid(&sc, "linux.seccomp.defaultErrnoRet: only valid with SCMP_ACT_ERRNO or "
			    "SCMP_ACT_TRACE, not SCMP_ACT_ALLOW");
	sc.default_action = "SCMP_ACT_ERRNO";
	sc.default_errno_ret = 70000;
	expect_invalid(&sc, "linux.seccomp.defaultErrnoRet: 70000 is out of range (0-4095)");
	sc.has_default_errno_ret = false;

	sc.architectures = bad_arch;
	expect_invalid(&sc, "linux.seccomp.architectures: unknown architecture \"SCMP_ARCH_VAX\"");
	sc.architectures = NULL;
	sc.flags = bad_flag;
	expect_invalid(&sc, "linux.seccomp.flags: unknown flag \"SECCOMP_FILTER_FLAG_FOO\"");
	sc.flags = NULL;

	sc.rules = &rule;
	sc.n_rules = 1;
	expect_invalid(&sc, "linux.seccomp.syscalls[0].action: unknown action \"SCMP_ACT_BOGUS\"");
	rule.action = "SCMP_ACT_NOTIFY";
	expect_invalid(&sc, "linux.seccomp.syscalls[0].action: SCMP_ACT_NOTIFY is not supported by qpod");
	rule.action = "SCMP_ACT_ALLOW";
	rule.args = &arg;
	rule.n_args = 1;
	expect_invalid(&sc, "linux.seccomp.syscalls[0].args[0].op: unknown operator \"SCMP_CMP_FOO\"");
	arg.op = "SCMP_CMP_EQ";
	arg.index = 6;
	expect_invalid(&sc, "linux.seccomp.syscalls[0].args[0].index: 6 is out of range (0-5)");
	arg.index = 0;
	rule.n_args = 7;
	expect_invalid(&sc, "linux.seccomp.syscalls[0].args: more than 6 entries");
	rule.n_args = 1;
	rule.has_errno_ret = true;
	expect_invalid(&sc, "linux.seccomp.syscalls[0].errnoRet: only valid with SCMP_ACT_ERRNO or "
			    "SCMP_ACT_TRACE, not SCMP_ACT_ALLOW");
	rule.has_errno_ret = false;

	/* and the fixed profile is fine */
	{
		qp_error *err = NULL;
		assert_int_equal(qp_seccomp_validate(&sc, &err), 0);
	}
}

static void test_hostile_lengths(void **state)
{
	char longname[4096];
	char *names[] = { longname, NULL };
	struct qp_seccomp_rule rule = { .names = names, .action = "SCMP_ACT_ERRNO" };
	struct qp_seccomp sc = { .default_action = longname };
	qp_error *err = NULL;

	(void)state;
	memset(longname, 'X', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	assert_int_equal(qp_seccomp_validate(&sc, &err), -1);
	assert_true(strlen(err->msg) < 200);
	qp_error_free(&err);

	sc.default_action = "SCMP_ACT_ALLOW";
	sc.rules = &rule;
	sc.n_rules = 1;
	assert_int_equal(qp_seccomp_validate(&sc, &err), -1);
	assert_string_equal(err->msg, "linux.seccomp.syscalls[0].names[0]: longer than 63 bytes");
	qp_error_free(&err);

	sc.rules = NULL;
	sc.n_rules = 100000;
	assert_int_equal(qp_seccomp_validate(&sc, &err), -1);
	assert_string_equal(err->msg, "linux.seccomp.syscalls: more than 4096 entries");
	qp_error_free(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_deny_profile),
		cmocka_unit_test(test_allow_profile_default_errno),
		cmocka_unit_test(test_kill_process),
		cmocka_unit_test(test_build),
		cmocka_unit_test(test_name_tables),
		cmocka_unit_test(test_bad_names),
		cmocka_unit_test(test_hostile_lengths),
	};
	return cmocka_run_group_tests_name("seccomp", tests, NULL, NULL);
}
