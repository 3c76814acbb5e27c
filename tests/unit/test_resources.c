/* tests/unit/test_resources.c — the parsers `qpod update` and `qpod events`
 * add: the strict LinuxResources JSON parser (types, unknown and
 * unappliable fields, devices, NUL bytes), merge and comparison of
 * resources, runc's update flags, decimal integers and Go durations. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cli/cli.h"
#include "spec/resources.h"

static void parse_ok(const char *json, struct qp_resources *r)
{
	qp_error *err = NULL;
	int rc = spec_resources_parse_text(json, strlen(json), "--resources", r, &err);

	if (rc < 0)
		print_message("%s: %s\n", json, err->msg);
	assert_int_equal(rc, 0);
}

/* fails, and the message contains want */
static void parse_bad(const char *json, size_t len, const char *want)
{
	struct qp_resources r = { 0 };
	qp_error *err = NULL;

	assert_int_equal(spec_resources_parse_text(json, len, "--resources", &r, &err), -1);
	assert_non_null(err);
	assert_int_equal(err->code, QP_E_INVALID);
	if (!strstr(err->msg, want))
		print_message("%s: got \"%s\", want \"%s\"\n", json, err->msg, want);
	assert_non_null(strstr(err->msg, want));
	qp_error_free(&err);
	spec_resources_clear(&r);
}
#define BAD(json, want) parse_bad(json, strlen(json), want)

static void test_parse_fields(void **state)
{
	struct qp_resources r = { 0 };

	(void)state;
	parse_ok("{\"memory\": {\"limit\": 134217728, \"swap\": -1, \"checkBeforeUpdate\": true},"
		 " \"cpu\": {\"shares\": 18446744073709551615, \"quota\": -1, \"period\": 100000,"
		 " \"cpus\": \"0-1\", \"mems\": \"0\"}, \"pids\": {\"limit\": 7}}",
		 &r);
	assert_true(r.has_memory_limit && r.has_memory_swap && r.memory_check_before_update);
	assert_int_equal(r.memory_limit, 134217728);
	assert_int_equal(r.memory_swap, -1);
	assert_true(r.has_cpu_shares);
	assert_true(r.cpu_shares == UINT64_MAX);
	assert_int_equal(r.cpu_quota, -1);
	assert_int_equal(r.cpu_period, 100000);
	assert_string_equal(r.cpuset_cpus, "0-1");
	assert_string_equal(r.cpuset_mems, "0");
	assert_int_equal(r.pids_limit, 7);
	spec_resources_clear(&r);

	/* null is absent; empty unsupported sections and device rules pass */
	parse_ok("{\"memory\": null, \"cpu\": {\"quota\": null}, \"blockIO\": {\"weight\": 0},"
		 " \"hugepageLimits\": [], \"unified\": {}, \"network\": {\"classID\": 0},"
		 " \"devices\": [{\"allow\": false, \"access\": \"rwm\"}]}",
		 &r);
	assert_false(r.has_memory_limit || r.has_cpu_quota);
	parse_ok("{}", &r);
	spec_resources_clear(&r);
}

