/* tests/helper/testhelper.c — qpod-testhelper: one static multi-call binary that the
 * CLI tests run inside pods to observe what the pod really gets (fds, cwd,
 * capabilities, ids, which system calls seccomp lets through, memory and pids
 * limits, signals, masked paths, networking).
 *
 *   qpod-testhelper COMMAND [ARGS...]
 *
 * Each command prints a short, parseable result on stdout and exits 0; on a
 * failure of the helper itself it prints "qpod-testhelper: ..." on stderr and
 * exits 1 (2 for a usage error).  `writefile` reports the outcome of its
 * open() as the result ("OK" or an errno name) and exits 0 only for "OK".
 *
 * Built with `gcc -static` and no other dependency: it must run in a bare
 * busybox rootfs and inside a microVM alike.  Everything it tries is chosen to
 * be harmless when the kernel allows it (invalid flags, missing paths, NULL
 * buffers), so running it on the host does no damage either. */
#define _GNU_SOURCE /* strerrorname_np, sigabbrev_np, unshare, setns, accept4 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/reboot.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PROG "qpod-testhelper"
#define UNUSED __attribute__((unused))
#define MIB (1024UL * 1024UL)
#define MAX_FORKS 100000L
#define MAX_ALLOC_MB (1024L * 1024L)  /* 1 TiB: bounded, not a real limit */
#define NET_TIMEOUT_S 20

extern char **environ;

static int fail(const char *what)
{
	fprintf(stderr, PROG ": %s: %s\n", what, strerror(errno));
	return 1;
}

static int usage(const char *msg)
{
	fprintf(stderr, PROG ": %s\n", msg);
	return 2;
}

/* "EPERM", "ENOSYS", ... (glibc >= 2.32), or "E<number>" for the unknown. */
static const char *errno_name(int e)
{
	static char buf[16];
	const char *n = strerrorname_np(e);

	if (n)
		return n;
	snprintf(buf, sizeof(buf), "E%d", e);
	return buf;
}

/* Strict decimal in [min, max]; -1 with a message on anything else. */
static int parse_long(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max) {
		fprintf(stderr, PROG ": \"%s\": expected a number from %ld to %ld\n", s, min, max);
		return -1;
	}
	*out = v;
	return 0;
}

/* ---- fds, cwd, caps, ids ------------------------------------------------ */

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

static int cmd_fds(UNUSED int argc, UNUSED char **argv)
{
	int fds[1024];
	size_t n = 0;
	struct dirent *de;
	DIR *d = opendir("/proc/self/fd");

	if (!d)
		return fail("open /proc/self/fd");
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		int fd = atoi(de->d_name);
		if (fd != dirfd(d) && n < sizeof(fds) / sizeof(fds[0]))
			fds[n++] = fd;
	}
	closedir(d);
	qsort(fds, n, sizeof(fds[0]), cmp_int);
	for (size_t i = 0; i < n; i++)
		printf("%s%d", i ? " " : "", fds[i]);
	printf("\n");
	return 0;
}

/* the serial of the session keyring (KEYCTL_GET_KEYRING_ID 0,
 * KEY_SPEC_SESSION_KEYRING -3) */
static int cmd_keyring(UNUSED int argc, UNUSED char **argv)
{
	long id = syscall(SYS_keyctl, 0, -3, 0);

	if (id < 0)
		return fail("keyctl");
	printf("%ld\n", id);
	return 0;
}

static int cmd_cwd(UNUSED int argc, UNUSED char **argv)
{
	char buf[4096];

	/* the kernel prefixes "(unreachable)" for a cwd outside our root:
	 * print it as is, that is exactly what the tests look for */
	if (!getcwd(buf, sizeof(buf))) {
		long n = syscall(SYS_getcwd, buf, sizeof(buf));
		if (n < 0)
			return fail("getcwd");
	}
	printf("%s\n", buf);
	return 0;
}

static int cmd_caps(UNUSED int argc, UNUSED char **argv)
{
	char line[512];
	int found = 0;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return fail("open /proc/self/status");
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "Cap", 3)) {
			fputs(line, stdout);
			found++;
		}
	fclose(f);
	if (!found) {
		fprintf(stderr, PROG ": caps: no Cap* lines in /proc/self/status\n");
		return 1;
	}
	return 0;
}

