/* runtime/report/table.c — the cells of the textual formats (report.h):
 * what a report says about itself, its results with ratios, its phases. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "report/kinds.h"
#include "report/report.h"
#include "util/cleanup.h"

void qp_report_round(double v, char buf[32])
{
	double a = v < 0 ? -v : v;

	if (a != 0 && a < 0.01)
		snprintf(buf, 32, "%.2g", v); /* tiny: two significant digits */
	else {
		snprintf(buf, 32, "%.2f", v);
		char *dot = strchr(buf, '.');
		if (dot) { /* 23349.80 -> 23349.8, 2.00 -> 2 */
			char *end = buf + strlen(buf) - 1;
			while (end > dot && *end == '0')
				*end-- = '\0';
			if (end == dot)
				*end = '\0';
		}
	}
}

void qp_report_fmt(double v, bool have, char buf[32])
{
	if (have)
		snprintf(buf, 32, "%.2f", v);
	else
		snprintf(buf, 32, "-");
}

static int table_init(struct qp_table *t, size_t rows, size_t cols, qp_error **err)
{
	memset(t, 0, sizeof(*t));
	t->cells = calloc(rows * cols + 1, sizeof(*t->cells));
	t->numeric = calloc(cols + 1, sizeof(*t->numeric));
	t->rows = rows;
	t->cols = cols;
	if (!t->cells || !t->numeric) {
		qp_table_free(t);
		return qp_fail(err, ENOMEM, "report");
	}
	return 0;
}

void qp_table_free(struct qp_table *t)
{
	for (size_t i = 0; t->cells && i < t->rows * t->cols; i++)
		free(t->cells[i]);
	free(t->cells);
	free(t->numeric);
	memset(t, 0, sizeof(*t));
}

const char *qp_table_cell(const struct qp_table *t, size_t row, size_t col)
{
	const char *c = t->cells[row * t->cols + col];
	return c ? c : "";
}

static int put(struct qp_table *t, size_t row, size_t col, const char *text, qp_error **err)
{
	return qp_bench_set(&t->cells[row * t->cols + col], text, err);
}

