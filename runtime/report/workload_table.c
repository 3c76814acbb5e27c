/* runtime/report/workload_table.c — the seeds' layout for `bench workload`
 * results: one table per family (OpenVZ's microbenchmarks and response
 * time, Hyper's CPU and memory tables, the network pair, the thesis's HTTP
 * and file I/O), rows = targets, columns = a test's metric, each cell the
 * median with min-max and the % of the host's median (100% = as good as
 * the host: target/host for scores, host/target for times); then the
 * host-normalised index (workload_index.c). */
#include <stdio.h>
#include <string.h>

#include "report/report.h"

#define COLS 7

struct column {
	const char *test, *metric, *label; /* label NULL: the test's name */
};

static const struct {
	const char *title;
	struct column cols[COLS];
} families[] = {
	{ "Microbenchmarks (OpenVZ's table)",
	  { { "ctxsw", "score" }, { "ctxsw8", "score" }, { "execve", "score" }, { "fork", "score" },
	    { "syscall", "score" } } },
	{ "CPU (Hyper's table)", { { "int", "score" }, { "fp", "score" } } },
	{ "Memory (Hyper's table)", { { "stream", "score" } } },
	{ "Network (netperf TCP_RR / TCP_SENDFILE style)",
	  { { "tcp_rr", "score" }, { "tcp_stream", "score", "stream in" }, { "tcp_stream_out", "score", "stream out" } } },
	{ "Response time under load (OpenVZ's page): TCP round trip to a server in the pod",
	  { { "rr_idle", "p50_us", "idle p50" },
	    { "rr_idle", "p99_us", "idle p99" },
	    { "rr_busy_host", "p50_us", "busy host p50" },
	    { "rr_busy_host", "p99_us", "busy host p99" },
	    { "rr_busy_pod", "p50_us", "busy host+pod p50" },
	    { "rr_busy_pod", "p99_us", "busy host+pod p99" } } },
	{ "HTTP (the thesis's Siege runs): a static page from busybox httpd in the pod",
	  { { "http", "score", "requests" }, { "http", "p50_us", "response p50" }, { "http", "p99_us", "response p99" } } },
	{ "File I/O on the pod's root (UnixBench file write/read/copy, fsync'd; vm: 9p)",
	  { { "file_write", "score", "write" },
	    { "file_read", "score", "read" },
	    { "file_copy", "score", "copy" },
	    { "file_create", "score", "create+delete" } } },
	{ "File I/O on a scratch volume (a bind mount; vm: its own 9p share)",
	  { { "vol_write", "score", "write" },
	    { "vol_read", "score", "read" },
	    { "vol_copy", "score", "copy" },
	    { "vol_create", "score", "create+delete" } } },
};
static const char *const targets[] = { "host", "runc", "crun", "runsc", "container", "vm", "vm-netns", NULL };

static const struct qp_bench_result *find(const struct qp_bench_report *r, const char *target,
					  const struct column *c)
{
	return qp_workload_find(r, target, c->test, c->metric);
}

static int num(char *buf, size_t size, double v)
{
	return snprintf(buf, size, v >= 100 || v <= -100 ? "%.0f" : "%.2f", v);
}

/* Any target has this column. */
static const struct qp_bench_result *ran(const struct qp_bench_report *r, const struct column *c)
{
	const struct qp_bench_result *x = NULL;
	for (int g = 0; targets[g] && !x; g++)
		x = find(r, targets[g], c);
	return x;
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
	if (host && host != x && qp_bench_stats(host->samples, host->n, &h, NULL) == 0 && h.median > 0 &&
	    s.median > 0)
		snprintf(buf + n, size - (size_t)n, " %.1f%%",
			 100.0 * (qp_result_lower_is_better(x) ? h.median / s.median : s.median / h.median));
}

