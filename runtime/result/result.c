/* runtime/result/result.c — the result model and its statistics (result.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "result/result.h"
#include "util/cleanup.h"

const char *const qp_bench_scenarios[] = { "start", "replace", "memory", "density", "workload", "consolidate", "cri", NULL };
const char *const qp_bench_modes[] = { "container", "vm", "both", NULL };
const char *const qp_bench_accels[] = { "kvm", "tcg", "none", NULL };

bool qp_bench_one_of(const char *s, const char *const *list)
{
	for (; s && *list; list++)
		if (!strcmp(s, *list))
			return true;
	return false;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int qp_bench_stats(const double *samples, size_t n, struct qp_bench_stats *out, qp_error **err)
{
	_cleanup_free_ double *sorted = NULL;
	double sum = 0;

	memset(out, 0, sizeof(*out));
	if (n == 0)
		return qp_error_set(err, QP_E_INVALID, 0, "statistics of no samples");
	sorted = malloc(n * sizeof(*sorted));
	if (!sorted)
		return qp_fail(err, ENOMEM, "statistics");
	memcpy(sorted, samples, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), cmp_double);
	for (size_t i = 0; i < n; i++)
		sum += sorted[i];
	out->min = sorted[0];
	out->max = sorted[n - 1];
	out->avg = sum / (double)n;
	out->median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
	return 0;
}

void qp_bench_num_str(double v, char buf[32])
{
	snprintf(buf, 32, "%.15g", v);
	if (strtod(buf, NULL) != v)
		snprintf(buf, 32, "%.17g", v);
}

int qp_bench_set(char **field, const char *value, qp_error **err)
{
	char *copy = NULL;

	if (value && !(copy = strdup(value)))
		return qp_fail(err, ENOMEM, "result");
	free(*field);
	*field = copy;
	return 0;
}

/* Grow *arr (elements of size) so that it holds one more than *n. */
static int grow(void *arr, size_t size, size_t n, qp_error **err)
{
	void *p = realloc(*(void **)arr, (n + 1) * size);
	if (!p)
		return qp_fail(err, ENOMEM, "result");
	*(void **)arr = p;
	return 0;
}

int qp_bench_report_new(const char *scenario, const char *mode, const char *accel,
			struct qp_bench_report **out, qp_error **err)
{
	struct qp_bench_report *r;

	if (!qp_bench_one_of(scenario, qp_bench_scenarios) || !qp_bench_one_of(mode, qp_bench_modes) ||
	    !qp_bench_one_of(accel, qp_bench_accels))
		return qp_error_set(err, QP_E_INVALID, 0, "result: unknown scenario, mode or accel");
	r = calloc(1, sizeof(*r));
	if (!r)
		return qp_fail(err, ENOMEM, "result");
	if (qp_bench_set(&r->version, PACKAGE_VERSION, err) < 0 ||
	    qp_bench_set(&r->scenario, scenario, err) < 0 || qp_bench_set(&r->mode, mode, err) < 0 ||
	    qp_bench_set(&r->accel, accel, err) < 0) {
		qp_bench_report_free(r);
		return -1;
	}
	*out = r;
	return 0;
}

void qp_bench_host_clear(struct qp_bench_host *host)
{
	free(host->cpu);
	free(host->kernel);
	free(host->qemu);
	memset(host, 0, sizeof(*host));
}

static void result_free(struct qp_bench_result *res)
{
	if (!res)
		return;
	free(res->name);
	free(res->metric);
	free(res->unit);
	free(res->target);
	free(res->test);
	free(res->reason);
	free(res->samples);
	free(res);
}

void qp_bench_report_free(struct qp_bench_report *r)
{
	if (!r)
		return;
	free(r->version);
	free(r->scenario);
	free(r->mode);
	free(r->accel);
	qp_bench_host_clear(&r->host);
	for (size_t i = 0; i < r->n_params; i++) {
		free(r->params[i].key);
		free(r->params[i].str);
	}
	free(r->params);
	for (size_t i = 0; i < r->n_results; i++)
		result_free(r->results[i]);
	free(r->results);
	for (size_t i = 0; i < r->n_phases; i++) {
		free(r->phases[i].name);
		free(r->phases[i].phase);
	}
	free(r->phases);
	free(r->stop_reason);
	free(r->definitions);
	free(r);
}

