/* tests/unit/test_caps.c — capability names and validation, the privilege
 * drop, no_new_privs and rlimits.  Anything that changes the process runs in
 * a forked child, which reports what it sees over a pipe; the parent asserts. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "host/caps.h"

#define BIT(c) (UINT64_C(1) << (c))

struct report {
	int rc;              /* return of the call under test */
	char msg[256];       /* its error message */
	uint64_t bnd, eff, prm, inh, amb;
	uint64_t eff_before;
	uid_t ruid, euid, suid;
	gid_t rgid, egid, sgid;
	int ngroups;
	gid_t groups[8];
	int nnp;
	struct rlimit nofile;
};

static uint64_t status_field(const char *name)
{
	char line[256];
	unsigned long long v = ~0ULL;
	size_t n = strlen(name);
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return ~0ULL;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, name, n) == 0 && line[n] == ':') {
			v = strtoull(line + n + 1, NULL, 16);
			break;
		}
	fclose(f);
	return v;
}

static void observe(struct report *r)
{
	r->bnd = status_field("CapBnd");
	r->eff = status_field("CapEff");
	r->prm = status_field("CapPrm");
	r->inh = status_field("CapInh");
	r->amb = status_field("CapAmb");
	getresuid(&r->ruid, &r->euid, &r->suid);
	getresgid(&r->rgid, &r->egid, &r->sgid);
	r->ngroups = getgroups(8, r->groups);
	r->nnp = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
	getrlimit(RLIMIT_NOFILE, &r->nofile);
}

typedef int (*child_fn)(void *arg, qp_error **err);

