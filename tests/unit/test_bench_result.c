/* tests/unit/test_bench_result.c — the result format (bench/result.h):
 * statistics (odd and even medians), JSON write -> read round trips, hostile
 * JSON refused with an error naming the field, the file reader's bounds,
 * and the host description. */
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
#include <unistd.h>
#include <cmocka.h>

#include "bench/bench.h"
#include "report/report.h"
#include "result/result.h"
#include "util/cleanup.h"

/* ---- statistics ------------------------------------------------------ */

static void test_stats(void **state)
{
	(void)state;
	const double odd[] = { 5, 1, 3 }, even[] = { 4, 1, 3, 2 }, one[] = { 7.5 };
	struct qp_bench_stats st;
	qp_error *err = NULL;

	assert_int_equal(qp_bench_stats(odd, 3, &st, &err), 0);
	assert_true(st.min == 1 && st.max == 5 && st.avg == 3 && st.median == 3);
	assert_int_equal(qp_bench_stats(even, 4, &st, &err), 0);
	assert_true(st.min == 1 && st.max == 4 && st.avg == 2.5 && st.median == 2.5);
	assert_int_equal(qp_bench_stats(one, 1, &st, &err), 0);
	assert_true(st.min == 7.5 && st.max == 7.5 && st.median == 7.5);
	assert_int_equal(qp_bench_stats(one, 0, &st, &err), -1);
	assert_non_null(err);
	qp_error_free(&err);
}

static void test_num_str(void **state)
{
	(void)state;
	char buf[32];

	qp_bench_num_str(12.5, buf);
	assert_string_equal(buf, "12.5");
	qp_bench_num_str(0.1, buf);
	assert_string_equal(buf, "0.1");
	qp_bench_num_str(1.0 / 3, buf);
	assert_true(strtod(buf, NULL) == 1.0 / 3);
}

/* ---- round trip -------------------------------------------------------- */

static struct qp_bench_report *sample_report(void)
{
	struct qp_bench_report *r = NULL;
	struct qp_bench_result *res;
	qp_error *err = NULL;

	if (qp_bench_report_new("start", "vm", "tcg", &r, &err) < 0)
		fail_msg("new: %s", err->msg);
	assert_int_equal(qp_bench_report_new("boot", "vm", "tcg", &(struct qp_bench_report *){ NULL }, &err), -1);
	qp_error_free(&err);
	assert_int_equal(qp_bench_set(&r->host.cpu, "Test CPU \"quoted\" <x>", &err), 0);
	r->host.cores = 2;
	r->host.mem_mb = 4096;
	assert_int_equal(qp_bench_set(&r->host.kernel, "6.1.0", &err), 0);
	assert_int_equal(qp_bench_param_num(r, "runs", 3, &err), 0);
	assert_int_equal(qp_bench_param_str(r, "image", "busybox", &err), 0);
	assert_int_equal(qp_bench_param_num(r, "runs", 4, &err), 0); /* replaces */
	assert_int_equal(r->n_params, 2);
	assert_int_equal(qp_bench_result_add(r, "qpod", "start_ms", "ms", &res, &err), 0);
	for (int i = 0; i < 4; i++)
		assert_int_equal(qp_bench_sample(res, 370.25 + i * 0.1, &err), 0);
	assert_int_equal(qp_bench_sample(res, 1.0 / 0.0, &err), -1);
	qp_error_free(&err);
	assert_int_equal(qp_bench_result_add(r, "seabios", "start_ms", "ms", &res, &err), 0);
	assert_int_equal(qp_bench_result_tag(res, "vm", "boot", &err), 0);
	assert_int_equal(qp_bench_sample(res, 709, &err), 0);
	assert_int_equal(qp_bench_result_add(r, "empty", "rss_mb", "MB", &res, &err), 0);
	/* a peer that refused the host: no samples, its reason */
	assert_int_equal(qp_bench_set(&res->reason, "exited with status 1: \"no\"", &err), 0);
	assert_int_equal(qp_bench_phase(r, "qpod", "prepare", 1.25, &err), 0);
	assert_int_equal(qp_bench_phase(r, "seabios", "prepare", 1.5, &err), 0);
	assert_int_equal(qp_bench_phase(r, "qpod", "kernel", 250, &err), 0);
	r->has_count = true;
	r->count = 7;
	assert_int_equal(qp_bench_set(&r->stop_reason, "--max reached", &err), 0);
	assert_int_equal(qp_bench_set(&r->definitions, "start: ...\nline two", &err), 0);
	return r;
}

