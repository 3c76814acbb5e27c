/* runtime/report/charts.c — which charts a report gets (report.h). */
#include <stdlib.h>
#include <string.h>

#include "report/svg.h"

/* true if an earlier result of r has the same metric as result i */
static bool seen_metric(const struct qp_bench_report *r, size_t i)
{
	for (size_t k = 0; k < i; k++)
		if (!strcmp(r->results[k]->metric, r->results[i]->metric))
			return true;
	return false;
}

/* results of metric with samples: how many, and whether any varies */
static size_t with_samples(const struct qp_bench_report *r, const char *metric, bool *varies)
{
	size_t n = 0;

	*varies = false;
	for (size_t i = 0; i < r->n_results; i++) {
		const struct qp_bench_result *res = r->results[i];
		if (strcmp(res->metric, metric) || !res->n)
			continue;
		n++;
		for (size_t k = 1; k < res->n; k++)
			if (res->samples[k] != res->samples[0])
				*varies = true;
	}
	return n;
}

/* density (and consolidate, whose samples are per number of pods): the curve first (start latency, then MemAvailable against the
 * pod count), then every other metric whose per-pod samples vary; no bar
 * charts (one result per metric: a single bar says what the table says) */
static int density_charts(const struct qp_bench_report *r, size_t idx, struct qp_charts *out,
			  qp_error **err)
{
	static const char *const first[] = { "start_ms", "host_mem_available_mb" };
	bool varies;

	for (size_t k = 0; k < 2; k++)
		if (with_samples(r, first[k], &varies) && varies &&
		    qp_chart_density(r, idx, first[k], out, err) < 0)
			return -1;
	for (size_t i = 0; i < r->n_results; i++) {
		const char *metric = r->results[i]->metric;
		if (seen_metric(r, i) || !strcmp(metric, first[0]) || !strcmp(metric, first[1]))
			continue;
		if (with_samples(r, metric, &varies) && varies &&
		    qp_chart_density(r, idx, metric, out, err) < 0)
			return -1;
	}
	return 0;
}

int qp_report_charts_one(const struct qp_bench_report *r, size_t idx, struct qp_charts *out,
			 qp_error **err)
{
	bool varies;

	if (!strcmp(r->scenario, "workload"))
		return qp_chart_workload(r, idx, out, err);
	if (!strcmp(r->scenario, "density") || !strcmp(r->scenario, "consolidate"))
		return density_charts(r, idx, out, err) < 0 ? -1 : qp_chart_phases(r, idx, out, err);
	for (size_t i = 0; i < r->n_results; i++) {
		const char *metric = r->results[i]->metric;
		/* one bar is a number, not a comparison: the tables have it */
		if (seen_metric(r, i) || with_samples(r, metric, &varies) < 2)
			continue;
		if (qp_chart_metric(r, idx, metric, out, err) < 0)
			return -1;
	}
	return qp_chart_phases(r, idx, out, err);
}

int qp_report_charts(const struct qp_report_set *set, struct qp_charts *out, qp_error **err)
{
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < set->n; i++)
		if (qp_report_charts_one(set->reports[i], i + 1, out, err) < 0) {
			qp_charts_free(out);
			return -1;
		}
	return 0;
}

void qp_charts_free(struct qp_charts *c)
{
	for (size_t i = 0; i < c->n; i++) {
		free(c->v[i].slug);
		free(c->v[i].title);
		free(c->v[i].caption);
		free(c->v[i].svg);
	}
	free(c->v);
	memset(c, 0, sizeof(*c));
}