/* The parameter named key, appended (empty) if new. */
static struct qp_bench_param *param_slot(struct qp_bench_report *r, const char *key, qp_error **err)
{
	struct qp_bench_param *p;

	for (size_t i = 0; i < r->n_params; i++)
		if (!strcmp(r->params[i].key, key)) {
			free(r->params[i].str);
			r->params[i].str = NULL;
			return &r->params[i];
		}
	if (grow(&r->params, sizeof(*r->params), r->n_params, err) < 0)
		return NULL;
	p = &r->params[r->n_params];
	memset(p, 0, sizeof(*p));
	if (qp_bench_set(&p->key, key, err) < 0)
		return NULL;
	r->n_params++;
	return p;
}

int qp_bench_param_str(struct qp_bench_report *r, const char *key, const char *value, qp_error **err)
{
	struct qp_bench_param *p = param_slot(r, key, err);

	if (!p)
		return -1;
	p->type = QP_BENCH_PARAM_STR;
	return qp_bench_set(&p->str, value ? value : "", err);
}

int qp_bench_param_num(struct qp_bench_report *r, const char *key, double value, qp_error **err)
{
	struct qp_bench_param *p;

	if (!isfinite(value))
		return qp_error_set(err, QP_E_INVALID, 0, "result: parameter %s is not finite", key);
	if (!(p = param_slot(r, key, err)))
		return -1;
	p->type = QP_BENCH_PARAM_NUM;
	p->num = value;
	return 0;
}

int qp_bench_result_add(struct qp_bench_report *r, const char *name, const char *metric,
			const char *unit, struct qp_bench_result **out, qp_error **err)
{
	struct qp_bench_result *res;

	if (grow(&r->results, sizeof(*r->results), r->n_results, err) < 0)
		return -1;
	res = calloc(1, sizeof(*res));
	if (!res)
		return qp_fail(err, ENOMEM, "result");
	if (qp_bench_set(&res->name, name, err) < 0 || qp_bench_set(&res->metric, metric, err) < 0 ||
	    qp_bench_set(&res->unit, unit, err) < 0) {
		result_free(res);
		return -1;
	}
	r->results[r->n_results++] = res;
	if (out)
		*out = res;
	return 0;
}

int qp_bench_result_tag(struct qp_bench_result *res, const char *target, const char *test,
			qp_error **err)
{
	if (qp_bench_set(&res->target, target, err) < 0 || qp_bench_set(&res->test, test, err) < 0)
		return -1;
	return 0;
}

int qp_bench_sample(struct qp_bench_result *res, double value, qp_error **err)
{
	if (!isfinite(value))
		return qp_error_set(err, QP_E_INVALID, 0, "result %s: sample is not finite", res->name);
	if (res->n == res->cap) {
		size_t cap = res->cap ? res->cap * 2 : 16;
		double *p = reallocarray(res->samples, cap, sizeof(*p));
		if (!p)
			return qp_fail(err, ENOMEM, "result");
		res->samples = p;
		res->cap = cap;
	}
	res->samples[res->n++] = value;
	return 0;
}

int qp_bench_phase(struct qp_bench_report *r, const char *name, const char *phase, double avg_ms,
		   qp_error **err)
{
	struct qp_bench_phase *p;

	if (!isfinite(avg_ms))
		return qp_error_set(err, QP_E_INVALID, 0, "result: phase %s is not finite", phase);
	for (size_t i = 0; i < r->n_phases; i++)
		if (!strcmp(r->phases[i].name, name) && !strcmp(r->phases[i].phase, phase)) {
			r->phases[i].avg_ms = avg_ms;
			return 0;
		}
	if (grow(&r->phases, sizeof(*r->phases), r->n_phases, err) < 0)
		return -1;
	p = &r->phases[r->n_phases];
	memset(p, 0, sizeof(*p));
	p->avg_ms = avg_ms;
	if (qp_bench_set(&p->name, name, err) < 0 || qp_bench_set(&p->phase, phase, err) < 0) {
		free(p->name);
		return -1;
	}
	r->n_phases++;
	return 0;
}

struct qp_bench_result *qp_bench_result_find(const struct qp_bench_report *r, const char *name,
					     const char *metric)
{
	for (size_t i = 0; i < r->n_results; i++)
		if (!strcmp(r->results[i]->name, name) && !strcmp(r->results[i]->metric, metric))
			return r->results[i];
	return NULL;
}
