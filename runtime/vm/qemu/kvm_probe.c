/* runtime/vm/qemu/kvm_probe.c — does KVM really run a guest here?
 *
 * /dev/kvm can open, and even run a trivial real-mode guest, while QEMU
 * aborts on it (nested virtualisation without the MSRs or the instruction
 * emulation QEMU needs: "failed to set MSR 0x10a", "KVM internal error").
 * So `--accel auto` boots the pod's own kernel once under KVM with the same
 * CPU model the pods get (-cpu host), no initrd and no root: a working KVM
 * reaches the kernel's "cannot mount root" panic and QEMU exits 0 through
 * reboot=t + -no-reboot, within a second; a broken one aborts or stalls.
 * The answer is cached per host kernel release, QEMU binary (device, inode,
 * size, mtime) and guest kernel, in $QPOD_CACHE (default /var/cache/qpod)
 * /kvm-probe, so the probe costs one boot per host and upgrade. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/paths.h"
#include "vm/qemu/qemu.h"
#include "vm/vm.h"

#define PROBE_TIMEOUT_MS 8000
#define PROBE_FILE "kvm-probe"

/* The identity of what the answer depends on, one line. */
static int probe_key(const char *kernel, char *key, size_t size)
{
	struct utsname u;
	struct stat q, k;
	char path[4096];
	const char *dirs = getenv("PATH");
	bool found = false;

	if (uname(&u) < 0 || stat(kernel, &k) < 0)
		return -1;
	/* the QEMU that PATH gives (as execvp will find it) */
	for (const char *d = dirs ? dirs : "/usr/bin:/bin"; d && *d && !found;) {
		const char *end = strchr(d, ':');
		size_t n = end ? (size_t)(end - d) : strlen(d);
		snprintf(path, sizeof(path), "%.*s/" QEMU_BIN, (int)n, d);
		found = stat(path, &q) == 0;
		d = end ? end + 1 : NULL;
	}
	if (!found)
		return -1;
	snprintf(key, size, "host=%s qemu=%lu:%lu:%lld:%lld kernel=%lu:%lld:%lld", u.release,
		 (unsigned long)q.st_dev, (unsigned long)q.st_ino, (long long)q.st_size,
		 (long long)q.st_mtime, (unsigned long)k.st_ino, (long long)k.st_size,
		 (long long)k.st_mtime);
	return 0;
}


/* 1 usable, 0 not (why filled), -1 no cached answer for key. */
static int cached(const char *key, char *why, size_t size)
{
	char path[4096], buf[1024];
	_cleanup_fclose_ FILE *f = NULL;

	snprintf(path, sizeof(path), "%s/" PROBE_FILE, qp_cache_dir());
	if (!(f = fopen(path, "re")) || !fgets(buf, sizeof(buf), f))
		return -1;
	buf[strcspn(buf, "\n")] = '\0';
	if (strcmp(buf, key) || !fgets(buf, sizeof(buf), f))
		return -1;
	buf[strcspn(buf, "\n")] = '\0';
	if (!strcmp(buf, "ok"))
		return 1;
	if (strncmp(buf, "no ", 3))
		return -1;
	snprintf(why, size, "%s", buf + 3);
	return 0;
}

