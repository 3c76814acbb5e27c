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

int qp_report_charts_one(const struct qp_bench_report *r, size_t idx, struct qp_charts *out,
			 qp_error **err)
{
	bool density = !strcmp(r->scenario, "density");

	if (!strcmp(r->scenario, "workload"))
		return qp_chart_workload(r, idx, out, err);
	for (size_t i = 0; i < r->n_results; i++) {
		if (seen_metric(r, i))
			continue;
		const char *metric = r->results[i]->metric;
		if (qp_chart_metric(r, idx, metric, out, err) < 0 ||
		    (density && qp_chart_density(r, idx, metric, out, err) < 0))
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
		free(c->v[i].svg);
	}
	free(c->v);
	memset(c, 0, sizeof(*c));
}