static int cmd_ids(UNUSED int argc, UNUSED char **argv)
{
	gid_t groups[256];
	int n = getgroups(sizeof(groups) / sizeof(groups[0]), groups);

	if (n < 0)
		return fail("getgroups");
	printf("uid=%u gid=%u groups=", (unsigned)getuid(), (unsigned)getgid());
	for (int i = 0; i < n; i++)
		printf("%s%u", i ? "," : "", (unsigned)groups[i]);
	printf("\n");
	return 0;
}

/* ---- syscall: which calls does seccomp let through? --------------------- */

/* Raw clone with FLAGS (fork-like: the child runs on a copy of our stack and
 * exits at once).  Returns 0 if the clone succeeded. */
static long try_clone(unsigned long flags)
{
	long pid = syscall(SYS_clone, flags | SIGCHLD, 0L, 0L, 0L, 0L);

	if (pid < 0)
		return -1;
	if (pid == 0)
		syscall(SYS_exit_group, 0);
	waitpid((pid_t)pid, NULL, 0);
	return 0;
}

/* Each attempt uses arguments that fail harmlessly when the call is allowed:
 * a missing path, an invalid flag, a NULL buffer.  What matters is whether
 * the answer is EPERM (filtered) or the kernel's own answer. */
static long try_syscall(const char *name, int *known)
{
	*known = 1;
	if (!strcmp(name, "mount"))
		return mount("qpod-test", "/nonexistent-qpod-test", "qpod-nofs", 0, NULL);
	if (!strcmp(name, "umount"))
		return umount2("/nonexistent-qpod-test", 0);
	if (!strcmp(name, "unshare"))
		return unshare(CLONE_NEWUTS); /* only this process's own uts ns */
	if (!strcmp(name, "setns"))
		return setns(-1, 0);
	if (!strcmp(name, "keyctl"))
		return syscall(SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */, -3 /* session */, 0);
	if (!strcmp(name, "add_key"))
		return syscall(SYS_add_key, "qpod-no-such-type", "qpod-test", "x", 1, -2);
	if (!strcmp(name, "bpf"))
		return syscall(SYS_bpf, 0xffff /* no such command */, NULL, 0);
	if (!strcmp(name, "perf_event_open"))
		return syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0);
	if (!strcmp(name, "kexec_load"))
		return syscall(SYS_kexec_load, 0UL, 0UL, NULL, 0x8000UL /* invalid flag */);
	if (!strcmp(name, "init_module"))
		return syscall(SYS_init_module, NULL, 0UL, "");
	if (!strcmp(name, "delete_module"))
		return syscall(SYS_delete_module, "qpod_no_such_module", O_NONBLOCK);
	if (!strcmp(name, "ptrace"))
		return ptrace(PTRACE_CONT, getpid(), NULL, NULL); /* not our tracee: ESRCH */
	if (!strcmp(name, "swapon"))
		return syscall(SYS_swapon, "/nonexistent-qpod-test", 0);
	if (!strcmp(name, "reboot"))
		return syscall(SYS_reboot, LINUX_REBOOT_MAGIC1, LINUX_REBOOT_MAGIC2,
			       LINUX_REBOOT_CMD_CAD_OFF, NULL);
	if (!strcmp(name, "open_by_handle_at"))
		return syscall(SYS_open_by_handle_at, -1, NULL, O_RDONLY);
	if (!strcmp(name, "clone_newns"))
		return try_clone(CLONE_NEWNS);
	if (!strcmp(name, "clone_newuser"))
		return try_clone(CLONE_NEWUSER);
	if (!strcmp(name, "getpid"))
		return syscall(SYS_getpid) > 0 ? 0 : -1;
	*known = 0;
	return -1;
}

static int cmd_syscall(int argc, char **argv)
{
	if (argc < 2)
		return usage("syscall NAME...");
	for (int i = 1; i < argc; i++) {
		int known;
		errno = 0;
		long r = try_syscall(argv[i], &known);
		if (!known) {
			fprintf(stderr, PROG ": syscall: unknown name \"%s\"\n", argv[i]);
			return 2;
		}
		if (r >= 0)
			printf("%s OK\n", argv[i]);
		else
			printf("%s %s\n", argv[i], errno_name(errno));
	}
	return 0;
}

