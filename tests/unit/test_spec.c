/* tests/unit/test_spec.c — the OCI spec layer: default spec, parse/write
 * round trips, every kind of bad config.json with its error text, bundle
 * loading (symlinks, FIFOs, size bound), semantic validation and the
 * default seccomp profile.  Run under valgrind to check both paths free
 * everything. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "spec/spec.h"
#include "util/cleanup.h"
#include "util/strv.h"

/* A minimal valid config; the error cases splice into it. */
#define MIN_HEAD "{\"ociVersion\": \"1.0.2\", \"root\": {\"path\": \"rootfs\"}, "
#define MIN_PROC "\"process\": {\"args\": [\"sh\"], \"cwd\": \"/\"}"
#define MIN_JSON MIN_HEAD MIN_PROC "}"

static char *data_path(const char *name)
{
	const char *dir = getenv("QP_TEST_DATA");
	char *p = NULL;

	if (!dir)
		dir = access("tests/unit/data", F_OK) == 0 ? "tests/unit/data" : "../tests/unit/data";
	assert_true(asprintf(&p, "%s/%s", dir, name) > 0);
	return p;
}

static struct pod_spec *parse_ok(const char *json)
{
	struct pod_spec *s = NULL;
	qp_error *err = NULL;

	if (spec_parse(json, strlen(json), &s, &err) < 0)
		fail_msg("parse failed: %s\ninput: %.200s", err->msg, json);
	assert_non_null(s);
	return s;
}

static void expect_error(const char *json, size_t len, const char *want)
{
	struct pod_spec *s = (struct pod_spec *)0x1;
	qp_error *err = NULL;

	if (spec_parse(json, len, &s, &err) == 0)
		fail_msg("parse of %.200s succeeded, expected \"%s\"", json, want);
	assert_null(s);
	assert_non_null(err);
	assert_int_equal(err->code, QP_E_INVALID);
	if (!strstr(err->msg, want))
		fail_msg("error \"%s\" does not contain \"%s\"", err->msg, want);
	assert_null(strchr(err->msg, '\n'));
	qp_error_free(&err);
}

#define EXPECT(json, want) expect_error((json), strlen(json), (want))

static char *write_ok(const struct pod_spec *s)
{
	char *text = NULL;
	size_t len = 0;
	qp_error *err = NULL;

	if (spec_write(s, &text, &len, &err) < 0)
		fail_msg("write failed: %s", err->msg);
	assert_int_equal(len, strlen(text));
	return text;
}

/* parse(write(x)) == x, checked as write(parse(write(x))) == write(x):
 * spec_write emits every field, so equal texts mean equal specs. */
static struct pod_spec *round_trip(const struct pod_spec *s)
{
	_cleanup_free_ char *t1 = write_ok(s), *t2 = NULL;
	struct pod_spec *back = parse_ok(t1);

	t2 = write_ok(back);
	assert_string_equal(t1, t2);
	return back;
}

/* ---- default spec ---------------------------------------------------- */

static void test_default_spec(void **state)
{
	(void)state;
	struct pod_spec *s = spec_default(), *back;
	qp_error *err = NULL;

	assert_non_null(s);
	assert_int_equal(spec_validate(s, &err), 0);
	assert_string_equal(s->root_path, "rootfs");
	assert_false(s->root_readonly);
	assert_false(s->process.terminal);
	assert_true(s->process.no_new_privileges);
	assert_int_equal(qp_strv_len(s->process.args), 1);
	assert_string_equal(s->process.args[0], "sh");
	assert_int_equal(qp_strv_len(s->process.caps.bounding), 14);
	assert_int_equal(qp_strv_len(s->process.caps.ambient), 0);
	assert_non_null(s->process.caps.ambient);
	assert_int_equal(s->n_mounts, 7);
	assert_true(s->ns[QP_NS_PID].enabled && s->ns[QP_NS_NET].enabled && s->ns[QP_NS_CGROUP].enabled);
	assert_false(s->ns[QP_NS_USER].enabled);
	assert_int_equal(qp_strv_len(s->masked_paths), 11);
	assert_int_equal(qp_strv_len(s->readonly_paths), 5);
	assert_non_null(s->seccomp);

	back = round_trip(s);
	assert_int_equal(back->process.rlimits[0].resource, RLIMIT_NOFILE);
	assert_int_equal(back->process.rlimits[0].soft, 1024);
	assert_string_equal(back->mounts[2].options[3], "ptmxmode=0666");
	assert_int_equal(back->mounts[2].n_options, 5);
	assert_int_equal(back->opts.mode, QP_MODE_CONTAINER);
	assert_int_equal(spec_validate(back, &err), 0);
	spec_free(back);
	spec_free(s);
}

static void test_default_seccomp(void **state)
{
	(void)state;
	struct qp_seccomp *sc = spec_default_seccomp();
	bool clone3 = false, keyctl = false, personality = false;
	size_t clone_rules = 0;

	assert_non_null(sc);
	assert_string_equal(sc->default_action, "SCMP_ACT_ALLOW");
	assert_int_equal(qp_strv_len(sc->architectures), 3);
	for (size_t i = 0; i < sc->n_rules; i++) {
		struct qp_seccomp_rule *r = &sc->rules[i];
		assert_string_equal(r->action, "SCMP_ACT_ERRNO");
		assert_true(r->has_errno_ret);
		for (size_t j = 0; r->names[j]; j++) {
			if (!strcmp(r->names[j], "clone3")) {
				clone3 = true;
				assert_int_equal(r->errno_ret, ENOSYS);
			} else {
				assert_int_equal(r->errno_ret, EPERM);
			}
			keyctl |= !strcmp(r->names[j], "keyctl");
			personality |= !strcmp(r->names[j], "personality");
			if (!strcmp(r->names[j], "clone")) {
				clone_rules++;
				assert_int_equal(r->n_args, 1);
				assert_int_equal(r->args[0].value, r->args[0].value_two);
				assert_string_equal(r->args[0].op, "SCMP_CMP_MASKED_EQ");
			}
		}
	}
	assert_true(clone3 && keyctl && !personality);
	assert_int_equal(clone_rules, 7);
	spec_seccomp_free(sc);
}

