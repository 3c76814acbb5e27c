/* runtime/report/text.c — terminal tables (aligned columns) and markdown. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "util/cleanup.h"

static void put_cell(FILE *out, const char *s, bool markdown)
{
	if (markdown)
		qp_put_markdown(out, s);
	else
		qp_put_plain(out, s);
}

static void pad(FILE *out, size_t n)
{
	while (n--)
		fputc(' ', out);
}

/* Aligned columns (numeric ones to the right), header underlined. */
static int print_aligned(FILE *out, const struct qp_table *t, qp_error **err)
{
	_cleanup_free_ size_t *w = calloc(t->cols ? t->cols : 1, sizeof(*w));

	if (!w)
		return qp_fail(err, ENOMEM, "report");
	for (size_t r = 0; r < t->rows; r++)
		for (size_t c = 0; c < t->cols; c++) {
			size_t n = qp_text_width(qp_table_cell(t, r, c));
			w[c] = n > w[c] ? n : w[c];
		}
	for (size_t r = 0; r < t->rows; r++) {
		for (size_t c = 0; c < t->cols; c++) {
			const char *s = qp_table_cell(t, r, c);
			size_t gap = w[c] - qp_text_width(s);
			if (c)
				fputs("  ", out);
			if (t->numeric[c] && (*s || c + 1 < t->cols))
				pad(out, gap); /* no trailing blanks for an empty last cell */
			qp_put_plain(out, s);
			if (!t->numeric[c] && c + 1 < t->cols)
				pad(out, gap);
		}
		fputc('\n', out);
		if (r == 0) {
			for (size_t c = 0; c < t->cols; c++) {
				fputs(c ? "  " : "", out);
				for (size_t i = 0; i < w[c]; i++)
					fputc('-', out);
			}
			fputc('\n', out);
		}
	}
	return 0;
}

static void print_markdown(FILE *out, const struct qp_table *t)
{
	for (size_t r = 0; r < t->rows; r++) {
		fputc('|', out);
		for (size_t c = 0; c < t->cols; c++) {
			fputc(' ', out);
			put_cell(out, qp_table_cell(t, r, c), true);
			fputs(" |", out);
		}
		fputc('\n', out);
		if (r == 0) {
			fputc('|', out);
			for (size_t c = 0; c < t->cols; c++)
				fputs(t->numeric[c] ? " ---: |" : " --- |", out);
			fputc('\n', out);
		}
	}
}

static int print_table(FILE *out, const struct qp_table *t, bool markdown, qp_error **err)
{
	if (markdown) {
		print_markdown(out, t);
		return 0;
	}
	return print_aligned(out, t, err);
}

/* "field: value" lines (terminal) or a markdown bullet list */
static void print_about(FILE *out, const struct qp_table *t, bool markdown)
{
	for (size_t r = 1; r < t->rows; r++) {
		fputs(markdown ? "- **" : "", out);
		put_cell(out, qp_table_cell(t, r, 0), markdown);
		fputs(markdown ? "**: " : ": ", out);
		put_cell(out, qp_table_cell(t, r, 1), markdown);
		fputc('\n', out);
	}
}

static int one_report(FILE *out, const struct qp_bench_report *r, const char *path, bool markdown,
		      qp_error **err)
{
	struct qp_table about, results, phases;
	int ret = -1;

	if (qp_report_about_table(r, &about, err) < 0)
		return -1;
	if (qp_report_results_table(r, &results, err) < 0) {
		qp_table_free(&about);
		return -1;
	}
	if (qp_report_phases_table(r, &phases, err) < 0)
		goto out;
	fputs(markdown ? "## " : "== ", out);
	put_cell(out, path, markdown);
	fprintf(out, "%s\n\n", markdown ? "" : " ==");
	print_about(out, &about, markdown);
	fputs(markdown ? "\n### Results\n\n" : "\n", out);
	if (print_table(out, &results, markdown, err) < 0)
		goto out;
	if (phases.rows) {
		fputs(markdown ? "\n### Phases (average ms)\n\n" : "\nphases (average ms):\n", out);
		if (print_table(out, &phases, markdown, err) < 0)
			goto out;
	}
	if (markdown && r->definitions) {
		fputs("\n### Measurement definitions\n\n", out);
		for (const char *c = r->definitions; *c; c++) {
			char one[2] = { *c, '\0' };
			if (*c == '\n')
				fputs("  \n", out); /* a markdown line break */
			else
				qp_put_markdown(out, one);
		}
		fputc('\n', out);
	}
	ret = 0;
out:
	qp_table_free(&about);
	qp_table_free(&results);
	qp_table_free(&phases);
	return ret;
}

int qp_report_text(const struct qp_report_set *set, bool markdown, FILE *out, qp_error **err)
{
	if (markdown)
		fputs("# qpod report\n\n", out);
	for (size_t i = 0; i < set->n; i++) {
		if (i)
			fputc('\n', out);
		if (one_report(out, set->reports[i], set->paths[i], markdown, err) < 0)
			return -1;
		/* workloads also in the seeds' layout: families, % of host */
		if (!strcmp(set->reports[i]->scenario, "workload")) {
			fputc('\n', out);
			qp_workload_table(set->reports[i], markdown, out);
		}
		if (!strcmp(set->reports[i]->scenario, "consolidate")) {
			fputc('\n', out);
			qp_consolidate_table(set->reports[i], markdown, out);
		}
	}
	return 0;
}