static char *to_json(const struct qp_bench_report *r)
{
	char *text = NULL;
	size_t len = 0;
	qp_error *err = NULL;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	if (qp_bench_report_write_json(r, f, &err) < 0)
		fail_msg("write: %s", err->msg);
	fclose(f);
	return text;
}

static struct qp_bench_report *parse_ok(const char *text)
{
	struct qp_bench_report *r = NULL;
	qp_error *err = NULL;

	if (qp_bench_report_parse(text, strlen(text), &r, &err) < 0)
		fail_msg("parse: %s\n%.300s", err->msg, text);
	return r;
}

static void test_round_trip(void **state)
{
	(void)state;
	struct qp_bench_report *r = sample_report(), *back;
	_cleanup_free_ char *t1 = to_json(r), *t2 = NULL;

	back = parse_ok(t1);
	t2 = to_json(back);
	assert_string_equal(t1, t2);
	assert_string_equal(back->scenario, "start");
	assert_int_equal(back->n_results, 3);
	assert_int_equal(back->results[0]->n, 4);
	assert_true(back->results[0]->samples[1] == 370.35);
	assert_string_equal(back->results[1]->target, "vm");
	assert_string_equal(back->results[1]->test, "boot");
	assert_null(back->results[0]->target);
	assert_int_equal(back->results[2]->n, 0);
	assert_string_equal(back->results[2]->reason, "exited with status 1: \"no\"");
	assert_null(back->results[0]->reason);
	assert_int_equal(back->n_phases, 3);
	assert_non_null(qp_bench_result_find(back, "seabios", "start_ms"));
	assert_null(qp_bench_result_find(back, "seabios", "rss_mb"));
	assert_true(back->has_count && back->count == 7);
	assert_string_equal(back->definitions, "start: ...\nline two");
	assert_string_equal(back->host.cpu, "Test CPU \"quoted\" <x>");
	assert_null(back->host.qemu);
	/* the statistics are in the text, phases grouped by name */
	assert_non_null(strstr(t1, "\"median\": 370.4"));
	assert_non_null(strstr(t1, "\"qpod\": {"));
	assert_non_null(strstr(t1, "\"min\": null"));
	qp_bench_report_free(r);
	qp_bench_report_free(back);
}

/* ---- hostile input ---------------------------------------------------- */

#define HOST "\"host\":{\"cpu\":\"c\",\"cores\":2,\"mem_mb\":1,\"kernel\":\"k\",\"qemu\":null}"
#define RES "{\"name\":\"q\",\"metric\":\"start_ms\",\"unit\":\"ms\",\"n\":2,\"min\":1,\"max\":2,\"avg\":1.5,\"median\":1.5,\"samples\":[1,2]}"
#define TOP(tool, scen) "{\"tool\":" tool ",\"version\":\"0.1\",\"scenario\":" scen ",\"mode\":\"vm\",\"accel\":\"kvm\","
/* a document whose only result is {FIELDS} */
#define ONE_RESULT(fields) TOP("\"qpod\"", "\"start\"") HOST ",\"params\":{},\"results\":[{" fields "}]}"
#define XMU "\"name\":\"x\",\"metric\":\"m\",\"unit\":\"u\","
#define STATS1 "\"n\":1,\"min\":1,\"max\":1,\"avg\":1,\"median\":1,"
#define GOOD_REST HOST ",\"params\":{\"runs\":2},\"results\":[" RES "],\"phases\":{},\"partial\":false}"

