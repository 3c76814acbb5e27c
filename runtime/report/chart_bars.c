/* runtime/report/chart_bars.c — horizontal bar charts: (a) one metric's
 * results as median bars with min-max whiskers (Hyper's "with qboot /
 * without qboot / traditional VM" picture), (b) per-phase averages stacked
 * per result name. */
#include <stdlib.h>
#include <string.h>

#include "report/svg.h"
#include "util/cleanup.h"

#define BAR_H 22.0
#define BAR_GAP 12.0

void qp_chart_label(const struct qp_bench_result *res, char *buf, size_t size)
{
	if (res->target && res->test)
		snprintf(buf, size, "%s (%s, %s)", res->name, res->target, res->test);
	else if (res->target || res->test)
		snprintf(buf, size, "%s (%s)", res->name, res->target ? res->target : res->test);
	else
		snprintf(buf, size, "%s", res->name);
}

static double bar_y(size_t row)
{
	return QP_SVG_TOP + 12 + (double)row * (BAR_H + BAR_GAP);
}

int qp_chart_metric(const struct qp_bench_report *r, size_t idx, const char *metric,
		    struct qp_charts *out, qp_error **err)
{
	_cleanup_free_ char *title = NULL, *slug = NULL;
	struct qp_bench_stats st;
	const char *unit = "";
	double max = 0;
	size_t rows = 0, row = 0;
	struct qp_svg s;
	char label[3 * QP_BENCH_MAX_NAME + 8], num[32];

	for (size_t i = 0; i < r->n_results; i++)
		if (!strcmp(r->results[i]->metric, metric) && r->results[i]->n) {
			const struct qp_bench_result *res = r->results[i];
			for (size_t k = 0; k < res->n; k++)
				max = res->samples[k] > max ? res->samples[k] : max;
			unit = res->unit;
			rows++;
		}
	if (!rows)
		return 0;
	max = qp_svg_nice_max(max);
	if (asprintf(&title, "%s: %s", r->scenario, metric) < 0 ||
	    !(slug = qp_svg_slug(idx, metric)))
		return qp_fail(err, ENOMEM, "chart");
	if (qp_svg_begin(&s, QP_SVG_W, bar_y(rows) + 48, title, err) < 0)
		return -1;
	qp_svg_xaxis(&s, max, QP_SVG_TOP, bar_y(rows), unit);
	for (size_t i = 0; i < r->n_results; i++) {
		const struct qp_bench_result *res = r->results[i];
		if (strcmp(res->metric, metric) || !res->n)
			continue;
		if (qp_bench_stats(res->samples, res->n, &st, err) < 0)
			return qp_svg_abort(&s);
		double y = bar_y(row), mid = y + BAR_H / 2;
		double x0 = qp_svg_x(&s, st.min, max), x1 = qp_svg_x(&s, st.max, max);
		qp_chart_label(res, label, sizeof(label));
		qp_report_fmt(st.median, true, num);
		qp_svg_text(&s, QP_SVG_PLOT_X - 8, mid + 4, "end", 12, label);
		qp_svg_rect(&s, QP_SVG_PLOT_X, y, qp_svg_x(&s, st.median, max) - QP_SVG_PLOT_X, BAR_H,
			    qp_svg_color(row), label);
		qp_svg_line(&s, x0, mid, x1, mid, "#222222", 1.5);
		qp_svg_line(&s, x0, y + 4, x0, y + BAR_H - 4, "#222222", 1.5);
		qp_svg_line(&s, x1, y + 4, x1, y + BAR_H - 4, "#222222", 1.5);
		qp_svg_text(&s, x1 + 6, mid + 4, "start", 11, num);
		row++;
	}
	return qp_svg_end(&s, out, slug, title,
			  "Each bar is the median of one variant's runs, its whisker spans the "
			  "fastest to the slowest run, and the number is the median.", err);
}

int qp_chart_phases(const struct qp_bench_report *r, size_t idx, struct qp_charts *out,
		    qp_error **err)
{
	_cleanup_free_ const char **phases = NULL, **names = NULL;
	_cleanup_free_ double *totals = NULL;
	_cleanup_free_ char *title = NULL, *slug = NULL;
	size_t np, nn = 0;
	double max = 0;
	struct qp_svg s;

	if (qp_report_phase_names(r, &phases, &np, err) < 0)
		return -1;
	if (!np)
		return 0;
	/* distinct result names, and the total of each */
	names = calloc(r->n_phases, sizeof(*names));
	totals = calloc(r->n_phases, sizeof(*totals));
	if (!names || !totals || asprintf(&title, "%s: the phases of a start", r->scenario) < 0 ||
	    !(slug = qp_svg_slug(idx, "phases")))
		return qp_fail(err, ENOMEM, "chart");
	for (size_t i = 0; i < r->n_phases; i++) {
		size_t k;
		for (k = 0; k < nn && strcmp(names[k], r->phases[i].name); k++)
			;
		if (k == nn)
			names[nn++] = r->phases[i].name;
		totals[k] += r->phases[i].avg_ms > 0 ? r->phases[i].avg_ms : 0;
		max = totals[k] > max ? totals[k] : max;
	}
	max = qp_svg_nice_max(max);
	/* the legend wraps after about five phases */
	if (qp_svg_begin(&s, QP_SVG_W, bar_y(nn) + 76 + 18.0 * (double)(np / 5), title, err) < 0)
		return -1;
	qp_svg_xaxis(&s, max, QP_SVG_TOP, bar_y(nn), "ms");
	for (size_t k = 0; k < nn; k++) {
		double y = bar_y(k), x = QP_SVG_PLOT_X;
		qp_svg_text(&s, QP_SVG_PLOT_X - 8, y + BAR_H / 2 + 4, "end", 12, names[k]);
		for (size_t p = 0; p < np; p++)
			for (size_t i = 0; i < r->n_phases; i++) {
				const struct qp_bench_phase *ph = &r->phases[i];
				if (strcmp(ph->name, names[k]) || strcmp(ph->phase, phases[p]) || ph->avg_ms <= 0)
					continue;
				double w = qp_svg_x(&s, ph->avg_ms, max) - QP_SVG_PLOT_X;
				qp_svg_rect(&s, x, y, w, BAR_H, qp_svg_color(p), ph->phase);
				x += w;
			}
		char num[32];
		qp_report_fmt(totals[k], true, num);
		qp_svg_text(&s, x + 6, y + BAR_H / 2 + 4, "start", 11, num);
	}
	qp_svg_legend(&s, QP_SVG_PLOT_X, bar_y(nn) + 56, phases, np);
	return qp_svg_end(&s, out, slug, title,
			  "Each bar is one variant's start, its phases stacked in the order they "
			  "happen (the average of the runs); the number is their sum.", err);
}
