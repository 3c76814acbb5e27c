/* tests/unit/test_hooks.c — the OCI hook runner (runtime/hooks.c) on real
 * processes: the state on stdin, argv and env, every way a hook fails and
 * the one-line error it gives, timeouts (the hook's process group is
 * killed), output that outlives the hook, a state larger than a pipe, and
 * the wait budget. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "hooks.h"
#include "util/cleanup.h"
#include "util/strv.h"
#include "util/clock.h"

static char tmpdir[] = "/tmp/qpod-test-hooks.XXXXXX";

static int setup_dir(void **state)
{
	(void)state;
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int remove_dir(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

/* tmpdir/name, in a static buffer (one at a time) */
static const char *tmp(const char *name)
{
	static char buf[256];
	snprintf(buf, sizeof(buf), "%s/%s", tmpdir, name);
	return buf;
}

static char *slurp(const char *path)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = fopen(path, "re");

	if (!f)
		return NULL;
	text = calloc(1, 1 << 20);
	len = fread(text, 1, (1 << 20) - 1, f);
	text[len] = '\0';
	fclose(f);
	return text;
}

/* A spec with one hook of `kind`: /bin/sh -c SCRIPT (args NULL: path = script file) */
static struct pod_spec *spec_with(enum qp_hook_kind kind, size_t n)
{
	struct pod_spec *s = calloc(1, sizeof(*s));

	assert_non_null(s);
	s->hooks[kind] = calloc(n, sizeof(struct qp_hook));
	s->n_hooks[kind] = n;
	return s;
}

static void set_sh(struct qp_hook *h, const char *script)
{
	char *argv[] = { "sh", "-c", (char *)script, "hook-argv0", NULL };
	h->path = strdup("/bin/sh");
	h->args = qp_strv_dup(argv);
}

