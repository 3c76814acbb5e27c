/* runtime/vm/tradvm/qpod-tradvm.c — qpod-tradvm (a program of its own,
 * beside the VM driver whose QEMU code it shares): boot the "traditional VM" baseline
 * (QEMU -M pc, SeaBIOS, Debian's cloud kernel from tools/baseline-kernel.sh,
 * guest-init as /init with the kernel's virtio modules in the initramfs),
 * run one command through the qpod.0 channel and time it, N times.
 *
 *   qpod-tradvm [-n RUNS] [-k KERNEL] [-m MODULES_DIR] [-r ROOTFS] [-i INIT]
 *               [-a CMDLINE] [-A kvm|tcg|auto] [-M MEM] [-c VCPUS] [-9] [-v]
 *               [-- CMD ARG...]                               (default /bin/true)
 *
 * -A/-M/-c: the accelerator (auto: as qpod's pods decide it, with the same
 * probe), memory (default 256M) and vCPUs (default 1), so that `qpod bench
 * start --baseline` compares like with like.
 *
 * The rootfs is packed into the initramfs (RUN rootfs=INITRAMFS) because
 * Debian's cloud kernel has no 9p; -9 shares it over virtio-9p-pci instead
 * (for a kernel that has 9p, e.g. linux-image-amd64's).  Per run it prints
 * the wall time from spawning QEMU to HELLO, to EXIT and to QEMU's exit, and
 * the guest's own boot clock (CLOCK_BOOTTIME) at init start and at HELLO;
 * then the medians.  -v keeps the
 * state dir (qemu.log, console.log) and prints its path.
 * Links libqpod.a: vm_write_initrd_trees(), the channel code and QEMU's
 * command line (vm_spawn_qemu with the pc machine profile: the same device
 * table, accel, memory and vCPUs as the pods). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "guest-init/channel.h"
#include "guest-init/modules.h"
#include "util/cleanup.h"
#include "util/error.h"
#include "vm/qemu/qemu.h"
#include "vm/vm.h"

#define BASE "/var/cache/qpod/baseline-kernel/current"
/* kernel-config/cmdline.txt: the same speed-tuned line as qpod's own kernel */
#define CMDLINE "console=ttyS0 quiet reboot=t panic=-1 no_timer_check tsc=reliable 8250.nr_uarts=1"
#define RUNS_MAX 100
#define HELLO_TIMEOUT_MS 120000
#define EXIT_TIMEOUT_MS 60000

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* the baseline's QEMU: qpod's own command line builder with the pc
 * profile (vm_spawn_qemu); machine-wide settings filled in by main() */
static struct vm_qemu_opts qopts = {
	.machine = VM_MACHINE_PC,
	.initrd = "initrd.cpio",
	.console = "console.log",
	.rootfs_ro = true,
	.vcpus = 1,
	.mem_mib = 256,
	.tap_fd = -1,
};

static pid_t spawn_qemu(const char *kernel, const char *cmdline, const char *rootfs)
{
	qp_error *err = NULL;
	pid_t pid;

	qopts.kernel = kernel;
	qopts.cmdline = cmdline;
	qopts.rootfs = rootfs;
	if ((pid = vm_spawn_qemu(&qopts, &err)) < 0) {
		fprintf(stderr, "qpod-tradvm: %s\n", err && err->msg ? err->msg : "spawn qemu");
		qp_error_free(&err);
	}
	return pid;
}

static int connect_chan(pid_t qemu)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX, .sun_path = "ch.sock" };
	double deadline = now_s() + 10;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	while (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		if ((errno != ENOENT && errno != ECONNREFUSED) || now_s() > deadline ||
		    waitpid(qemu, NULL, WNOHANG) == qemu) {
			fprintf(stderr, "qpod-tradvm: connect to ch.sock: %s (see qemu.log)\n", strerror(errno));
			close(fd);
			return -1;
		}
		usleep(2000);
	}
	return fd;
}

struct timing {
	double hello, exit, end, init_s, hello_s;
	int code;
};