/* ---- limits: memory, pids ----------------------------------------------- */

static int cmd_alloc(int argc, char **argv)
{
	long mb;

	if (argc != 2 || parse_long(argv[1], 1, MAX_ALLOC_MB, &mb) < 0)
		return usage("alloc MB");
	for (long i = 0; i < mb; i++) {
		char *p = malloc(MIB);
		if (!p) {
			fprintf(stderr, PROG ": alloc: malloc failed after %ld MiB\n", i);
			return 1;
		}
		/* touch every page so the memory is really charged */
		memset(p, (int)(i & 0xff) | 1, MIB);
	}
	printf("allocated %ld\n", mb);
	return 0;
}

static int cmd_forkbomb(int argc, char **argv)
{
	long n, k = 0;
	int err = 0;
	pid_t *pids;

	if (argc != 2 || parse_long(argv[1], 1, MAX_FORKS, &n) < 0)
		return usage("forkbomb N");
	pids = calloc((size_t)n, sizeof(*pids));
	if (!pids)
		return fail("forkbomb");
	for (; k < n; k++) {
		pid_t pid = fork();
		if (pid < 0) {
			err = errno;
			break;
		}
		if (pid == 0) {
			/* die with the parent even if it is killed before reaping */
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() == 1)
				_exit(0);
			for (;;)
				pause();
		}
		pids[k] = pid;
	}
	printf("forked %ld failed %s\n", k, err ? errno_name(err) : "none");
	fflush(stdout);
	for (long i = 0; i < k; i++)
		kill(pids[i], SIGKILL);
	for (long i = 0; i < k; i++)
		while (waitpid(pids[i], NULL, 0) < 0 && errno == EINTR)
			;
	free(pids);
	return 0;
}

/* ---- signals, time, exit ------------------------------------------------- */

static int cmd_sigwait(UNUSED int argc, UNUSED char **argv)
{
	sigset_t all;
	siginfo_t si;
	int sig;

	sigfillset(&all);
	if (sigprocmask(SIG_BLOCK, &all, NULL) < 0)
		return fail("sigprocmask");
	printf("ready\n");
	fflush(stdout);
	do
		sig = sigwaitinfo(&all, &si);
	while (sig < 0 && errno == EINTR);
	if (sig < 0)
		return fail("sigwaitinfo");
	const char *abbrev = sigabbrev_np(sig);
	if (abbrev)
		printf("SIG%s\n", abbrev);
	else
		printf("SIG%d\n", sig);
	return 0;
}

static int cmd_sleep(int argc, char **argv)
{
	char *end;
	double s;
	struct timespec ts;

	if (argc != 2)
		return usage("sleep SECS");
	errno = 0;
	s = strtod(argv[1], &end);
	if (errno || end == argv[1] || *end || !(s >= 0 && s <= 86400))
		return usage("sleep: SECS must be a number from 0 to 86400");
	ts.tv_sec = (time_t)s;
	ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) < 0)
		if (errno != EINTR)
			return fail("nanosleep");
	return 0;
}

static int cmd_exit(int argc, char **argv)
{
	long code;

	if (argc != 2 || parse_long(argv[1], 0, 255, &code) < 0)
		return usage("exit N (0-255)");
	return (int)code;
}

static int cmd_true(UNUSED int argc, UNUSED char **argv)
{
	return 0;
}

/* ---- files and names ------------------------------------------------------ */

static int cmd_writefile(int argc, char **argv)
{
	if (argc != 2)
		return usage("writefile PATH");
	int fd = open(argv[1], O_WRONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		printf("%s\n", errno_name(errno));
		return 1;
	}
	close(fd);
	printf("OK\n");
	return 0;
}

/* TEXT into PATH through a shared writable mapping (created, sized to TEXT),
 * msync'd and unmapped: OK, or the failing step and errno */
