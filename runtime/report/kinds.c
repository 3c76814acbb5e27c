/* runtime/report/kinds.c — the kind of pod a result row measures, and the
 * row its ratio is taken against: containers against runc (qpod's
 * container pods, runc, crun), sandboxes against runsc, VM pods against
 * qpod's cold boot (qpod-vm*, qboot, seabios, traditional-vm).  Comparing a
 * VM pod with a container row says nothing a reader wants; workload rows
 * (they carry a target) keep one kind, the host first. */
#include <string.h>

#include "report/kinds.h"
#include "report/report.h"

static bool same(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

const char *qp_result_kind(const struct qp_bench_report *r, const struct qp_bench_result *res)
{
	static const char *const containers[] = { "runc", "crun", "qpod-container", "container", NULL };

	if (res->target)
		return "workload";
	if (!strcmp(res->name, "runsc"))
		return "sandbox";
	if (qp_bench_one_of(res->name, containers) ||
	    (!strcmp(res->name, "qpod") && !strcmp(r->mode, "container")))
		return "container";
	return "vm";
}

/* the row of that kind is the base when it has samples */
static const char *const preferred[][2] = {
	{ "container", "runc" }, { "sandbox", "runsc" }, { "vm", "qpod-vm-cold" },
};

const struct qp_bench_result *qp_result_base(const struct qp_bench_report *r,
					     const struct qp_bench_result *res, size_t *peers)
{
	const char *kind = qp_result_kind(r, res), *want = NULL;
	const struct qp_bench_result *first = NULL, *named = NULL;

	for (size_t k = 0; k < sizeof(preferred) / sizeof(preferred[0]); k++)
		if (!strcmp(preferred[k][0], kind))
			want = preferred[k][1];
	*peers = 0;
	for (size_t i = 0; i < r->n_results; i++) {
		const struct qp_bench_result *o = r->results[i];
		if (!o->n || !same(o->metric, res->metric) || !same(o->test, res->test) ||
		    strcmp(qp_result_kind(r, o), kind))
			continue;
		(*peers)++;
		if (!first)
			first = o;
		if (want && !named && !strcmp(o->name, want))
			named = o;
	}
	return named ? named : first;
}
