/* httpbench — requests per second and response time of a static page, after
 * the thesis's Siege runs:
 *   httpbench --host ADDR [--port P] [--path /PAGE] [--clients N]
 *             [--duration SECONDS | --count REQUESTS]
 * Each of N clients (forked processes, default 1) does HTTP/1.0 GETs one
 * after another, a new connection per request (as busybox httpd serves
 * them), and reads the answer to EOF; an answer that is not "HTTP/1.x 200"
 * with a body is an error. --duration is the whole run's, --count is per
 * client. Score: requests/s of all clients together; latency_us = mean
 * response time (connect to EOF), p50_us and p99_us its median and 99th
 * percentile; bytes = the size of one answer. Numeric addresses only. */
#include "benchlib.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_CLIENTS 256
#define ANSWER_MAX (1 << 20)

static const char usage[] = "usage: httpbench --host ADDR [--port P] [--path /PAGE] [--clients N]"
			    " [--duration SECONDS | --count N]";

/* What one client measured: in memory shared with the parent. */
struct client {
	struct bench_hist hist;
	long long requests, bytes;
	double secs;
};

struct target {
	struct sockaddr_in addr;
	char request[512];
	size_t request_len;
	struct client *me;
};

/* One GET: connect, send, read to EOF, check the status line. */
static void get(void *ctx, long long n)
{
	static char answer[ANSWER_MAX];
	struct target *t = ctx;

	for (long long i = 0; i < n; i++) {
		double t0 = bench_now();
		size_t got = 0;
		ssize_t r;
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (fd < 0)
			bench_fail("socket");
		if (connect(fd, (struct sockaddr *)&t->addr, sizeof(t->addr)) < 0)
			bench_fail("connect");
		if (write(fd, t->request, t->request_len) != (ssize_t)t->request_len)
			bench_fail("send");
		while ((r = read(fd, answer + got, sizeof(answer) - 1 - got)) != 0) {
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0)
				bench_fail("receive");
			if ((got += (size_t)r) >= sizeof(answer) - 1)
				bench_error("receive", "an answer larger than 1 MiB");
		}
		close(fd);
		answer[got] = '\0';
		char *body = strstr(answer, "\r\n\r\n");
		if (strncmp(answer, "HTTP/1.", 7) || strncmp(answer + 8, " 200", 4) || !body || !body[4])
			bench_error("answer", "not \"200\" with a body");
		bench_hist_add(&t->me->hist, bench_now() - t0);
		t->me->bytes = (long long)got;
	}
}

int main(int argc, char **argv)
{
	struct bench_args a;
	long long port = 80, clients = 1;
	const char *host = NULL, *path = "/";
	const struct bench_opt opts[] = {
		{ "--host", BENCH_OPT_STRING, &host },
		{ "--port", BENCH_OPT_LONG, &port, 1, 65535 },
		{ "--path", BENCH_OPT_STRING, &path },
		{ "--clients", BENCH_OPT_LONG, &clients, 1, MAX_CLIENTS },
		{ 0 },
	};
	struct target t = { 0 };
	struct bench_hist all = { 0 };
	long long requests = 0;
	double secs = 0;

	bench_init("httpbench");
	bench_parse(&a, BENCH_DURATION | BENCH_COUNT, opts, usage, argc, argv, 1);
	if (!host)
		bench_usage_error("--host", "missing (the server's address)");
	if (path[0] != '/' || strlen(path) > 256 || strpbrk(path, " \r\n"))
		bench_usage_error("--path", "must start with / and hold no blanks (at most 256 bytes)");
	t.addr.sin_family = AF_INET;
	t.addr.sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, host, &t.addr.sin_addr) != 1)
		bench_usage_error("--host", "not a numeric IPv4 address");
	t.request_len = (size_t)snprintf(t.request, sizeof(t.request), "GET %s HTTP/1.0\r\nHost: %s\r\n\r\n",
					 path, host);

	struct client *cl = mmap(NULL, (size_t)clients * sizeof(*cl), PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (cl == MAP_FAILED)
		bench_fail("mmap");
	for (long long i = 0; i < clients; i++) {
		pid_t pid = fork();
		if (pid < 0)
			bench_fail("fork");
		if (pid == 0) {
			t.me = &cl[i];
			cl[i].requests = bench_run(&a, get, &t, &cl[i].secs);
			_exit(0);
		}
	}
	int failed = 0, killed = 0, status;
	while (wait(&status) > 0) {
		killed |= !WIFEXITED(status);
		failed |= WIFEXITED(status) && WEXITSTATUS(status) != 0;
	}
	if (killed && !failed)
		bench_error("client", "killed by a signal");
	if (failed)
		return 1; /* that client said why, in the one line of the contract */
	for (long long i = 0; i < clients; i++) {
		requests += cl[i].requests;
		secs = cl[i].secs > secs ? cl[i].secs : secs;
		bench_hist_merge(&all, &cl[i].hist);
	}
	bench_report("http", requests / secs, "req/s", secs, requests,
		     (struct bench_field[]){ { "latency_us", all.sum / (double)all.total * 1e6, BENCH_NUM },
					     { "p50_us", bench_hist_pct(&all, 50) * 1e6, BENCH_NUM },
					     { "p99_us", bench_hist_pct(&all, 99) * 1e6, BENCH_NUM },
					     { "clients", (double)clients, BENCH_INT },
					     { "bytes", (double)cl[0].bytes, BENCH_INT } },
		     5);
	return 0;
}