static int cmd_mmapwrite(int argc, char **argv)
{
	if (argc != 3)
		return usage("mmapwrite PATH TEXT");
	size_t len = strlen(argv[2]);
	int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || ftruncate(fd, (off_t)len) < 0) {
		printf("open %s\n", errno_name(errno));
		return 1;
	}
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		printf("mmap %s\n", errno_name(errno));
		return 1;
	}
	memcpy(p, argv[2], len);
	if (msync(p, len, MS_SYNC) < 0) {
		printf("msync %s\n", errno_name(errno));
		return 1;
	}
	munmap(p, len);
	close(fd);
	printf("OK\n");
	return 0;
}

static int cmd_readlink(int argc, char **argv)
{
	char buf[4096];
	ssize_t n;

	if (argc != 2)
		return usage("readlink PATH");
	n = readlink(argv[1], buf, sizeof(buf) - 1);
	if (n < 0)
		return fail(argv[1]);
	buf[n] = '\0';
	printf("%s\n", buf);
	return 0;
}

static const char *file_type(mode_t m)
{
	switch (m & S_IFMT) {
	case S_IFREG: return "file";
	case S_IFDIR: return "dir";
	case S_IFLNK: return "link";
	case S_IFCHR: return "chr";
	case S_IFBLK: return "blk";
	case S_IFIFO: return "fifo";
	case S_IFSOCK: return "sock";
	default: return "unknown";
	}
}

/* "TYPE MODE" (mode in octal with the set-id/sticky bits), then
 * " MAJOR:MINOR" for device nodes; follows symlinks. */
static int cmd_stat(int argc, char **argv)
{
	struct stat st;

	if (argc != 2)
		return usage("stat PATH");
	if (stat(argv[1], &st) < 0)
		return fail(argv[1]);
	printf("%s %o", file_type(st.st_mode), (unsigned)(st.st_mode & 07777));
	if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))
		printf(" %u:%u", major(st.st_rdev), minor(st.st_rdev));
	printf("\n");
	return 0;
}

static int cmd_hostname(UNUSED int argc, UNUSED char **argv)
{
	char buf[256];

	if (gethostname(buf, sizeof(buf)) < 0)
		return fail("gethostname");
	buf[sizeof(buf) - 1] = '\0';
	printf("%s\n", buf);
	return 0;
}

static int cmd_env(UNUSED int argc, UNUSED char **argv)
{
	for (char **e = environ; e && *e; e++)
		printf("%s\n", *e);
	return 0;
}

/* ---- TCP, for the networking tests ----------------------------------------- */

struct addr {
	struct sockaddr_storage ss;
	socklen_t len;
};

/* Numeric IPv4 or IPv6 address and port (no resolver in a static binary). */
static int parse_addr(const char *host, const char *port, struct addr *a)
{
	long p;
	struct sockaddr_in *in4 = (struct sockaddr_in *)&a->ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&a->ss;

	if (parse_long(port, 1, 65535, &p) < 0)
		return -1;
	memset(a, 0, sizeof(*a));
	if (inet_pton(AF_INET, host, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons((uint16_t)p);
		a->len = sizeof(*in4);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)p);
		a->len = sizeof(*in6);
		return 0;
	}
	fprintf(stderr, PROG ": \"%s\": not a numeric IPv4/IPv6 address\n", host);
	return -1;
}

static void set_timeouts(int fd)
{
	struct timeval tv = { .tv_sec = NET_TIMEOUT_S };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

/* Echo what the peer sends until it shuts its side down. */
static int echo_conn(int c)
{
	char buf[4096];
	ssize_t n;

	set_timeouts(c);
	while ((n = read(c, buf, sizeof(buf))) > 0)
		if (write(c, buf, (size_t)n) != n)
			return -1;
	return n < 0 ? -1 : 0;
}

/* tcp-listen PORT [COUNT]: listen on every address (IPv6 dual-stack when
 * available), print "listening PORT", echo COUNT connections (default 1),
 * print "served COUNT".  Gives up after NET_TIMEOUT_S per connection. */
static int cmd_tcp_listen(int argc, char **argv)
{
	long port, count = 1;
	struct addr a;
	int one = 1, s;

	if (argc < 2 || argc > 3 || parse_long(argv[1], 1, 65535, &port) < 0 ||
	    (argc == 3 && parse_long(argv[2], 1, 1000, &count) < 0))
		return usage("tcp-listen PORT [COUNT]");
	s = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s >= 0) {
		parse_addr("::", argv[1], &a);
		int zero = 0;
		setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	} else {
		s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (s < 0)
			return fail("socket");
		parse_addr("0.0.0.0", argv[1], &a);
	}
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(s, (struct sockaddr *)&a.ss, a.len) < 0)
		return fail("bind");
	if (listen(s, 16) < 0)
		return fail("listen");
	set_timeouts(s); /* accept() honours SO_RCVTIMEO */
	printf("listening %ld\n", port);
	fflush(stdout);
	for (long i = 0; i < count; i++) {
		int c = accept4(s, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0)
			return fail("accept");
		int r = echo_conn(c);
		close(c);
		if (r < 0)
			return fail("echo");
	}
	close(s);
	printf("served %ld\n", count);
	return 0;
}