/* Run fn in a child; fill *r with what the child saw afterwards. */
static void in_child(child_fn fn, void *arg, struct report *r)
{
	int p[2];
	pid_t pid;
	int status;

	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct report c;
		qp_error *err = NULL;

		memset(&c, 0, sizeof(c));
		close(p[0]);
		c.eff_before = status_field("CapEff");
		c.rc = fn(arg, &err);
		if (err)
			snprintf(c.msg, sizeof(c.msg), "%s", err->msg);
		observe(&c);
		_exit(write(p[1], &c, sizeof(c)) == (ssize_t)sizeof(c) ? 0 : 1);
	}
	close(p[1]);
	memset(r, 0, sizeof(*r));
	assert_int_equal(read(p[0], r, sizeof(*r)), (ssize_t)sizeof(*r));
	close(p[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void need_root(void)
{
	if (geteuid() != 0)
		skip();
}

/* --- names ---------------------------------------------------------------- */

static void test_cap_names(void **state)
{
	(void)state;
	assert_int_equal(qp_cap_from_name("CAP_CHOWN"), 0);
	assert_int_equal(qp_cap_from_name("CAP_SYS_ADMIN"), 21);
	assert_int_equal(qp_cap_from_name("CAP_NET_BIND_SERVICE"), 10);
	assert_int_equal(qp_cap_from_name("CAP_CHECKPOINT_RESTORE"), 40);
	assert_int_equal(qp_cap_from_name("CAP_FOO"), -1);
	assert_int_equal(qp_cap_from_name("cap_sys_admin"), -1);
	assert_int_equal(qp_cap_from_name("21"), -1);
	assert_int_equal(qp_cap_from_name(""), -1);
	assert_int_equal(qp_cap_from_name(NULL), -1);
	assert_string_equal(qp_cap_name(21), "CAP_SYS_ADMIN");
	assert_null(qp_cap_name(-1));
	assert_null(qp_cap_name(41));
	for (int c = 0; c <= 40; c++)
		assert_int_equal(qp_cap_from_name(qp_cap_name(c)), c);
	assert_true(qp_cap_last_cap() >= 37); /* CAP_AUDIT_READ: any kernel >= 3.16 */
}

static void test_caps_validate(void **state)
{
	char *good[] = { "CAP_CHOWN", "CAP_KILL", NULL };
	char *bad[] = { "CAP_KILL", "CAP_FOO", NULL };
	char longname[300];
	char *toolong[] = { longname, NULL };
	struct qp_caps caps = { .present = true, .bounding = good, .effective = good, .permitted = good };
	qp_error *err = NULL;

	(void)state;
	assert_int_equal(qp_caps_validate(&caps, &err), 0);
	assert_null(err);

	caps.bounding = bad;
	assert_int_equal(qp_caps_validate(&caps, &err), -1);
	assert_non_null(err);
	assert_int_equal(err->code, QP_E_INVALID);
	assert_string_equal(err->msg, "process.capabilities.bounding: unknown capability \"CAP_FOO\"");
	qp_error_free(&err);

	caps.bounding = good;
	caps.ambient = bad;
	assert_int_equal(qp_caps_validate(&caps, &err), -1);
	assert_string_equal(err->msg, "process.capabilities.ambient: unknown capability \"CAP_FOO\"");
	qp_error_free(&err);

	memset(longname, 'A', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	caps.ambient = toolong;
	assert_int_equal(qp_caps_validate(&caps, &err), -1);
	assert_non_null(strstr(err->msg, "process.capabilities.ambient: unknown capability \"AAAA"));
	assert_true(strlen(err->msg) < 200); /* hostile names are cut in messages */
	qp_error_free(&err);

	/* capabilities absent: nothing to check */
	caps.present = false;
	assert_int_equal(qp_caps_validate(&caps, &err), 0);
	assert_int_equal(qp_caps_validate(NULL, &err), 0);
}

/* 0 when capability c, missing from our bounding set, is refused in
 * permitted and in inheritable, naming the set, and a new user namespace
 * lets it through; otherwise which check failed (no cmocka: it may run in
 * a child) */
static int refusal_of(int c)
{
	char *some[] = { "CAP_CHOWN", NULL }, *missing[2] = { (char *)qp_cap_name(c), NULL };
	struct qp_caps caps = { .present = true, .bounding = some, .effective = some, .permitted = missing };
	qp_error *err = NULL;
	int bad = 0;

	if (qp_caps_check_host(&caps, false, &err) != -1 || err->code != QP_E_INVALID ||
	    !strstr(err->msg, "process.capabilities.permitted: ") || !strstr(err->msg, missing[0]) ||
	    !strstr(err->msg, "bounding set"))
		bad |= 1;
	qp_error_free(&err);
	caps.permitted = some;
	caps.inheritable = missing;
	if (qp_caps_check_host(&caps, false, &err) != -1 || !strstr(err->msg, "process.capabilities.inheritable: "))
		bad |= 2;
	qp_error_free(&err);
	if (qp_caps_check_host(&caps, true, &err) != 0)
		bad |= 4;
	qp_error_free(&err);
	return bad;
}

/* a capability missing from our bounding set is refused at create, naming
 * the set; a new user namespace gets every capability, so it passes */
static void test_caps_check_host(void **state)
{
	char *some[] = { "CAP_CHOWN", NULL };
	struct qp_caps caps = { .present = true, .bounding = some, .effective = some, .permitted = some };
	qp_error *err = NULL;
	int c, status;

	(void)state;
	assert_int_equal(qp_caps_check_host(&caps, false, &err), geteuid() == 0 ? 0 : -1);
	qp_error_free(&err);
	for (c = 0; c <= qp_cap_last_cap() && prctl(PR_CAPBSET_READ, (unsigned long)c, 0, 0, 0) == 1; c++)
		;
	if (c <= qp_cap_last_cap()) {
		assert_int_equal(refusal_of(c), 0);
	} else {
		/* every capability is in our bounding set: a child drops one */
		if (geteuid() != 0)
			skip();
		pid_t pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			c = qp_cap_last_cap();
			_exit(prctl(PR_CAPBSET_DROP, (unsigned long)c, 0, 0, 0) < 0 ? 100 : refusal_of(c));
		}
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	}
	caps.present = false;
	assert_int_equal(qp_caps_check_host(&caps, false, &err), 0);
}

/* --- privilege drop ------------------------------------------------------- */

static int do_drop(void *arg, qp_error **err)
{
	return qp_process_drop_privileges(arg, err);
}

static void test_drop_privileges(void **state)
{
	char *bounding[] = { "CAP_CHOWN", "CAP_KILL", "CAP_NET_BIND_SERVICE", NULL };
	char *eff[] = { "CAP_KILL", "CAP_NET_BIND_SERVICE", NULL };
	char *one[] = { "CAP_NET_BIND_SERVICE", NULL };
	uint32_t gids[] = { 100, 200 };
	struct qp_process p = {
		.uid = 65534, .gid = 65534,
		.additional_gids = gids, .n_additional_gids = 2,
		.caps = { .present = true, .bounding = bounding, .effective = eff, .permitted = eff,
			  .inheritable = one, .ambient = one },
	};
	struct report r;

	(void)state;
	need_root();
	in_child(do_drop, &p, &r);
	assert_string_equal(r.msg, "");
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.bnd, BIT(0) | BIT(5) | BIT(10));
	assert_int_equal(r.eff, BIT(5) | BIT(10));
	assert_int_equal(r.prm, BIT(5) | BIT(10));
	assert_int_equal(r.inh, BIT(10));
	assert_int_equal(r.amb, BIT(10));
	assert_int_equal(r.ruid, 65534);
	assert_int_equal(r.euid, 65534);
	assert_int_equal(r.suid, 65534);
	assert_int_equal(r.rgid, 65534);
	assert_int_equal(r.egid, 65534);
	assert_int_equal(r.sgid, 65534);
	assert_int_equal(r.ngroups, 2);
	assert_int_equal(r.groups[0], 100);
	assert_int_equal(r.groups[1], 200);
	assert_int_equal(r.nnp, 0);
}

static void test_drop_everything(void **state)
{
	char *none[] = { NULL };
	struct qp_process p = {
		.uid = 1000, .gid = 1000,
		.caps = { .present = true, .bounding = none, .effective = none, .permitted = none,
			  .inheritable = none, .ambient = none },
	};
	struct report r;

	(void)state;
	need_root();
	in_child(do_drop, &p, &r);
	assert_string_equal(r.msg, "");
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.bnd, 0);
	assert_int_equal(r.eff, 0);
	assert_int_equal(r.prm, 0);
	assert_int_equal(r.amb, 0);
	assert_int_equal(r.euid, 1000);
	assert_int_equal(r.ngroups, 0);
}