/* A spec whose one `kind` hook is the shell script printf(fmt, ...). */
static struct pod_spec *spec_sh(enum qp_hook_kind kind, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static struct pod_spec *spec_sh(enum qp_hook_kind kind, const char *fmt, ...)
{
	struct pod_spec *s = spec_with(kind, 1);
	char script[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(script, sizeof(script), fmt, ap);
	va_end(ap);
	set_sh(&s->hooks[kind][0], script);
	return s;
}

/* The pid a hook wrote into tmpdir/name. */
static pid_t read_pid(const char *name)
{
	_cleanup_free_ char *text = slurp(tmp(name));
	pid_t pid;

	assert_non_null(text);
	pid = (pid_t)atoi(text);
	assert_true(pid > 0);
	return pid;
}

static const struct qp_kv annotations[] = { { "org.example.key", "value \"quoted\"" } };
static const struct qp_oci_state st = { .id = "pod-1", .status = QP_STATUS_CREATING, .pid = 4242,
					.bundle = "/srv/bundle", .annotations = annotations,
					.n_annotations = 1 };

static char *run_err(struct pod_spec *s, enum qp_hook_kind kind)
{
	qp_error *err = NULL;
	char *msg;

	if (qp_hooks_run(s, kind, &st, NULL, &err) == 0)
		fail_msg("the hooks succeeded, a failure was expected");
	assert_non_null(err);
	assert_null(strchr(err->msg, '\n'));
	msg = strdup(err->msg);
	qp_error_free(&err);
	return msg;
}

static void run_ok(struct pod_spec *s, enum qp_hook_kind kind, char *const *env_default)
{
	qp_error *err = NULL;

	if (qp_hooks_run(s, kind, &st, env_default, &err) < 0)
		fail_msg("hooks failed: %s", err->msg);
}

static void expect_contains(const char *text, const char *want)
{
	if (!text || !strstr(text, want))
		fail_msg("\"%s\" does not contain \"%s\"", text ? text : "(null)", want);
}

static void test_state_args_env(void **state)
{
	(void)state;
	char script[512], cwd[256];
	struct pod_spec *s = spec_with(QP_HOOK_CREATE_RUNTIME, 2);
	char *const env_default[] = { "FROM_DEFAULT=yes", NULL };
	_cleanup_free_ char *in = NULL, *out = NULL;

	snprintf(script, sizeof(script), "cat > %s/stdin; { echo \"$0\"; /usr/bin/env; } > %s/out", tmpdir,
		 tmpdir);
	set_sh(&s->hooks[QP_HOOK_CREATE_RUNTIME][0], script);
	s->hooks[QP_HOOK_CREATE_RUNTIME][0].env = qp_strv_dup((char *[]){ "FOO=bar", NULL });
	/* the second hook: no env of its own, so env_default */
	snprintf(script, sizeof(script), "echo \"$FROM_DEFAULT\" >> %s/out", tmpdir);
	set_sh(&s->hooks[QP_HOOK_CREATE_RUNTIME][1], script);
	run_ok(s, QP_HOOK_CREATE_RUNTIME, env_default);
	in = slurp(tmp("stdin"));
	assert_non_null(in);
	assert_string_equal(in, "{\"ociVersion\":\"1.2.0\",\"id\":\"pod-1\",\"status\":\"creating\",\"pid\":4242,"
				"\"bundle\":\"/srv/bundle\",\"annotations\":{\"org.example.key\":\"value \\\"quoted\\\"\"}}");
	out = slurp(tmp("out"));
	/* args[0] is argv[0]; env is exactly the hook's (the shell adds PWD:
	 * a hook runs where qpod runs, as under runc) */
	snprintf(script, sizeof(script), "hook-argv0\nFOO=bar\nPWD=%s\nyes\n", getcwd(cwd, sizeof(cwd)));
	assert_string_equal(out, script);
	spec_free(s);
}

/* no args: argv is { path }; no env and no default: qpod's environment */
static void test_defaults(void **state)
{
	(void)state;
	char text[512];
	struct pod_spec *s = spec_with(QP_HOOK_POSTSTOP, 1);
	_cleanup_free_ char *out = NULL, *script = strdup(tmp("script.sh"));
	FILE *f = fopen(script, "we");

	assert_non_null(f);
	fprintf(f, "#!/bin/sh\necho \"$0|$#|$QP_TEST_INHERITED\" > %s/defaults\n", tmpdir);
	fclose(f);
	assert_int_equal(chmod(script, 0755), 0);
	setenv("QP_TEST_INHERITED", "inherited", 1);
	s->hooks[QP_HOOK_POSTSTOP][0].path = strdup(script);
	run_ok(s, QP_HOOK_POSTSTOP, NULL);
	out = slurp(tmp("defaults"));
	snprintf(text, sizeof(text), "%s|0|inherited\n", script);
	assert_string_equal(out, text);
	spec_free(s);
}

static void test_failures(void **state)
{
	(void)state;
	struct pod_spec *s = spec_with(QP_HOOK_PRESTART, 2);
	char *msg, script[256];

	set_sh(&s->hooks[QP_HOOK_PRESTART][0], "echo 'out\nline'; printf 'err \"x\"' >&2; exit 3");
	snprintf(script, sizeof(script), "touch %s/second", tmpdir);
	set_sh(&s->hooks[QP_HOOK_PRESTART][1], script);
	msg = run_err(s, QP_HOOK_PRESTART);
	assert_string_equal(msg, "prestart hook #0 \"/bin/sh\": exit status 3 (stdout: \"out line\", "
				 "stderr: \"err ?x?\")");
	free(msg);
	/* the first failure stops the list */
	assert_int_equal(access(tmp("second"), F_OK), -1);

	free(s->hooks[QP_HOOK_PRESTART][0].args[2]);
	s->hooks[QP_HOOK_PRESTART][0].args[2] = strdup("kill -9 $$");
	msg = run_err(s, QP_HOOK_PRESTART);
	assert_string_equal(msg, "prestart hook #0 \"/bin/sh\": killed by signal 9 (Killed)");
	free(msg);

	free(s->hooks[QP_HOOK_PRESTART][0].path);
	s->hooks[QP_HOOK_PRESTART][0].path = strdup("/nonexistent/hook");
	msg = run_err(s, QP_HOOK_PRESTART);
	assert_string_equal(msg, "prestart hook #0 \"/nonexistent/hook\": exec: No such file or directory");
	free(msg);
	spec_free(s);

	/* long output is cut */
	s = spec_with(QP_HOOK_POSTSTART, 1);
	set_sh(&s->hooks[QP_HOOK_POSTSTART][0], "i=0; while [ $i -lt 2000 ]; do printf x; i=$((i+1)); done >&2; exit 1");
	msg = run_err(s, QP_HOOK_POSTSTART);
	expect_contains(msg, "poststart hook #0 \"/bin/sh\": exit status 1 (stderr: \"xxxx");
	expect_contains(msg, "xxx...\")");
	assert_true(strlen(msg) < 300);
	free(msg);
	spec_free(s);
}

static bool pid_gone(pid_t pid)
{
	char path[64], buf[512];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "re")))
		return true;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *p = strrchr(buf, ')');
	return p && p[2] == 'Z';
}

