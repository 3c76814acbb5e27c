/* netbench — TCP between two machines (host and pod), after netperf's
 * TCP_RR and TCP_SENDFILE tests:
 *   netbench server [--port P] [--bind ADDR] [--once] [--port-file FILE]
 *   netbench client --host ADDR [--port P] --test rr|stream
 *                   [--duration SECONDS | --count TRANSACTIONS]
 * rr: the client sends 1 byte, the server answers 1 byte, repeat (TCP_NODELAY
 * on both sides). Score: transactions/s; latency_us = mean round trip,
 * p50_us and p99_us its median and 99th percentile (each round trip timed).
 * stream: the client sendfile()s a 1 MiB in-memory file (memfd) over and
 * over for the duration, then half-closes; the server reads to EOF and
 * answers with the byte count it got. Score: Mbit/s of those bytes from the
 * first send to the answer; a count that differs from what was sent is an
 * error. The first byte of a connection names the test ('R' or 'S').
 * The server serves clients one after another until SIGTERM/SIGINT (or one
 * client with --once), then prints its JSON line (clients served) and
 * exits 0. Addresses are numeric (IPv4 or IPv6): no resolver in a static
 * binary. */
#include "benchlib.h"

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <unistd.h>

#define DEFAULT_PORT 12867
#define FILE_SIZE (1 << 20)
#define RECV_BUF (256 << 10)

static const char usage[] =
	"usage: netbench server [--port P] [--bind ADDR] [--once] [--port-file FILE]\n"
	"       netbench client --host ADDR [--port P] --test rr|stream"
	" [--duration SECONDS | --count N]";

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

/* ADDR:PORT into *ss; returns the address length. */
static socklen_t make_addr(struct sockaddr_storage *ss, const char *addr, long long port)
{
	struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
	char what[128];

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, addr, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons((uint16_t)port);
		return sizeof(*in4);
	}
	if (inet_pton(AF_INET6, addr, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		return sizeof(*in6);
	}
	snprintf(what, sizeof(what), "address %s", addr);
	bench_usage_error(what, "not a numeric IPv4 or IPv6 address");
}

static void set_nodelay(int fd)
{
	int one = 1;
	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0)
		bench_fail("setsockopt TCP_NODELAY");
}

/* read exactly len bytes; 0 at EOF before any, -1 on error */
static ssize_t read_full(int fd, void *buf, size_t len)
{
	size_t got = 0;
	while (got < len) {
		ssize_t r = read(fd, (char *)buf + got, len - got);
		if (r < 0 && errno == EINTR && !stop)
			continue;
		if (r <= 0)
			return r < 0 ? -1 : (ssize_t)got;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

/* ---- server ---- */

/* One client; returns 0 when it was served to its end. */
static int serve(int fd)
{
	static char buf[RECV_BUF];
	char test, c;
	uint64_t total = 0, be;
	ssize_t r;

	set_nodelay(fd);
	if (read_full(fd, &test, 1) != 1)
		return -1;
	if (test == 'R') {
		while (!stop && (r = read(fd, &c, 1)) != 0) {
			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0 || write(fd, &c, 1) != 1)
				return -1;
		}
		return stop ? -1 : 0;
	}
	if (test != 'S')
		return -1;
	while (!stop && (r = read(fd, buf, sizeof(buf))) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		total += (uint64_t)r;
	}
	be = htobe64(total);
	return !stop && write(fd, &be, sizeof(be)) == sizeof(be) ? 0 : -1;
}

static void write_port_file(const char *path, int lfd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	char tmp[4096];
	FILE *f;

	if (getsockname(lfd, (struct sockaddr *)&ss, &len) < 0)
		bench_fail("getsockname");
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		bench_fail(tmp);
	fprintf(f, "%u\n", ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
							 : ((struct sockaddr_in6 *)&ss)->sin6_port));
	if (fclose(f) != 0 || rename(tmp, path) < 0)
		bench_fail(path);
}

static int server(int argc, char **argv)
{
	struct bench_args a;
	long long port = DEFAULT_PORT, clients = 0;
	const char *bind_addr = "0.0.0.0", *port_file = NULL;
	int once = 0, lfd, one = 1;
	const struct bench_opt opts[] = {
		{ "--port", BENCH_OPT_LONG, &port, 0, 65535 },
		{ "--bind", BENCH_OPT_STRING, &bind_addr },
		{ "--once", BENCH_OPT_FLAG, &once },
		{ "--port-file", BENCH_OPT_STRING, &port_file },
		{ 0 },
	};
	struct sigaction sa = { .sa_handler = on_signal }; /* no SA_RESTART */
	sigset_t block, orig;
	struct sockaddr_storage ss;
	socklen_t len;
	double start = bench_now();

	bench_parse(&a, 0, opts, usage, argc, argv, 2);
	len = make_addr(&ss, bind_addr, port);

	/* SIGTERM/SIGINT stay blocked except while waiting (ppoll) or serving,
	 * so a signal is never lost between the check of `stop` and a wait */
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigprocmask(SIG_BLOCK, &block, &orig);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	lfd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0)
		bench_fail("socket");
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *)&ss, len) < 0)
		bench_fail("bind");
	if (listen(lfd, 8) < 0)
		bench_fail("listen");
	if (port_file)
		write_port_file(port_file, lfd);

	while (!stop) {
		struct pollfd pfd = { .fd = lfd, .events = POLLIN };
		int fd;

		if (ppoll(&pfd, 1, NULL, &orig) < 0) {
			if (errno == EINTR)
				continue;
			bench_fail("ppoll");
		}
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		sigprocmask(SIG_SETMASK, &orig, NULL);
		if (serve(fd) == 0)
			clients++;
		else if (!stop)
			fprintf(stderr, "netbench: client: ended early\n");
		sigprocmask(SIG_BLOCK, &block, NULL);
		close(fd);
		if (once)
			break;
	}
	close(lfd);
	bench_report("server", (double)clients, "clients", bench_now() - start, clients, NULL, 0);
	return 0;
}