/* No process.capabilities: the caps stay, only the ids change. */
static void test_drop_keeps_caps_when_absent(void **state)
{
	struct qp_process p = { .uid = 65534, .gid = 65534 };
	struct report r;

	(void)state;
	need_root();
	in_child(do_drop, &p, &r);
	assert_string_equal(r.msg, "");
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.euid, 65534);
	assert_int_equal(r.egid, 65534);
	assert_int_not_equal(r.eff_before, 0);
	assert_int_equal(r.eff, r.eff_before);
	assert_int_equal(r.prm, r.eff_before);
}

static void test_drop_errors(void **state)
{
	char *all[] = { "CAP_KILL", "CAP_CHOWN", NULL };
	char *kill_only[] = { "CAP_KILL", NULL };
	char *bad[] = { "CAP_NOPE", NULL };
	struct qp_process p = {
		.uid = 65534, .gid = 65534,
		.caps = { .present = true, .bounding = all, .effective = all, .permitted = kill_only },
	};
	struct report r;

	(void)state;
	need_root();
	in_child(do_drop, &p, &r);
	assert_int_equal(r.rc, -1);
	assert_string_equal(r.msg,
			    "process.capabilities.effective: \"CAP_CHOWN\" is not in the permitted set");

	/* ambient needs the cap in inheritable too */
	p.caps.effective = kill_only;
	p.caps.ambient = kill_only;
	in_child(do_drop, &p, &r);
	assert_int_equal(r.rc, -1);
	assert_non_null(strstr(r.msg, "raise ambient capability CAP_KILL"));

	/* unknown names are refused before anything changes */
	p.caps.ambient = NULL;
	p.caps.bounding = bad;
	in_child(do_drop, &p, &r);
	assert_int_equal(r.rc, -1);
	assert_string_equal(r.msg, "process.capabilities.bounding: unknown capability \"CAP_NOPE\"");
	assert_int_equal(r.euid, 0);
}