static void test_parse_refusals(void **state)
{
	(void)state;
	BAD("{\"memory\": {\"limit\": \"big\"}}", "--resources: memory.limit: expected an integer");
	BAD("{\"memory\": {\"limit\": 1.5}}", "memory.limit: expected an integer");
	BAD("{\"memory\": {\"limit\": 9223372036854775808}}", "memory.limit: expected an integer");
	BAD("{\"cpu\": {\"shares\": -5}}", "cpu.shares: expected an integer in 0..");
	BAD("{\"cpu\": {\"cpus\": 3}}", "cpu.cpus: expected a string");
	BAD("{\"memory\": {\"checkBeforeUpdate\": 1}}", "checkBeforeUpdate: expected true or false");
	BAD("{\"pids\": 5}", "pids: expected an object");
	BAD("{\"devices\": {}}", "devices: expected an array of objects");
	BAD("{\"devices\": [1]}", "devices[0]: expected an object");
	BAD("{\"devices\": [{\"access\": \"rwm\"}]}", "devices[0].allow: missing");
	BAD("{\"devices\": [{\"allow\": true, \"type\": \"u\", \"access\": \"r\"}]}",
	    "devices[0].type: expected \"a\", \"c\" or \"b\"");
	BAD("{\"devices\": [{\"allow\": true, \"type\": \"c\", \"major\": -2, \"access\": \"r\"}]}",
	    "devices[0].major: expected -1 (any)");
	BAD("{\"devices\": [{\"allow\": true, \"type\": \"c\", \"minor\": 4294967296, \"access\": \"r\"}]}",
	    "devices[0].minor: expected -1 (any)");
	BAD("{\"devices\": [{\"allow\": true, \"type\": \"c\", \"access\": \"rwx\"}]}",
	    "devices[0].access: expected one or more of r, w, m");
	BAD("{\"devices\": [{\"allow\": true, \"type\": \"b\"}]}", "devices[0].access: missing");
	BAD("[1]", "expected a JSON object");
	BAD("7", "expected a JSON object");
	BAD("{\"memory\": ", "parse error");
	BAD("{\"memroy\": {}}", "--resources: unknown field \"memroy\"");
	BAD("{\"memory\": {\"limt\": 1}}", "memory: unknown field \"limt\"");
	BAD("{\"memory\": {\"kernel\": 1048576}}", "memory.kernel: cannot be applied");
	BAD("{\"cpu\": {\"realtimeRuntime\": 5}}", "cpu.realtimeRuntime: cannot be applied");
	BAD("{\"network\": {\"classID\": 10}}", "network: cannot be applied");
	BAD("{\"blockIO\": {\"weightDevice\": [{\"major\": 8}]}}", "blockIO.weightDevice[0].minor: missing");
	BAD("{\"blockIO\": {\"weightDevice\": [{\"major\": 8, \"minor\": 0}]}}", "neither weight nor leafWeight");
	BAD("{\"blockIO\": {\"throttleReadBpsDevice\": [{\"major\": 8, \"minor\": 0}]}}", "rate: missing");
	BAD("{\"blockIO\": {\"throttleReadBpsDevice\": [{\"major\": -1, \"minor\": 0, \"rate\": 1}]}}",
	    "major: expected an integer in 0..4294967295");
	BAD("{\"blockIO\": {\"weight\": -3}}", "blockIO.weight: expected an integer");
	BAD("{\"blockIO\": {\"wieght\": 100}}", "blockIO: unknown field \"wieght\"");
	BAD("{\"hugepageLimits\": [{\"pageSize\": \"2MB\", \"limit\": 2097152}]}", "hugepageLimits: cannot be applied");
	BAD("{\"unified\": {\"../memory.high\": \"1\"}}", "is not a cgroup v2 file name");
	BAD("{\"unified\": {\"memory.high\": 1}}", "expected a one-line string");
	parse_bad("{\"pids\": {}}\0{}", 14, "NUL");
	BAD("{\"cpu\": {\"cpus\": \"0\\u0000junk\"}}", "must not contain NUL");
	BAD("", "empty");
}

static void test_lenient(void **state)
{
	struct qp_resources r = { 0 };
	qp_error *err = NULL;
	yajl_val v = NULL;

	(void)state;
	/* config.json's linux.resources: unknown fields ignored, empty
	 * unsupported ones too (kubelet's zero hugepage limits) */
	assert_int_equal(qp_json_parse("{\"rdma\": {}, \"hugepageLimits\": [{\"pageSize\": \"2MB\", \"limit\": 0}],"
				       " \"memory\": {\"x\": 1, \"limit\": 5}, \"future\": true}",
				       "t", &v, &err), 0);
	assert_int_equal(spec_resources_parse(v, "config.json", "linux.resources", false, &r, &err), 0);
	assert_true(r.has_memory_limit);
	assert_int_equal(r.memory_limit, 5);
	yajl_tree_free(v);
	/* but a setting qpod cannot apply is refused, never ignored */
	assert_int_equal(qp_json_parse("{\"network\": {\"classID\": 10}}", "t", &v, &err), 0);
	assert_int_equal(spec_resources_parse(v, "config.json", "linux.resources", false, &r, &err), -1);
	assert_non_null(strstr(err->msg, "linux.resources.network: cannot be applied"));
	qp_error_free(&err);
	yajl_tree_free(v);
	/* but types are still checked, with the config's path */
	assert_int_equal(qp_json_parse("{\"pids\": {\"limit\": \"x\"}}", "t", &v, &err), 0);
	assert_int_equal(spec_resources_parse(v, "config.json", "linux.resources", false, &r, &err), -1);
	assert_non_null(strstr(err->msg, "config.json: linux.resources.pids.limit: expected an integer"));
	qp_error_free(&err);
	yajl_tree_free(v);
	spec_resources_clear(&r);
}

