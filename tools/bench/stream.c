/* stream — sustainable memory bandwidth after the STREAM benchmark's
 * definition (McCalpin): four kernels over three arrays of doubles,
 *   copy  c = a          16 bytes moved per element
 *   scale b = s*c        16
 *   add   c = a + b      24
 *   triad a = b + s*c    24
 * one thread, arrays far beyond the last-level cache (default 3 x 16M
 * doubles = 384 MiB; --size ELEMENTS per array). A repetition runs the four
 * kernels in order; the result per kernel is the best bandwidth of all
 * repetitions but the first (GB/s = 1e9 bytes/s). Runs until --duration
 * has passed (at least 3 repetitions) or exactly --count repetitions.
 * Then every element is checked against the values the same recurrence
 * gives on scalars (the same operations in the same order); a wrong array means "valid":false and exit 1. */
#include "benchlib.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/sysinfo.h>

/* Not STREAM's 3.0: with s = sqrt(2) - 1 a repetition maps a to
 * a * (2s + s^2) = a, so the values stay near 1 however long the run (with
 * 3.0 they grow 15-fold a repetition and overflow after ~260). */
#define SCALAR 0.41421356237309503
#define MIN_REPS 3

enum { COPY, SCALE, ADD, TRIAD, N_KERNELS };
static const double bytes_per_elem[N_KERNELS] = { 16, 16, 24, 24 };

struct arrays {
	double *a, *b, *c;
	long n;
	long long reps;
	double best[N_KERNELS]; /* seconds */
};

static void time_kernel(struct arrays *s, int kernel, double start)
{
	double t = bench_now() - start;
	if (s->reps > 0 && (s->best[kernel] == 0 || t < s->best[kernel]))
		s->best[kernel] = t; /* the first repetition only warms up */
}

static void repetitions(void *ctx, long long count)
{
	struct arrays *s = ctx;
	double *restrict a = s->a, *restrict b = s->b, *restrict c = s->c;
	long n = s->n;

	for (long long r = 0; r < count; r++, s->reps++) {
		double t = bench_now();
		for (long i = 0; i < n; i++)
			c[i] = a[i];
		time_kernel(s, COPY, t);
		t = bench_now();
		for (long i = 0; i < n; i++)
			b[i] = SCALAR * c[i];
		time_kernel(s, SCALE, t);
		t = bench_now();
		for (long i = 0; i < n; i++)
			c[i] = a[i] + b[i];
		time_kernel(s, ADD, t);
		t = bench_now();
		for (long i = 0; i < n; i++)
			a[i] = b[i] + SCALAR * c[i];
		time_kernel(s, TRIAD, t);
	}
}

/* Mean relative error of array x against the value `want`. */
static int array_ok(const double *x, long n, double want)
{
	double err = 0;
	for (long i = 0; i < n; i++)
		err += fabs(x[i] - want);
	return err / n / fabs(want) <= 1e-13;
}

static int check(const struct arrays *s)
{
	double a = 1.0, b = 2.0, c = 0.0;

	for (long long r = 0; r < s->reps; r++) {
		c = a;
		b = SCALAR * c;
		c = a + b;
		a = b + SCALAR * c;
	}
	return array_ok(s->a, s->n, a) && array_ok(s->b, s->n, b) && array_ok(s->c, s->n, c);
}

static double *alloc_array(long n)
{
	double *p = aligned_alloc(64, (size_t)n * sizeof(double));
	if (!p)
		bench_fail("aligned_alloc");
	return p;
}

int main(int argc, char **argv)
{
	struct bench_args args;
	struct arrays s = { 0 };
	long long size = 16L << 20;
	const struct bench_opt opts[] = {
		{ "--size", BENCH_OPT_LONG, &size, 1000, 1L << 30 },
		{ 0 },
	};
	struct sysinfo si;
	double secs, gbs[N_KERNELS];
	int valid;

	bench_init("stream");
	bench_parse(&args, BENCH_DURATION | BENCH_COUNT, opts,
		    "usage: stream [--size ELEMENTS] [--duration SECONDS | --count REPETITIONS]",
		    argc, argv, 1);
	if (args.count && args.count < 2)
		bench_usage_error("--count", "needs at least 2 repetitions (the first warms up)");
	/* three arrays must fit in three quarters of the RAM */
	if (sysinfo(&si) == 0 &&
	    3.0 * (double)size * sizeof(double) > 0.75 * (double)si.totalram * si.mem_unit) {
		char what[64];
		snprintf(what, sizeof(what), "--size %lld", size);
		bench_usage_error(what, "3 arrays would not fit in 3/4 of the machine's RAM");
	}
	s.n = size;
	s.a = alloc_array(s.n);
	s.b = alloc_array(s.n);
	s.c = alloc_array(s.n);
	for (long i = 0; i < s.n; i++) {
		s.a[i] = 1.0;
		s.b[i] = 2.0;
		s.c[i] = 0.0;
	}

	/* MIN_REPS repetitions (or --count), then more until the duration */
	secs = bench_now();
	repetitions(&s, args.count ? args.count : MIN_REPS);
	secs = bench_now() - secs;
	if (!args.count && secs < args.duration) {
		struct bench_args rest = { .duration = args.duration - secs };
		double more;
		bench_run(&rest, repetitions, &s, &more);
		secs += more;
	}

	for (int k = 0; k < N_KERNELS; k++)
		gbs[k] = bytes_per_elem[k] * (double)s.n / s.best[k] / 1e9;
	valid = check(&s);
	bench_report("stream", gbs[TRIAD], "GB/s", secs, s.reps,
		     (struct bench_field[]){
			     { "copy", gbs[COPY], BENCH_NUM },
			     { "scale", gbs[SCALE], BENCH_NUM },
			     { "add", gbs[ADD], BENCH_NUM },
			     { "triad", gbs[TRIAD], BENCH_NUM },
			     { "size", (double)s.n, BENCH_INT },
			     { "valid", valid, BENCH_BOOL },
		     },
		     6);
	return valid ? 0 : 1;
}