/* One boot: returns 0 with the timing filled in, -1 on any failure. */
static int one_run(const char *kernel, const char *cmdline, const char *share,
		   const char *const *argv, uint32_t argc, struct timing *t)
{
	static struct qp_chan chan;
	static const char *const env[] = { "PATH=/bin:/sbin:/usr/bin:/usr/sbin", NULL };
	qp_error *err = NULL;
	struct qp_msg m = { .type = QP_MSG_RUN };
	double t0 = now_s();
	pid_t qemu = spawn_qemu(kernel, cmdline, share);
	int fd, status, rc = -1;

	if (qemu < 0 || (fd = connect_chan(qemu)) < 0)
		goto out;
	qp_chan_init(&chan, fd);
	if (qp_chan_recv(&chan, &m, HELLO_TIMEOUT_MS, &err) < 0 ||
	    qp_msg_check_sender(&m, QP_SENDER_GUEST, &err) < 0)
		goto fail;
	if (m.type != QP_MSG_HELLO) {
		qp_error_set(&err, QP_E_GUEST, 0, "expected HELLO, got %s", qp_msg_type_name(m.type));
		goto fail;
	}
	t->hello = now_s() - t0;
	t->init_s = (double)m.u.hello.init_ns / 1e9;
	t->hello_s = (double)m.u.hello.hello_ns / 1e9;
	m = (struct qp_msg){ .type = QP_MSG_RUN };
	m.u.run = (struct qp_run){
		.flags = share ? QP_RUN_F_ROOTFS_RO : 0,
		.rootfs = share ? QP_ROOTFS_9P : QP_ROOTFS_INITRAMFS,
		.rootfs_tag = share ? "rootfs" : "",
		.cwd = "",
		.hostname = "",
		.argc = argc,
		.envc = 1,
		.argv = argv,
		.env = env,
	};
	if (qp_chan_send(&chan, &m, 10000, &err) < 0)
		goto fail;
	for (;;) {
		if (qp_chan_recv(&chan, &m, EXIT_TIMEOUT_MS, &err) < 0 ||
		    qp_msg_check_sender(&m, QP_SENDER_GUEST, &err) < 0)
			goto fail;
		if (m.type == QP_MSG_STDOUT || m.type == QP_MSG_STDERR)
			fwrite(m.u.data.data, 1, m.u.data.len, m.type == QP_MSG_STDOUT ? stdout : stderr);
		else if (m.type == QP_MSG_ERROR)
			fprintf(stderr, "qpod-tradvm: guest error %u: %.*s\n", m.u.error.code,
				200, m.u.error.text);
		else if (m.type == QP_MSG_EXIT)
			break;
	}
	t->exit = now_s() - t0;
	t->code = m.u.exit.code;
	close(fd);
	rc = 0;
	goto out;
fail:
	fprintf(stderr, "qpod-tradvm: channel: %s (see qemu.log, console.log)\n",
		err && err->msg ? err->msg : "?");
	qp_error_free(&err);
	close(fd);
	kill(qemu, SIGKILL);
out:
	if (qemu > 0) {
		for (int i = 0; i < 1000 && waitpid(qemu, &status, WNOHANG) == 0; i++)
			usleep(10000);
		if (waitpid(qemu, &status, WNOHANG) == 0) { /* not gone after 10 s */
			kill(qemu, SIGKILL);
			waitpid(qemu, &status, 0);
			fprintf(stderr, "qpod-tradvm: qemu did not exit after EXIT; killed\n");
			rc = -1;
		}
	}
	t->end = now_s() - t0;
	return rc;
}