/* config.json's device rules are kept, in order, with their defaults */
static void test_device_rules(void **state)
{
	struct qp_resources r = { 0 }, m = { 0 };
	qp_error *err = NULL;
	yajl_val v = NULL;

	(void)state;
	assert_int_equal(qp_json_parse("{\"devices\": [{\"allow\": false, \"access\": \"rwm\"},"
				       " {\"allow\": true, \"type\": \"c\", \"major\": 10, \"minor\": 237,"
				       " \"access\": \"rw\"}, {\"allow\": false, \"type\": \"b\", \"access\": \"m\"},"
				       " {\"allow\": true}]}",
				       "t", &v, &err), 0);
	assert_int_equal(spec_resources_parse(v, "config.json", "linux.resources", false, &r, &err), 0);
	yajl_tree_free(v);
	assert_int_equal(r.n_dev_rules, 4);
	assert_false(r.dev_rules[0].allow);
	assert_int_equal(r.dev_rules[0].type, 'a');
	assert_int_equal(r.dev_rules[1].type, 'c');
	assert_int_equal(r.dev_rules[1].major, 10);
	assert_int_equal(r.dev_rules[1].minor, 237);
	assert_int_equal(r.dev_rules[1].access, QP_DEV_READ | QP_DEV_WRITE);
	assert_int_equal(r.dev_rules[2].major, QP_DEV_ANY);
	assert_int_equal(r.dev_rules[2].access, QP_DEV_MKNOD);
	assert_int_equal(r.dev_rules[3].access, QP_DEV_RWM); /* "a" without access: all */
	/* an update keeps the pod's rules (runc's update does not touch them) */
	assert_int_equal(spec_resources_merge(&m, &r), 0);
	assert_int_equal(m.n_dev_rules, 4);
	assert_null(spec_resources_changed(&m, &r));
	m.dev_rules[1].access = QP_DEV_READ;
	assert_string_equal(spec_resources_changed(&m, &r), "devices");
	spec_resources_clear(&m);
	spec_resources_clear(&r);
	/* --resources: checked, not kept */
	parse_ok("{\"devices\": [{\"allow\": true, \"type\": \"c\", \"access\": \"r\"}]}", &r);
	assert_int_equal(r.n_dev_rules, 0);
	spec_resources_clear(&r);
}

static void test_merge_changed(void **state)
{
	struct qp_resources a = { 0 }, u = { 0 }, m = { 0 };

	(void)state;
	a.has_memory_limit = a.has_memory_swap = a.has_pids_limit = a.has_cpu_quota = true;
	a.memory_limit = 64 << 20;
	a.memory_swap = 128 << 20;
	a.pids_limit = 10;
	a.cpu_quota = 50000;
	a.cpuset_cpus = strdup("0");
	assert_int_equal(spec_resources_merge(&m, &a), 0);
	assert_null(spec_resources_changed(&a, &m));
	assert_ptr_not_equal(m.cpuset_cpus, a.cpuset_cpus); /* a copy */

	/* zero quota/memory = unchanged (runc); zero pids = unlimited, taken */
	u.has_cpu_quota = u.has_memory_limit = u.has_pids_limit = true;
	u.cpu_quota = 0;
	u.memory_limit = 0;
	u.pids_limit = 0;
	assert_int_equal(spec_resources_merge(&m, &u), 0);
	assert_int_equal(m.cpu_quota, 50000);
	assert_int_equal(m.memory_limit, 64 << 20);
	assert_string_equal(spec_resources_changed(&a, &m), "pids.limit");

	/* an unlimited memory limit takes a finite swap limit with it */
	u = (struct qp_resources){ .has_memory_limit = true, .memory_limit = -1 };
	assert_int_equal(spec_resources_merge(&m, &u), 0);
	assert_int_equal(m.memory_swap, -1);
	assert_string_equal(spec_resources_changed(&a, &m), "memory.limit");

	u = (struct qp_resources){ .cpuset_mems = "1" };
	spec_resources_clear(&m);
	assert_int_equal(spec_resources_merge(&m, &a), 0);
	assert_int_equal(spec_resources_merge(&m, &u), 0);
	assert_string_equal(spec_resources_changed(&a, &m), "cpu.mems");
	assert_string_equal(m.cpuset_cpus, "0");
	spec_resources_clear(&m);
	spec_resources_clear(&a);
}