/* tcp-connect ADDR PORT: connect, send "ping", print what comes back. */
static int cmd_tcp_connect(int argc, char **argv)
{
	static const char msg[] = "ping\n";
	char buf[256];
	size_t got = 0;
	ssize_t n;
	struct addr a;
	int s;

	if (argc != 3)
		return usage("tcp-connect ADDR PORT");
	if (parse_addr(argv[1], argv[2], &a) < 0)
		return 2;
	s = socket(a.ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		return fail("socket");
	set_timeouts(s); /* connect() honours SO_SNDTIMEO */
	if (connect(s, (struct sockaddr *)&a.ss, a.len) < 0)
		return fail("connect");
	if (write(s, msg, sizeof(msg) - 1) != (ssize_t)sizeof(msg) - 1)
		return fail("send");
	shutdown(s, SHUT_WR);
	while (got < sizeof(buf) - 1 && (n = read(s, buf + got, sizeof(buf) - 1 - got)) > 0)
		got += (size_t)n;
	close(s);
	buf[got] = '\0';
	printf("%s", buf);
	return got ? 0 : (fprintf(stderr, PROG ": tcp-connect: no reply\n"), 1);
}

/* ---- dispatch ---------------------------------------------------------------- */

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
} commands[] = {
	{ "fds", cmd_fds, "open fd numbers" },
	{ "cwd", cmd_cwd, "current directory" },
	{ "keyring", cmd_keyring, "serial of the session keyring" },
	{ "caps", cmd_caps, "Cap* lines of /proc/self/status" },
	{ "ids", cmd_ids, "uid=U gid=G groups=..." },
	{ "syscall", cmd_syscall, "NAME... : NAME OK | NAME ERRNO" },
	{ "alloc", cmd_alloc, "MB : allocate and touch MB MiB" },
	{ "forkbomb", cmd_forkbomb, "N : forked K failed ERRNO" },
	{ "sigwait", cmd_sigwait, ": ready, then the signal's name" },
	{ "sleep", cmd_sleep, "SECS" },
	{ "exit", cmd_exit, "N" },
	{ "true", cmd_true, "" },
	{ "writefile", cmd_writefile, "PATH : OK | ERRNO" },
	{ "mmapwrite", cmd_mmapwrite, "PATH TEXT : OK | STEP ERRNO" },
	{ "readlink", cmd_readlink, "PATH" },
	{ "stat", cmd_stat, "PATH : TYPE MODE [MAJ:MIN]" },
	{ "hostname", cmd_hostname, "" },
	{ "env", cmd_env, "" },
	{ "tcp-listen", cmd_tcp_listen, "PORT [COUNT] : echo server" },
	{ "tcp-connect", cmd_tcp_connect, "ADDR PORT : send ping, print reply" },
};

int main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help")) {
		fprintf(argc < 2 ? stderr : stdout, "Usage: " PROG " COMMAND [ARGS...]\n");
		for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
			fprintf(argc < 2 ? stderr : stdout, "  %-12s %s\n", commands[i].name,
				commands[i].help);
		return argc < 2 ? 2 : 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name)) {
			int r = commands[i].fn(argc - 1, argv + 1);
			if (fflush(stdout) != 0 && r == 0)
				r = fail("write stdout");
			return r;
		}
	fprintf(stderr, PROG ": unknown command \"%s\" (see --help)\n", argv[1]);
	return 2;
}
