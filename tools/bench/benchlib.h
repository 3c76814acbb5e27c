/* benchlib.h — what every workload benchmark of tools/bench shares: option
 * parsing (--duration, --count and a tool's own options), the timed loop on
 * CLOCK_MONOTONIC, and the one JSON result line.
 *
 * These are tiny standalone programs, so errors end the process here:
 * bad input prints "TOOL: <what>: <reason>" and exits 2 (bench_usage_error),
 * a failed run prints the same and exits 1 (bench_error; bench_fail gives
 * strerror(errno) as the reason). Nothing of this belongs in libqpod. */
#ifndef QPOD_BENCHLIB_H
#define QPOD_BENCHLIB_H

#include <stddef.h>

#define BENCH_DEFAULT_DURATION 2.0

enum bench_opt_type {
	BENCH_OPT_DOUBLE, /* double *, min < value <= max */
	BENCH_OPT_LONG,   /* long long *, min <= value <= max, whole */
	BENCH_OPT_STRING, /* const char ** */
	BENCH_OPT_FLAG,   /* int *, set to 1; takes no value */
};

/* One option of a tool; a table of them ends with a zero entry. */
struct bench_opt {
	const char *name; /* "--pairs" */
	enum bench_opt_type type;
	void *value;
	double min, max;
};

/* Which of the common options a tool takes. */
#define BENCH_DURATION 1
#define BENCH_COUNT 2

struct bench_args {
	double duration;  /* seconds, > 0 */
	long long count;  /* > 0: run exactly this many operations instead */
};

/* The tool's name for messages and the JSON line; call first. */
void bench_init(const char *tool);

/* Parse argv[first..argc): the common options in `common`, then the tool's
 * own (opts may be NULL). --help prints `usage` and exits 0. Defaults:
 * duration 2 s, count 0. */
void bench_parse(struct bench_args *a, int common, const struct bench_opt *opts,
		 const char *usage, int argc, char **argv, int first);

void bench_usage_error(const char *what, const char *reason) __attribute__((noreturn));
void bench_error(const char *what, const char *reason) __attribute__((noreturn));
void bench_fail(const char *what) __attribute__((noreturn));

double bench_now(void); /* CLOCK_MONOTONIC, seconds */

/* Run op(ctx, n) (n operations each call) until a->duration has passed, or
 * exactly a->count operations. Batches grow while a call is short, so the
 * clock is read rarely. Returns the operations done; *secs the time taken. */
long long bench_run(const struct bench_args *a, void (*op)(void *ctx, long long n), void *ctx,
		    double *secs);

/* The whole main() of a tool that times one operation: bench_init, parse
 * --duration/--count, bench_run, report ops/s under `test`. */
int bench_ops_main(const char *tool, const char *test, void (*op)(void *ctx, long long n),
		   void *ctx, int argc, char **argv);

/* An extra field of the result line. */
struct bench_field {
	const char *name;
	double value;
	enum { BENCH_NUM, BENCH_INT, BENCH_BOOL } kind;
};

/* Print the one JSON line: {"tool","test","score","unit","duration_s",
 * "iterations", then the extra fields}. */
void bench_report(const char *test, double score, const char *unit, double secs,
		  long long iterations, const struct bench_field *extra, size_t n_extra);

/* A latency histogram: buckets 2% wide from 1 us up (about 100 s at the
 * top), so percentiles are within 2% whatever the spread; one per process
 * (forked workers each fill their own) and added up. */
#define BENCH_HIST_BUCKETS 1024
struct bench_hist {
	unsigned long long n[BENCH_HIST_BUCKETS];
	unsigned long long total;
	double sum; /* seconds */
};
void bench_hist_add(struct bench_hist *h, double secs);
/* The p-th percentile (0 < p <= 100) in seconds: the upper edge of the
 * bucket holding it; 0 when empty. */
double bench_hist_pct(const struct bench_hist *h, double p);
void bench_hist_merge(struct bench_hist *into, const struct bench_hist *from);

#endif