static void test_update_flags(void **state)
{
	struct qp_resources r = { 0 };
	qp_error *err = NULL;

	(void)state;
	assert_int_equal(cli_update_flag("memory", "64M", &r, &err), 0);
	assert_int_equal(r.memory_limit, 64 << 20);
	assert_int_equal(cli_update_flag("memory-swap", "-1", &r, &err), 0);
	assert_int_equal(r.memory_swap, -1);
	assert_int_equal(cli_update_flag("cpu-share", "512", &r, &err), 0);
	assert_int_equal(r.cpu_shares, 512);
	assert_int_equal(cli_update_flag("cpu-quota", "-1", &r, &err), 0);
	assert_int_equal(r.cpu_quota, -1);
	assert_int_equal(cli_update_flag("pids-limit", "100", &r, &err), 0);
	assert_int_equal(r.pids_limit, 100);
	assert_int_equal(cli_update_flag("cpuset-cpus", "0-3", &r, &err), 0);
	assert_string_equal(r.cpuset_cpus, "0-3");
	assert_true(r.has_memory_limit && r.has_memory_swap && r.has_cpu_shares && r.has_cpu_quota &&
		    r.has_pids_limit);

	static const char *const bad[][2] = {
		{ "memory", "-5" },	  { "memory", "0" },	     { "memory", "lots" },
		{ "cpu-shares", "-1" },	  { "cpu-period", "1e5" },   { "pids-limit", "x" },
		{ "pids-limit", "" },	  { "cpu-quota", "5s" },     { "blkio-weight", "x" },
		{ "kernel-memory", "1M" }, { "memory-reservation", "soft" }, { "no-such-flag", "1" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(cli_update_flag(bad[i][0], bad[i][1], &r, &err), -1);
		assert_non_null(err);
		assert_int_equal(err->code, QP_E_INVALID);
		qp_error_free(&err);
	}
	spec_resources_clear(&r);
}

static void test_integers(void **state)
{
	int64_t i;
	uint64_t u;
	qp_error *err = NULL;

	(void)state;
	assert_int_equal(cli_parse_i64("-1", "n", &i, &err), 0);
	assert_int_equal(i, -1);
	assert_int_equal(cli_parse_i64("9223372036854775807", "n", &i, &err), 0);
	assert_int_equal(cli_parse_u64("18446744073709551615", "n", &u, &err), 0);
	assert_true(u == UINT64_MAX);
	static const char *const bad[] = { "", "-", "+1", " 1", "1 ", "0x10", "9223372036854775808", "1k" };
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		assert_int_equal(cli_parse_i64(bad[k], "n", &i, &err), -1);
		qp_error_free(&err);
	}
	assert_int_equal(cli_parse_u64("-1", "n", &u, &err), -1);
	qp_error_free(&err);
	assert_int_equal(cli_parse_u64("18446744073709551616", "n", &u, &err), -1);
	qp_error_free(&err);
}

static void test_durations(void **state)
{
	static const struct {
		const char *s;
		int64_t ns;
	} ok[] = {
		{ "5s", 5000000000LL },	   { "250ms", 250000000LL }, { "1m30s", 90000000000LL },
		{ "1.5h", 5400000000000LL }, { "100us", 100000 },      { "100\xc2\xb5s", 100000 },
		{ "7ns", 7 },		   { "0", 0 },		     { "0s", 0 },
		{ ".5s", 500000000LL },
	};
	static const char *const bad[] = { "", "5", "s", "5x", "5 s", "-5s", "1.s.", "1e3s", "99999999999h" };
	qp_error *err = NULL;
	int64_t ns;

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		assert_int_equal(cli_parse_duration(ok[i].s, "--interval", &ns, &err), 0);
		assert_int_equal(ns, ok[i].ns);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (cli_parse_duration(bad[i], "--interval", &ns, &err) == 0)
			print_message("\"%s\" was taken as %lld ns\n", bad[i], (long long)ns);
		assert_non_null(err);
		qp_error_free(&err);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_fields),	cmocka_unit_test(test_parse_refusals),
		cmocka_unit_test(test_lenient),		cmocka_unit_test(test_device_rules),
		cmocka_unit_test(test_merge_changed),
		cmocka_unit_test(test_update_flags),	cmocka_unit_test(test_integers),
		cmocka_unit_test(test_durations),
	};
	return cmocka_run_group_tests_name("resources", tests, NULL, NULL);
}