/* the timeout kills the hook and what it started */
static void test_timeout(void **state)
{
	(void)state;
	struct pod_spec *s = spec_sh(QP_HOOK_CREATE_CONTAINER, "sleep 30 & echo $! > %s/bgpid; sleep 30",
					 tmpdir);
	long long t0 = qp_now_ns();
	char *msg;
	pid_t bg;

	s->hooks[QP_HOOK_CREATE_CONTAINER][0].timeout = 1;
	msg = run_err(s, QP_HOOK_CREATE_CONTAINER);
	assert_true(qp_now_ns() - t0 < 3000000000LL);
	assert_true(qp_now_ns() - t0 >= 1000000000LL);
	assert_string_equal(msg, "createContainer hook #0 \"/bin/sh\": did not finish within its timeout of 1 s "
				 "(killed)");
	free(msg);
	bg = read_pid("bgpid");
	for (int i = 0; i < 100 && !pid_gone(bg); i++)
		usleep(10000);
	assert_true(pid_gone(bg));
	spec_free(s);
}

/* a background child holding the hook's stdout does not keep us waiting */
static void test_output_outlives_hook(void **state)
{
	(void)state;
	struct pod_spec *s = spec_sh(QP_HOOK_POSTSTART, "sleep 20 & echo $! > %s/holder; echo hi", tmpdir);
	long long t0 = qp_now_ns();
	pid_t holder;

	run_ok(s, QP_HOOK_POSTSTART, NULL);
	assert_true(qp_now_ns() - t0 < 2000000000LL);
	holder = read_pid("holder");
	kill(-holder, SIGKILL);
	kill(holder, SIGKILL);
	spec_free(s);
}

/* a state larger than a pipe's default 64 KiB, to a hook that reads it all
 * and to one that reads nothing */
static void test_large_state(void **state)
{
	(void)state;
	struct pod_spec *s = spec_with(QP_HOOK_START_CONTAINER, 2);
	struct qp_kv big[1] = { { "big", NULL } };
	struct qp_oci_state large = st;
	char script[256];
	qp_error *err = NULL;
	struct stat sb;

	big[0].value = malloc(300000);
	memset(big[0].value, 'a', 299999);
	big[0].value[299999] = '\0';
	large.annotations = big;
	snprintf(script, sizeof(script), "cat > %s/large", tmpdir);
	set_sh(&s->hooks[QP_HOOK_START_CONTAINER][0], script);
	set_sh(&s->hooks[QP_HOOK_START_CONTAINER][1], "exit 0");
	if (qp_hooks_run(s, QP_HOOK_START_CONTAINER, &large, NULL, &err) < 0)
		fail_msg("hooks failed: %s", err->msg);
	assert_int_equal(stat(tmp("large"), &sb), 0);
	assert_true(sb.st_size > 300000);
	free(big[0].value);
	spec_free(s);
}

static void test_wait_budget(void **state)
{
	(void)state;
	struct pod_spec *s = spec_with(QP_HOOK_CREATE_CONTAINER, 2);

	assert_int_equal(qp_hooks_wait_ms(s, QP_HOOK_START_CONTAINER, 500), 500);
	s->hooks[QP_HOOK_CREATE_CONTAINER][0].timeout = 2;
	assert_int_equal(qp_hooks_wait_ms(s, QP_HOOK_CREATE_CONTAINER, 500), -1);
	s->hooks[QP_HOOK_CREATE_CONTAINER][1].timeout = 3;
	assert_int_equal(qp_hooks_wait_ms(s, QP_HOOK_CREATE_CONTAINER, 500), 5500);
	s->hooks[QP_HOOK_CREATE_CONTAINER][1].timeout = INT32_MAX;
	assert_int_equal(qp_hooks_wait_ms(s, QP_HOOK_CREATE_CONTAINER, 500), -1);
	spec_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_state_args_env),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_failures),
		cmocka_unit_test(test_timeout),
		cmocka_unit_test(test_output_outlives_hook),
		cmocka_unit_test(test_large_state),
		cmocka_unit_test(test_wait_budget),
	};
	return cmocka_run_group_tests(tests, setup_dir, remove_dir);
}
