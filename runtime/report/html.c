/* runtime/report/html.c — one self-contained HTML page: per result file
 * its description, tables and charts (inline SVG).  Inline CSS only: no
 * scripts, no fonts, nothing fetched from anywhere. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"

static const char style[] =
	"body{font-family:sans-serif;margin:2em;color:#222;background:#fff}"
	"table{border-collapse:collapse;margin:0.5em 0 1.5em}"
	"th,td{border:1px solid #ccc;padding:3px 8px;text-align:left}"
	"td.num{text-align:right;font-variant-numeric:tabular-nums}"
	"th{background:#f0f0f0;overflow-wrap:anywhere}table.about th{text-align:right}"
	"figure{margin:1em 0}figcaption{font-size:0.9em;color:#555}"
	"pre{background:#f7f7f7;padding:0.8em;white-space:pre-wrap}"
	"section{border-top:2px solid #4e79a7;margin-top:2em}p.file{color:#777;font-size:0.85em}";

static void html_table(FILE *out, const struct qp_table *t)
{
	fputs("<table>\n<tr>", out);
	for (size_t c = 0; c < t->cols; c++) {
		fputs("<th>", out);
		qp_put_xml(out, qp_table_cell(t, 0, c));
		fputs("</th>", out);
	}
	fputs("</tr>\n", out);
	for (size_t r = 1; r < t->rows; r++) {
		fputs("<tr>", out);
		for (size_t c = 0; c < t->cols; c++) {
			fputs(t->numeric[c] ? "<td class=\"num\">" : "<td>", out);
			qp_put_xml(out, qp_table_cell(t, r, c));
			fputs("</td>", out);
		}
		fputs("</tr>\n", out);
	}
	fputs("</table>\n", out);
}

/* field/value rows as a two-column table with the field as a row header */
static void about_table(FILE *out, const struct qp_table *t)
{
	fputs("<table class=\"about\">\n", out);
	for (size_t r = 1; r < t->rows; r++) {
		fputs("<tr><th>", out);
		qp_put_xml(out, qp_table_cell(t, r, 0));
		fputs("</th><td>", out);
		qp_put_xml(out, qp_table_cell(t, r, 1));
		fputs("</td></tr>\n", out);
	}
	fputs("</table>\n", out);
}

/* workloads and consolidation: the seeds' layout (and the index), as the
 * text report has them */
static int workload_layout(FILE *out, const struct qp_bench_report *r, qp_error **err)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m;

	bool workload = !strcmp(r->scenario, "workload");
	if (!workload && strcmp(r->scenario, "consolidate"))
		return 0;
	if (!(m = open_memstream(&text, &len)))
		return qp_fail(err, errno, "report: memstream");
	if (workload)
		qp_workload_table(r, false, m);
	else
		qp_consolidate_table(r, false, m);
	if (fclose(m) != 0) {
		free(text);
		return qp_fail(err, ENOMEM, "report");
	}
	fputs("<h3>In the seeds' layout</h3>\n<pre>", out);
	qp_put_xml_lines(out, text);
	fputs("</pre>\n", out);
	free(text);
	return 0;
}

static int tables(FILE *out, const struct qp_bench_report *r, qp_error **err)
{
	struct qp_table t;

	if (qp_report_about_table(r, &t, err) < 0)
		return -1;
	about_table(out, &t);
	qp_table_free(&t);
	if (qp_report_results_table(r, &t, err) < 0)
		return -1;
	fputs("<h3>Results</h3>\n", out);
	html_table(out, &t);
	qp_table_free(&t);
	if (qp_report_phases_table(r, &t, err) < 0)
		return -1;
	if (t.rows) {
		fputs("<h3>Phases (average ms)</h3>\n", out);
		html_table(out, &t);
	}
	qp_table_free(&t);
	return workload_layout(out, r, err);
}

/* A heading people read: what was measured, on which pods; the file it
 * came from goes under it. */
static void heading(FILE *out, const struct qp_bench_report *r)
{
	static const struct {
		const char *scenario, *name;
	} names[] = { { "start", "Start latency" }, { "replace", "Replace" }, { "memory", "Memory" },
		      { "density", "Density" }, { "workload", "Workloads" },
		      { "consolidate", "Consolidation" }, { "cri", "Pod start through the CRI" } };
	const char *name = r->scenario;
	char line[256];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(names[i].scenario, r->scenario))
			name = names[i].name;
	if (!strcmp(r->mode, "both"))
		snprintf(line, sizeof(line), "%s: container and VM pods (%s)", name, r->accel);
	else if (!strcmp(r->mode, "vm"))
		snprintf(line, sizeof(line), "%s: VM pods (%s)", name, r->accel);
	else
		snprintf(line, sizeof(line), "%s: %s pods", name, r->mode);
	qp_put_xml(out, line);
	if (r->has_count) {
		snprintf(line, sizeof(line), ", %lld started", r->count);
		qp_put_xml(out, line);
	}
}

static void figures(FILE *out, const struct qp_charts *charts)
{
	if (charts->n)
		fputs("<h3>Charts</h3>\n", out);
	for (size_t i = 0; i < charts->n; i++) {
		fputs("<figure>\n", out);
		fputs(charts->v[i].svg, out); /* built by us, its text already escaped */
		fputs("<figcaption>", out);
		qp_put_xml(out, charts->v[i].caption);
		fputs("</figcaption>\n</figure>\n", out);
	}
}

static int section(FILE *out, const struct qp_bench_report *r, size_t idx, const char *path,
		   qp_error **err)
{
	struct qp_charts charts = { 0 };
	/* a density section opens with its curve (start latency and
	 * MemAvailable against the pod count); the others with their tables */
	bool charts_first = !strcmp(r->scenario, "density");

	fputs("<section>\n<h2>", out);
	heading(out, r);
	fputs("</h2>\n<p class=\"file\">from ", out);
	qp_put_xml(out, path);
	fputs("</p>\n", out);
	if (qp_report_charts_one(r, idx, &charts, err) < 0) {
		qp_charts_free(&charts);
		return -1;
	}
	if (charts_first)
		figures(out, &charts);
	if (tables(out, r, err) < 0) {
		qp_charts_free(&charts);
		return -1;
	}
	if (!charts_first)
		figures(out, &charts);
	qp_charts_free(&charts);
	if (r->definitions) {
		fputs("<h3>Measurement definitions</h3>\n<pre>", out);
		qp_put_xml_lines(out, r->definitions);
		fputs("</pre>\n", out);
	}
	fputs("</section>\n", out);
	return 0;
}

int qp_report_html(const struct qp_report_set *set, FILE *out, qp_error **err)
{
	fprintf(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		     "<title>qpod report</title>\n<style>%s</style>\n</head>\n<body>\n"
		     "<h1>qpod report</h1>\n", style);
	for (size_t i = 0; i < set->n; i++)
		if (section(out, set->reports[i], i + 1, set->paths[i], err) < 0)
			return -1;
	fputs("</body>\n</html>\n", out);
	return 0;
}
