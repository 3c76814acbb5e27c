/* runtime/vm/qemu/tsc.c — the host's TSC frequency, for TCG guests.
 *
 * Under TCG the guest's TSC is the host's (QEMU's rdtsc helper returns the
 * host's cycle counter plus an offset), but the guest kernel cannot measure
 * its rate: it calibrates against the PIT in a loop that emulation makes
 * meaningless ("tsc: Unable to calibrate against PIT"), marks the TSC
 * unstable and falls back to the jiffies clocksource, which needs the
 * periodic tick.  An idle guest then wakes 100 times a second, and on a
 * host with many idle pods those wake-ups are what saturates the CPUs.
 * Told the rate (tsc_early_khz=), the guest uses the TSC, high-resolution
 * timers and a tickless idle.
 *
 * The rate is measured here against CLOCK_MONOTONIC_RAW (three 20 ms
 * windows, the median, rounded to the MHz), only where the host's TSC is
 * invariant (constant_tsc and nonstop_tsc), and cached per host boot in
 * $QPOD_CACHE/tsc-khz ("BOOT_ID KHZ"), so it costs 60 ms once per boot;
 * one process measures (tsc-khz.lock), the others wait and read it. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "util/cleanup.h"
#include "util/paths.h"
#include "vm/qemu/qemu.h"
#include "vm/vm.h"

#define TSC_FILE "tsc-khz"
#define WINDOW_NS 20000000L
#define ROUNDS 3

static bool read_line(const char *path, char *buf, size_t size)
{
	_cleanup_fclose_ FILE *f = fopen(path, "re");

	if (!f || !fgets(buf, (int)size, f))
		return false;
	buf[strcspn(buf, "\n")] = '\0';
	return true;
}

/* does /proc/cpuinfo's first "flags" line have every one of the words? */
static bool cpu_has(const char *const *words)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/cpuinfo", "re");
	char line[4096];

	while (f && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "flags", 5))
			continue;
		line[strcspn(line, "\n")] = ' ';
		for (size_t i = 0; words[i]; i++) {
			char w[64];
			snprintf(w, sizeof(w), " %s ", words[i]);
			if (!strstr(line, w))
				return false;
		}
		return true;
	}
	return false;
}

#if defined(__x86_64__) || defined(__i386__)
static long long raw_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC_RAW, &t);
	return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;
	return x < y ? -1 : x > y;
}

static long measure_khz(void)
{
	long khz[ROUNDS];

	for (int i = 0; i < ROUNDS; i++) {
		struct timespec w = { 0, WINDOW_NS };
		long long t0 = raw_ns();
		unsigned long long c0 = __rdtsc();
		nanosleep(&w, NULL);
		unsigned long long c1 = __rdtsc();
		long long t1 = raw_ns();
		if (t1 <= t0 || c1 <= c0)
			return 0;
		khz[i] = (long)((double)(c1 - c0) * 1e6 / (double)(t1 - t0));
	}
	qsort(khz, ROUNDS, sizeof(khz[0]), cmp_long);
	return khz[ROUNDS / 2];
}
#else
static long measure_khz(void)
{
	return 0;
}
#endif

/* the cached rate of this boot, or 0 */
static long cached_khz(const char *path, const char *boot)
{
	char line[128], cboot[64];
	long khz;

	if (read_line(path, line, sizeof(line)) && sscanf(line, "%63s %ld", cboot, &khz) == 2 && !strcmp(cboot, boot) &&
	    khz > 0)
		return khz;
	return 0;
}

long vm_host_tsc_khz(void)
{
	static const char *const invariant[] = { "constant_tsc", "nonstop_tsc", NULL };
	static long known = -1;
	char boot[64], path[4096], lockpath[4200];
	long khz;

	if (known >= 0)
		return known;
	known = 0;
	if (!cpu_has(invariant) || !read_line("/proc/sys/kernel/random/boot_id", boot, sizeof(boot)))
		return 0;
	snprintf(path, sizeof(path), "%s/" TSC_FILE, qp_cache_dir());
	if ((khz = cached_khz(path, boot)) > 0)
		return known = khz;
	/* one measurer at a time: the rate is part of every template's key,
	 * so concurrent first starts must agree on it */
	snprintf(lockpath, sizeof(lockpath), "%s.lock", path);
	_cleanup_close_ int lock = open(lockpath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (lock >= 0)
		flock(lock, LOCK_EX);
	if ((khz = cached_khz(path, boot)) > 0)
		return known = khz;
	/* to the MHz: a re-measurement after a reboot (±0.01 %) keeps the key */
	if ((khz = (measure_khz() + 500) / 1000 * 1000) <= 0)
		return 0;
	/* best effort: a cache that cannot be written costs the next start 60 ms */
	char tmp[4200];
	snprintf(tmp, sizeof(tmp), "%s.%d", path, (int)getpid());
	FILE *f = fopen(tmp, "we");
	if (f) {
		bool ok = fprintf(f, "%s %ld\n", boot, khz) > 0;
		if (fclose(f) == 0 && ok && rename(tmp, path) == 0)
			tmp[0] = '\0';
		if (tmp[0])
			unlink(tmp);
	}
	return known = khz;
}
