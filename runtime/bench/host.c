/* runtime/bench/host.c — the host description of every result file:
 * CPU model, online CPUs, memory, kernel release and QEMU version. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "result/result.h"
#include "util/cleanup.h"
#include "util/report.h"

#define QEMU_BIN "qemu-system-x86_64"
#define QEMU_TIMEOUT_MS 5000

extern char **environ;

/* The value after "KEY<spaces>:" on the first line starting with key, or "". */
static void proc_value(const char *path, const char *key, char *out, size_t size)
{
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	char line[512];
	size_t klen = strlen(key);

	out[0] = '\0';
	while (f && fgets(line, sizeof(line), f)) {
		char *p = line + klen;
		if (strncmp(line, key, klen))
			continue;
		p += strspn(p, " \t");
		if (*p++ != ':')
			continue;
		p += strspn(p, " \t");
		p[strcspn(p, "\n")] = '\0';
		snprintf(out, size, "%s", p);
		return;
	}
}

/* First line of `qemu-system-x86_64 --version`, or "" if it cannot run. */
static void qemu_version(char *out, size_t size)
{
	char *argv[] = { QEMU_BIN, "--version", NULL };
	posix_spawn_file_actions_t fa;
	int pipefd[2], status;
	pid_t pid;

	out[0] = '\0';
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pipefd[1], STDOUT_FILENO);
	posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	int r = posix_spawnp(&pid, QEMU_BIN, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(pipefd[1]);
	if (r == 0) {
		if (qp_report_read(pipefd[0], QEMU_TIMEOUT_MS, out, size) < 0)
			out[0] = '\0';
		out[strcspn(out, "\n")] = '\0';
		kill(pid, SIGKILL); /* harmless if it already exited; bounds a hung one */
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	}
	close(pipefd[0]);
}

int qp_bench_host_describe(struct qp_bench_host *host, qp_error **err)
{
	char buf[256];
	struct utsname u;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	qp_bench_host_clear(host);
	host->cores = ncpu > 0 ? ncpu : 0;
	proc_value("/proc/meminfo", "MemTotal", buf, sizeof(buf));
	host->mem_mb = strtol(buf, NULL, 10) / 1024; /* "16384000 kB" */
	proc_value("/proc/cpuinfo", "model name", buf, sizeof(buf));
	if (*buf && qp_bench_set(&host->cpu, buf, err) < 0)
		goto fail;
	if (uname(&u) == 0 && qp_bench_set(&host->kernel, u.release, err) < 0)
		goto fail;
	qemu_version(buf, sizeof(buf));
	if (*buf && qp_bench_set(&host->qemu, buf, err) < 0)
		goto fail;
	return 0;
fail:
	qp_bench_host_clear(host);
	return -1;
}