/* ---- good input ------------------------------------------------------ */

static void test_full_config(void **state)
{
	(void)state;
	_cleanup_free_ char *path = data_path("config_full.json");
	_cleanup_free_ char *text = NULL;
	struct pod_spec *s, *back;
	qp_error *err = NULL;
	FILE *f = fopen(path, "re");
	long n;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	rewind(f);
	text = malloc((size_t)n + 1);
	assert_int_equal(fread(text, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	text[n] = '\0';

	s = parse_ok(text);
	assert_string_equal(s->oci_version, "1.2.0");
	assert_true(s->root_readonly);
	assert_string_equal(s->hostname, "web-1");
	assert_string_equal(s->domainname, "example.org");
	assert_int_equal(s->process.uid, 1000);
	assert_true(s->process.has_umask);
	assert_int_equal(s->process.umask, 18);
	assert_int_equal(s->process.n_additional_gids, 3);
	assert_int_equal(s->process.additional_gids[2], UINT32_MAX);
	assert_int_equal(s->process.n_rlimits, 3);
	assert_int_equal(s->process.rlimits[1].resource, RLIMIT_CORE);
	assert_true(s->process.rlimits[1].hard == UINT64_MAX);
	assert_int_equal(s->process.oom_score_adj, -500);
	assert_int_equal(qp_strv_len(s->process.caps.inheritable), 0);
	assert_int_equal(s->n_mounts, 10);
	assert_null(s->mounts[0].options);
	assert_null(s->mounts[7].type);
	assert_int_equal(s->n_uid_mappings, 1);
	assert_int_equal(s->uid_mappings[0].host_id, 100000);
	assert_true(s->ns[QP_NS_TIME].enabled);
	assert_string_equal(s->ns[QP_NS_NET].path, "/var/run/netns/web");
	assert_true(s->resources.has_memory_limit);
	assert_int_equal(s->resources.memory_limit, 536870912);
	assert_int_equal(s->resources.cpu_quota, 50000);
	assert_string_equal(s->resources.cpuset_cpus, "0-1");
	assert_int_equal(s->resources.pids_limit, 512);
	assert_int_equal(s->n_sysctl, 2);
	assert_int_equal(s->n_devices, 2);
	assert_int_equal(s->devices[0].type, 'c');
	assert_true(s->devices[0].has_mode && !s->devices[1].has_mode);
	assert_int_equal(s->seccomp->n_rules, 6);
	assert_true(s->seccomp->rules[5].args[0].value == UINT64_MAX);
	assert_int_equal(s->seccomp->rules[5].args[0].index, 1);
	assert_int_equal(s->seccomp->rules[4].errno_ret, 38);
	assert_string_equal(s->rootfs_propagation, "rslave");
	assert_string_equal(s->process.apparmor_profile, "docker-default");
	assert_string_equal(s->process.selinux_label, "");
	assert_string_equal(s->mount_label, "");
	assert_int_equal(s->resources.n_dev_rules, 2);
	assert_false(s->resources.dev_rules[0].allow);
	assert_int_equal(s->resources.dev_rules[0].type, 'a');
	assert_int_equal(s->resources.dev_rules[1].minor, 3);
	assert_int_equal(s->opts.vcpus, 2);
	assert_string_equal(s->opts.net, "bridge");
	assert_string_equal(spec_annotation(s, "io.kubernetes.cri.container-type"), "container");
	assert_null(spec_annotation(s, "nope"));
	assert_int_equal(s->n_hooks[QP_HOOK_PRESTART], 1);
	assert_string_equal(s->hooks[QP_HOOK_PRESTART][0].path, "/usr/bin/true");
	assert_int_equal(s->hooks[QP_HOOK_PRESTART][0].timeout, 5);
	assert_int_equal(s->n_hooks[QP_HOOK_POSTSTOP], 0);
	/* qpod.vcpus means nothing to a container pod: refused, not ignored */
	assert_int_equal(spec_validate(s, &err), -1);
	assert_non_null(strstr(err->msg, "qpod.vcpus is not an option of container pods"));
	qp_error_free(&err);
	s->opts.mode = QP_MODE_VM;
	if (spec_validate(s, &err) < 0)
		fail_msg("validate: %s", err->msg);
	s->opts.mode = QP_MODE_CONTAINER;

	back = round_trip(s);
	assert_true(back->process.rlimits[1].hard == UINT64_MAX);
	assert_int_equal(back->opts.vcpus, 2);
	assert_string_equal(back->process.apparmor_profile, "docker-default");
	assert_int_equal(back->resources.n_dev_rules, 2);
	assert_true(back->resources.dev_rules[1].allow);
	assert_int_equal(back->resources.dev_rules[1].access, QP_DEV_RWM);
	spec_free(back);
	spec_free(s);
}

static void test_minimal_and_versions(void **state)
{
	(void)state;
	static const char *const ok_versions[] = { "1.0", "1.0.0", "1.0.2-dev", "1.1.0", "1.2.0", "1.2.1+x" };
	static const char *const bad_versions[] = { "0.9", "1.3.0", "2.0.0", "1.", "1.10", "", "1.0x" };
	char buf[512], want[128];

	spec_free(parse_ok(MIN_JSON));
	for (size_t i = 0; i < sizeof(ok_versions) / sizeof(*ok_versions); i++) {
		snprintf(buf, sizeof(buf), "{\"ociVersion\": \"%s\", \"root\": {\"path\": \"r\"}, " MIN_PROC "}",
			 ok_versions[i]);
		spec_free(parse_ok(buf));
	}
	for (size_t i = 0; i < sizeof(bad_versions) / sizeof(*bad_versions); i++) {
		snprintf(buf, sizeof(buf), "{\"ociVersion\": \"%s\", \"root\": {\"path\": \"r\"}, " MIN_PROC "}",
			 bad_versions[i]);
		snprintf(want, sizeof(want), "config.json: ociVersion \"%s\" is not supported (1.0.x\u20131.2.x)",
			 bad_versions[i]);
		EXPECT(buf, want);
	}
}

/* hooks: every kind, in the order given, args/env/timeout as written;
 * absent args/env stay absent (hooks.c's defaults), unknown kinds are
 * ignored like any unknown key */
static void test_hooks(void **state)
{
	(void)state;
	struct pod_spec *s, *back;

	s = parse_ok(MIN_HEAD "\"hooks\": {"
			      "\"prestart\": [{\"path\": \"/a\"}, {\"path\": \"/b\", \"args\": [\"b\", \"-x\"]}],"
			      "\"createRuntime\": [{\"path\": \"/c\", \"env\": [\"K=V\"], \"timeout\": 3}],"
			      "\"createContainer\": [{\"path\": \"/d\", \"env\": []}],"
			      "\"startContainer\": [{\"path\": \"/e\"}], \"poststart\": [],"
			      "\"poststop\": [{\"path\": \"/f\"}], \"futureKind\": [{\"x\": 1}]}, " MIN_PROC "}");
	assert_int_equal(s->n_hooks[QP_HOOK_PRESTART], 2);
	assert_string_equal(s->hooks[QP_HOOK_PRESTART][1].path, "/b");
	assert_string_equal(s->hooks[QP_HOOK_PRESTART][1].args[1], "-x");
	assert_null(s->hooks[QP_HOOK_PRESTART][0].args);
	assert_null(s->hooks[QP_HOOK_PRESTART][0].env);
	assert_int_equal(s->hooks[QP_HOOK_PRESTART][0].timeout, 0);
	assert_string_equal(s->hooks[QP_HOOK_CREATE_RUNTIME][0].env[0], "K=V");
	assert_int_equal(s->hooks[QP_HOOK_CREATE_RUNTIME][0].timeout, 3);
	assert_non_null(s->hooks[QP_HOOK_CREATE_CONTAINER][0].env);
	assert_int_equal(qp_strv_len(s->hooks[QP_HOOK_CREATE_CONTAINER][0].env), 0);
	assert_int_equal(s->n_hooks[QP_HOOK_START_CONTAINER], 1);
	assert_int_equal(s->n_hooks[QP_HOOK_POSTSTART], 0);
	assert_string_equal(s->hooks[QP_HOOK_POSTSTOP][0].path, "/f");
	back = round_trip(s);
	assert_int_equal(back->n_hooks[QP_HOOK_PRESTART], 2);
	assert_non_null(back->hooks[QP_HOOK_CREATE_CONTAINER][0].env);
	spec_free(back);
	spec_free(s);
	assert_string_equal(qp_hook_name(QP_HOOK_CREATE_CONTAINER), "createContainer");
	assert_string_equal(qp_hook_name(QP_HOOK_COUNT), "unknown");

	EXPECT(MIN_HEAD "\"hooks\": [], " MIN_PROC "}", "config.json: hooks: expected an object");
	EXPECT(MIN_HEAD "\"hooks\": {\"poststop\": {}}, " MIN_PROC "}",
	       "config.json: hooks.poststop: expected an array of objects");
	EXPECT(MIN_HEAD "\"hooks\": {\"prestart\": [{\"args\": [\"x\"]}]}, " MIN_PROC "}",
	       "config.json: hooks.prestart[0].path: missing");
	EXPECT(MIN_HEAD "\"hooks\": {\"createRuntime\": [{\"path\": \"bin/x\"}]}, " MIN_PROC "}",
	       "config.json: hooks.createRuntime[0].path: must be an absolute path");
	EXPECT(MIN_HEAD "\"hooks\": {\"poststart\": [{\"path\": \"/x\"}, {\"path\": \"/x\", \"timeout\": 0}]}, "
			MIN_PROC "}",
	       "config.json: hooks.poststart[1].timeout: expected an integer in 1..2147483647");
	EXPECT(MIN_HEAD "\"hooks\": {\"startContainer\": [{\"path\": \"/x\", \"timeout\": -5}]}, " MIN_PROC "}",
	       "hooks.startContainer[0].timeout: expected an integer in 1..");
	EXPECT(MIN_HEAD "\"hooks\": {\"createContainer\": [{\"path\": \"/x\", \"env\": [1]}]}, " MIN_PROC "}",
	       "config.json: hooks.createContainer[0].env: expected an array of strings");
	EXPECT(MIN_HEAD "\"hooks\": {\"prestart\": [\"/x\"]}, " MIN_PROC "}",
	       "config.json: hooks.prestart[0]: expected an object");
}

/* opts set from flags survive write + parse as qpod.* annotations */
static void test_opts_round_trip(void **state)
{
	(void)state;
	struct pod_spec *s = spec_default(), *back;

	assert_int_equal(spec_opt_set(s, "qpod.mode", "vm", NULL), 0);
	assert_int_equal(spec_opt_set(s, "qpod.vcpus", "4", NULL), 0);
	assert_int_equal(spec_opt_set(s, "qpod.net", "none", NULL), 0);
	assert_int_equal(spec_opt_set(s, "qpod.vm.accel", "tcg", NULL), 0);
	assert_int_equal(spec_opt_set(s, "qpod.vm.firmware", "seabios", NULL), 0);
	back = round_trip(s);
	assert_int_equal(back->opts.mode, QP_MODE_VM);
	assert_int_equal(back->opts.vcpus, 4);
	assert_string_equal(back->opts.net, "none");
	assert_string_equal(spec_annotation(back, "qpod.mode"), "vm");
	assert_int_equal(back->opts.accel, QP_ACCEL_TCG);
	assert_string_equal(back->opts.firmware, "seabios");
	spec_free(back);
	spec_free(s);

	s = parse_ok(MIN_HEAD "\"annotations\": {\"qpod.mode\": \"vm\"}, " MIN_PROC "}");
	assert_int_equal(s->opts.mode, QP_MODE_VM);
	/* a flag overrides the annotation */
	assert_int_equal(spec_opt_set(s, "qpod.mode", "container", NULL), 0);
	back = round_trip(s);
	assert_int_equal(back->opts.mode, QP_MODE_CONTAINER);
	spec_free(back);
	spec_free(s);
}

static void test_null_and_unknown(void **state)
{
	(void)state;
	struct pod_spec *s = parse_ok(MIN_HEAD "\"hostname\": null, \"mounts\": null, \"newThing\": [1, {}],"
					       "\"linux\": {\"resources\": {\"rdma\": {}, \"memory\": {\"x\": 1}}},"
					       MIN_PROC "}");
	assert_null(s->hostname);
	assert_int_equal(s->n_mounts, 0);
	assert_false(s->resources.has_memory_limit);
	spec_free(s);
}

static void test_write_bad_utf8(void **state)
{
	(void)state;
	struct pod_spec *s = spec_default();
	qp_error *err = NULL;
	char *text = (char *)0x1;

	free(s->process.args[0]);
	s->process.args[0] = strdup("echo\xff");
	assert_int_equal(spec_write(s, &text, NULL, &err), -1);
	assert_null(text);
	assert_non_null(strstr(err->msg, "UTF-8"));
	qp_error_free(&err);
	spec_free(s);
}

/* ---- bad input ------------------------------------------------------- */

static void test_malformed(void **state)
{
	(void)state;
	_cleanup_free_ char *def = NULL;
	struct pod_spec *s = spec_default();

	EXPECT("{\"ociVersion\": \"1.0.2\", \"process\": {", "config.json: parse error: ");
	EXPECT("not json at all", "config.json: parse error: ");
	EXPECT("", "config.json: empty file");
	EXPECT("[1, 2]", "config.json: expected a JSON object");
	EXPECT("\"str\"", "config.json: expected a JSON object");
	expect_error("{\"ociVersion\": \"1.0.2\"}\0garbage", 31, "config.json: contains a NUL byte");
	/* truncated default spec, at many lengths */
	def = write_ok(s);
	spec_free(s);
	for (size_t len = 1; len < strlen(def) - 1; len += 97)
		expect_error(def, len, "config.json: parse error");
	expect_error(def, strlen(def) - 2, "config.json: parse error");
}

static void test_wrong_types(void **state)
{
	(void)state;
	EXPECT(MIN_HEAD "\"process\": {\"args\": \"sh\", \"cwd\": \"/\"}}",
	       "config.json: process.args: expected an array of strings");
	EXPECT(MIN_HEAD "\"process\": {\"args\": [1, 2], \"cwd\": \"/\"}}",
	       "config.json: process.args: expected an array of strings");
	EXPECT("{\"ociVersion\": \"1.0.2\", \"root\": 5, " MIN_PROC "}", "config.json: root: expected an object");
	EXPECT("{\"ociVersion\": \"1.0.2\", \"root\": {\"path\": []}, " MIN_PROC "}",
	       "config.json: root.path: expected a string");
	EXPECT("{\"ociVersion\": 1.0, \"root\": {\"path\": \"r\"}, " MIN_PROC "}",
	       "config.json: ociVersion: expected a string");
	EXPECT(MIN_HEAD "\"process\": {\"args\": [\"sh\"], \"cwd\": \"/\", \"user\": {\"uid\": \"zero\"}}}",
	       "config.json: process.user.uid: expected an integer in 0..4294967295");
	EXPECT(MIN_HEAD "\"process\": {\"args\": [\"sh\"], \"cwd\": \"/\", \"user\": {\"uid\": -1}}}",
	       "config.json: process.user.uid: expected an integer in 0..4294967295");
	EXPECT(MIN_HEAD "\"process\": {\"args\": [\"sh\"], \"cwd\": \"/\", \"user\": {\"gid\": 4294967296}}}",
	       "config.json: process.user.gid: expected an integer in 0..4294967295");
	EXPECT(MIN_HEAD "\"process\": {\"args\": [\"sh\"], \"cwd\": \"/\", \"user\": {\"additionalGids\": [1, \"x\"]}}}",
	       "config.json: process.user.additionalGids[1]: expected an integer");
	EXPECT(MIN_HEAD "\"process\": {\"args\": [\"sh\"], \"cwd\": \"/\", \"env\": {\"A\": \"b\"}}}",
	       "config.json: process.env: expected an array of strings");
	EXPECT(MIN_HEAD "\"process\": {\"args\": [\"sh\"], \"cwd\": \"/\", \"terminal\": \"yes\"}}",
	       "config.json: process.terminal: expected true or false");
	EXPECT(MIN_HEAD "\"process\": {\"args\": [\"sh\"], \"cwd\": \"/\", \"oomScoreAdj\": 1001}}",
	       "config.json: process.oomScoreAdj: expected an integer in -1000..1000");
	EXPECT(MIN_HEAD "\"process\": {\"args\": [\"sh\"], \"cwd\": \"/\", \"capabilities\": {\"bounding\": \"CAP_KILL\"}}}",
	       "config.json: process.capabilities.bounding: expected an array of strings");
	EXPECT(MIN_HEAD "\"process\": {\"args\": [\"sh\"], \"cwd\": \"/\", "
			"\"rlimits\": [{\"type\": \"RLIMIT_NOFILE\", \"soft\": \"x\", \"hard\": 1}]}}",
	       "config.json: process.rlimits[0].soft: expected an integer");
	EXPECT(MIN_HEAD "\"process\": {\"args\": [\"sh\"], \"cwd\": \"/\", "
			"\"rlimits\": [{\"type\": \"RLIMIT_NOFILE\", \"soft\": -1, \"hard\": 1}]}}",
	       "config.json: process.rlimits[0].soft: expected an integer in 0..");
	EXPECT(MIN_HEAD "\"hostname\": 7, " MIN_PROC "}", "config.json: hostname: expected a string");
	EXPECT(MIN_HEAD "\"mounts\": {}, " MIN_PROC "}", "config.json: mounts: expected an array of objects");
	EXPECT(MIN_HEAD "\"mounts\": [{\"destination\": \"/x\", \"options\": [\"ro\", 3]}], " MIN_PROC "}",
	       "config.json: mounts[0].options: expected an array of strings");
	EXPECT(MIN_HEAD "\"mounts\": [{\"type\": \"tmpfs\"}], " MIN_PROC "}",
	       "config.json: mounts[0].destination: missing");
	EXPECT(MIN_HEAD "\"annotations\": {\"a\": 1}, " MIN_PROC "}",
	       "config.json: annotations: expected an object of strings");
	EXPECT(MIN_HEAD "\"linux\": {\"resources\": {\"memory\": {\"limit\": \"big\"}}}, " MIN_PROC "}",
	       "config.json: linux.resources.memory.limit: expected an integer");
	EXPECT(MIN_HEAD "\"linux\": {\"resources\": {\"cpu\": {\"shares\": -5}}}, " MIN_PROC "}",
	       "config.json: linux.resources.cpu.shares: expected an integer in 0..");
	EXPECT(MIN_HEAD "\"linux\": {\"resources\": {\"pids\": 5}}, " MIN_PROC "}",
	       "config.json: linux.resources.pids: expected an object");
	EXPECT(MIN_HEAD "\"linux\": {\"namespaces\": [{\"type\": \"no-such-ns\"}]}, " MIN_PROC "}",
	       "config.json: linux.namespaces[0].type: unknown namespace \"no-such-ns\"");
	EXPECT(MIN_HEAD "\"linux\": {\"uidMappings\": [{\"containerID\": 0, \"hostID\": 1}]}, " MIN_PROC "}",
	       "config.json: linux.uidMappings[0].size: missing");
	EXPECT(MIN_HEAD "\"linux\": {\"sysctl\": [\"a=b\"]}, " MIN_PROC "}",
	       "config.json: linux.sysctl: expected an object of strings");
	EXPECT(MIN_HEAD "\"linux\": {\"seccomp\": {\"syscalls\": []}}, " MIN_PROC "}",
	       "config.json: linux.seccomp.defaultAction: missing");
	EXPECT(MIN_HEAD "\"linux\": {\"seccomp\": {\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": "
			"[{\"names\": [\"x\"], \"action\": \"SCMP_ACT_KILL\", \"args\": [{\"index\": 6, \"op\": \"SCMP_CMP_EQ\"}]}]}}, "
			MIN_PROC "}",
	       "config.json: linux.seccomp.syscalls[0].args[0].index: expected an integer in 0..5");
	EXPECT(MIN_HEAD "\"linux\": {\"seccomp\": {\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": "
			"[{\"names\": [], \"action\": \"SCMP_ACT_KILL\"}]}}, " MIN_PROC "}",
	       "config.json: linux.seccomp.syscalls[0].names: must not be empty");
	EXPECT(MIN_HEAD "\"linux\": {\"devices\": [{\"path\": \"/dev/x\", \"type\": \"q\"}]}, " MIN_PROC "}",
	       "config.json: linux.devices[0].type: expected \"c\", \"b\", \"u\" or \"p\"");
	EXPECT(MIN_HEAD "\"linux\": [], " MIN_PROC "}", "config.json: linux: expected an object");
}

static void test_missing_required(void **state)
{
	(void)state;
	EXPECT("{\"root\": {\"path\": \"r\"}, " MIN_PROC "}", "config.json: ociVersion: missing");
	EXPECT("{\"ociVersion\": \"1.0.2\", " MIN_PROC "}", "config.json: root: missing");
	EXPECT("{\"ociVersion\": \"1.0.2\", \"root\": {\"readonly\": true}, " MIN_PROC "}",
	       "config.json: root.path: missing");
	EXPECT(MIN_HEAD "\"hostname\": \"x\"}", "config.json: process: missing");
	EXPECT(MIN_HEAD "\"process\": {\"cwd\": \"/\"}}", "config.json: process.args: missing");
	EXPECT(MIN_HEAD "\"process\": {\"args\": [], \"cwd\": \"/\"}}", "config.json: process.args: must not be empty");
	EXPECT(MIN_HEAD "\"process\": {\"args\": [\"sh\"]}}", "config.json: process.cwd: missing");
	EXPECT(MIN_HEAD "\"process\": {\"args\": [\"sh\"], \"cwd\": \"tmp\"}}",
	       "config.json: process.cwd: must be an absolute path");
	EXPECT(MIN_HEAD "\"process\": {\"args\": [\"sh\"], \"cwd\": \"/\", \"rlimits\": [{\"type\": \"RLIMIT_NOFILE\", \"hard\": 1}]}}",
	       "config.json: process.rlimits[0].soft: missing");
}

static void test_bounds(void **state)
{
	(void)state;
	size_t n = QP_SPEC_MAX_ITEMS + 1, cap = n * 5 + 256, off;
	_cleanup_free_ char *big = malloc(cap), *huge = NULL, *deep = NULL;

	/* an array one entry over the bound */
	off = (size_t)snprintf(big, cap, MIN_HEAD "\"process\": {\"cwd\": \"/\", \"args\": [");
	for (size_t i = 0; i < n; i++)
		off += (size_t)snprintf(big + off, cap - off, "%s\"a\"", i ? "," : "");
	snprintf(big + off, cap - off, "]}}");
	EXPECT(big, "config.json: process.args: more than 4096 entries");

	/* a file over QP_SPEC_MAX_FILE */
	huge = malloc(QP_SPEC_MAX_FILE + 2);
	memset(huge, ' ', QP_SPEC_MAX_FILE + 1);
	huge[QP_SPEC_MAX_FILE + 1] = '\0';
	expect_error(huge, QP_SPEC_MAX_FILE + 1, "config.json: larger than");

	/* nesting far beyond any config */
	deep = malloc(200000 + 64);
	off = (size_t)sprintf(deep, "{\"ociVersion\": \"1.0.2\", \"x\": ");
	memset(deep + off, '[', 100000);
	memset(deep + off + 100000, ']', 100000);
	strcpy(deep + off + 200000, "}");
	EXPECT(deep, "config.json: nested deeper than");

	/* NUL inside strings, escaped; an escaped backslash before u0000 is fine */
	EXPECT(MIN_HEAD "\"process\": {\"args\": [\"s\\u0000h\"], \"cwd\": \"/\"}}",
	       "config.json: strings must not contain NUL");
	EXPECT(MIN_HEAD "\"annotations\": {\"k\\u0000\": \"v\"}, " MIN_PROC "}",
	       "config.json: strings must not contain NUL");
	spec_free(parse_ok(MIN_HEAD "\"hostname\": \"a\\\\u0000\", " MIN_PROC "}"));
	/* numbers: overflow, fractions, exponents */
	EXPECT(MIN_HEAD "\"process\": {\"args\": [\"sh\"], \"cwd\": \"/\", "
			"\"rlimits\": [{\"type\": \"RLIMIT_NOFILE\", \"soft\": 18446744073709551616, \"hard\": 1}]}}",
	       "config.json: process.rlimits[0].soft: expected an integer");
	EXPECT(MIN_HEAD "\"process\": {\"args\": [\"sh\"], \"cwd\": \"/\", \"user\": {\"uid\": 1.5}}}",
	       "config.json: process.user.uid: expected an integer");
	EXPECT(MIN_HEAD "\"process\": {\"args\": [\"sh\"], \"cwd\": \"/\", \"user\": {\"uid\": 1e3}}}",
	       "config.json: process.user.uid: expected an integer");
	EXPECT(MIN_HEAD "\"linux\": {\"resources\": {\"memory\": {\"limit\": 9223372036854775808}}}, " MIN_PROC "}",
	       "config.json: linux.resources.memory.limit: expected an integer");
}

static void test_semantic_parse_errors(void **state)
{
	(void)state;
	EXPECT(MIN_HEAD "\"linux\": {\"namespaces\": [{\"type\": \"pid\"}, {\"type\": \"uts\"}, {\"type\": \"pid\"}]}, "
			MIN_PROC "}",
	       "config.json: linux.namespaces[2]: duplicate namespace \"pid\"");
	EXPECT(MIN_HEAD "\"process\": {\"args\": [\"sh\"], \"cwd\": \"/\", "
			"\"rlimits\": [{\"type\": \"RLIMIT_NOSUCH\", \"soft\": 1, \"hard\": 1}]}}",
	       "config.json: process.rlimits[0].type: unknown rlimit \"RLIMIT_NOSUCH\"");
	EXPECT(MIN_HEAD "\"process\": {\"args\": [\"sh\"], \"cwd\": \"/\", \"rlimits\": ["
			"{\"type\": \"RLIMIT_NOFILE\", \"soft\": 1, \"hard\": 1},"
			"{\"type\": \"RLIMIT_NOFILE\", \"soft\": 2, \"hard\": 2}]}}",
	       "config.json: process.rlimits[1].type: duplicate rlimit RLIMIT_NOFILE");
	EXPECT(MIN_HEAD "\"annotations\": {\"qpod.mode\": \"kvm\"}, " MIN_PROC "}",
	       "config.json: annotations: qpod.mode must be container or vm, not \"kvm\"");
	EXPECT(MIN_HEAD "\"annotations\": {\"qpod.vcpus\": \"0\"}, " MIN_PROC "}",
	       "config.json: annotations: qpod.vcpus must be a number in 1..255, not \"0\"");
	EXPECT(MIN_HEAD "\"annotations\": {\"qpod.vcpus\": \"4x\"}, " MIN_PROC "}", "qpod.vcpus must be a number in 1..255, not \"4x\"");
	EXPECT(MIN_HEAD "\"annotations\": {\"qpod.net\": \"macvlan\"}, " MIN_PROC "}",
	       "config.json: annotations: qpod.net must be none, bridge or host, not \"macvlan\"");
	EXPECT(MIN_HEAD "\"annotations\": {\"qpod.vm.accel\": \"hvf\"}, " MIN_PROC "}",
	       "config.json: annotations: qpod.vm.accel must be auto, kvm or tcg, not \"hvf\"");
	EXPECT(MIN_HEAD "\"annotations\": {\"qpod.vm.firmware\": \"rel/fw.bin\"}, " MIN_PROC "}",
	       "qpod.vm.firmware must be qpod, qboot, seabios or an absolute path");
	EXPECT(MIN_HEAD "\"annotations\": {\"qpod.net.ip\": \"10.0.0.300\"}, " MIN_PROC "}",
	       "qpod.net.ip must be an IPv4 address");
	EXPECT(MIN_HEAD "\"annotations\": {\"qpod.vm.acel\": \"tcg\"}, " MIN_PROC "}",
	       "config.json: annotations: unknown qpod option \"qpod.vm.acel\"");
	/* hostile text quoted in errors is bounded and printable */
	EXPECT(MIN_HEAD "\"annotations\": {\"qpod.mode\": \"a\\nb\\u0001cccccccccccccccccccccccccccccccccccccccccccccccccccc\"}, "
			MIN_PROC "}",
	       "qpod.mode must be container or vm, not \"a?b?cccccccccccccccccccccccccccccccccccccccccccc...\"");
}

/* ---- spec_validate --------------------------------------------------- */

static void expect_invalid(struct pod_spec *s, const char *want)
{
	qp_error *err = NULL;

	if (spec_validate(s, &err) == 0)
		fail_msg("validate passed, expected \"%s\"", want);
	if (!strstr(err->msg, want))
		fail_msg("error \"%s\" does not contain \"%s\"", err->msg, want);
	assert_int_equal(err->code, QP_E_INVALID);
	qp_error_free(&err);
	spec_free(s);
}

static struct pod_spec *with(const char *mid)
{
	char buf[1024];

	snprintf(buf, sizeof(buf), MIN_HEAD "%s, " MIN_PROC "}", mid);
	return parse_ok(buf);
}

static void test_validate(void **state)
{
	(void)state;
	struct pod_spec *s;
	qp_error *err = NULL;

	s = spec_default();
	qp_strv_free(s->process.args);
	s->process.args = calloc(1, sizeof(char *));
	expect_invalid(s, "process.args: no command to run");

	s = spec_default();
	free(s->process.cwd);
	s->process.cwd = strdup("relative");
	expect_invalid(s, "process.cwd: must be an absolute path");

	expect_invalid(with("\"mounts\": [{\"destination\": \"dev\"}]"),
		       "mounts[0].destination: \"dev\" is not an absolute path");
	s = parse_ok(MIN_HEAD "\"process\": {\"args\": [\"sh\"], \"cwd\": \"/\", \"env\": [\"A=1\", \"NOEQUALS\"]}}");
	expect_invalid(s, "process.env[1]: \"NOEQUALS\" is not NAME=VALUE");
	expect_invalid(with("\"hostname\": \"h\""), "hostname/domainname: need a UTS namespace");
	spec_free(with("\"hostname\": \"h\", \"linux\": {\"namespaces\": [{\"type\": \"uts\"}]}"));
	expect_invalid(with("\"linux\": {\"uidMappings\": [{\"containerID\": 0, \"hostID\": 1000, \"size\": 1}]}"),
		       "need a user namespace");
	expect_invalid(with("\"linux\": {\"namespaces\": [{\"type\": \"user\"}]}"),
		       "required with a new user namespace");
	s = with("\"linux\": {\"namespaces\": [{\"type\": \"user\", \"path\": \"/proc/1/ns/user\"}]}");
	assert_int_equal(spec_validate(s, &err), 0);
	spec_free(s);
	expect_invalid(with("\"linux\": {\"namespaces\": [{\"type\": \"user\"}], "
			    "\"uidMappings\": [{\"containerID\": 4294967295, \"hostID\": 0, \"size\": 2}], "
			    "\"gidMappings\": [{\"containerID\": 0, \"hostID\": 0, \"size\": 1}]}"),
		       "linux.uidMappings: a mapping is empty or overflows");
	expect_invalid(with("\"linux\": {\"resources\": {\"memory\": {\"limit\": 0}}}"),
		       "memory.limit: must be > 0 or -1");
	expect_invalid(with("\"linux\": {\"resources\": {\"memory\": {\"limit\": -2}}}"),
		       "memory.limit: must be > 0 or -1");
	spec_free(with("\"linux\": {\"resources\": {\"memory\": {\"limit\": -1}, \"pids\": {\"limit\": -1}}}"));
	expect_invalid(with("\"linux\": {\"resources\": {\"pids\": {\"limit\": -2}}}"), "pids.limit: must be >= -1");
	expect_invalid(with("\"linux\": {\"resources\": {\"cpu\": {\"quota\": 10}}}"), "cpu.quota");
	expect_invalid(with("\"linux\": {\"resources\": {\"cpu\": {\"period\": 5}}}"), "cpu.period");
	expect_invalid(with("\"linux\": {\"resources\": {\"cpu\": {\"cpus\": \"0-1\\n\"}}}"), "cpu.cpus");
	expect_invalid(with("\"linux\": {\"maskedPaths\": [\"/ok\", \"proc/kcore\"]}"),
		       "linux.maskedPaths[1]: \"proc/kcore\" is not an absolute path");
	expect_invalid(with("\"linux\": {\"readonlyPaths\": [\"sys\"]}"), "linux.readonlyPaths[0]");
	expect_invalid(with("\"linux\": {\"cgroupsPath\": \"/a/../../b\"}"), "linux.cgroupsPath");
	expect_invalid(with("\"linux\": {\"sysctl\": {\"../../etc/x\": \"1\"}}"), "linux.sysctl: bad key");
	expect_invalid(with("\"linux\": {\"rootfsPropagation\": \"sideways\"}"), "linux.rootfsPropagation");
	expect_invalid(with("\"linux\": {\"devices\": [{\"path\": \"dev/x\", \"type\": \"c\"}]}"),
		       "linux.devices[0].path");
	expect_invalid(with("\"process\": {\"args\": [\"sh\"], \"cwd\": \"/\", "
			    "\"rlimits\": [{\"type\": \"RLIMIT_NOFILE\", \"soft\": 2, \"hard\": 1}]}"),
		       "soft limit above hard limit");
}

/* ---- spec_load_bundle ------------------------------------------------ */

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "we");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static void expect_load_error(const char *dir, const char *want)
{
	struct pod_spec *s = NULL;
	qp_error *err = NULL;

	assert_int_equal(spec_load_bundle(dir, &s, &err), -1);
	assert_null(s);
	if (!strstr(err->msg, want))
		fail_msg("error \"%s\" does not contain \"%s\"", err->msg, want);
	qp_error_free(&err);
}

static void test_load_bundle(void **state)
{
	(void)state;
	char dir[] = "/tmp/qpod-test-spec-XXXXXX";
	_cleanup_free_ char *cfg = NULL, *other = NULL;
	struct pod_spec *s = NULL;
	qp_error *err = NULL;
	int fd;

	assert_non_null(mkdtemp(dir));
	assert_true(asprintf(&cfg, "%s/config.json", dir) > 0);
	assert_true(asprintf(&other, "%s/other.json", dir) > 0);

	expect_load_error(dir, "open \"");
	expect_load_error(dir, "No such file or directory");

	write_file(cfg, MIN_JSON);
	assert_int_equal(spec_load_bundle(dir, &s, &err), 0);
	assert_string_equal(s->process.args[0], "sh");
	spec_free(s);

	write_file(cfg, "{\"ociVersion\": \"1.0.2\", \"process\": {");
	expect_load_error(dir, "config.json: parse error");

	/* symlinks are not followed */
	unlink(cfg);
	write_file(other, MIN_JSON);
	assert_int_equal(symlink(other, cfg), 0);
	expect_load_error(dir, "open \"");
	unlink(cfg);

	/* a FIFO does not hang the loader */
	assert_int_equal(mkfifo(cfg, 0600), 0);
	expect_load_error(dir, "not a regular file");
	unlink(cfg);

	/* over the size bound (sparse file) */
	fd = open(cfg, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, QP_SPEC_MAX_FILE + 1), 0);
	close(fd);
	expect_load_error(dir, "larger than");

	unlink(cfg);
	unlink(other);
	assert_int_equal(rmdir(dir), 0);
}