static void expect_bad(const char *json, const char *want)
{
	struct qp_bench_report *r = NULL;
	qp_error *err = NULL;

	if (qp_bench_report_parse(json, strlen(json), &r, &err) == 0)
		fail_msg("accepted: %s (expected \"%s\")", json, want);
	assert_null(r);
	assert_int_equal(err->code, QP_E_INVALID);
	if (!strstr(err->msg, want))
		fail_msg("error \"%s\" does not contain \"%s\"", err->msg, want);
	assert_null(strchr(err->msg, '\n'));
	qp_error_free(&err);
}

static void test_hostile(void **state)
{
	(void)state;
	struct qp_bench_report *r = parse_ok(TOP("\"qpod\"", "\"start\"") GOOD_REST);
	qp_bench_report_free(r);

	expect_bad("", "parse error");
	expect_bad("[1,2]", "expected a JSON object");
	expect_bad("{\"tool\": \"qpod\"", "parse error");
	expect_bad(TOP("\"other\"", "\"start\"") GOOD_REST, "not a qpod result file");
	expect_bad("{\"ociVersion\": \"1.0.2\", \"process\": {}}", "not a qpod result file");
	expect_bad(TOP("\"qpod\"", "7") GOOD_REST, "scenario: expected a string");
	expect_bad(TOP("\"qpod\"", "\"boot\"") GOOD_REST, "scenario: unknown value");
	expect_bad("{\"tool\":\"qpod\",\"scenario\":\"start\"}", "version: missing");
	expect_bad(TOP("\"qpod\"", "\"start\"") "\"params\":{},\"results\":[],\"phases\":{},\"partial\":false}",
		   "host: missing");
	expect_bad(TOP("\"qpod\"", "\"start\"") "\"host\":{\"cpu\":1}}", "host.cpu: expected a string");
	expect_bad(TOP("\"qpod\"", "\"start\"") "\"host\":{\"cores\":-1}}", "host.cores: expected a non-negative integer");
	expect_bad(TOP("\"qpod\"", "\"start\"") HOST ",\"params\":{\"a\":[1]}}", "params.a: expected a number or a string");
	expect_bad(TOP("\"qpod\"", "\"start\"") HOST ",\"params\":{},\"results\":{}}", "results: expected an array");
	expect_bad(TOP("\"qpod\"", "\"start\"") HOST ",\"params\":{},\"results\":[" RES ",{\"name\":\"x\",\"metric\":\"m\"}]}",
		   "results[1].unit: missing");
	expect_bad(ONE_RESULT(XMU STATS1 "\"samples\":[1],\"reason\":7"), "results[0].reason: expected a string");
	expect_bad(ONE_RESULT(XMU "\"n\":3,\"samples\":[1]"),
		   "results[0].n: 3, but there are 1 samples");
	expect_bad(ONE_RESULT(XMU "\"n\":1,\"min\":\"a\",\"max\":1,\"avg\":1,\"median\":1,\"samples\":[1]"),
		   "results[0].min: expected a number");
	expect_bad(ONE_RESULT(XMU STATS1 "\"samples\":[\"1\"]"),
		   "results[0].samples[0]: expected a number");
	expect_bad(ONE_RESULT(XMU STATS1 "\"samples\":[1e999]"),
		   "results[0].samples[0]: expected a number");
	expect_bad(TOP("\"qpod\"", "\"start\"") HOST ",\"params\":{},\"results\":[],\"phases\":{\"q\":{\"kernel\":\"fast\"}}}",
		   "phases.q.kernel: expected a number");
	expect_bad(TOP("\"qpod\"", "\"start\"") HOST ",\"params\":{},\"results\":[],\"phases\":{},\"partial\":1}",
		   "partial: expected true or false");
	expect_bad(TOP("\"qpod\"", "\"start\"") HOST ",\"params\":{},\"results\":[],\"phases\":{}}", "partial: missing");
	expect_bad(TOP("\"qpod\"", "\"start\"") HOST ",\"params\":{},\"results\":[],\"phases\":{},\"partial\":false,\"count\":\"9\"}",
		   "count: expected a non-negative integer");

	/* deep nesting and over-long strings */
	char deep[400];
	memset(deep, '[', sizeof(deep) - 1);
	deep[sizeof(deep) - 1] = '\0';
	expect_bad(deep, "nested deeper");
	char *longname = NULL;
	assert_true(asprintf(&longname, ONE_RESULT("\"name\":\"%0300d\""), 0) > 0);
	expect_bad(longname, "results[0].name: longer than 256 bytes");
	free(longname);
}

