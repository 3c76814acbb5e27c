/* tests/unit/test_workload_index.c — the host-normalised index of a `bench
 * workload` report (report/workload_index.c) on known input: host = 10 per
 * test, the geometric mean per target, scores against latencies (a latency
 * only test counts by its p50_us, lower is better), tests the host did not
 * run left out, and the line printed under the tables. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "report/report.h"
#include "result/result.h"

/* One result of target/test/metric with the given samples. */
static void add(struct qp_bench_report *r, const char *target, const char *test, const char *metric,
		const char *unit, const double *v, size_t n)
{
	struct qp_bench_result *res;
	assert_int_equal(qp_bench_result_add(r, target, metric, unit, &res, NULL), 0);
	assert_int_equal(qp_bench_result_tag(res, target, test, NULL), 0);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(qp_bench_sample(res, v[i], NULL), 0);
}

static struct qp_bench_report *known(void)
{
	struct qp_bench_report *r;
	assert_int_equal(qp_bench_report_new("workload", "both", "tcg", &r, NULL), 0);
	/* int: container at half the host's rate -> 5; vm at twice -> 20 */
	add(r, "host", "int", "score", "DMIPS", (double[]){ 90, 100, 110 }, 3);
	add(r, "container", "int", "score", "DMIPS", (double[]){ 50, 40, 60 }, 3);
	add(r, "vm", "int", "score", "DMIPS", (double[]){ 200 }, 1);
	/* rr_idle: latency only; the container answers in half the time -> 20,
	 * and its p99 (worse) does not count */
	add(r, "host", "rr_idle", "p50_us", "us", (double[]){ 10 }, 1);
	add(r, "host", "rr_idle", "p99_us", "us", (double[]){ 20 }, 1);
	add(r, "container", "rr_idle", "p50_us", "us", (double[]){ 5 }, 1);
	add(r, "container", "rr_idle", "p99_us", "us", (double[]){ 5000 }, 1);
	/* http: the score counts, not the latencies */
	add(r, "host", "http", "score", "req/s", (double[]){ 1000 }, 1);
	add(r, "host", "http", "p50_us", "us", (double[]){ 1 }, 1);
	add(r, "container", "http", "score", "req/s", (double[]){ 1000 }, 1);
	add(r, "container", "http", "p50_us", "us", (double[]){ 1000 }, 1);
	/* a test the host did not run is left out */
	add(r, "vm", "fp", "score", "MWIPS", (double[]){ 1 }, 1);
	return r;
}

static void test_index(void **state)
{
	(void)state;
	struct qp_bench_report *r = known();
	struct qp_workload_index idx[4];

	size_t n = qp_workload_index(r, idx, 4);
	assert_int_equal(n, 3);
	assert_string_equal(idx[0].target, "host");
	assert_true(fabs(idx[0].value - 10) < 1e-9);
	assert_int_equal(idx[0].tests, 3);
	/* container: cbrt(5 * 20 * 10) = 10 */
	assert_string_equal(idx[1].target, "container");
	assert_true(fabs(idx[1].value - 10) < 1e-9);
	assert_int_equal(idx[1].tests, 3);
	assert_string_equal(idx[2].target, "vm");
	assert_true(fabs(idx[2].value - 20) < 1e-9);
	assert_int_equal(idx[2].tests, 1);
	/* room for one target only: the first */
	assert_int_equal(qp_workload_index(r, idx, 1), 1);
	assert_string_equal(idx[0].target, "host");

	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	qp_workload_index_line(r, f);
	fclose(f);
	assert_string_equal(text, "Index (host = 10 for each test, geometric mean per target): host 10.00 (3 tests), "
				  "container 10.00 (3 tests), vm 20.00 (1 test)\n");
	free(text);
	qp_bench_report_free(r);
}

static void test_no_host(void **state)
{
	(void)state;
	struct qp_bench_report *r;
	struct qp_workload_index idx[4];

	assert_int_equal(qp_bench_report_new("workload", "both", "none", &r, NULL), 0);
	add(r, "container", "int", "score", "DMIPS", (double[]){ 5 }, 1);
	assert_int_equal(qp_workload_index(r, idx, 4), 0);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	qp_workload_index_line(r, f);
	fclose(f);
	assert_string_equal(text, "");
	free(text);
	qp_bench_report_free(r);
}

static void test_lower_is_better(void **state)
{
	(void)state;
	struct qp_bench_result a = { .metric = "score", .unit = "us" }, b = { .metric = "gap_ms", .unit = "x" },
			       c = { .metric = "score", .unit = "req/s" };
	assert_true(qp_result_lower_is_better(&a));
	assert_true(qp_result_lower_is_better(&b));
	assert_false(qp_result_lower_is_better(&c));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_index),
		cmocka_unit_test(test_no_host),
		cmocka_unit_test(test_lower_is_better),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
