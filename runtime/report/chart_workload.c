/* runtime/report/chart_workload.c — (d) workloads as % of the bare host
 * (OpenVZ's picture): one group of bars per test (per test and metric when
 * a test has several, e.g. rr_idle p50_us and p99_us), one bar per target.
 * 100% = as good as the host.  For times (unit ms/us/ns/s, or a metric
 * ending in _ms/_us/_ns/_s) lower is better, so the bar is host/target;
 * for anything else (throughput, operations) it is target/host. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/svg.h"
#include "util/cleanup.h"

#define ROW_H 16.0
#define GROUP_GAP 14.0

static const char *group_of(const struct qp_bench_result *res)
{
	return res->test ? res->test : res->metric;
}

/* Same group: the same test (or metric) and the same metric. */
static bool same_group(const struct qp_bench_result *a, const struct qp_bench_result *b)
{
	return !strcmp(group_of(a), group_of(b)) && !strcmp(a->metric, b->metric);
}

/* The group's label: the test, and its metric unless that is the score. */
static void group_label(const struct qp_bench_result *res, char *buf, size_t size)
{
	if (res->test && strcmp(res->metric, "score"))
		snprintf(buf, size, "%s %s", res->test, res->metric);
	else
		snprintf(buf, size, "%s", group_of(res));
}

static const char *target_of(const struct qp_bench_result *res)
{
	return res->target ? res->target : res->name;
}

/* The % of host of target in group; false if either is missing or zero. */
static bool percent(const struct qp_bench_report *r, const struct qp_bench_result *group,
		    const char *target, double *out)
{
	const struct qp_bench_result *host = NULL, *res = NULL;
	struct qp_bench_stats h, t;

	for (size_t i = r->n_results; i-- > 0;) {
		const struct qp_bench_result *o = r->results[i];
		if (!same_group(o, group) || !o->n)
			continue;
		if (!strcmp(target_of(o), "host"))
			host = o;
		if (!strcmp(target_of(o), target))
			res = o;
	}
	if (!host || !res || qp_bench_stats(host->samples, host->n, &h, NULL) < 0 ||
	    qp_bench_stats(res->samples, res->n, &t, NULL) < 0 || h.median <= 0 || t.median <= 0)
		return false;
	*out = 100 * (qp_result_lower_is_better(res) ? h.median / t.median : t.median / h.median);
	return true;
}

/* Distinct groups and targets ("host" first), pointers into r. */
static void collect(const struct qp_bench_report *r, const struct qp_bench_result **groups, size_t *ng,
		    const char **targets, size_t *nt)
{
	size_t k;

	*ng = 0;
	*nt = 1;
	targets[0] = "host";
	for (size_t i = 0; i < r->n_results; i++) {
		const struct qp_bench_result *res = r->results[i];
		for (k = 0; k < *ng && !same_group(groups[k], res); k++)
			;
		if (k == *ng)
			groups[(*ng)++] = res;
		for (k = 0; k < *nt && strcmp(targets[k], target_of(res)); k++)
			;
		if (k == *nt)
			targets[(*nt)++] = target_of(res);
	}
}

int qp_chart_workload(const struct qp_bench_report *r, size_t idx, struct qp_charts *out,
		      qp_error **err)
{
	_cleanup_free_ const struct qp_bench_result **groups = calloc(r->n_results + 1, sizeof(*groups));
	_cleanup_free_ const char **targets = calloc(r->n_results + 1, sizeof(*targets));
	_cleanup_free_ char *slug = qp_svg_slug(idx, "workload");
	const char *title = "workloads: speed relative to the host";
	size_t ng, nt;
	double max = 100, pct, y = QP_SVG_TOP + 12;
	char num[32];
	struct qp_svg s;

	if (!groups || !targets || !slug)
		return qp_fail(err, ENOMEM, "chart");
	collect(r, groups, &ng, targets, &nt);
	for (size_t g = 0; g < ng; g++)
		for (size_t t = 0; t < nt; t++)
			if (percent(r, groups[g], targets[t], &pct) && pct > max)
				max = pct;
	max = qp_svg_nice_max(max);
	double bottom = y + (double)ng * ((double)nt * ROW_H + GROUP_GAP);
	if (qp_svg_begin(&s, QP_SVG_W, bottom + 76 + 18.0 * (double)(nt / 5), title, err) < 0)
		return -1;
	qp_svg_xaxis(&s, max, QP_SVG_TOP, bottom, "%");
	for (size_t g = 0; g < ng; g++) {
		char label[600];
		group_label(groups[g], label, sizeof(label));
		qp_svg_text(&s, QP_SVG_PLOT_X - 8, y + (double)nt * ROW_H / 2 + 4, "end", 12, label);
		for (size_t t = 0; t < nt; t++, y += ROW_H) {
			if (!percent(r, groups[g], targets[t], &pct))
				continue;
			double x = qp_svg_x(&s, pct, max);
			qp_svg_rect(&s, QP_SVG_PLOT_X, y + 1, x - QP_SVG_PLOT_X, ROW_H - 2, qp_svg_color(t),
				    targets[t]);
			snprintf(num, sizeof(num), "%.0f%%", pct);
			qp_svg_text(&s, x + 6, y + ROW_H - 4, "start", 10, num);
		}
		y += GROUP_GAP;
	}
	double x100 = qp_svg_x(&s, 100, max);
	qp_svg_line(&s, x100, QP_SVG_TOP, x100, bottom, "#222222", 1);
	qp_svg_legend(&s, QP_SVG_PLOT_X, bottom + 56, targets, nt);
	return qp_svg_end(&s, out, slug, title,
			  "Each bar is a target's result as a percentage of the host's; the line "
			  "marks 100% (as fast as the host).", err);
}
