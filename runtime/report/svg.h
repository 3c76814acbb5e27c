/* runtime/report/svg.h — the few SVG primitives the charts draw with.
 * A chart is written into memory (open_memstream) and, when finished,
 * appended to a struct qp_charts.  Text from result files goes through
 * qp_svg_text(), which escapes it; fonts are the generic "sans-serif", so a
 * chart needs nothing from outside itself. */
#ifndef QPOD_REPORT_SVG_H
#define QPOD_REPORT_SVG_H

#include <stddef.h>
#include <stdio.h>

#include "report/report.h"

struct qp_svg {
	FILE *f;
	char *buf;
	size_t len;
	double w, h;
};

/* Layout shared by the charts: plot area from PLOT_X to w - PLOT_RIGHT. */
#define QP_SVG_W 860.0
#define QP_SVG_PLOT_X 230.0
#define QP_SVG_PLOT_RIGHT 110.0 /* room for the value after the longest bar */
#define QP_SVG_TOP 44.0
#define QP_SVG_AXIS_TITLE_DY 32.0 /* the x axis' unit, under its tick labels */

int qp_svg_begin(struct qp_svg *s, double w, double h, const char *title, qp_error **err);
/* Close the document and append it to out as chart (slug, title, caption:
 * how to read it, never the title again). */
int qp_svg_end(struct qp_svg *s, struct qp_charts *out, const char *slug, const char *title,
	       const char *caption, qp_error **err);
/* Drop an unfinished chart; returns -1. */
int qp_svg_abort(struct qp_svg *s);
void qp_svg_rect(struct qp_svg *s, double x, double y, double w, double h, const char *fill,
		 const char *tip);
void qp_svg_line(struct qp_svg *s, double x1, double y1, double x2, double y2, const char *stroke,
		 double width);
/* anchor: "start", "middle" or "end"; text is escaped */
void qp_svg_text(struct qp_svg *s, double x, double y, const char *anchor, double size,
		 const char *text);
/* A legend row of colour squares and labels at y, from x. */
void qp_svg_legend(struct qp_svg *s, double x, double y, const char *const *labels, size_t n);
/* Axis along x from the plot's left edge: 0..max with grid lines from y0 to
 * y1, tick labels under y1, and the unit centred under them
 * (y1 + QP_SVG_AXIS_TITLE_DY). */
void qp_svg_xaxis(struct qp_svg *s, double max, double y0, double y1, const char *unit);
/* x of value v on that axis */
double qp_svg_x(const struct qp_svg *s, double v, double max);
const char *qp_svg_color(size_t i);
/* A round axis maximum >= v (1, 2, 2.5 or 5 times a power of ten). */
double qp_svg_nice_max(double v);
/* "1-" idx "-" suffix, with every character outside [a-z0-9_-] as '_'. */
char *qp_svg_slug(size_t idx, const char *suffix);

/* ---- the charts (chart_*.c); idx numbers the report in slugs ---- */
/* (a) results of one metric: median bars with min-max whiskers */
int qp_chart_metric(const struct qp_bench_report *r, size_t idx, const char *metric,
		    struct qp_charts *out, qp_error **err);
/* (b) per result name, its phase averages stacked */
int qp_chart_phases(const struct qp_bench_report *r, size_t idx, struct qp_charts *out,
		    qp_error **err);
/* (c) density: pod number (x) against each result's samples of metric (y) */
int qp_chart_density(const struct qp_bench_report *r, size_t idx, const char *metric,
		     struct qp_charts *out, qp_error **err);
/* (d) workload: per test, one bar per target as % of the host */
int qp_chart_workload(const struct qp_bench_report *r, size_t idx, struct qp_charts *out,
		      qp_error **err);
/* "name (target, test)": how a chart labels a result */
void qp_chart_label(const struct qp_bench_result *res, char *buf, size_t size);

#endif