static void remember(const char *key, bool ok, const char *why)
{
	char path[4096], tmp[4200];
	int fd;

	snprintf(path, sizeof(path), "%s/" PROBE_FILE, qp_cache_dir());
	snprintf(tmp, sizeof(tmp), "%s.%d", path, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return; /* no cache (rootless, read-only): probe again next time */
	dprintf(fd, "%s\n%s%s\n", key, ok ? "ok" : "no ", ok ? "" : why);
	close(fd);
	if (rename(tmp, path) < 0)
		unlink(tmp);
}

/* Boot the kernel under KVM; 1 = it ran to its panic and QEMU exited 0. */
static int probe_boot(const char *kernel, const char *firmware, char *why, size_t size)
{
	int pipefd[2];
	pid_t pid;
	char out[4096] = "";
	size_t have = 0;
	int status = 0;

	if (pipe2(pipefd, O_CLOEXEC) < 0) {
		snprintf(why, size, "probe: pipe: %s", strerror(errno));
		return 0;
	}
	pid = fork();
	if (pid < 0) {
		snprintf(why, size, "probe: fork: %s", strerror(errno));
		close(pipefd[0]);
		close(pipefd[1]);
		return 0;
	}
	if (pid == 0) {
		const char *bin = getenv("QPOD_QEMU");
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (null < 0 || dup2(null, 0) < 0 || dup2(pipefd[1], 1) < 0 || dup2(pipefd[1], 2) < 0)
			_exit(127);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execlp(bin && *bin ? bin : QEMU_BIN, QEMU_BIN, "-M", "microvm,acpi=off", "-nodefaults",
		       "-no-user-config", "-nographic", "-no-reboot", "-accel", "kvm", "-cpu", "host",
		       "-m", "64M", "-bios", firmware, "-kernel", kernel, "-append",
		       "console=ttyS0 quiet reboot=t panic=-1", "-serial", "none", (char *)NULL);
		_exit(127);
	}
	close(pipefd[1]);
	long long deadline = qp_now_ms() + PROBE_TIMEOUT_MS;
	bool done = false;
	_cleanup_close_ int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	while (!done) {
		long long left = deadline - qp_now_ms();
		struct pollfd p[2] = { { .fd = pipefd[0], .events = POLLIN }, { .fd = pidfd, .events = POLLIN } };
		if (left <= 0)
			break;
		if (poll(p, pidfd >= 0 ? 2 : 1, (int)left) < 0 && errno != EINTR)
			break;
		if (p[0].revents) {
			ssize_t n = read(pipefd[0], out + have, sizeof(out) - 1 - have);
			if (n > 0)
				have += (size_t)n;
			else if (n == 0)
				p[0].fd = -1;
			if (have >= sizeof(out) - 1)
				have = 0; /* keep the newest output only */
			out[have] = '\0';
		}
		done = waitpid(pid, &status, WNOHANG) == pid;
	}
	close(pipefd[0]);
	if (!done) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		snprintf(why, size, "a KVM guest did not finish a probe boot within %d s",
			 PROBE_TIMEOUT_MS / 1000);
		return 0;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 1;
	/* QEMU's own words: its first "error" line, else its last line */
	char *line = strstr(out, "error");
	if (!line) {
		while (have > 0 && (out[have - 1] == '\n' || out[have - 1] == '\r'))
			out[--have] = '\0';
		line = strrchr(out, '\n');
		line = line ? line + 1 : out;
	}
	line[strcspn(line, "\n")] = '\0';
	for (char *c = line; *c; c++)
		if ((unsigned char)*c < 0x20)
			*c = '?';
	if (WIFSIGNALED(status))
		snprintf(why, size, "qemu killed by signal %d under KVM: %.200s", WTERMSIG(status), line);
	else
		snprintf(why, size, "qemu exited %d under KVM: %.200s", WEXITSTATUS(status), line);
	return 0;
}

bool vm_kvm_usable(char *why, size_t size)
{
	_cleanup_free_ char *kernel = NULL, *firmware = NULL;
	char key[1024];
	int fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		snprintf(why, size, "/dev/kvm: %s", strerror(errno));
		return false;
	}
	close(fd);
	if (!(kernel = vm_find_kernel(NULL)) || !(firmware = vm_find_firmware("qboot", NULL)) ||
	    probe_key(kernel, key, sizeof(key)) < 0) {
		snprintf(why, size, "no guest kernel, firmware or QEMU to probe KVM with");
		return false;
	}
	int c = cached(key, why, size);
	if (c >= 0)
		return c == 1;
	bool ok = probe_boot(kernel, firmware, why, size) == 1;
	remember(key, ok, why);
	if (!ok)
		qp_warn("KVM is not usable here (%s): using TCG", why);
	return ok;
}
