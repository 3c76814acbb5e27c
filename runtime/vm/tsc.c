/* runtime/vm/tsc.c — the host's TSC rate, for a guest under TCG.
 *
 * Under TCG the guest's RDTSC reads the host's TSC (QEMU's
 * cpu_get_host_ticks), but the guest cannot learn its rate: microvm has no
 * HPET or PM timer to calibrate against and the PIT calibration fails under
 * emulation ("tsc: Unable to calibrate against PIT"), so the kernel marks
 * the TSC unstable, runs on jiffies (10-ms clock steps) and calibrates its
 * delay loop by counting them.  Told the rate (tsc_early_khz=), it has a
 * TSC clocksource from the start: cold boots measured ~22% faster
 * (docs/BENCHMARKS.md), and the guest's clock follows the host's TSC.
 * Measured here, not read: no interface gives the TSC rate on every x86
 * host.  Two readings 10 ms apart, each the best-bracketed of five
 * (CLOCK_MONOTONIC_RAW before and after RDTSC), err by about 2e-5. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "util/cleanup.h"
#include "vm/vm.h"

#define TSC_SAMPLES 5
#define TSC_INTERVAL_NS 10000000L
#define TSC_KHZ_MIN 100000UL    /* 100 MHz .. 10 GHz: anything else is a bad reading */
#define TSC_KHZ_MAX 10000000UL

#if defined(__x86_64__)
static uint64_t rdtsc(void)
{
	uint32_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

static long long raw_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* A (TSC, ns) pair: of TSC_SAMPLES, the one with the tightest bracket. */
static void sample(uint64_t *tsc, long long *ns)
{
	long long best = -1;

	for (int i = 0; i < TSC_SAMPLES; i++) {
		long long a = raw_ns();
		uint64_t c = rdtsc();
		long long b = raw_ns();
		if (best < 0 || b - a < best) {
			best = b - a;
			*tsc = c;
			*ns = a + (b - a) / 2;
		}
	}
}

/* constant_tsc and nonstop_tsc: a rate that holds across P- and C-states */
static bool tsc_invariant(void)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/cpuinfo", "re");
	char line[4096];

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "flags", 5))
			return strstr(line, " constant_tsc") && strstr(line, " nonstop_tsc");
	return false;
}

unsigned long vm_host_tsc_khz(void)
{
	uint64_t c0, c1;
	long long n0, n1;
	struct timespec pause = { 0, TSC_INTERVAL_NS };

	if (!tsc_invariant())
		return 0;
	sample(&c0, &n0);
	nanosleep(&pause, NULL);
	sample(&c1, &n1);
	if (n1 <= n0 || c1 <= c0)
		return 0;
	unsigned long khz = (unsigned long)((double)(c1 - c0) * 1e6 / (double)(n1 - n0) + 0.5);
	return khz >= TSC_KHZ_MIN && khz <= TSC_KHZ_MAX ? khz : 0;
}
#else
unsigned long vm_host_tsc_khz(void)
{
	return 0;
}
#endif
