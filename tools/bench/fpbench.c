/* fpbench — a Whetstone-like floating point workload, written for qpod
 * after the published structure of the Whetstone benchmark (Curnow and
 * Wichmann, 1976). One pass runs the classic modules with the classic loop
 * counts at LOOP = 10, i.e. one million Whetstone instructions:
 *   array elements (N2), array as a parameter (N3), conditional jumps (N4),
 *   integer arithmetic (N6), trigonometric functions (N7), procedure calls
 *   (N8), array references (N9), sqrt/exp/log (N11).
 * The modules of weight 0 in the original (N1, N5, N10) are left out.
 * Score: MWIPS = passes per second, labelled "whetstone-like MWIPS".
 * Also "mflops": the add/sub/mul/div of the two pure arithmetic modules
 * (N2: 16 per loop, N3: 96 per call) over the time spent in them.
 * Not the reference source: figures compare qpod runs with each other.
 *
 * Keeping the work: the constants come from volatiles (no folding at
 * compile time), every module's result is stored to a volatile sink, and
 * the called procedures are noipa, as if compiled separately. */
#include "benchlib.h"

#include <math.h>

#define NOIPA __attribute__((noipa))
#define LOOP 10
#define N2 (12 * LOOP)
#define N3 (14 * LOOP)
#define N4 (345 * LOOP)
#define N6 (210 * LOOP)
#define N7 (32 * LOOP)
#define N8 (899 * LOOP)
#define N9 (616 * LOOP)
#define N11 (93 * LOOP)
#define FLOPS_PER_PASS (16.0 * N2 + 96.0 * N3)

static volatile double v_t = 0.499975, v_t1 = 0.50025, v_t2 = 2.0;
static volatile long v_one = 1;
static volatile double sink;

static double t, t1, t2;
static double e1[4];
static long j, k, l;

NOIPA static void pa(double e[4])
{
	for (int i = 0; i < 6; i++) {
		e[0] = (e[0] + e[1] + e[2] - e[3]) * t;
		e[1] = (e[0] + e[1] - e[2] + e[3]) * t;
		e[2] = (e[0] - e[1] + e[2] + e[3]) * t;
		e[3] = (-e[0] + e[1] + e[2] + e[3]) / t2;
	}
}

NOIPA static void p0(void)
{
	e1[j] = e1[k];
	e1[k] = e1[l];
	e1[l] = e1[j];
}

NOIPA static void p3(double x, double y, double *z)
{
	double x1 = t * (x + y);
	double y1 = t * (x1 + y);
	*z = (x1 + y1) / t2;
}

/* The arithmetic modules (N2, N3); returns their time in seconds. */
static double arithmetic_modules(void)
{
	double start = bench_now();

	e1[0] = 1.0;
	e1[1] = e1[2] = e1[3] = -1.0;
	for (int i = 0; i < N2; i++) {
		e1[0] = (e1[0] + e1[1] + e1[2] - e1[3]) * t;
		e1[1] = (e1[0] + e1[1] - e1[2] + e1[3]) * t;
		e1[2] = (e1[0] - e1[1] + e1[2] + e1[3]) * t;
		e1[3] = (-e1[0] + e1[1] + e1[2] + e1[3]) * t;
	}
	sink = e1[3];
	for (int i = 0; i < N3; i++)
		pa(e1);
	sink = e1[3];
	return bench_now() - start;
}

struct fp_state {
	double arith_secs;
};

static void whetstone_passes(void *ctx, long long n)
{
	struct fp_state *st = ctx;

	for (long long pass = 0; pass < n; pass++) {
		double x, y, z;

		st->arith_secs += arithmetic_modules();

		/* N4: conditional jumps */
		j = v_one;
		for (int i = 0; i < N4; i++) {
			j = j == 1 ? 2 : 3;
			j = j > 2 ? 0 : 1;
			j = j < 1 ? 1 : 0;
		}
		sink = (double)j;

		/* N6: integer arithmetic */
		j = v_one;
		k = 2;
		l = 3;
		for (int i = 0; i < N6; i++) {
			j = j * (k - j) * (l - k);
			k = l * k - (l - j) * k;
			l = (l - k) * (k + j);
			e1[l - 2] = (double)(j + k + l);
			e1[k - 2] = (double)(j * k * l);
		}
		sink = e1[0] + e1[1];

		/* N7: trigonometric functions */
		x = y = 0.5;
		for (int i = 0; i < N7; i++) {
			x = t * atan(t2 * sin(x) * cos(x) / (cos(x + y) + cos(x - y) - 1.0));
			y = t * atan(t2 * sin(y) * cos(y) / (cos(x + y) + cos(x - y) - 1.0));
		}
		sink = x + y;

		/* N8: procedure calls */
		x = y = z = 1.0;
		for (int i = 0; i < N8; i++)
			p3(x, y, &z);
		sink = z;

		/* N9: array references */
		j = 0;
		k = v_one;
		l = 2;
		e1[0] = 1.0;
		e1[1] = 2.0;
		e1[2] = 3.0;
		for (int i = 0; i < N9; i++)
			p0();
		sink = e1[2];

		/* N11: standard functions */
		x = 0.75;
		for (int i = 0; i < N11; i++)
			x = sqrt(exp(log(x) / t1));
		sink = x;
	}
}

int main(int argc, char **argv)
{
	struct bench_args a;
	struct fp_state st = { 0 };
	long long n;
	double secs;

	bench_init("fpbench");
	bench_parse(&a, BENCH_DURATION | BENCH_COUNT, NULL,
		    "usage: fpbench [--duration SECONDS | --count PASSES]", argc, argv, 1);
	t = v_t;
	t1 = v_t1;
	t2 = v_t2;
	n = bench_run(&a, whetstone_passes, &st, &secs);
	bench_report("whetstone-like", n / secs, "whetstone-like MWIPS", secs, n,
		     (struct bench_field[]){
			     { "mflops", FLOPS_PER_PASS * n / st.arith_secs / 1e6, BENCH_NUM } },
		     1);
	return 0;
}
