/* runtime/container/signal_grace.c — a signal for a workload that has just
 * started.  The workload is PID 1 of its pid namespace, and the kernel
 * drops a signal from outside that PID 1 has no handler for.  A workload
 * that traps TERM (`trap ... TERM` in a shell) needs a moment after exec to
 * install its handler; runc's slower kill loses that race less often than
 * qpod's, and clients (runtime-tools' killsig, a `kill` right after
 * `start`) expect the signal to arrive.  So for a PID 1 younger than
 * GRACE_AGE_MS that neither catches nor ignores the signal yet, kill waits
 * up to GRACE_WAIT_MS for a handler to appear, then sends it either way
 * (dropped, as it would be anyway, if none came). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "container/container.h"
#include "util/clock.h"

#define GRACE_AGE_MS 1000
#define GRACE_WAIT_MS 250

/* From /proc/PID/status: is it PID 1 of its innermost namespace, and does
 * it catch or ignore sig?  -1 if the process is gone. */
static int read_status(pid_t pid, int sig, bool *pid1, bool *handled)
{
	char path[64], line[512];
	unsigned long long cgt = 0, ign = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (!(f = fopen(path, "re")))
		return -1;
	*pid1 = false;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "NSpid:", 6)) {
			char *last = strrchr(line, '\t');
			*pid1 = last && atoi(last + 1) == 1;
		} else if (!strncmp(line, "SigCgt:", 7)) {
			cgt = strtoull(line + 7, NULL, 16);
		} else if (!strncmp(line, "SigIgn:", 7)) {
			ign = strtoull(line + 7, NULL, 16);
		}
	}
	fclose(f);
	*handled = ((cgt | ign) >> (sig - 1)) & 1;
	return 0;
}

/* Milliseconds since the process started (/proc/PID/stat field 22). */
static long long age_ms(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long start = 0;
	struct timespec up;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "re")))
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	if (!(p = strrchr(buf, ')')))
		return -1;
	p += 2;
	for (int field = 3; field < 22 && p; field++)
		if ((p = strchr(p, ' ')))
			p++;
	if (!p || sscanf(p, "%llu", &start) != 1)
		return -1;
	clock_gettime(CLOCK_BOOTTIME, &up);
	return (long long)up.tv_sec * 1000 + up.tv_nsec / 1000000 -
	       (long long)(start * 1000 / (unsigned long long)sysconf(_SC_CLK_TCK));
}

void qp_signal_grace(pid_t pid, int sig)
{
	long long deadline;
	bool pid1, handled;

	if (sig == SIGKILL || sig == SIGSTOP || sig <= 0 || sig >= 64)
		return;
	if (read_status(pid, sig, &pid1, &handled) < 0 || !pid1 || handled)
		return;
	long long age = age_ms(pid);
	if (age < 0 || age > GRACE_AGE_MS)
		return;
	deadline = qp_now_ms() + GRACE_WAIT_MS;
	while (qp_now_ms() < deadline) {
		usleep(2000);
		if (read_status(pid, sig, &pid1, &handled) < 0 || handled)
			return;
	}
}
