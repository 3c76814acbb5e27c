/* ctxsw — context switches through pipes: two processes bounce one byte
 * over a pair of pipes (write, then block in read until the other answers);
 * one round trip is two switches. --pairs N runs N such pairs at once, all
 * released together. Score: round trips per second, summed over the pairs
 * (each pair's count over its own elapsed time). With --count, every pair
 * does N round trips. Processes are not pinned: the scheduler places them,
 * as it would a real workload. */
#include "benchlib.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

struct pair {
	int to_echo, from_echo; /* our ends of the two pipes */
};

static void ping_pong(void *ctx, long long n)
{
	const struct pair *p = ctx;
	char c = 'x';

	for (long long i = 0; i < n; i++) {
		if (write(p->to_echo, &c, 1) != 1)
			bench_fail("write");
		if (read(p->from_echo, &c, 1) != 1)
			bench_fail("read");
	}
}

/* The echo side: answer every byte until the other side closes. */
static void echo(int in, int out)
{
	char c;
	while (read(in, &c, 1) == 1)
		if (write(out, &c, 1) != 1)
			_exit(1);
	_exit(0);
}

struct pair_result {
	long long n;
	double secs;
};

/* One pair: fork the echo process, wait for the start signal (EOF on
 * `go`), bounce for the run, send the result to `report`. */
static void run_pair(const struct bench_args *a, int go, int report)
{
	int down[2], up[2];
	struct pair p;
	struct pair_result r;
	pid_t pid;
	char c;

	if (pipe(down) < 0 || pipe(up) < 0)
		bench_fail("pipe");
	pid = fork();
	if (pid < 0)
		bench_fail("fork");
	if (pid == 0) {
		close(down[1]);
		close(up[0]);
		echo(down[0], up[1]);
	}
	close(down[0]);
	close(up[1]);
	p.to_echo = down[1];
	p.from_echo = up[0];
	if (read(go, &c, 1) != 0)
		bench_fail("read start signal");
	r.n = bench_run(a, ping_pong, &p, &r.secs);
	close(p.to_echo);
	waitpid(pid, NULL, 0);
	if (write(report, &r, sizeof(r)) != sizeof(r))
		bench_fail("write result");
	_exit(0);
}

int main(int argc, char **argv)
{
	struct bench_args a;
	long long pairs = 1, total = 0;
	double rate = 0, longest = 0;
	int go[2], report[2];
	char test[32];
	const struct bench_opt opts[] = {
		{ "--pairs", BENCH_OPT_LONG, &pairs, 1, 1024 },
		{ 0 },
	};

	bench_init("ctxsw");
	bench_parse(&a, BENCH_DURATION | BENCH_COUNT, opts,
		    "usage: ctxsw [--pairs N] [--duration SECONDS | --count N]", argc, argv, 1);
	if (pipe(go) < 0 || pipe(report) < 0)
		bench_fail("pipe");
	for (long long i = 0; i < pairs; i++) {
		pid_t pid = fork();
		if (pid < 0)
			bench_fail("fork");
		if (pid == 0) {
			close(go[1]);
			close(report[0]);
			run_pair(&a, go[0], report[1]);
		}
	}
	close(go[0]);
	close(report[1]);
	close(go[1]); /* all pairs start now */
	for (long long i = 0; i < pairs; i++) {
		struct pair_result r;
		if (read(report[0], &r, sizeof(r)) != sizeof(r))
			bench_error("pair", "ended without a result");
		total += r.n;
		rate += r.n / r.secs;
		if (r.secs > longest)
			longest = r.secs;
	}
	while (wait(NULL) > 0)
		;
	if (pairs == 1)
		snprintf(test, sizeof(test), "ctxsw");
	else
		snprintf(test, sizeof(test), "ctxsw%lld", pairs);
	bench_report(test, rate, "roundtrips/s", longest, total,
		     (struct bench_field[]){ { "pairs", (double)pairs, BENCH_INT } }, 1);
	return 0;
}
