/* runtime/report/chart_workload.c — (d) workloads as % of the bare host
 * (OpenVZ's picture): one group of bars per test, one bar per target.
 * 100% = as good as the host.  For times (unit ms/us/ns/s, or a metric
 * ending in _ms/_us/_ns/_s) lower is better, so the bar is host/target;
 * for anything else (throughput, operations) it is target/host. */
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

static const char *target_of(const struct qp_bench_result *res)
{
	return res->target ? res->target : res->name;
}

static bool lower_is_better(const struct qp_bench_result *res)
{
	static const char *const units[] = { "ms", "us", "ns", "s", "sec", NULL };
	static const char *const ends[] = { "_ms", "_us", "_ns", "_s" };
	size_t len = strlen(res->metric);

	if (qp_bench_one_of(res->unit, units))
		return true;
	for (size_t i = 0; i < QP_ARRAY_SIZE(ends); i++)
		if (len >= strlen(ends[i]) && !strcmp(res->metric + len - strlen(ends[i]), ends[i]))
			return true;
	return false;
}

/* The % of host of target in group; false if either is missing or zero. */
static bool percent(const struct qp_bench_report *r, const char *group, const char *target,
		    double *out)
{
	const struct qp_bench_result *host = NULL, *res = NULL;
	struct qp_bench_stats h, t;

	for (size_t i = r->n_results; i-- > 0;) {
		const struct qp_bench_result *o = r->results[i];
		if (strcmp(group_of(o), group) || !o->n)
			continue;
		if (!strcmp(target_of(o), "host"))
			host = o;
		if (!strcmp(target_of(o), target))
			res = o;
	}
	if (!host || !res || qp_bench_stats(host->samples, host->n, &h, NULL) < 0 ||
	    qp_bench_stats(res->samples, res->n, &t, NULL) < 0 || h.median <= 0 || t.median <= 0)
		return false;
	*out = 100 * (lower_is_better(res) ? h.median / t.median : t.median / h.median);
	return true;
}

/* Distinct groups and targets ("host" first), pointers into r. */
static void collect(const struct qp_bench_report *r, const char **groups, size_t *ng,
		    const char **targets, size_t *nt)
{
	size_t k;

	*ng = 0;
	*nt = 1;
	targets[0] = "host";
	for (size_t i = 0; i < r->n_results; i++) {
		const struct qp_bench_result *res = r->results[i];
		for (k = 0; k < *ng && strcmp(groups[k], group_of(res)); k++)
			;
		if (k == *ng)
			groups[(*ng)++] = group_of(res);
		for (k = 0; k < *nt && strcmp(targets[k], target_of(res)); k++)
			;
		if (k == *nt)
			targets[(*nt)++] = target_of(res);
	}
}

int qp_chart_workload(const struct qp_bench_report *r, size_t idx, struct qp_charts *out,
		      qp_error **err)
{
	_cleanup_free_ const char **groups = calloc(r->n_results + 1, sizeof(*groups));
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
		qp_svg_text(&s, QP_SVG_PLOT_X - 8, y + (double)nt * ROW_H / 2 + 4, "end", 12, groups[g]);
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
