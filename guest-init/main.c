/* guest-init/main.c — PID 1 of a qpod microVM, a static binary packed as
 * /init into the initramfs.  main() is the boot sequence: mounts (mounts.c),
 * control channel, HELLO, the template's CLONE and WARM, RUN, network
 * (net.c), rootfs, then what runs in the guest is supervise.c's until power
 * off.
 *
 * Failure policy: any failed step is sent to the host as an ERROR (with
 * errno) and printed on the console, then the VM powers off.  Nothing waits
 * without a deadline except for the workload itself and for RUN (a booted VM
 * may be held in a pool); a host that goes away ends the VM. */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <net/route.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include <grp.h>

#include "guest-init/channel.h"
#include "guest-init/guest.h"
#include "guest-init/modules.h"
#include "guest-init/tinyinit.h"
#include "util/log.h"

#define CONNECT_TIMEOUT_MS 10000 /* host side of the port must open by then */
#define PORT_WAIT_MS 3000        /* virtio port names arrive asynchronously */

/* ---- the control channel ---- */

/* /dev/virtio-ports/NAME is a udev link; without udev, look the name up in
 * sysfs.  Returns an fd or -1. */
/* What every pod gets, done before the first HELLO: a template is
 * captured at that HELLO, so its clones start with it done instead of
 * paying for it (under TCG, 25-30 ms of code a clone would translate
 * afresh).  /dev/pts and /sys/fs/cgroup move into a 9p root with /dev and
 * /sys (enter_rootfs). */