static int putf(struct qp_table *t, size_t row, size_t col, qp_error **err, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static int putf(struct qp_table *t, size_t row, size_t col, qp_error **err, const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (r < 0)
		return qp_fail(err, ENOMEM, "report");
	free(t->cells[row * t->cols + col]);
	t->cells[row * t->cols + col] = s;
	return 0;
}

int qp_report_about_table(const struct qp_bench_report *r, struct qp_table *t, qp_error **err)
{
	const struct qp_bench_host *h = &r->host;
	size_t row = 1;

	if (table_init(t, 10 + r->n_params, 2, err) < 0)
		return -1;
	if (put(t, 0, 0, "field", err) < 0 || put(t, 0, 1, "value", err) < 0 ||
	    put(t, row, 0, "scenario", err) < 0 || put(t, row++, 1, r->scenario, err) < 0 ||
	    put(t, row, 0, "mode", err) < 0 || put(t, row++, 1, r->mode, err) < 0 ||
	    put(t, row, 0, "accel", err) < 0 || put(t, row++, 1, r->accel, err) < 0 ||
	    put(t, row, 0, "host", err) < 0 ||
	    putf(t, row++, 1, err, "%s, %ld cores, %ld MB, kernel %s", h->cpu ? h->cpu : "unknown CPU",
		 h->cores, h->mem_mb, h->kernel ? h->kernel : "unknown") < 0 ||
	    /* container pods run no QEMU: its version says nothing about them */
	    (strcmp(r->mode, "container") &&
	     (put(t, row, 0, "qemu", err) < 0 || put(t, row++, 1, h->qemu ? h->qemu : "none", err) < 0)) ||
	    put(t, row, 0, "qpod", err) < 0 || put(t, row++, 1, r->version, err) < 0)
		goto fail;
	for (size_t i = 0; i < r->n_params; i++, row++) {
		const struct qp_bench_param *p = &r->params[i];
		char num[32];
		qp_report_round(p->num, num);
		if (putf(t, row, 0, err, "param %s", p->key) < 0 ||
		    put(t, row, 1, p->type == QP_BENCH_PARAM_NUM ? num : p->str, err) < 0)
			goto fail;
	}
	if (r->has_count && (put(t, row, 0, "count", err) < 0 ||
			     putf(t, row++, 1, err, "%lld", r->count) < 0))
		goto fail;
	if (r->stop_reason && (put(t, row, 0, "stop reason", err) < 0 ||
			       put(t, row++, 1, r->stop_reason, err) < 0))
		goto fail;
	if (r->partial && (put(t, row, 0, "partial", err) < 0 ||
			   put(t, row++, 1, "yes: interrupted, incomplete results", err) < 0))
		goto fail;
	t->rows = row; /* the unused rows are empty (NULL) */
	return 0;
fail:
	qp_table_free(t);
	return -1;
}

/* The median of res's base row (kinds.c), for ratios; -1 when there is
 * none, or res is alone in its kind. */
static int base_median(const struct qp_bench_report *r, const struct qp_bench_result *res,
		       double *out, qp_error **err)
{
	size_t peers;
	const struct qp_bench_result *base = qp_result_base(r, res, &peers);
	struct qp_bench_stats st;

	if (!base || peers < 2 || qp_bench_stats(base->samples, base->n, &st, err) < 0)
		return -1;
	*out = st.median;
	return 0;
}

/* "ratio vs runc, qpod-vm-cold": the base rows the ratios use */
static int ratio_head(const struct qp_bench_report *r, char **out, qp_error **err)
{
	char *head = strdup("ratio");
	size_t bases = 0;

	for (size_t i = 0; head && i < r->n_results; i++) {
		size_t peers;
		const struct qp_bench_result *b = qp_result_base(r, r->results[i], &peers), *seen = NULL;
		if (!b || peers < 2 || !r->results[i]->n)
			continue;
		for (size_t j = 0; j < i && !seen; j++) {
			size_t p;
			const struct qp_bench_result *o = qp_result_base(r, r->results[j], &p);
			if (o && p >= 2 && r->results[j]->n && !strcmp(o->name, b->name))
				seen = o;
		}
		if (seen)
			continue;
		char *next;
		if (asprintf(&next, "%s%s%s", head, bases++ ? ", " : " vs ", b->name) < 0)
			next = NULL;
		free(head);
		head = next;
	}
	if (!head)
		return qp_fail(err, ENOMEM, "report");
	*out = head;
	return 0;
}

static int result_row(const struct qp_bench_report *r, size_t i, struct qp_table *t,
		      bool with_target, bool with_test, bool with_note, qp_error **err)
{
	const struct qp_bench_result *res = r->results[i];
	struct qp_bench_stats st = { 0 };
	size_t row = i + 1, col = 0;
	double base;
	char buf[32];

	if (res->n && qp_bench_stats(res->samples, res->n, &st, err) < 0)
		return -1;
	if (put(t, row, col++, res->name, err) < 0 ||
	    (with_target && put(t, row, col++, res->target, err) < 0) ||
	    (with_test && put(t, row, col++, res->test, err) < 0) ||
	    put(t, row, col++, res->metric, err) < 0 || putf(t, row, col++, err, "%zu", res->n) < 0)
		return -1;
	const double vals[] = { st.min, st.max, st.avg, st.median };
	for (size_t k = 0; k < QP_ARRAY_SIZE(vals); k++) {
		qp_report_fmt(vals[k], res->n > 0, buf);
		if (put(t, row, col++, buf, err) < 0)
			return -1;
	}
	if (put(t, row, col++, res->unit, err) < 0)
		return -1;
	if (res->n && base_median(r, res, &base, NULL) == 0 && base != 0 ?
		    putf(t, row, col++, err, "%.2fx", st.median / base) < 0 :
		    put(t, row, col++, "", err) < 0)
		return -1;
	/* a peer that was not measured, or stopped: why */
	return with_note ? put(t, row, col, res->reason ? res->reason : "", err) : 0;
}

int qp_report_results_table(const struct qp_bench_report *r, struct qp_table *t, qp_error **err)
{
	bool with_target = false, with_test = false, with_note = false;
	_cleanup_free_ char *ratio = NULL;
	const char *heads[14];
	size_t ncol = 0, first_num;

	for (size_t i = 0; i < r->n_results; i++) {
		with_target |= r->results[i]->target != NULL;
		with_test |= r->results[i]->test != NULL;
		with_note |= r->results[i]->reason != NULL;
	}
	if (ratio_head(r, &ratio, err) < 0)
		return -1;
	heads[ncol++] = "name";
	if (with_target)
		heads[ncol++] = "target";
	if (with_test)
		heads[ncol++] = "test";
	heads[ncol++] = "metric";
	first_num = ncol;
	const char *rest[] = { "n", "min", "max", "avg", "median", "unit", ratio };
	for (size_t k = 0; k < QP_ARRAY_SIZE(rest); k++)
		heads[ncol++] = rest[k];
	if (with_note)
		heads[ncol++] = "note";
	if (table_init(t, r->n_results + 1, ncol, err) < 0)
		return -1;
	for (size_t c = 0; c < ncol; c++) {
		/* n..median, ratio */
		t->numeric[c] = c >= first_num && c < first_num + 7 && c != first_num + 5;
		if (put(t, 0, c, heads[c], err) < 0)
			goto fail;
	}
	for (size_t i = 0; i < r->n_results; i++)
		if (result_row(r, i, t, with_target, with_test, with_note, err) < 0)
			goto fail;
	return 0;
fail:
	qp_table_free(t);
	return -1;
}

/* Append s to a list of distinct strings. */
static int add_distinct(const char ***list, size_t *n, const char *s, qp_error **err)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*list)[i], s))
			return 0;
	const char **v = reallocarray(*list, *n + 1, sizeof(*v));
	if (!v)
		return qp_fail(err, ENOMEM, "report");
	v[(*n)++] = s;
	*list = v;
	return 0;
}

