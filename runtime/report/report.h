/* runtime/report/report.h — rendering result files (result/result.h) for
 * people: terminal tables, markdown, CSV, SVG charts and a self-contained
 * HTML page.  `qpod report` (cli/cmd_report.c) is the user.
 *
 * Everything read from a result file is hostile text: each renderer escapes
 * it for its output (control characters become '?', XML/HTML entities,
 * markdown pipes, CSV quotes).  Renderers write to a FILE (the caller checks
 * ferror) and return -1 with *err only on allocation failure. */
#ifndef QPOD_REPORT_H
#define QPOD_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "result/result.h"
#include "util/error.h"

/* The reports to render, and the file each came from (for headings). */
struct qp_report_set {
	size_t n;
	struct qp_bench_report **reports;
	const char **paths;
};

/* ---- tables (table.c): the cells every textual format shows ---- */
struct qp_table {
	size_t rows, cols; /* row 0 is the header */
	char **cells;      /* rows * cols, raw (unescaped) text */
	bool *numeric;     /* per column: right-aligned */
};
/* Field/value rows: scenario, mode, accel, host, params, count, stop reason. */
int qp_report_about_table(const struct qp_bench_report *r, struct qp_table *t, qp_error **err);
/* One row per result: name, [target], [test], metric, n, min, max, avg,
 * median, unit, ratio (median / median of the base row of its kind with
 * the same metric and test, kinds.h: "0.42x"; the header names the bases,
 * "ratio vs runc, qpod-vm-cold"), [note: a peer's reason]. */
int qp_report_results_table(const struct qp_bench_report *r, struct qp_table *t, qp_error **err);
/* One row per result name that has phases, one column per phase, + total;
 * rows == 0 when the report has no phases. */
int qp_report_phases_table(const struct qp_bench_report *r, struct qp_table *t, qp_error **err);
const char *qp_table_cell(const struct qp_table *t, size_t row, size_t col);
void qp_table_free(struct qp_table *t);
/* The distinct phase names of r in first-seen order (pointers into r). */
int qp_report_phase_names(const struct qp_bench_report *r, const char ***names, size_t *n,
			  qp_error **err);
/* v with at most two decimals and no trailing zeros ("23349.82", "2",
 * "0.0012" for tiny values) into buf: params and CSV */
void qp_report_round(double v, char buf[32]);
/* "12.34" (or "-" for no value) into buf */
void qp_report_fmt(double v, bool have, char buf[32]);

/* ---- escaping (escape.c) ---- */
void qp_put_xml(FILE *f, const char *s);       /* &<>"' as entities, controls as '?' */
void qp_put_xml_lines(FILE *f, const char *s); /* qp_put_xml, keeping line breaks (<pre>) */
void qp_put_plain(FILE *f, const char *s);     /* controls as '?' (terminal) */
void qp_put_markdown(FILE *f, const char *s);  /* plain, plus '|' '\\' '*' '_' '`' '<' escaped */
void qp_put_csv(FILE *f, const char *s);       /* quoted when needed, controls as '?' */
size_t qp_text_width(const char *s);          /* characters (UTF-8), not bytes */

/* ---- formats ---- */
int qp_report_text(const struct qp_report_set *set, bool markdown, FILE *out, qp_error **err);
int qp_report_csv(const struct qp_report_set *set, FILE *out, qp_error **err);
/* One report to path (NULL: stdout) as json, csv, table or markdown; label
 * names it in the textual formats when there is no path (write.c). */
int qp_report_write_one(struct qp_bench_report *r, const char *format, const char *path,
			const char *label, qp_error **err);
int qp_report_html(const struct qp_report_set *set, FILE *out, qp_error **err);

/* ---- charts (charts.c, chart_*.c) ---- */
struct qp_chart {
	char *slug;  /* file name stem: "1-start_ms", "1-phases", ... ([a-z0-9_-] only) */
	char *title;
	char *caption; /* how to read the chart (the HTML figcaption) */
	char *svg;   /* a complete <svg> element, without an XML declaration */
};
struct qp_charts {
	struct qp_chart *v;
	size_t n;
};
/* Every chart of every report in set, only those that show something:
 * (a) per metric with two results or more, median bars with min-max
 * whiskers; (b) stacked per-phase averages; (c) density: per-pod curves,
 * start latency and host MemAvailable first (with Hyper's published points
 * as a reference where the scenario matches), then the other metrics whose
 * samples vary (a constant or a single value is in the tables, not drawn);
 * (d) workload: % of host per test and target. */
int qp_report_charts(const struct qp_report_set *set, struct qp_charts *out, qp_error **err);
/* The charts of report number idx (1-based in slugs) of set. */
int qp_report_charts_one(const struct qp_bench_report *r, size_t idx, struct qp_charts *out,
			 qp_error **err);
void qp_charts_free(struct qp_charts *c);

/* The seeds' layout of a `bench workload` report (workload_table.c), the
 * host-normalised index under the tables. */
void qp_workload_table(const struct qp_bench_report *r, bool markdown, FILE *f);

/* A `bench consolidate` report in OpenVZ's layout (consolidate_table.c). */
void qp_consolidate_table(const struct qp_bench_report *r, bool markdown, FILE *f);

/* ---- workload_index.c ---- */
/* true for times (unit ms/us/ns/s, or a metric ending in _ms/_us/_ns/_s) */
bool qp_result_lower_is_better(const struct qp_bench_result *res);
/* The result of target, test and metric with samples, or NULL. */
const struct qp_bench_result *qp_workload_find(const struct qp_bench_report *r, const char *target,
					       const char *test, const char *metric);
/* The host-normalised index of each target (host = 10 per test, geometric
 * mean over the tests the target and the host both ran): at most max
 * entries in first-seen order, targets with no such test left out. */
struct qp_workload_index {
	const char *target; /* points into r */
	double value;
	size_t tests;
};
size_t qp_workload_index(const struct qp_bench_report *r, struct qp_workload_index *out, size_t max);
/* "Index (host = 10 ...): host 10.00 (12 tests), container 9.71 (12 tests)"
 * and a newline; nothing when no target has an index. */
void qp_workload_index_line(const struct qp_bench_report *r, FILE *f);

#endif
