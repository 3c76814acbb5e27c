/* runtime/report/chart_density.c — (c) density curves: for one metric, the
 * samples of each result in pod order (start latency of pod i, host
 * MemAvailable after pod i, ...) as lines over the pod number, with Hyper's
 * published figures (shared/DESIGN.md "Published reference points") as a
 * dashed reference line where the scenario matches: VM pods, start latency
 * (376 ms on KVM, 1367 ms under TCG, both with qboot) and MemAvailable
 * (252 pods on 16 GB: 16384/252 = 65 MB a pod, from the host's
 * MemAvailable before the first pod).  `bench consolidate` files get the
 * same curves: sample i belongs to i+1 pods running the mixed workload. */
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

static void axes(struct qp_svg *s, double ymax, size_t npods, const char *unit, const char *xlabel)
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
	qp_svg_text(s, (LX + RX) / 2, BY + 34, "middle", 12, xlabel);
	qp_svg_text(s, LX - 6, TY - 10, "end", 11, unit);
}

/* what a metric's curve is called, and its y axis */
static const struct {
	const char *metric, *title;
} names[] = {
	{ "start_ms", "start latency of each pod" },
	{ "host_mem_available_mb", "host MemAvailable after each pod" },
	{ "rss_mb", "RSS of each pod's VMM" },
	{ "pss_mb", "PSS of each pod's VMM" },
	{ "vsz_mb", "VSZ of each pod's VMM" },
	{ "guest_used_mb", "guest memory used in each pod" },
	{ "guest_free_mb", "guest memory free in each pod" },
	{ "cgroup_usage_mb", "cgroup memory of each pod" },
	{ "aggregate_int_dmips", "aggregate CPU (intbench DMIPS)" },
	{ "aggregate_stream_gbs", "aggregate memory bandwidth (stream triad)" },
	{ "aggregate_rr_rate", "aggregate TCP_RR round trips per second" },
	{ "worst_p50_us", "the worst pod's median round trip" },
	{ "worst_p99_us", "the worst pod's p99 round trip" },
};

static const char *curve_title(const char *metric)
{
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(names[i].metric, metric))
			return names[i].title;
	return NULL;
}

/* Hyper's published figure for this metric and scenario: a line from
 * (1, y1) to (npods, y2); false when none applies */
struct reference {
	double y1, y2;
	char label[96];
};

static bool param_num(const struct qp_bench_report *r, const char *key, double *v)
{
	for (size_t i = 0; i < r->n_params; i++)
		if (!strcmp(r->params[i].key, key) && r->params[i].type == QP_BENCH_PARAM_NUM) {
			*v = r->params[i].num;
			return true;
		}
	return false;
}

static bool hyper_reference(const struct qp_bench_report *r, const char *metric, size_t npods,
			    struct reference *ref)
{
	bool kvm = !strcmp(r->accel, "kvm"), tcg = !strcmp(r->accel, "tcg");
	double before;

	if (strcmp(r->mode, "vm"))
		return false; /* Hyper's pods were VMs */
	if (!strcmp(metric, "start_ms") && (kvm || tcg)) {
		ref->y1 = ref->y2 = kvm ? 376 : 1367;
		snprintf(ref->label, sizeof(ref->label), "Hyper, published: %s ms (%s, qboot)",
			 kvm ? "376" : "1367", kvm ? "KVM" : "TCG");
		return true;
	}
	if (!strcmp(metric, "host_mem_available_mb") &&
	    param_num(r, "host_mem_available_before_mb", &before)) {
		ref->y1 = before - 16384.0 / 252;
		ref->y2 = before - 16384.0 / 252 * (double)npods;
		snprintf(ref->label, sizeof(ref->label),
			 "Hyper, published: 252 pods on 16 GB (65 MB a pod)");
		return true;
	}
	return false;
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
	_cleanup_free_ char *title = NULL, *slug = NULL, *suffix = NULL, *caption = NULL;
	_cleanup_free_ const char **labels = NULL;
	_cleanup_free_ char *label_buf = NULL;
	const size_t lsize = 3 * QP_BENCH_MAX_NAME + 8;
	size_t npods = 0, nseries = 0;
	const char *unit = "", *what = curve_title(metric);
	struct reference ref;
	bool have_ref, cons = !strcmp(r->scenario, "consolidate");
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
	have_ref = hyper_reference(r, metric, npods, &ref);
	if (have_ref)
		ymax = ref.y1 > ymax ? ref.y1 : ymax;
	ymax = qp_svg_nice_max(ymax);
	labels = calloc(nseries, sizeof(*labels));
	label_buf = calloc(nseries, lsize);
	if (!labels || !label_buf ||
	    (what ? asprintf(&title, "%s: %s", cons ? "consolidation" : "density", what)
		  : asprintf(&title, "density: %s per pod", metric)) < 0 ||
	    (cons ? asprintf(&caption, "One point per number of pods running the mixed workload at the same time "
				       "(x); y is the %s over all of them (%s), one line per kind of pod.",
			     metric, unit)
		  : asprintf(&caption, "One point per pod, in the order they started: x is the number of pods "
				       "running, y the %s measured for that pod (%s).%s", metric, unit,
			     have_ref ? " The dashed line is Hyper's published figure, for reference." : "")) < 0 ||
	    asprintf(&suffix, "%s-per-pod", metric) < 0 || !(slug = qp_svg_slug(idx, suffix)))
		return qp_fail(err, ENOMEM, "chart");
	double legend_rows = 1 + (double)(nseries / 5) + (have_ref ? 1 : 0);
	if (qp_svg_begin(&s, QP_SVG_W, BY + 62 + 18.0 * legend_rows, title, err) < 0)
		return -1;
	axes(&s, ymax, npods, unit, cons ? "pods running at once" : "pods started");
	nseries = 0;
	for (size_t i = 0; i < r->n_results; i++) {
		const struct qp_bench_result *res = r->results[i];
		if (strcmp(res->metric, metric) || !res->n)
			continue;
		qp_chart_label(res, label_buf + nseries * lsize, lsize);
		labels[nseries] = label_buf + nseries * lsize;
		series(&s, res, nseries++, ymax, npods);
	}
	qp_svg_legend(&s, LX, BY + 58, labels, nseries);
	if (have_ref) {
		double y = BY + 58 + 18.0 * (double)(nseries / 5 + 1);
		fprintf(s.f, "<polyline class=\"reference\" fill=\"none\" stroke=\"#555555\" "
			     "stroke-width=\"1.5\" stroke-dasharray=\"6 4\" points=\"%.1f,%.1f %.1f,%.1f\"/>\n",
			px(1, (double)npods), py(ref.y1, ymax), px((double)npods, (double)npods),
			py(ref.y2, ymax));
		qp_svg_line(&s, LX, y - 4, LX + 12, y - 4, "#555555", 1.5);
		qp_svg_text(&s, LX + 16, y, "start", 12, ref.label);
	}
	return qp_svg_end(&s, out, slug, title, caption, err);
}