static void setup_before_hello(void)
{
	int sk = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (sk < 0)
		die("socket AF_INET");
	gi_link_up(sk, "lo"); /* the kernel gives lo 127.0.0.1/8 when it goes up */
	close(sk);
	gi_mount_cgroup2();
	gi_mount_fs("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC, "mode=0620,ptmxmode=0666");
}

static int open_named_port(void)
{
	int fd = open("/dev/virtio-ports/" QP_PROTO_PORT_NAME, O_RDWR | O_CLOEXEC);
	DIR *d;
	struct dirent *de;

	if (fd >= 0 || !(d = opendir("/sys/class/virtio-ports")))
		return fd;
	while (fd < 0 && (de = readdir(d))) {
		char path[300], name[64] = "";
		int nfd;
		ssize_t n;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/class/virtio-ports/%s/name", de->d_name);
		if ((nfd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			continue;
		n = read(nfd, name, sizeof(name) - 1);
		close(nfd);
		if (n <= 0)
			continue;
		name[n] = '\0';
		name[strcspn(name, "\n")] = '\0';
		if (strcmp(name, QP_PROTO_PORT_NAME) != 0)
			continue;
		snprintf(path, sizeof(path), "/dev/%s", de->d_name);
		fd = open(path, O_RDWR | O_CLOEXEC);
	}
	closedir(d);
	return fd;
}

static int open_channel(void)
{
	int64_t deadline = gi_mono_ms() + PORT_WAIT_MS;
	int fd;

	while ((fd = open_named_port()) < 0 && gi_mono_ms() < deadline)
		usleep(5000);
	if (fd < 0) {
		struct termios t;

		fd = open("/dev/hvc1", O_RDWR | O_CLOEXEC | O_NOCTTY);
		if (fd < 0)
			die("no control channel: no virtio-serial port named \"" QP_PROTO_PORT_NAME
			    "\" (QEMU: -device virtserialport,name=" QP_PROTO_PORT_NAME
			    "; kernel: CONFIG_VIRTIO_CONSOLE) and /dev/hvc1");
		if (tcgetattr(fd, &t) == 0) { /* a console: make it carry bytes as they are */
			cfmakeraw(&t);
			if (tcsetattr(fd, TCSANOW, &t) < 0)
				die("raw mode on /dev/hvc1");
		}
	}
	return fd;
}

static void send_hello(uint64_t init_ns, uint16_t flags, uint32_t seed_check)
{
	struct qp_msg m = { .type = QP_MSG_HELLO };
	int64_t deadline = gi_mono_ms() + CONNECT_TIMEOUT_MS;
	qp_error *err = NULL;

	m.u.hello.version = QP_PROTO_VERSION;
	m.u.hello.flags = flags;
	m.u.hello.seed_check = seed_check;
	m.u.hello.init_ns = init_ns;
	for (;;) {
		m.u.hello.hello_ns = gi_boot_ns();
		if (gi_send(&m, &err) == 0)
			return;
		/* EPIPE: the host end of the port is not open yet */
		if (err->errnum != EPIPE || gi_mono_ms() >= deadline)
			gi_fatal_err(QP_PERR_SYSCALL, err);
		qp_error_free(&err);
		usleep(5000);
	}
}

static void receive(struct qp_msg *m, int timeout_ms)
{
	qp_error *err = NULL;

	if (qp_chan_recv(&gi_chan, m, timeout_ms, &err) < 0 ||
	    qp_msg_check_sender(m, QP_SENDER_HOST, &err) < 0)
		gi_fatal_err(QP_PERR_PROTOCOL, err);
}

/* RNDADDENTROPY / RNDRESEEDCRNG of <linux/random.h> (not in musl's headers) */
#define GI_RNDADDENTROPY _IOW('R', 0x03, int[2])
#define GI_RNDRESEEDCRNG _IO('R', 0x07)

/* CLONE: this VM was restored from a template, as every other clone of it:
 * make it unique before anything runs.  The host's seed is mixed into the
 * RNG (credited: it comes from the host's getrandom) and the CRNG reseeded
 * from it, so no two clones draw the same bytes; the wall clock (frozen in
 * the template) is set from the host's.  Then a new HELLO, whose flags say
 * which of these steps were done, each by its call's result, and whose
 * seed_check is of the bytes the kernel was given (the host checks both). */
static void apply_clone(const struct qp_msg *m, uint64_t init_ns)
{
	struct {
		int entropy_count, buf_size;
		uint8_t buf[QP_PROTO_SEED_SIZE];
	} pool = { QP_PROTO_SEED_SIZE * 8, QP_PROTO_SEED_SIZE, { 0 } };
	struct timespec ts = { (time_t)(m->u.clone.realtime_ns / 1000000000ull),
			       (long)(m->u.clone.realtime_ns % 1000000000ull) };
	int fd = open("/dev/urandom", O_WRONLY | O_CLOEXEC);
	uint16_t done = 0;
	uint32_t check = 0;

	memcpy(pool.buf, m->u.clone.seed, sizeof(pool.buf));
	if (fd >= 0 && ioctl(fd, GI_RNDADDENTROPY, &pool) == 0) {
		done |= QP_HELLO_F_SEEDED;
		check = qp_seed_check(pool.buf);
		if (ioctl(fd, GI_RNDRESEEDCRNG) == 0)
			done |= QP_HELLO_F_RESEEDED;
	}
	if (!(done & QP_HELLO_F_RESEEDED))
		die("seed the RNG of a clone");
	close(fd);
	memset(&pool, 0, sizeof(pool));
	if (clock_settime(CLOCK_REALTIME, &ts) == 0)
		done |= QP_HELLO_F_CLOCK;
	else
		die("set the clock of a clone");
	send_hello(init_ns, done, check);
}

/* WARM: run what a pod's start runs, once, so that under TCG its code is
 * translated before a pod asks (a spare's idle time pays for it): in a
 * child with a mount namespace of its own (nothing of it stays), the
 * share's subdirectory entered as a pod's root is (enter_rootfs), a
 * program of it forked and exec'd, waited for.  Then HELLO.  A failed
 * step ends the VM as any setup failure does (the spare is not made). */
static void warm_up(const struct qp_msg *m, uint64_t init_ns)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		die("warm-up: fork");
	if (pid == 0) {
		struct qp_run r = { .rootfs = QP_ROOTFS_9P_SUBDIR, .rootfs_tag = m->u.warm.tag };
		if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
			die("warm-up: a mount namespace");
		gi_enter_rootfs(&r);
		pid_t prog = fork();
		if (prog == 0) {
			execl("/" QP_PROTO_WARM_PROG, QP_PROTO_WARM_ARGV0, (char *)NULL);
			_exit(127);
		}
		_exit(prog > 0 && waitpid(prog, &status, 0) == prog && WIFEXITED(status) ? WEXITSTATUS(status) : 126);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		gi_fatal(QP_PERR_SYSCALL, 0, "warm-up: /" QP_PROTO_WARM_PROG " of the share did not run (status 0x%x)",
			 status);
	send_hello(init_ns, 0, 0);
}

/* Until RUN, answer MEMINFO_REQ, CLONE, WARM and SHUTDOWN; anything else is
 * out of turn. */
static void wait_run(struct qp_run *out, uint64_t init_ns)
{
	struct qp_msg m;

	for (;;) {
		receive(&m, 0x7fffffff);
		switch (m.type) {
		case QP_MSG_RUN:
			*out = m.u.run;
			gi_keep_run(out);
			return;
		case QP_MSG_CLONE:
			apply_clone(&m, init_ns);
			break;
		case QP_MSG_WARM:
			warm_up(&m, init_ns);
			break;
		case QP_MSG_MEMINFO_REQ:
			gi_send_meminfo();
			break;
		case QP_MSG_SHUTDOWN:
			gi_power_off();
		default:
			gi_fatal(QP_PERR_PROTOCOL, 0, "control channel: %s message before RUN",
			      qp_msg_type_name(m.type));
		}
	}
}

int main(int argc, char **argv)
{
	uint64_t init_ns = gi_boot_ns();
	qp_error *err = NULL;
	struct qp_run run;
	int fd;

	/* the warm-up's run of this program (warm_up) */
	if (argc > 0 && !strcmp(argv[0], QP_PROTO_WARM_ARGV0))
		return 0;

	gi_mount_early();
	if (fcntl(2, F_GETFD) < 0 && (fd = open("/dev/console", O_RDWR)) >= 0) {
		/* an initramfs without /dev/console starts init with no stdio */
		dup2(fd, 0), dup2(fd, 1), dup2(fd, 2);
		if (fd > 2)
			close(fd);
	}
	if (gi_load_modules(GI_MODULES_DIR, &err) < 0) /* virtio drivers of a modular kernel */
		gi_fatal_err(QP_PERR_SYSCALL, err);
	setup_before_hello();
	qp_chan_init(&gi_chan, open_channel());
	gi_chan_ready = 1;
	gi_supervise_prepare();
	send_hello(init_ns, 0, 0);
	wait_run(&run, init_ns);
	if (run.hostname && run.hostname[0] &&
	    sethostname(run.hostname, strlen(run.hostname)) < 0)
		die("sethostname");
	gi_net_setup(&run);
	gi_enter_rootfs(&run);
	gi_apply_mounts(&run);
	gi_supervise(&run);
	gi_power_off();
}