static void family(const struct qp_bench_report *r, size_t fam, bool markdown, FILE *f)
{
	const struct column *cols = families[fam].cols;
	bool any = false;

	for (int t = 0; t < COLS && cols[t].test; t++)
		any |= ran(r, &cols[t]) != NULL;
	if (!any)
		return;
	fprintf(f, "\n%s%s\n", markdown ? "### " : "", families[fam].title);
	if (markdown)
		fprintf(f, "\n");
	fprintf(f, markdown ? "| target |" : "%-10s", markdown ? "" : "target");
	for (int t = 0; t < COLS && cols[t].test; t++) {
		const struct qp_bench_result *x = ran(r, &cols[t]);
		char head[160];
		if (!x)
			continue;
		snprintf(head, sizeof(head), "%s [%s]", cols[t].label ? cols[t].label : cols[t].test, x->unit);
		fprintf(f, markdown ? " %s |" : "  %-36s", head);
	}
	fprintf(f, "\n");
	if (markdown) {
		fprintf(f, "| --- |");
		for (int t = 0; t < COLS && cols[t].test; t++)
			if (ran(r, &cols[t]))
				fprintf(f, " ---: |");
		fprintf(f, "\n");
	}
	for (int g = 0; targets[g]; g++) {
		bool row = false;
		for (int t = 0; t < COLS && cols[t].test; t++)
			row |= find(r, targets[g], &cols[t]) != NULL;
		if (!row)
			continue;
		fprintf(f, markdown ? "| %s |" : "%-10s", targets[g]);
		for (int t = 0; t < COLS && cols[t].test; t++) {
			char c[96];
			if (!ran(r, &cols[t]))
				continue;
			cell(find(r, targets[g], &cols[t]), find(r, "host", &cols[t]), c, sizeof(c));
			fprintf(f, markdown ? " %s |" : "  %-36s", c);
		}
		fprintf(f, "\n");
	}
}

/* The mirrored namespace against qpod's bridge, same VM, same run (issue
 * 30's goal): "vm-netns / vm: stream in 0.95x, ..." per network column
 * both have. */
static void netns_line(const struct qp_bench_report *r, size_t fam, bool markdown, FILE *f)
{
	const struct column *cols = families[fam].cols;
	bool any = false;

	for (int t = 0; t < COLS && cols[t].test; t++) {
		const struct qp_bench_result *a = find(r, "vm-netns", &cols[t]), *b = find(r, "vm", &cols[t]);
		struct qp_bench_stats sa, sb;
		if (!a || !b || qp_bench_stats(a->samples, a->n, &sa, NULL) < 0 ||
		    qp_bench_stats(b->samples, b->n, &sb, NULL) < 0 || sa.median <= 0 || sb.median <= 0)
			continue;
		if (!any)
			fprintf(f, "%svm-netns / vm (medians, this run):", markdown ? "\n" : "");
		fprintf(f, "%s %s %.2fx", any ? "," : "", cols[t].label ? cols[t].label : cols[t].test,
			qp_result_lower_is_better(a) ? sb.median / sa.median : sa.median / sb.median);
		any = true;
	}
	if (any)
		fprintf(f, "\n");
}

void qp_workload_index_line(const struct qp_bench_report *r, FILE *f)
{
	struct qp_workload_index idx[8];
	size_t n = qp_workload_index(r, idx, 8);

	if (!n)
		return;
	fprintf(f, "Index (host = 10 for each test, geometric mean per target):");
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "%s ", i ? "," : "");
		qp_put_plain(f, idx[i].target);
		fprintf(f, " %.2f (%zu test%s)", idx[i].value, idx[i].tests, idx[i].tests == 1 ? "" : "s");
	}
	fprintf(f, "\n");
}

void qp_workload_table(const struct qp_bench_report *r, bool markdown, FILE *f)
{
	double runs = 0;
	for (size_t i = 0; i < r->n_params; i++)
		if (!strcmp(r->params[i].key, "runs"))
			runs = r->params[i].num;
	fprintf(f, "%sWorkloads: median (min-max) of %.0f runs, %% of host (100%% = as good as the host)"
		   "; accel of the vm: %s\n",
		markdown ? "## " : "", runs, r->accel);
	if (!strcmp(r->accel, "tcg"))
		fprintf(f, "%sWARNING: the vm ran under TCG: its figures measure an emulator, not a hypervisor.\n",
			markdown ? "\n" : "");
	for (size_t fam = 0; fam < sizeof(families) / sizeof(families[0]); fam++) {
		family(r, fam, markdown, f);
		if (!strncmp(families[fam].title, "Network", 7))
			netns_line(r, fam, markdown, f);
	}
	fprintf(f, "\n");
	qp_workload_index_line(r, f);
}
