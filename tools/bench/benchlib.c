/* benchlib.c — the shared part of the workload benchmarks (see benchlib.h). */
#include "benchlib.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *tool = "bench";

void bench_init(const char *name)
{
	tool = name;
}

static __attribute__((noreturn)) void die(const char *what, const char *reason, int status)
{
	fprintf(stderr, "%s: %s: %s\n", tool, what, reason);
	exit(status);
}

void bench_usage_error(const char *what, const char *reason)
{
	die(what, reason, 2);
}

void bench_error(const char *what, const char *reason)
{
	die(what, reason, 1);
}

void bench_fail(const char *what)
{
	die(what, strerror(errno), 1);
}

/* "--name value" for messages */
static const char *opt_what(const char *name, const char *value)
{
	static char buf[256];
	snprintf(buf, sizeof(buf), "%s %s", name, value);
	return buf;
}

static void parse_number(const struct bench_opt *o, const char *s)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end != '\0' || errno == ERANGE || !isfinite(v))
		bench_usage_error(opt_what(o->name, s), "not a number");
	if (o->type == BENCH_OPT_LONG && v != floor(v))
		bench_usage_error(opt_what(o->name, s), "not a whole number");
	if (v < o->min || (o->type == BENCH_OPT_DOUBLE && v == o->min) || v > o->max) {
		char reason[96];
		snprintf(reason, sizeof(reason), "must be %s %g and at most %g",
			 o->type == BENCH_OPT_DOUBLE ? ">" : ">=", o->min, o->max);
		bench_usage_error(opt_what(o->name, s), reason);
	}
	if (o->type == BENCH_OPT_DOUBLE)
		*(double *)o->value = v;
	else
		*(long long *)o->value = (long long)v;
}

static const struct bench_opt *find_opt(const struct bench_opt *opts, const char *name, size_t len)
{
	for (; opts && opts->name; opts++)
		if (strlen(opts->name) == len && strncmp(opts->name, name, len) == 0)
			return opts;
	return NULL;
}

void bench_parse(struct bench_args *a, int common, const struct bench_opt *opts,
		 const char *usage, int argc, char **argv, int first)
{
	const struct bench_opt common_opts[] = {
		{ "--duration", BENCH_OPT_DOUBLE, &a->duration, 0, 86400 },
		{ "--count", BENCH_OPT_LONG, &a->count, 1, 1e15 },
		{ 0 },
	};
	int seen_duration = 0;

	a->duration = BENCH_DEFAULT_DURATION;
	a->count = 0;
	for (int i = first; i < argc; i++) {
		const char *arg = argv[i], *eq = strchr(arg, '='), *value;
		size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
		const struct bench_opt *o = find_opt(opts, arg, len);

		if (strcmp(arg, "--help") == 0) {
			printf("%s\n", usage);
			exit(0);
		}
		if (!o) {
			o = find_opt(common_opts, arg, len);
			if (o && !(common & (o == common_opts ? BENCH_DURATION : BENCH_COUNT)))
				o = NULL;
		}
		if (!o)
			bench_usage_error(arg, "unknown option (try --help)");
		if (o->type == BENCH_OPT_FLAG) {
			if (eq)
				bench_usage_error(arg, "takes no value");
			*(int *)o->value = 1;
			continue;
		}
		if (eq)
			value = eq + 1;
		else if (i + 1 < argc)
			value = argv[++i];
		else
			bench_usage_error(o->name, "needs a value");
		if (o->type == BENCH_OPT_STRING)
			*(const char **)o->value = value;
		else
			parse_number(o, value);
		seen_duration |= o->value == &a->duration;
	}
	if (seen_duration && a->count)
		bench_usage_error("--count", "cannot be combined with --duration");
}

double bench_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

long long bench_run(const struct bench_args *a, void (*op)(void *ctx, long long n), void *ctx,
		    double *secs)
{
	long long done = 0, batch = 1;
	double start = bench_now(), last = start, now;

	for (;;) {
		if (a->count && batch > a->count - done)
			batch = a->count - done;
		op(ctx, batch);
		done += batch;
		now = bench_now();
		if (a->count ? done >= a->count : now - start >= a->duration)
			break;
		/* aim at batches of about 1/100 of the run, at most 10 ms */
		if (now - last < 0.01 && now - last < a->duration / 100)
			batch *= 2;
		last = now;
	}
	*secs = now - start;
	return done;
}

static void print_num(double v)
{
	if (!isfinite(v))
		fputs("null", stdout);
	else if (fabs(v) >= 100)
		printf("%.1f", v);
	else
		printf("%.4g", v);
}

void bench_report(const char *test, double score, const char *unit, double secs,
		  long long iterations, const struct bench_field *extra, size_t n_extra)
{
	printf("{\"tool\":\"%s\",\"test\":\"%s\",\"score\":", tool, test);
	print_num(score);
	printf(",\"unit\":\"%s\",\"duration_s\":", unit);
	print_num(secs);
	printf(",\"iterations\":%lld", iterations);
	for (size_t i = 0; i < n_extra; i++) {
		printf(",\"%s\":", extra[i].name);
		if (extra[i].kind == BENCH_BOOL)
			fputs(extra[i].value != 0 ? "true" : "false", stdout);
		else if (extra[i].kind == BENCH_INT)
			printf("%lld", (long long)extra[i].value);
		else
			print_num(extra[i].value);
	}
	puts("}");
	fflush(stdout);
}

int bench_ops_main(const char *name, const char *test, void (*op)(void *ctx, long long n),
		   void *ctx, int argc, char **argv)
{
	struct bench_args a;
	char usage[128];
	long long n;
	double secs;

	bench_init(name);
	snprintf(usage, sizeof(usage), "usage: %s [--duration SECONDS | --count N]", name);
	bench_parse(&a, BENCH_DURATION | BENCH_COUNT, NULL, usage, argc, argv, 1);
	n = bench_run(&a, op, ctx, &secs);
	bench_report(test, n / secs, "ops/s", secs, n, NULL, 0);
	return 0;
}

#define HIST_BASE 1e-6 /* seconds: the first bucket's upper edge */
#define HIST_STEP 1.02

void bench_hist_add(struct bench_hist *h, double secs)
{
	long b = secs <= HIST_BASE ? 0 : (long)ceil(log(secs / HIST_BASE) / log(HIST_STEP));

	if (b >= BENCH_HIST_BUCKETS)
		b = BENCH_HIST_BUCKETS - 1;
	h->n[b]++;
	h->total++;
	h->sum += secs;
}

double bench_hist_pct(const struct bench_hist *h, double p)
{
	unsigned long long want = (unsigned long long)ceil((double)h->total * p / 100), seen = 0;

	if (!h->total)
		return 0;
	if (want < 1)
		want = 1;
	for (long b = 0; b < BENCH_HIST_BUCKETS; b++)
		if ((seen += h->n[b]) >= want)
			return HIST_BASE * pow(HIST_STEP, (double)b);
	return HIST_BASE * pow(HIST_STEP, BENCH_HIST_BUCKETS - 1);
}

void bench_hist_merge(struct bench_hist *into, const struct bench_hist *from)
{
	for (long b = 0; b < BENCH_HIST_BUCKETS; b++)
		into->n[b] += from->n[b];
	into->total += from->total;
	into->sum += from->sum;
}
