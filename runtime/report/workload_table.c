/* runtime/report/workload_table.c — the seeds' layout for `qpod bench
 * workload` results: one table per family (OpenVZ's microbenchmarks,
 * Hyper's CPU and memory tables, the network pair), rows = targets, columns
 * = tests, each cell the median with min-max and the % of the host's median
 * (for these scores higher is better, so % = target / host). */
#include <stdio.h>
#include <string.h>

#include "report/report.h"

static const struct {
	const char *title;
	const char *tests[6];
} families[] = {
	{ "Microbenchmarks (OpenVZ's table)", { "ctxsw", "ctxsw8", "execve", "fork", "syscall", NULL } },
	{ "CPU (Hyper's table)", { "int", "fp", NULL } },
	{ "Memory (Hyper's table)", { "stream", NULL } },
	{ "Network (netperf TCP_RR / TCP_SENDFILE style)", { "tcp_rr", "tcp_stream", NULL } },
};
static const char *const targets[] = { "host", "container", "vm", NULL };

static const struct qp_bench_result *find(const struct qp_bench_report *r, const char *target,
					  const char *test)
{
	for (size_t i = 0; i < r->n_results; i++) {
		const struct qp_bench_result *x = r->results[i];
		if (x->n && x->target && x->test && !strcmp(x->target, target) && !strcmp(x->test, test))
			return x;
	}
	return NULL;
}

static int num(char *buf, size_t size, double v)
{
	return snprintf(buf, size, v >= 100 || v <= -100 ? "%.0f" : "%.2f", v);
}

static bool ran(const struct qp_bench_report *r, const char *test)
{
	for (int g = 0; targets[g]; g++)
		if (find(r, targets[g], test))
			return true;
	return false;
}

static void cell(const struct qp_bench_result *x, const struct qp_bench_result *host, char *buf,
		 size_t size)
{
	struct qp_bench_stats s, h;

	if (!x || qp_bench_stats(x->samples, x->n, &s, NULL) < 0) {
		snprintf(buf, size, "-");
		return;
	}
	char a[32], b[32], c[32];
	num(a, sizeof(a), s.median), num(b, sizeof(b), s.min), num(c, sizeof(c), s.max);
	int n = snprintf(buf, size, "%s (%s-%s)", a, b, c);
	if (host && host != x && qp_bench_stats(host->samples, host->n, &h, NULL) == 0 && h.median > 0)
		snprintf(buf + n, size - (size_t)n, " %.1f%%", 100.0 * s.median / h.median);
}

void qp_workload_table(const struct qp_bench_report *r, bool markdown, FILE *f)
{
	double runs = 0;
	for (size_t i = 0; i < r->n_params; i++)
		if (!strcmp(r->params[i].key, "runs"))
			runs = r->params[i].num;
	fprintf(f, "%sWorkloads: median (min-max) of %.0f runs, %% of host; accel of the vm: %s\n",
		markdown ? "## " : "", runs, r->accel);
	if (!strcmp(r->accel, "tcg"))
		fprintf(f, "%sWARNING: the vm ran under TCG: its figures measure an emulator, not a hypervisor.\n",
			markdown ? "\n" : "");
	for (size_t fam = 0; fam < sizeof(families) / sizeof(families[0]); fam++) {
		bool any = false;
		for (int t = 0; families[fam].tests[t]; t++)
			for (int g = 0; targets[g]; g++)
				any |= find(r, targets[g], families[fam].tests[t]) != NULL;
		if (!any)
			continue;
		fprintf(f, "\n%s%s\n", markdown ? "### " : "", families[fam].title);
		if (markdown)
			fprintf(f, "\n");
		fprintf(f, markdown ? "| target |" : "%-10s", markdown ? "" : "target");
		for (int t = 0; families[fam].tests[t]; t++) {
			const struct qp_bench_result *any_r = NULL;
			if (!ran(r, families[fam].tests[t]))
				continue;
			for (int g = 0; targets[g] && !any_r; g++)
				any_r = find(r, targets[g], families[fam].tests[t]);
			char head[96];
			snprintf(head, sizeof(head), "%s [%s]", families[fam].tests[t], any_r ? any_r->unit : "");
			fprintf(f, markdown ? " %s |" : "  %-36s", head);
		}
		fprintf(f, "\n");
		if (markdown) {
			fprintf(f, "| --- |");
			for (int t = 0; families[fam].tests[t]; t++)
				if (ran(r, families[fam].tests[t]))
					fprintf(f, " ---: |");
			fprintf(f, "\n");
		}
		for (int g = 0; targets[g]; g++) {
			bool row = false;
			for (int t = 0; families[fam].tests[t]; t++)
				row |= find(r, targets[g], families[fam].tests[t]) != NULL;
			if (!row)
				continue;
			fprintf(f, markdown ? "| %s |" : "%-10s", targets[g]);
			for (int t = 0; families[fam].tests[t]; t++) {
				char c[96];
				if (!ran(r, families[fam].tests[t]))
					continue;
				cell(find(r, targets[g], families[fam].tests[t]),
				     find(r, "host", families[fam].tests[t]), c, sizeof(c));
				fprintf(f, markdown ? " %s |" : "  %-36s", c);
			}
			fprintf(f, "\n");
		}
	}
}