static void test_read_file(void **state)
{
	(void)state;
	char dir[] = "/tmp/qpod-test-result.XXXXXX", path[64];
	struct qp_bench_report *r = NULL;
	qp_error *err = NULL;
	FILE *f;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/r.json", dir);
	assert_int_equal(qp_bench_report_read_json(path, &r, &err), -1);
	assert_int_equal(err->code, QP_E_NOTFOUND);
	qp_error_free(&err);
	assert_int_equal(qp_bench_report_read_json(dir, &r, &err), -1);
	assert_non_null(strstr(err->msg, "not a regular file"));
	qp_error_free(&err);

	assert_non_null(f = fopen(path, "w"));
	fputs(TOP("\"qpod\"", "\"start\"") GOOD_REST, f);
	fclose(f);
	assert_int_equal(qp_bench_report_read_json(path, &r, &err), 0);
	qp_bench_report_free(r);
	r = NULL;

	assert_int_equal(truncate(path, QP_BENCH_MAX_FILE + 1), 0);
	assert_int_equal(qp_bench_report_read_json(path, &r, &err), -1);
	assert_non_null(strstr(err->msg, "larger than"));
	assert_non_null(strstr(err->msg, path));
	qp_error_free(&err);
	unlink(path);
	rmdir(dir);
}

/* the warm-up is not a round: "warm-up 1/1", then "round 1/3" */
static void test_round_progress(void **state)
{
	char buf[128];

	(void)state;
	qp_bench_round_progress_text(buf, sizeof(buf), "bench start", 0, 1, 3);
	assert_string_equal(buf, "bench start: warm-up 1/1");
	qp_bench_round_progress_text(buf, sizeof(buf), "bench start", 1, 1, 3);
	assert_string_equal(buf, "bench start: round 1/3");
	qp_bench_round_progress_text(buf, sizeof(buf), "bench start", 3, 1, 3);
	assert_string_equal(buf, "bench start: round 3/3");
	qp_bench_round_progress_text(buf, sizeof(buf), "x", 0, 0, 2);
	assert_string_equal(buf, "x: round 1/2");
}

/* tables and CSV: at most two decimals, no trailing zeros */
static void test_report_round(void **state)
{
	static const struct {
		double v;
		const char *want;
	} cases[] = { { 22915.17578125, "22915.18" }, { 10.957371999975294, "10.96" }, { 2, "2" },
		      { 23349.8, "23349.8" }, { 0, "0" }, { -1.5, "-1.5" }, { 0.00123, "0.0012" },
		      { 1684.4973333333335, "1684.5" } };
	char buf[32];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		qp_report_round(cases[i].v, buf);
		assert_string_equal(buf, cases[i].want);
	}
}

static void test_host(void **state)
{
	(void)state;
	struct qp_bench_host h = { 0 };
	qp_error *err = NULL;

	assert_int_equal(qp_bench_host_describe(&h, &err), 0);
	assert_true(h.cores >= 1);
	assert_true(h.mem_mb > 0);
	assert_non_null(h.kernel);
	/* qemu is optional: when present it is its first line only */
	if (h.qemu)
		assert_null(strchr(h.qemu, '\n'));
	qp_bench_host_clear(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stats),     cmocka_unit_test(test_num_str),
		cmocka_unit_test(test_round_trip), cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_read_file), cmocka_unit_test(test_host),
		cmocka_unit_test(test_round_progress), cmocka_unit_test(test_report_round),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