int qp_report_phase_names(const struct qp_bench_report *r, const char ***names, size_t *n,
			  qp_error **err)
{
	*names = NULL;
	*n = 0;
	for (size_t i = 0; i < r->n_phases; i++)
		if (add_distinct(names, n, r->phases[i].phase, err) < 0) {
			free(*names);
			*names = NULL;
			return -1;
		}
	return 0;
}

int qp_report_phases_table(const struct qp_bench_report *r, struct qp_table *t, qp_error **err)
{
	_cleanup_free_ const char **phases = NULL, **names = NULL;
	size_t np, nn = 0;
	char buf[32];

	if (qp_report_phase_names(r, &phases, &np, err) < 0)
		return -1;
	for (size_t i = 0; i < r->n_phases; i++)
		if (add_distinct(&names, &nn, r->phases[i].name, err) < 0)
			return -1;
	if (table_init(t, np ? nn + 1 : 0, np + 2, err) < 0)
		return -1;
	if (!np)
		return 0;
	if (put(t, 0, 0, "name", err) < 0 || put(t, 0, np + 1, "total ms", err) < 0)
		goto fail;
	for (size_t p = 0; p < np; p++)
		if (putf(t, 0, p + 1, err, "%s ms", phases[p]) < 0)
			goto fail;
	for (size_t c = 1; c < np + 2; c++)
		t->numeric[c] = true;
	for (size_t row = 1; row <= nn; row++) {
		double total = 0;
		if (put(t, row, 0, names[row - 1], err) < 0)
			goto fail;
		for (size_t i = 0; i < r->n_phases; i++) {
			if (strcmp(r->phases[i].name, names[row - 1]))
				continue;
			for (size_t p = 0; p < np; p++)
				if (!strcmp(r->phases[i].phase, phases[p])) {
					qp_report_fmt(r->phases[i].avg_ms, true, buf);
					if (put(t, row, p + 1, buf, err) < 0)
						goto fail;
				}
			total += r->phases[i].avg_ms;
		}
		qp_report_fmt(total, true, buf);
		if (put(t, row, np + 1, buf, err) < 0)
			goto fail;
	}
	return 0;
fail:
	qp_table_free(t);
	return -1;
}