static int do_nnp(void *arg, qp_error **err)
{
	(void)arg;
	return qp_no_new_privs(err);
}

static void test_no_new_privs(void **state)
{
	struct report r;

	(void)state;
	in_child(do_nnp, NULL, &r);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.nnp, 1);
}

/* --- rlimits -------------------------------------------------------------- */

static void test_rlimit_names(void **state)
{
	(void)state;
	assert_int_equal(qp_rlimit_from_name("RLIMIT_NOFILE"), RLIMIT_NOFILE);
	assert_int_equal(qp_rlimit_from_name("RLIMIT_RTTIME"), RLIMIT_RTTIME);
	assert_int_equal(qp_rlimit_from_name("RLIMIT_FOO"), -1);
	assert_int_equal(qp_rlimit_from_name(NULL), -1);
	assert_string_equal(qp_rlimit_name(RLIMIT_CORE), "RLIMIT_CORE");
	assert_null(qp_rlimit_name(999));
}

static void test_rlimits_validate(void **state)
{
	struct qp_rlimit r[2] = {
		{ .resource = RLIMIT_NOFILE, .type = "RLIMIT_NOFILE", .soft = 10, .hard = 5 },
		{ .resource = RLIMIT_CORE, .type = "RLIMIT_CORE", .soft = 0, .hard = 0 },
	};
	qp_error *err = NULL;

	(void)state;
	assert_int_equal(qp_rlimits_validate(r, 2, &err), -1);
	assert_int_equal(err->code, QP_E_INVALID);
	assert_string_equal(err->msg,
			    "process.rlimits[0]: RLIMIT_NOFILE soft limit 10 is above the hard limit 5");
	qp_error_free(&err);

	r[0].soft = 5;
	assert_int_equal(qp_rlimits_validate(r, 2, &err), 0);

	r[1].type = "RLIMIT_NOFILE";
	assert_int_equal(qp_rlimits_validate(r, 2, &err), -1);
	assert_string_equal(err->msg, "process.rlimits[1]: duplicate RLIMIT_NOFILE");
	qp_error_free(&err);

	r[1].type = "RLIMIT_BOGUS";
	assert_int_equal(qp_rlimits_validate(r, 2, &err), -1);
	assert_string_equal(err->msg, "process.rlimits[1].type: unknown rlimit \"RLIMIT_BOGUS\"");
	qp_error_free(&err);

	r[1].type = NULL;
	r[1].resource = 999;
	assert_int_equal(qp_rlimits_validate(r, 2, &err), -1);
	assert_string_equal(err->msg, "process.rlimits[1]: unknown resource 999");
	qp_error_free(&err);
}

static int do_rlimits(void *arg, qp_error **err)
{
	struct qp_rlimit *r = arg;
	return qp_rlimits_apply(r, 1, err);
}

static void test_rlimits_apply(void **state)
{
	/* .type wins over .resource (a parser may fill only the name) */
	struct qp_rlimit r = { .resource = 0, .type = "RLIMIT_NOFILE", .soft = 64, .hard = 128 };
	struct report rep;

	(void)state;
	in_child(do_rlimits, &r, &rep);
	assert_string_equal(rep.msg, "");
	assert_int_equal(rep.rc, 0);
	assert_int_equal(rep.nofile.rlim_cur, 64);
	assert_int_equal(rep.nofile.rlim_max, 128);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cap_names),
		cmocka_unit_test(test_caps_validate),
		cmocka_unit_test(test_caps_check_host),
		cmocka_unit_test(test_drop_privileges),
		cmocka_unit_test(test_drop_everything),
		cmocka_unit_test(test_drop_keeps_caps_when_absent),
		cmocka_unit_test(test_drop_errors),
		cmocka_unit_test(test_no_new_privs),
		cmocka_unit_test(test_rlimit_names),
		cmocka_unit_test(test_rlimits_validate),
		cmocka_unit_test(test_rlimits_apply),
	};
	return cmocka_run_group_tests_name("caps", tests, NULL, NULL);
}