static void test_util(void **state)
{
	(void)state;
	char *v[] = { "a", "bb", NULL };
	char **d = qp_strv_dup(v);

	assert_int_equal(qp_strv_len(d), 2);
	assert_string_equal(d[1], "bb");
	qp_strv_free(d);
	assert_int_equal(qp_strv_len(NULL), 0);
	assert_null(qp_strv_dup(NULL));
	qp_strv_free(NULL);
	spec_free(NULL);
	spec_seccomp_free(NULL);

	for (int i = 0; i < QP_NS_COUNT; i++)
		assert_int_equal(qp_ns_from_name(qp_ns_name(i)), i);
	assert_string_equal(qp_ns_name(QP_NS_NET), "network");
	assert_int_equal(qp_ns_from_name("net"), -1);
	assert_int_equal(qp_ns_from_name(NULL), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_spec),
		cmocka_unit_test(test_default_seccomp),
		cmocka_unit_test(test_full_config),
		cmocka_unit_test(test_minimal_and_versions),
		cmocka_unit_test(test_opts_round_trip),
		cmocka_unit_test(test_hooks),
		cmocka_unit_test(test_null_and_unknown),
		cmocka_unit_test(test_write_bad_utf8),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_wrong_types),
		cmocka_unit_test(test_missing_required),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_semantic_parse_errors),
		cmocka_unit_test(test_validate),
		cmocka_unit_test(test_load_bundle),
		cmocka_unit_test(test_util),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
