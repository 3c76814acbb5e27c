/* runtime/report/workload_index.c — one number per target for a `bench
 * workload` run, as the thesis summarised its tables: each test's result
 * relative to the host's, scaled so the host is 10, and the geometric mean
 * of those over every test that both the target and the host ran.  A
 * test's figure is its "score" (higher is better), or for a test that has
 * none (rr_*: latency only) its median latency p50_us (lower is better,
 * so the host's over the target's).  Medians of the runs throughout. */
#include <math.h>
#include <string.h>

#include "report/report.h"

bool qp_result_lower_is_better(const struct qp_bench_result *res)
{
	static const char *const units[] = { "ms", "us", "ns", "s", "sec", NULL };
	static const char *const ends[] = { "_ms", "_us", "_ns", "_s" };
	size_t len = strlen(res->metric);

	if (qp_bench_one_of(res->unit, units))
		return true;
	for (size_t i = 0; i < sizeof(ends) / sizeof(ends[0]); i++)
		if (len >= strlen(ends[i]) && !strcmp(res->metric + len - strlen(ends[i]), ends[i]))
			return true;
	return false;
}

const struct qp_bench_result *qp_workload_find(const struct qp_bench_report *r, const char *target,
					       const char *test, const char *metric)
{
	for (size_t i = 0; i < r->n_results; i++) {
		const struct qp_bench_result *x = r->results[i];
		if (x->n && x->target && x->test && !strcmp(x->target, target) && !strcmp(x->test, test) &&
		    !strcmp(x->metric, metric))
			return x;
	}
	return NULL;
}

/* The result that stands for test in target (see the top). */
static const struct qp_bench_result *figure(const struct qp_bench_report *r, const char *target,
					    const char *test)
{
	const struct qp_bench_result *x = qp_workload_find(r, target, test, "score");
	return x ? x : qp_workload_find(r, target, test, "p50_us");
}

static double median(const struct qp_bench_result *x)
{
	struct qp_bench_stats s;
	return x && qp_bench_stats(x->samples, x->n, &s, NULL) == 0 ? s.median : 0;
}

size_t qp_workload_index(const struct qp_bench_report *r, struct qp_workload_index *out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < r->n_results; i++) {
		const char *target = r->results[i]->target;
		size_t k;
		if (!target)
			continue;
		for (k = 0; k < n && strcmp(out[k].target, target); k++)
			;
		if (k < n || n == max)
			continue;
		/* a new target: the log-mean of its per-test indexes */
		double sum = 0;
		size_t tests = 0;
		for (size_t j = 0; j < r->n_results; j++) {
			const struct qp_bench_result *t = r->results[j];
			if (!t->target || !t->test || strcmp(t->target, target) || t != figure(r, target, t->test))
				continue;
			double h = median(figure(r, "host", t->test)), v = median(t);
			if (!(h > 0) || !(v > 0))
				continue;
			double rel = qp_result_lower_is_better(t) ? h / v : v / h;
			sum += log(10 * rel);
			tests++;
		}
		if (!tests)
			continue;
		out[n].target = target;
		out[n].value = exp(sum / (double)tests);
		out[n].tests = tests;
		n++;
	}
	return n;
}