int main(int argc, char **argv)
{
	const char *kernel = BASE "/vmlinuz", *modules = BASE "/modules",
		   *rootfs = "/var/cache/qpod/rootfs-busybox", *init = NULL,
		   *cmdline = CMDLINE;
	static const char *const deflt[] = { "/bin/true", NULL };
	char dir[] = "/tmp/qpod-tradvm.XXXXXX", cwd[4096];
	double hello[RUNS_MAX], ex[RUNS_MAX], end[RUNS_MAX], boot[RUNS_MAX];
	int runs = 5, nine = 0, verbose = 0, c, ok = 0;
	qp_error *err = NULL;

	const char *accel_arg = "auto";
	while ((c = getopt(argc, argv, "n:k:m:r:i:a:A:M:c:9v")) != -1) {
		switch (c) {
		case 'n': runs = atoi(optarg); break;
		case 'k': kernel = optarg; break;
		case 'm': modules = optarg; break;
		case 'r': rootfs = optarg; break;
		case 'i': init = optarg; break;
		case 'a': cmdline = optarg; break;
		case 'A': accel_arg = optarg; break;
		case 'M': {
			int64_t bytes;
			if (cli_parse_size(optarg, "-M", &bytes, &err) < 0 || bytes < (16LL << 20))
				return fprintf(stderr, "qpod-tradvm: -M \"%s\": a size of at least 16M\n", optarg), 2;
			qopts.mem_mib = (unsigned long long)bytes >> 20;
			break;
		}
		case 'c': {
			char *e_;
			long v = strtol(optarg, &e_, 10);
			if (*e_ || v < 1 || v > QP_VCPUS_MAX)
				return fprintf(stderr, "qpod-tradvm: -c \"%s\": 1..%d\n", optarg, QP_VCPUS_MAX), 2;
			qopts.vcpus = (int)v;
			break;
		}
		case '9': nine = 1; break;
		case 'v': verbose = 1; break;
		default:
			fprintf(stderr, "usage: qpod-tradvm [-n RUNS] [-k KERNEL] [-m MODULES] [-r ROOTFS] "
					"[-i INIT] [-a CMDLINE] [-A kvm|tcg|auto] [-M MEM] [-c VCPUS] [-9] [-v] [-- CMD ARG...]\n");
			return 2;
		}
	}
	{
		bool kvm = false;
		qp_error *e = NULL;
		enum qp_accel want;
		if (qp_accel_parse(accel_arg, &want) < 0) {
			fprintf(stderr, "qpod-tradvm: -A must be auto, kvm or tcg, not \"%s\"\n", accel_arg);
			return 2;
		}
		if (vm_pick_accel(want, &kvm, &e) < 0) {
			fprintf(stderr, "qpod-tradvm: %s\n", e->msg);
			return 2;
		}
		qopts.kvm = kvm;
	}
	/* guest-init as qpod's pods find it (QPOD_GUEST_INIT, the build, the
	 * installed tree) unless -i names one.  Run by qpod, QPOD_EXE_DIR is
	 * qpod's; run by hand, it is derived from where this binary is: the
	 * build's tools/ (build/) or PREFIX/lib/qpod (PREFIX/bin) */
	_cleanup_free_ char *found_init = NULL;
	char self[PATH_MAX];
	ssize_t sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (!getenv("QPOD_EXE_DIR") && sl > 0) {
		self[sl] = '\0';
		char *slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			slash = strrchr(self, '/');
			if (slash && !strcmp(slash, "/tools")) {
				*slash = '\0';
			} else if (slash && !strcmp(slash, "/qpod") && (*slash = '\0', slash = strrchr(self, '/')) &&
				   !strcmp(slash, "/lib")) {
				strcpy(slash, "/bin");
			}
			setenv("QPOD_EXE_DIR", self, 1);
		}
	}
	if (!init) {
		if (!(found_init = vm_find_guest_init(&err)))
			return qp_error_print(err);
		init = found_init;
	}
	if (runs < 1 || runs > RUNS_MAX)
		return fprintf(stderr, "qpod-tradvm: -n: 1..%d\n", RUNS_MAX), 2;
	const char *const *cmd = optind < argc ? (const char *const *)argv + optind : deflt;
	uint32_t cmdc = optind < argc ? (uint32_t)(argc - optind) : 1;

	/* absolute paths: QEMU runs in the state dir */
	char *akernel = realpath(kernel, NULL), *arootfs = realpath(rootfs, NULL);
	if (!akernel || !arootfs || !getcwd(cwd, sizeof(cwd)) || !mkdtemp(dir))
		return fprintf(stderr, "qpod-tradvm: %s: %s\n", !akernel ? kernel : !arootfs ? rootfs : "tmp dir",
			       strerror(errno)), 1;
	struct vm_initrd_tree trees[2] = { { modules, GI_MODULES_DIR + 1 }, { arootfs, "" } };
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || vm_write_initrd_trees(dfd, "initrd.cpio", init, trees, nine ? 1 : 2, &err) < 0)
		return qp_error_print(err);
	qopts.statedir = dir;
	qopts.dirfd = dfd;
	if (chdir(dir) < 0)
		return perror("qpod-tradvm: chdir"), 1;
	printf("# qpod-tradvm: kernel %s, rootfs %s (%s), cmdline \"%s\"\n", akernel, arootfs,
	       nine ? "9p" : "initramfs", cmdline);
	printf("# run  hello_s  exit_s  qemu_end_s  guest_init_s  guest_hello_s  code\n");
	for (int i = 0; i < runs; i++) {
		struct timing t = { 0 };
		if (one_run(akernel, cmdline, nine ? arootfs : NULL, cmd, cmdc, &t) < 0) {
			printf("%4d  failed\n", i + 1);
			continue;
		}
		printf("%4d  %7.3f  %6.3f  %10.3f  %12.3f  %13.3f  %4d\n", i + 1, t.hello, t.exit, t.end,
		       t.init_s, t.hello_s, t.code);
		fflush(stdout);
		hello[ok] = t.hello, ex[ok] = t.exit, end[ok] = t.end, boot[ok] = t.init_s, ok++;
		unlink("ch.sock");
	}
	if (ok)
		printf("# median of %d: hello %.3f s, exit %.3f s, qemu end %.3f s, guest init at %.3f s\n",
		       ok, median(hello, ok), median(ex, ok), median(end, ok), median(boot, ok));
	if (verbose) {
		printf("# state dir kept: %s\n", dir);
	} else {
		unlink("initrd.cpio"), unlink("qemu.log"), unlink("console.log"), unlink("ch.sock");
		if (chdir(cwd) == 0)
			rmdir(dir);
	}
	return ok == runs ? 0 : 1;
}