/* ---- client ---- */

struct conn {
	int sock, file;
	off_t off;
	uint64_t sent;
	struct bench_hist *rtt;
};

static void transactions(void *ctx, long long n)
{
	struct conn *c = ctx;
	char b = 'x';

	for (long long i = 0; i < n; i++) {
		double t0 = bench_now();
		if (write(c->sock, &b, 1) != 1)
			bench_fail("send");
		if (read_full(c->sock, &b, 1) != 1)
			bench_error("receive", "the server closed the connection");
		bench_hist_add(c->rtt, bench_now() - t0);
	}
}

static void sendfiles(void *ctx, long long n)
{
	struct conn *c = ctx;

	for (long long i = 0; i < n; i++) {
		ssize_t r = sendfile(c->sock, c->file, &c->off, FILE_SIZE - (size_t)c->off);
		if (r <= 0)
			bench_fail("sendfile");
		c->sent += (uint64_t)r;
		if (c->off >= FILE_SIZE)
			c->off = 0;
	}
}

/* the file stream sends: in memory, filled with a pattern */
static int make_file(void)
{
	static char block[4096];
	int fd = memfd_create("netbench", MFD_CLOEXEC);

	if (fd < 0)
		fd = open("/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0)
		bench_fail("memfd_create");
	for (size_t i = 0; i < sizeof(block); i++)
		block[i] = (char)i;
	for (size_t off = 0; off < FILE_SIZE; off += sizeof(block))
		if (write(fd, block, sizeof(block)) != sizeof(block))
			bench_fail("write file");
	return fd;
}

static int client(int argc, char **argv)
{
	struct bench_args a;
	long long port = DEFAULT_PORT, n;
	const char *host = NULL, *test = NULL;
	const struct bench_opt opts[] = {
		{ "--host", BENCH_OPT_STRING, &host },
		{ "--port", BENCH_OPT_LONG, &port, 1, 65535 },
		{ "--test", BENCH_OPT_STRING, &test },
		{ 0 },
	};
	struct conn c = { 0 };
	struct sockaddr_storage ss;
	socklen_t len;
	int rr;
	double start, secs;

	bench_parse(&a, BENCH_DURATION | BENCH_COUNT, opts, usage, argc, argv, 2);
	if (!host)
		bench_usage_error("--host", "missing (the server's address)");
	if (!test)
		bench_usage_error("--test", "missing (rr or stream)");
	rr = strcmp(test, "rr") == 0;
	if (!rr && strcmp(test, "stream") != 0) {
		char what[128];
		snprintf(what, sizeof(what), "--test %s", test);
		bench_usage_error(what, "must be rr or stream");
	}
	if (!rr && a.count)
		bench_usage_error("--count", "only with --test rr");
	len = make_addr(&ss, host, port);

	if (!rr)
		c.file = make_file();
	c.sock = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c.sock < 0)
		bench_fail("socket");
	if (connect(c.sock, (struct sockaddr *)&ss, len) < 0)
		bench_fail("connect");
	if (rr)
		set_nodelay(c.sock);
	if (write(c.sock, rr ? "R" : "S", 1) != 1)
		bench_fail("send");

	if (rr) {
		static struct bench_hist rtt;
		c.rtt = &rtt;
		n = bench_run(&a, transactions, &c, &secs);
		bench_report("tcp_rr", n / secs, "trans/s", secs, n,
			     (struct bench_field[]){ { "latency_us", secs / n * 1e6, BENCH_NUM },
						     { "p50_us", bench_hist_pct(&rtt, 50) * 1e6, BENCH_NUM },
						     { "p99_us", bench_hist_pct(&rtt, 99) * 1e6, BENCH_NUM } },
			     3);
	} else {
		uint64_t got;
		start = bench_now();
		n = bench_run(&a, sendfiles, &c, &secs);
		if (shutdown(c.sock, SHUT_WR) < 0)
			bench_fail("shutdown");
		if (read_full(c.sock, &got, sizeof(got)) != sizeof(got))
			bench_error("receive", "no byte count from the server");
		secs = bench_now() - start;
		got = be64toh(got);
		if (got != c.sent)
			bench_error("stream", "the server got a different number of bytes than were sent");
		bench_report("tcp_sendfile", (double)got * 8 / secs / 1e6, "Mbit/s", secs, n,
			     (struct bench_field[]){ { "bytes", (double)got, BENCH_INT } }, 1);
	}
	close(c.sock);
	return 0;
}

int main(int argc, char **argv)
{
	bench_init("netbench");
	if (argc >= 2 && strcmp(argv[1], "server") == 0)
		return server(argc, argv);
	if (argc >= 2 && strcmp(argv[1], "client") == 0)
		return client(argc, argv);
	if (argc >= 2 && strcmp(argv[1], "--help") == 0) {
		puts(usage);
		return 0;
	}
	bench_usage_error(argc >= 2 ? argv[1] : "mode", "must be server or client (try --help)");
}
