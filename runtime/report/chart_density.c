/* runtime/report/chart_density.c — (c) density curves: for one metric, the
 * samples of each result in pod order (start latency of pod i, host
 * MemAvailable after pod i, ...) as lines over the pod number. */
#include <stdlib.h>
#include <string.h>

#include "report/svg.h"
#include "util/cleanup.h"

#define LX 80.0   /* plot area */
#define RX 830.0
#define TY 50.0
#define BY 330.0
#define MAX_POINTS 2000 /* a longer series is drawn with a stride */

static double px(double pod, double npods)
{
	return LX + (RX - LX) * (npods > 1 ? (pod - 1) / (npods - 1) : 0.5);
}

static double py(double v, double max)
{
	return BY - (BY - TY) * (v > 0 ? v : 0) / max;
}

static void axes(struct qp_svg *s, double ymax, size_t npods, const char *unit)
{
	char label[48];
	double step = (double)(long long)qp_svg_nice_max((double)npods / 5); /* whole pods */

	if (step < 1)
		step = 1;

	for (int i = 0; i <= 5; i++) {
		double v = ymax * i / 5;
		qp_svg_line(s, LX, py(v, ymax), RX, py(v, ymax), i ? "#dddddd" : "#444444", 1);
		snprintf(label, sizeof(label), "%g", v);
		qp_svg_text(s, LX - 6, py(v, ymax) + 4, "end", 11, label);
	}
	qp_svg_line(s, LX, TY, LX, BY, "#444444", 1);
	for (double pod = 1; pod <= (double)npods; pod = pod == 1 && step > 1 ? step : pod + step) {
		snprintf(label, sizeof(label), "%g", pod);
		qp_svg_text(s, px(pod, (double)npods), BY + 16, "middle", 11, label);
	}
	qp_svg_text(s, (LX + RX) / 2, BY + 34, "middle", 12, "pods started");
	qp_svg_text(s, LX - 6, TY - 10, "end", 11, unit);
}

static void series(struct qp_svg *s, const struct qp_bench_result *res, size_t color,
		   double ymax, size_t npods)
{
	size_t stride = res->n / MAX_POINTS + 1;

	fprintf(s->f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"",
		qp_svg_color(color));
	for (size_t i = 0; i < res->n; i += stride)
		fprintf(s->f, "%.1f,%.1f ", px((double)i + 1, (double)npods), py(res->samples[i], ymax));
	fputs("\"/>\n", s->f);
	if (res->n > 60)
		return;
	for (size_t i = 0; i < res->n; i++)
		fprintf(s->f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n",
			px((double)i + 1, (double)npods), py(res->samples[i], ymax), qp_svg_color(color));
}

int qp_chart_density(const struct qp_bench_report *r, size_t idx, const char *metric,
		     struct qp_charts *out, qp_error **err)
{
	_cleanup_free_ char *title = NULL, *slug = NULL, *suffix = NULL;
	_cleanup_free_ const char **labels = NULL;
	_cleanup_free_ char *names = NULL;
	const size_t lsize = 3 * QP_BENCH_MAX_NAME + 8;
	size_t npods = 0, nseries = 0;
	const char *unit = "";
	double ymax = 0;
	struct qp_svg s;

	for (size_t i = 0; i < r->n_results; i++) {
		const struct qp_bench_result *res = r->results[i];
		if (strcmp(res->metric, metric) || !res->n)
			continue;
		for (size_t k = 0; k < res->n; k++)
			ymax = res->samples[k] > ymax ? res->samples[k] : ymax;
		npods = res->n > npods ? res->n : npods;
		unit = res->unit;
		nseries++;
	}
	if (!nseries)
		return 0;
	ymax = qp_svg_nice_max(ymax);
	labels = calloc(nseries, sizeof(*labels));
	names = calloc(nseries, lsize);
	if (!labels || !names || asprintf(&title, "density: %s per pod", metric) < 0 ||
	    asprintf(&suffix, "%s-per-pod", metric) < 0 || !(slug = qp_svg_slug(idx, suffix)))
		return qp_fail(err, ENOMEM, "chart");
	if (qp_svg_begin(&s, QP_SVG_W, BY + 80 + 18.0 * (double)(nseries / 5), title, err) < 0)
		return -1;
	axes(&s, ymax, npods, unit);
	nseries = 0;
	for (size_t i = 0; i < r->n_results; i++) {
		const struct qp_bench_result *res = r->results[i];
		if (strcmp(res->metric, metric) || !res->n)
			continue;
		qp_chart_label(res, names + nseries * lsize, lsize);
		labels[nseries] = names + nseries * lsize;
		series(&s, res, nseries++, ymax, npods);
	}
	qp_svg_legend(&s, LX, BY + 58, labels, nseries);
	return qp_svg_end(&s, out, slug, title, err);
}
