/* runtime/result/write.c — the JSON writer of the result format
 * (result.h, docs/REPORTS.md). */
#include <errno.h>
#include <string.h>

#include "result/result.h"
#include "util/cleanup.h"
#include "util/json.h"

/* Numbers in their shortest exact form (yajl_gen_double prints 20 digits). */
static void num(yajl_gen g, double v)
{
	char buf[32];

	qp_bench_num_str(v, buf);
	yajl_gen_number(g, buf, strlen(buf));
}

static void knum(yajl_gen g, const char *key, double v)
{
	qp_json_key(g, key);
	num(g, v);
}

static void write_host(yajl_gen g, const struct qp_bench_host *h)
{
	qp_json_key(g, "host");
	yajl_gen_map_open(g);
	qp_json_kstr(g, "cpu", h->cpu);
	qp_json_kint(g, "cores", h->cores);
	qp_json_kint(g, "mem_mb", h->mem_mb);
	qp_json_kstr(g, "kernel", h->kernel);
	qp_json_kstr(g, "qemu", h->qemu);
	yajl_gen_map_close(g);
}

static void write_params(yajl_gen g, const struct qp_bench_report *r)
{
	qp_json_key(g, "params");
	yajl_gen_map_open(g);
	for (size_t i = 0; i < r->n_params; i++) {
		if (r->params[i].type == QP_BENCH_PARAM_NUM)
			knum(g, r->params[i].key, r->params[i].num);
		else
			qp_json_kstr(g, r->params[i].key, r->params[i].str);
	}
	yajl_gen_map_close(g);
}

static int write_result(yajl_gen g, const struct qp_bench_result *res, qp_error **err)
{
	struct qp_bench_stats st = { 0 };

	if (res->n && qp_bench_stats(res->samples, res->n, &st, err) < 0)
		return -1;
	yajl_gen_map_open(g);
	qp_json_kstr(g, "name", res->name);
	qp_json_kstr(g, "metric", res->metric);
	qp_json_kstr(g, "unit", res->unit);
	if (res->target)
		qp_json_kstr(g, "target", res->target);
	if (res->test)
		qp_json_kstr(g, "test", res->test);
	if (res->reason)
		qp_json_kstr(g, "reason", res->reason);
	qp_json_kint(g, "n", (long long)res->n);
	/* no samples (a scenario that failed before its first run): null stats */
	const char *keys[] = { "min", "max", "avg", "median" };
	const double vals[] = { st.min, st.max, st.avg, st.median };
	for (size_t k = 0; k < QP_ARRAY_SIZE(keys); k++) {
		qp_json_key(g, keys[k]);
		if (res->n)
			num(g, vals[k]);
		else
			yajl_gen_null(g);
	}
	qp_json_key(g, "samples");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < res->n; i++)
		num(g, res->samples[i]);
	yajl_gen_array_close(g);
	yajl_gen_map_close(g);
	return 0;
}

/* {"name": {"phase": ms, ...}, ...}: names in first-seen order */
static void write_phases(yajl_gen g, const struct qp_bench_report *r)
{
	qp_json_key(g, "phases");
	yajl_gen_map_open(g);
	for (size_t i = 0; i < r->n_phases; i++) {
		const char *name = r->phases[i].name;
		size_t j;
		for (j = 0; j < i && strcmp(r->phases[j].name, name); j++)
			;
		if (j < i)
			continue; /* written with its first occurrence */
		qp_json_key(g, name);
		yajl_gen_map_open(g);
		for (j = i; j < r->n_phases; j++)
			if (!strcmp(r->phases[j].name, name))
				knum(g, r->phases[j].phase, r->phases[j].avg_ms);
		yajl_gen_map_close(g);
	}
	yajl_gen_map_close(g);
}

int qp_bench_report_write_json(const struct qp_bench_report *r, FILE *f, qp_error **err)
{
	_cleanup_free_ char *text = NULL;
	yajl_gen g = qp_json_gen_new(true);
	size_t len;

	if (!g)
		return qp_fail(err, ENOMEM, "write result");
	yajl_gen_map_open(g);
	qp_json_kstr(g, "tool", "qpod");
	qp_json_kstr(g, "version", r->version);
	qp_json_kstr(g, "scenario", r->scenario);
	qp_json_kstr(g, "mode", r->mode);
	qp_json_kstr(g, "accel", r->accel);
	write_host(g, &r->host);
	write_params(g, r);
	qp_json_key(g, "results");
	yajl_gen_array_open(g);
	for (size_t i = 0; i < r->n_results; i++)
		if (write_result(g, r->results[i], err) < 0) {
			yajl_gen_free(g);
			return qp_error_prefix(err, "write result");
		}
	yajl_gen_array_close(g);
	write_phases(g, r);
	qp_json_kbool(g, "partial", r->partial);
	if (r->has_count)
		qp_json_kint(g, "count", r->count);
	if (r->stop_reason)
		qp_json_kstr(g, "stop_reason", r->stop_reason);
	if (r->definitions)
		qp_json_kstr(g, "definitions", r->definitions);
	yajl_gen_map_close(g);
	if (qp_json_gen_finish(g, &text, &len, err) < 0)
		return qp_error_prefix(err, "write result");
	if (fwrite(text, 1, len, f) != len || fputc('\n', f) == EOF || fflush(f) == EOF)
		return qp_fail(err, errno, "write result");
	return 0;
}
