/* runtime/report/consolidate_table.c — a `bench consolidate` result in the
 * layout of OpenVZ's vConsolidate/LAMP pages: one table per kind of pod,
 * a row per number of pods running the mixed workload at once, the
 * aggregate throughputs and the worst pod's latency; then, for each N both
 * kinds reached, vm as % of container (100% = as good as the container). */
#include <stdio.h>
#include <string.h>

#include "report/report.h"

static const struct {
	const char *metric, *label;
} cols[] = {
	{ "aggregate_int_dmips", "CPU [DMIPS]" },
	{ "aggregate_stream_gbs", "memory [GB/s]" },
	{ "aggregate_rr_rate", "TCP_RR [trans/s]" },
	{ "worst_p50_us", "worst p50 [us]" },
	{ "worst_p99_us", "worst p99 [us]" },
};
#define NCOLS (sizeof(cols) / sizeof(cols[0]))
static const char *const kinds[] = { "container", "vm" };

static const struct qp_bench_result *series(const struct qp_bench_report *r, const char *kind,
					    const char *metric)
{
	for (size_t i = 0; i < r->n_results; i++)
		if (!strcmp(r->results[i]->name, kind) && !strcmp(r->results[i]->metric, metric))
			return r->results[i];
	return NULL;
}

static void header(bool markdown, const char *first, FILE *f)
{
	fprintf(f, markdown ? "| %s |" : "%-6s", first);
	for (size_t c = 0; c < NCOLS; c++)
		fprintf(f, markdown ? " %s |" : "  %18s", cols[c].label);
	fprintf(f, "\n");
	if (markdown) {
		fprintf(f, "| ---: |");
		for (size_t c = 0; c < NCOLS; c++)
			fprintf(f, " ---: |");
		fprintf(f, "\n");
	}
}

void qp_consolidate_table(const struct qp_bench_report *r, bool markdown, FILE *f)
{
	size_t both = (size_t)-1;

	fprintf(f, "%sConsolidation (OpenVZ's vConsolidate / LAMP): N pods at once, each running intbench and "
		   "stream and serving TCP_RR to a host client; accel of the vm: %s\n",
		markdown ? "## " : "", r->accel);
	for (size_t k = 0; k < 2; k++) {
		const struct qp_bench_result *first = series(r, kinds[k], cols[0].metric);
		if (!first || !first->n)
			continue;
		both = both < first->n ? both : first->n;
		fprintf(f, "\n%s%s pods\n%s", markdown ? "### " : "", kinds[k], markdown ? "\n" : "");
		header(markdown, "N", f);
		for (size_t i = 0; i < first->n; i++) {
			fprintf(f, markdown ? "| %zu |" : "%-6zu", i + 1);
			for (size_t c = 0; c < NCOLS; c++) {
				const struct qp_bench_result *x = series(r, kinds[k], cols[c].metric);
				char v[32];
				qp_report_fmt(x && i < x->n ? x->samples[i] : 0, x && i < x->n, v);
				fprintf(f, markdown ? " %s |" : "  %18s", v);
			}
			fprintf(f, "\n");
		}
	}
	if (!series(r, kinds[0], cols[0].metric) || !series(r, kinds[1], cols[0].metric) || both == (size_t)-1)
		return;
	fprintf(f, "\n%svm as %% of container (100%% = as good as the container)\n%s", markdown ? "### " : "",
		markdown ? "\n" : "");
	header(markdown, "N", f);
	for (size_t i = 0; i < both; i++) {
		fprintf(f, markdown ? "| %zu |" : "%-6zu", i + 1);
		for (size_t c = 0; c < NCOLS; c++) {
			const struct qp_bench_result *v = series(r, "vm", cols[c].metric),
						     *ct = series(r, "container", cols[c].metric);
			char cell[32] = "-";
			if (v && ct && i < v->n && i < ct->n && v->samples[i] > 0 && ct->samples[i] > 0)
				snprintf(cell, sizeof(cell), "%.1f%%",
					 100 * (qp_result_lower_is_better(v) ? ct->samples[i] / v->samples[i]
									     : v->samples[i] / ct->samples[i]));
			fprintf(f, markdown ? " %s |" : "  %18s", cell);
		}
		fprintf(f, "\n");
	}
}
