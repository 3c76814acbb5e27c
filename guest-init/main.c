/* guest-init/main.c — PID 1 of a qpod microVM, a static binary packed as
 * /init into the initramfs.  main() is the boot sequence: mounts, control
 * channel, HELLO, RUN, network, rootfs, workload (through tinyinit), then
 * power off.  A relay thread carries the workload's stdio, signals, memory
 * statistics and exit status over the channel while the main thread is the
 * tinyinit reap/forward loop.
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

#define SEND_TIMEOUT_MS 10000
#define CONNECT_TIMEOUT_MS 10000 /* host side of the port must open by then */
#define PORT_WAIT_MS 3000        /* virtio port names arrive asynchronously */
#define DRAIN_MS 1000            /* after exit, stdio held open by leftovers */
#define NEWROOT "/newroot"
#define SHARE "/.share" /* a spare's share, while its subdirectory is bound */
#define NINEP_OPTS "trans=virtio,version=9p2000.L,cache=mmap,msize=262144"

static struct qp_chan chan; /* static: ~200 KiB, fixed, whatever the host sends */
static int chan_ready;
static pthread_mutex_t send_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- time, console, power ---- */

uint64_t gi_boot_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int64_t gi_mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* util/error.c reports through qp_log; here that is the console. */
void qp_log(enum qp_log_level lvl, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	(void)lvl;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	dprintf(2, "qpod-init: %s\n", buf);
}

static __attribute__((noreturn)) void power_off(void)
{
	sync();
	reboot(RB_AUTOBOOT); /* QEMU runs with -no-reboot: this ends it */
	_exit(1);            /* PID 1 exiting panics; panic=-1 reboots too */
}

int gi_send(const struct qp_msg *m, qp_error **err)
{
	int r;

	pthread_mutex_lock(&send_lock);
	r = qp_chan_send(&chan, m, SEND_TIMEOUT_MS, err);
	pthread_mutex_unlock(&send_lock);
	return r;
}

void gi_fatal(uint32_t code, int errnum, const char *fmt, ...)
{
	char msg[QP_PROTO_MAX_TEXT / 2], text[QP_PROTO_MAX_TEXT];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (errnum)
		snprintf(text, sizeof(text), "%s: %s", msg, strerror(errnum));
	else
		snprintf(text, sizeof(text), "%s", msg);
	qp_log(QP_LOG_ERROR, "%s", text);
	if (chan_ready) {
		pthread_mutex_lock(&send_lock);
		qp_chan_send_error(&chan, code, errnum, text, SEND_TIMEOUT_MS, NULL);
		pthread_mutex_unlock(&send_lock);
	}
	power_off();
}

static __attribute__((noreturn)) void fatal_err(uint32_t code, qp_error *e)
{
	gi_fatal(code, 0, "%s", e && e->msg ? e->msg : "unknown error");
}


/* ---- mounts ---- */

static void make_dir(const char *path)
{
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		die("mkdir \"%s\"", path);
}

static void mount_fs(const char *src, const char *dst, const char *type, unsigned long flags,
		     const char *data)
{
	make_dir(dst);
	/* EBUSY: the kernel mounted it already (devtmpfs.mount) */
	if (mount(src, dst, type, flags, data) < 0 && errno != EBUSY)
		die("mount %s on \"%s\"", type, dst);
}

static void mount_early(void)
{
	mount_fs("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
	mount_fs("sysfs", "/sys", "sysfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
	mount_fs("devtmpfs", "/dev", "devtmpfs", MS_NOSUID, "mode=0755");
}

/* A small proc/sys file, NUL-terminated (one read: these files are
 * generated whole). */
static void read_text(const char *path, char *buf, size_t size)
{
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		die("open %s", path);
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		die("read %s", path);
	buf[n] = '\0';
}

/* /sys/fs/cgroup: the guest is a pure cgroup v2 host (nothing mounts a v1
 * hierarchy), with every controller the kernel has enabled for the root's
 * children, so a container runtime in the pod can set limits at once
 * (runtime/vm/mounts.c counts /sys/fs/cgroup among the guest's own mounts).
 * A kernel without cgroups has no /sys/fs/cgroup: nothing to mount. */
static void mount_cgroup2(void)
{
	static const char dir[] = "/sys/fs/cgroup";
	char have[256], want[512] = "";
	size_t len = 0;
	int fd;

	if (access(dir, F_OK) < 0)
		return;
	if (mount("cgroup2", dir, "cgroup2", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		die("mount cgroup2 on \"%s\"", dir);
	read_text("/sys/fs/cgroup/cgroup.controllers", have, sizeof(have));
	for (char *save = NULL, *w = strtok_r(have, " \n", &save); w; w = strtok_r(NULL, " \n", &save))
		len += (size_t)snprintf(want + len, sizeof(want) - len, "%s+%s", len ? " " : "", w);
	if (!len)
		return;
	if ((fd = open("/sys/fs/cgroup/cgroup.subtree_control", O_WRONLY | O_CLOEXEC)) < 0)
		die("open cgroup.subtree_control");
	if (write(fd, want, len) != (ssize_t)len)
		die("enable the cgroup controllers \"%s\"", want);
	close(fd);
}

/* A spare's share holds the pod's rootfs in its QP_PROTO_SUBDIR (bound
 * there when the pod took the spare): the share is mounted aside, that
 * directory bound on NEWROOT, and the share's mount let go. */
static void mount_share_subdir(const char *tag, unsigned long ro)
{
	make_dir(SHARE);
	if (mount(tag, SHARE, "9p", ro, NINEP_OPTS) < 0)
		die("mount 9p tag \"%s\" on " SHARE " (is the host sharing it?)", tag);
	make_dir(NEWROOT);
	if (mount(SHARE "/" QP_PROTO_SUBDIR, NEWROOT, NULL, MS_BIND, NULL) < 0)
		die("bind " SHARE "/" QP_PROTO_SUBDIR " on " NEWROOT);
	if (ro && mount(NULL, NEWROOT, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) < 0)
		die("remount " NEWROOT " read-only");
	if (umount2(SHARE, MNT_DETACH) < 0)
		die("unmount " SHARE);
}

/* The workload's root: the 9p share (or its subdirectory), entered
 * switch_root style (the initramfs cannot be pivot_root'ed away), or the
 * initramfs itself. */
static void enter_rootfs(const struct qp_run *r)
{
	static const char *const moved[] = { "/dev", "/proc", "/sys" };

	if (r->rootfs == QP_ROOTFS_9P || r->rootfs == QP_ROOTFS_9P_SUBDIR) {
		unsigned long ro = r->flags & QP_RUN_F_ROOTFS_RO ? MS_RDONLY : 0;
		char dst[64];

		make_dir(NEWROOT);
		if (r->rootfs == QP_ROOTFS_9P_SUBDIR)
			mount_share_subdir(r->rootfs_tag, ro);
		else if (mount(r->rootfs_tag, NEWROOT, "9p", ro, NINEP_OPTS) < 0)
			die("mount 9p tag \"%s\" on " NEWROOT " (is the host sharing it?)",
			    r->rootfs_tag);
		for (size_t i = 0; i < sizeof(moved) / sizeof(moved[0]); i++) {
			snprintf(dst, sizeof(dst), NEWROOT "%s", moved[i]);
			make_dir(dst);
			if (mount(moved[i], dst, NULL, MS_MOVE, NULL) < 0)
				die("move mount \"%s\" to \"%s\"", moved[i], dst);
		}
		if (chdir(NEWROOT) < 0)
			die("chdir " NEWROOT);
		if (mount(".", "/", NULL, MS_MOVE, NULL) < 0)
			die("move mount " NEWROOT " to /");
		if (chroot(".") < 0)
			die("chroot " NEWROOT);
		if (chdir("/") < 0)
			die("chdir /");
	}
	mount_fs("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777");
}

/* The pod's own mounts (RUN's mounts, the spec's binds and tmpfs), inside
 * the workload's root.  A file bind mounts its one-file share on a staging
 * directory, binds the file, then detaches the staging mount: the bind
 * keeps the share alive and nothing of it stays visible. */
static void make_dirs(const char *path)
{
	char p[1024];

	snprintf(p, sizeof(p), "%s", path);
	for (char *s = p + 1; *s; s++)
		if (*s == '/') {
			*s = '\0';
			if (mkdir(p, 0755) < 0 && errno != EEXIST)
				die("mkdir \"%s\"", p);
			*s = '/';
		}
	if (mkdir(p, 0755) < 0 && errno != EEXIST)
		die("mkdir \"%s\"", p);
}

static void apply_mounts(const struct qp_run *r)
{
	for (uint32_t i = 0; i < r->mountc; i++) {
		struct qp_run_mount m;
		unsigned long fl;
		if (qp_run_mount_parse(r->mounts[i], &m) < 0)
			gi_fatal(QP_PERR_PROTOCOL, 0, "mounts[%u] is malformed", i);
		fl = m.flags & (MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY);
		if (m.kind == QP_RM_TMPFS) {
			make_dirs(m.dest);
			if (mount("tmpfs", m.dest, "tmpfs", fl, m.data[0] ? m.data : NULL) < 0)
				die("mount tmpfs on \"%s\"", m.dest);
		} else if (m.kind == QP_RM_9P) {
			make_dirs(m.dest);
			if (mount(m.tag, m.dest, "9p", fl, NINEP_OPTS) < 0)
				die("mount 9p tag \"%s\" on \"%s\"", m.tag, m.dest);
		} else {
			static const char stage[] = "/dev/.qpod-stage";
			char src[sizeof(stage) + 256 + 1];
			char parent[1024];
			make_dir(stage);
			if (mount(m.tag, stage, "9p", MS_RDONLY, NINEP_OPTS) < 0)
				die("mount 9p tag \"%s\"", m.tag);
			snprintf(parent, sizeof(parent), "%s", m.dest);
			*strrchr(parent, '/') = '\0';
			if (parent[0])
				make_dirs(parent);
			int fd = open(m.dest, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
			if (fd < 0 && errno != EISDIR && errno != EACCES && errno != EROFS && errno != ETXTBSY)
				die("create \"%s\"", m.dest);
			if (fd >= 0)
				close(fd);
			snprintf(src, sizeof(src), "%s/%s", stage, m.name);
			if (mount(src, m.dest, NULL, MS_BIND, NULL) < 0)
				die("bind \"%s\" on \"%s\"", m.name, m.dest);
			if (fl && mount(NULL, m.dest, NULL, MS_REMOUNT | MS_BIND | fl, NULL) < 0)
				die("remount \"%s\"", m.dest);
			if (umount2(stage, MNT_DETACH) < 0)
				die("detach the staging mount");
			rmdir(stage);
		}
	}
}

/* ---- network ---- */

static void ifreq_for(struct ifreq *ifr, const char *name)
{
	memset(ifr, 0, sizeof(*ifr));
	snprintf(ifr->ifr_name, sizeof(ifr->ifr_name), "%s", name);
}

static void set_inet(struct sockaddr *sa, const uint8_t a[4])
{
	struct sockaddr_in *in = (struct sockaddr_in *)sa;

	memset(in, 0, sizeof(*in));
	in->sin_family = AF_INET;
	memcpy(&in->sin_addr, a, 4);
}

static void link_up(int sk, const char *name)
{
	struct ifreq ifr;

	ifreq_for(&ifr, name);
	if (ioctl(sk, SIOCGIFFLAGS, &ifr) < 0)
		die("SIOCGIFFLAGS %s", name);
	ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
	if (ioctl(sk, SIOCSIFFLAGS, &ifr) < 0)
		die("SIOCSIFFLAGS %s up", name);
}

static void net_setup(const struct qp_run *r)
{
	static const uint8_t zero[6];
	struct ifreq ifr;
	int sk;

	if (r->prefix == 0)
		return; /* no NIC (lo went up before HELLO) */
	if ((sk = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0)
		die("socket AF_INET");
	uint32_t mask = htonl(r->prefix >= 32 ? 0xffffffffu : ~(0xffffffffu >> r->prefix));

	if (memcmp(r->mac, zero, 6) != 0) {
		ifreq_for(&ifr, "eth0");
		ifr.ifr_hwaddr.sa_family = ARPHRD_ETHER;
		memcpy(ifr.ifr_hwaddr.sa_data, r->mac, 6);
		if (ioctl(sk, SIOCSIFHWADDR, &ifr) < 0)
			die("SIOCSIFHWADDR eth0 (no virtio-net device?)");
	}
	ifreq_for(&ifr, "eth0");
	set_inet(&ifr.ifr_addr, r->ip);
	if (ioctl(sk, SIOCSIFADDR, &ifr) < 0)
		die("SIOCSIFADDR eth0 %u.%u.%u.%u (no virtio-net device?)", r->ip[0], r->ip[1],
		    r->ip[2], r->ip[3]);
	ifreq_for(&ifr, "eth0");
	set_inet(&ifr.ifr_netmask, (const uint8_t *)&mask);
	if (ioctl(sk, SIOCSIFNETMASK, &ifr) < 0)
		die("SIOCSIFNETMASK eth0 /%u", r->prefix);
	link_up(sk, "eth0");
	if (memcmp(r->gateway, zero, 4) != 0) {
		struct rtentry rt;

		memset(&rt, 0, sizeof(rt));
		set_inet(&rt.rt_dst, zero);
		set_inet(&rt.rt_genmask, zero);
		set_inet(&rt.rt_gateway, r->gateway);
		rt.rt_flags = RTF_UP | RTF_GATEWAY;
		if (ioctl(sk, SIOCADDRT, &rt) < 0)
			die("SIOCADDRT default via %u.%u.%u.%u", r->gateway[0], r->gateway[1],
			    r->gateway[2], r->gateway[3]);
	}
	close(sk);
}

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
	link_up(sk, "lo"); /* the kernel gives lo 127.0.0.1/8 when it goes up */
	close(sk);
	mount_cgroup2();
	mount_fs("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC, "mode=0620,ptmxmode=0666");
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
			fatal_err(QP_PERR_SYSCALL, err);
		qp_error_free(&err);
		usleep(5000);
	}
}

static void send_meminfo(void)
{
	static const char *const keys[] = { "MemTotal:", "MemFree:", "MemAvailable:", "Buffers:",
					    "Cached:" };
	struct qp_msg m = { .type = QP_MSG_MEMINFO };
	uint64_t *vals[] = { &m.u.meminfo.total_kb, &m.u.meminfo.free_kb,
			     &m.u.meminfo.available_kb, &m.u.meminfo.buffers_kb,
			     &m.u.meminfo.cached_kb };
	char buf[8192];
	qp_error *err = NULL;

	read_text("/proc/meminfo", buf, sizeof(buf));
	for (char *line = buf; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
			if (strncmp(line, keys[i], strlen(keys[i])) == 0)
				*vals[i] = strtoull(line + strlen(keys[i]), NULL, 10);
	if (gi_send(&m, &err) < 0)
		fatal_err(QP_PERR_SYSCALL, err);
}

static void receive(struct qp_msg *m, int timeout_ms)
{
	qp_error *err = NULL;

	if (qp_chan_recv(&chan, m, timeout_ms, &err) < 0 ||
	    qp_msg_check_sender(m, QP_SENDER_HOST, &err) < 0)
		fatal_err(QP_PERR_PROTOCOL, err);
}

/* RUN's strings live in the channel's store, which the next message reuses:
 * keep a copy of the store for the workload and point into it. */
static struct qp_msg_store run_store;

static const char *rebase(const char *p)
{
	return p ? run_store.bytes + (p - chan.store.bytes) : NULL;
}

static void keep_run(struct qp_run *r)
{
	memcpy(&run_store, &chan.store, sizeof(run_store));
	r->rootfs_tag = rebase(r->rootfs_tag);
	r->cwd = rebase(r->cwd);
	r->hostname = rebase(r->hostname);
	for (uint32_t i = 0; i < r->argc; i++)
		run_store.argv[i] = rebase(r->argv[i]);
	for (uint32_t i = 0; i < r->envc; i++)
		run_store.env[i] = rebase(r->env[i]);
	r->argv = run_store.argv;
	r->env = run_store.env;
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
		enter_rootfs(&r);
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
			keep_run(out);
			return;
		case QP_MSG_CLONE:
			apply_clone(&m, init_ns);
			break;
		case QP_MSG_WARM:
			warm_up(&m, init_ns);
			break;
		case QP_MSG_MEMINFO_REQ:
			send_meminfo();
			break;
		case QP_MSG_SHUTDOWN:
			power_off();
		default:
			gi_fatal(QP_PERR_PROTOCOL, 0, "control channel: %s message before RUN",
			      qp_msg_type_name(m.type));
		}
	}
}

/* ---- the workload ---- */

enum { EV_SPAWNED = 1, EV_EXITED, EV_OTHER_EXITED };
struct event {
	int kind, a, b; /* SPAWNED: pid; EXITED: code, errno; OTHER_EXITED: pid, code */
};

struct workload {
	struct qp_run run;
	int stdin_r, stdin_w, out_r, out_w, err_r, err_w, exec_r, exec_w, ev_r, ev_w;
	int null_fd;
	pid_t pid;
	uint64_t spawn_ns;
};

/* In the forked child (tinyinit_run's fn). */
static void exec_workload(void *arg)
{
	struct workload *w = arg;

	gi_exec_child(&w->run, w->run.flags & QP_RUN_F_STDIN ? w->stdin_r : w->null_fd, w->out_w,
		      w->err_w, w->exec_w);
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static void post_event(struct workload *w, int kind, int a, int b)
{
	struct event ev = { kind, a, b };

	if (write(w->ev_w, &ev, sizeof(ev)) != sizeof(ev))
		die("event pipe");
}

static void on_spawn(pid_t pid, void *arg)
{
	struct workload *w = arg;

	w->spawn_ns = gi_boot_ns();
	/* the parent keeps only its ends, so EOFs arrive */
	close_fd(&w->stdin_r);
	close_fd(&w->out_w);
	close_fd(&w->err_w);
	close_fd(&w->exec_w);
	post_event(w, EV_SPAWNED, pid, 0);
}

/* main thread: an exec'd process (or an orphan) was reaped */
static void on_other_exit(pid_t pid, int code, void *arg)
{
	post_event(arg, EV_OTHER_EXITED, pid, code);
}

static void make_pipe(int *r, int *w)
{
	int p[2];

	if (pipe2(p, O_CLOEXEC) < 0)
		die("pipe2");
	*r = p[0];
	*w = p[1];
}

/* ---- the relay thread: workload stdio/exit <-> channel ---- */

struct relay {
	struct workload *w;
	uint8_t stdin_buf[QP_PROTO_STDIN_WINDOW]; /* STDIN the workload has not read yet */
	size_t stdin_off, stdin_len;
	int stdin_eof, exited, exit_code, exit_sent;
	int started_pending;   /* exec succeeded; STARTED waits for the pid */
	int64_t drain_deadline;
	int next;              /* a RUN after EXIT: the next workload (replace) */
	struct qp_run next_run;
};

void gi_send_or_die(const struct qp_msg *m)
{
	qp_error *err = NULL;

	if (gi_send(m, &err) < 0)
		fatal_err(QP_PERR_SYSCALL, err);
}

static void send_error(uint32_t code, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void send_error(uint32_t code, int errnum, const char *fmt, ...)
{
	char text[512];
	qp_error *err = NULL;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&send_lock);
	if (qp_chan_send_error(&chan, code, errnum, text, SEND_TIMEOUT_MS, &err) < 0) {
		pthread_mutex_unlock(&send_lock);
		fatal_err(QP_PERR_SYSCALL, err);
	}
	pthread_mutex_unlock(&send_lock);
}

/* Relay a chunk of the workload's stdout or stderr; EOF closes it. */
static void relay_output(int *fd, uint16_t type)
{
	static uint8_t buf[QP_PROTO_MAX_PAYLOAD];
	struct qp_msg m = { .type = type };
	ssize_t n = read(*fd, buf, sizeof(buf));

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		close_fd(fd);
		return;
	}
	m.u.data.data = buf;
	m.u.data.len = (uint32_t)n;
	gi_send_or_die(&m);
}

/* The exec pipe: EOF alone means exec succeeded; a report means it failed. */
static void send_started(struct workload *w)
{
	struct qp_msg m = { .type = QP_MSG_STARTED };

	m.u.started.pid = (uint32_t)w->pid;
	m.u.started.spawn_ns = w->spawn_ns;
	m.u.started.exec_ns = gi_boot_ns();
	gi_send_or_die(&m);
}

static void relay_exec(struct relay *rl)
{
	struct workload *w = rl->w;
	char text[512];
	int errnum, r = gi_exec_report_read(w->exec_r, &w->run, &errnum, text, sizeof(text));

	if (r < 0)
		return;
	close_fd(&w->exec_r);
	if (r != 0) {
		send_error(QP_PERR_EXEC, errnum, "%s", text);
		return;
	}
	/* on_spawn closes its end of the exec pipe before it posts the spawn
	 * event, so the exec's EOF can come first: STARTED then waits for the
	 * pid (relay_event), never blocking this loop, and never carries -1 */
	if (w->pid > 0)
		send_started(w);
	else
		rl->started_pending = 1;
}

/* STDIN bytes passed on: the host may send as many more (protocol.h) */
static void stdin_credit(size_t n)
{
	struct qp_msg c = { .type = QP_MSG_STDIN_CREDIT };

	for (; n; n -= c.u.credit.bytes) {
		c.u.credit.bytes = (uint32_t)(n < QP_PROTO_STDIN_WINDOW ? n : QP_PROTO_STDIN_WINDOW);
		gi_send_or_die(&c);
	}
}

static void relay_stdin_flush(struct relay *rl)
{
	struct workload *w = rl->w;
	ssize_t n = write(w->stdin_w, rl->stdin_buf + rl->stdin_off, rl->stdin_len - rl->stdin_off);

	if (n < 0) {
		if (errno == EAGAIN || errno == EINTR)
			return;
		/* EPIPE: the workload closed its stdin; what is buffered and
		 * what comes later is dropped, and credited as passed on */
		stdin_credit(rl->stdin_len - rl->stdin_off);
		rl->stdin_off = rl->stdin_len = 0;
		close_fd(&w->stdin_w);
		return;
	}
	rl->stdin_off += (size_t)n;
	stdin_credit((size_t)n);
	if (rl->stdin_off == rl->stdin_len) {
		rl->stdin_off = rl->stdin_len = 0;
		if (rl->stdin_eof)
			close_fd(&w->stdin_w);
	}
}

static void relay_message(struct relay *rl, const struct qp_msg *m)
{
	struct workload *w = rl->w;

	switch (m->type) {
	case QP_MSG_STDIN:
		if (!(w->run.flags & QP_RUN_F_STDIN)) {
			send_error(QP_PERR_STATE, 0, "STDIN without the stdin flag in RUN");
		} else if (m->u.data.len == 0) {
			rl->stdin_eof = 1;
			if (rl->stdin_len == 0)
				close_fd(&w->stdin_w);
		} else if (w->stdin_w < 0) {
			stdin_credit(m->u.data.len); /* the workload closed its stdin */
		} else {
			/* the host keeps within the window: the buffer holds it */
			if (rl->stdin_len - rl->stdin_off + m->u.data.len > sizeof(rl->stdin_buf))
				gi_fatal(QP_PERR_PROTOCOL, 0, "control channel: STDIN beyond its credit of %d bytes",
					 QP_PROTO_STDIN_WINDOW);
			memmove(rl->stdin_buf, rl->stdin_buf + rl->stdin_off, rl->stdin_len - rl->stdin_off);
			rl->stdin_len -= rl->stdin_off;
			rl->stdin_off = 0;
			memcpy(rl->stdin_buf + rl->stdin_len, m->u.data.data, m->u.data.len);
			rl->stdin_len += m->u.data.len;
			relay_stdin_flush(rl);
		}
		break;
	case QP_MSG_SIGNAL:
		if (w->pid <= 0 || rl->exited)
			send_error(QP_PERR_STATE, 0, "SIGNAL %u: no workload running", m->u.signal.signo);
		else if (kill(w->pid, (int)m->u.signal.signo) < 0)
			send_error(QP_PERR_STATE, errno, "kill %d %u", w->pid, m->u.signal.signo);
		break;
	case QP_MSG_MEMINFO_REQ:
		send_meminfo();
		break;
	case QP_MSG_EXEC:
		gi_exec_start(&m->u.run);
		break;
	case QP_MSG_RUN:
		if (!rl->exit_sent) {
			send_error(QP_PERR_STATE, 0, "RUN while a workload runs");
			break;
		}
		rl->next_run = m->u.run;
		keep_run(&rl->next_run);
		rl->next = 1;
		break;
	case QP_MSG_SHUTDOWN:
		power_off();
	default:
		gi_fatal(QP_PERR_PROTOCOL, 0, "control channel: unexpected %s message",
		      qp_msg_type_name(m->type));
	}
}

static void relay_event(struct relay *rl)
{
	struct event ev;
	ssize_t n = read(rl->w->ev_r, &ev, sizeof(ev)); /* non-blocking */

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n != sizeof(ev))
		die("event pipe");
	if (ev.kind == EV_SPAWNED) {
		rl->w->pid = ev.a;
		if (rl->started_pending) {
			rl->started_pending = 0;
			send_started(rl->w);
		}
	} else if (ev.kind == EV_OTHER_EXITED) {
		gi_exec_reaped(ev.a, ev.b);
	} else {
		if (ev.a < 0)
			gi_fatal(QP_PERR_SYSCALL, ev.b, "fork the workload");
		rl->exited = 1;
		rl->exit_code = ev.a;
		rl->drain_deadline = gi_mono_ms() + DRAIN_MS;
	}
}

static void *relay_main(void *arg)
{
	struct relay *rl = arg;
	struct workload *w = rl->w;
	qp_error *err = NULL;

	for (;;) {
		struct pollfd p[6 + GI_EXEC_POLLFDS];
		int timeout = -1, t;
		struct qp_msg m;
		int r;

		if (rl->exited && !rl->exit_sent && w->exec_r < 0 && !rl->started_pending &&
		    ((w->out_r < 0 && w->err_r < 0) || gi_mono_ms() >= rl->drain_deadline)) {
			struct qp_msg ex = { .type = QP_MSG_EXIT };
			ex.u.exit.code = rl->exit_code;
			ex.u.exit.exit_ns = gi_boot_ns();
			close_fd(&w->out_r);
			close_fd(&w->err_r);
			gi_send_or_die(&ex);
			rl->exit_sent = 1;
			if (!(w->run.flags & QP_RUN_F_WAIT_SHUTDOWN))
				return NULL;
		}
		if (rl->exited && !rl->exit_sent) {
			int64_t left = rl->drain_deadline - gi_mono_ms();
			timeout = left > 0 ? (int)left : 0;
		}
		/* the channel is always read: STDIN has a window (protocol.h) */
		p[0] = (struct pollfd){ .fd = chan.fd, .events = POLLIN };
		p[1] = (struct pollfd){ .fd = w->exec_r, .events = POLLIN };
		p[2] = (struct pollfd){ .fd = w->out_r, .events = POLLIN };
		p[3] = (struct pollfd){ .fd = w->err_r, .events = POLLIN };
		p[4] = (struct pollfd){ .fd = w->ev_r, .events = POLLIN };
		p[5] = (struct pollfd){ .fd = rl->stdin_len ? w->stdin_w : -1, .events = POLLOUT };
		t = gi_exec_pollfds(p + 6);
		if (t >= 0 && (timeout < 0 || t < timeout))
			timeout = t;
		r = poll(p, sizeof(p) / sizeof(p[0]), timeout);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			die("poll");
		}
		gi_exec_handle(p + 6);
		if (r == 0)
			continue;
		/* exec first: STARTED goes out before any output */
		if (p[1].revents)
			relay_exec(rl);
		if (p[2].revents)
			relay_output(&w->out_r, QP_MSG_STDOUT);
		if (p[3].revents)
			relay_output(&w->err_r, QP_MSG_STDERR);
		if (p[4].revents)
			relay_event(rl);
		if (p[5].revents)
			relay_stdin_flush(rl);
		if (p[0].revents && qp_chan_fill(&chan, &err) < 0)
			fatal_err(QP_PERR_PROTOCOL, err);
		r = 0;
		while (!rl->next && (r = qp_chan_next(&chan, &m, &err)) > 0) {
			if (qp_msg_check_sender(&m, QP_SENDER_HOST, &err) < 0)
				fatal_err(QP_PERR_PROTOCOL, err);
			relay_message(rl, &m);
		}
		if (r < 0)
			fatal_err(QP_PERR_PROTOCOL, err);
		if (rl->next)
			return NULL;
	}
}

static struct workload wl;
static struct relay rl;

/* The first workload's relay thread is made before the first HELLO and
 * waits behind a gate: a template holds it, so a clone does not create it
 * (pthread_create took 10-15 ms of a TCG clone's start, 2-4 ms of a cold
 * boot's).  Later workloads (replace) make their own. */
static int relay_gate_r = -1, relay_gate_w = -1;
static pthread_t relay_early;
static int relay_early_ready;

static void *relay_behind_gate(void *arg)
{
	char c;

	while (read(relay_gate_r, &c, 1) < 0 && errno == EINTR)
		;
	close(relay_gate_r);
	return relay_main(arg);
}

/* With every signal blocked, as run_workload makes its relay threads:
 * signals are for tinyinit's sigwaitinfo in the main thread. */
static void relay_prepare(void)
{
	sigset_t all, old;

	make_pipe(&relay_gate_r, &relay_gate_w);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if ((errno = pthread_create(&relay_early, NULL, relay_behind_gate, &rl)) != 0)
		die("pthread_create");
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	relay_early_ready = 1;
}

static void run_workload(void)
{
	pthread_t th;
	sigset_t all;
	int code;

	wl.pid = -1;
	wl.stdin_r = wl.stdin_w = -1;
	wl.exec_r = wl.exec_w = -1;
	if (wl.run.flags & QP_RUN_F_STDIN) {
		make_pipe(&wl.stdin_r, &wl.stdin_w);
		if (fcntl(wl.stdin_w, F_SETFL, O_NONBLOCK) < 0)
			die("fcntl stdin pipe");
	}
	make_pipe(&wl.out_r, &wl.out_w);
	make_pipe(&wl.err_r, &wl.err_w);
	make_pipe(&wl.exec_r, &wl.exec_w);
	make_pipe(&wl.ev_r, &wl.ev_w);
	/* events are read as they come, never waited for in a read (a poll
	 * round may have seen one that is already consumed) */
	if (fcntl(wl.ev_r, F_SETFL, O_NONBLOCK) < 0)
		die("fcntl event pipe");
	if ((wl.null_fd = open("/dev/null", O_RDWR | O_CLOEXEC)) < 0)
		die("open /dev/null");

	/* the relay thread inherits a full mask: every signal reaches
	 * tinyinit's sigwaitinfo in this thread */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, NULL);
	rl.w = &wl;
	if (relay_early_ready) {
		relay_early_ready = 0;
		th = relay_early;
		if (write(relay_gate_w, "", 1) != 1)
			die("start the relay thread");
		close(relay_gate_w);
	} else if ((errno = pthread_create(&th, NULL, relay_main, &rl)) != 0)
		die("pthread_create");
	code = tinyinit_run(exec_workload, &wl,
			    &(struct tinyinit_hooks){ .on_spawn = on_spawn, .on_other_exit = on_other_exit });
	post_event(&wl, EV_EXITED, code, code < 0 ? errno : 0);
	pthread_join(th, NULL);
}

int main(int argc, char **argv)
{
	uint64_t init_ns = gi_boot_ns();
	qp_error *err = NULL;
	int fd;

	/* the warm-up's run of this program (warm_up) */
	if (argc > 0 && !strcmp(argv[0], QP_PROTO_WARM_ARGV0))
		return 0;

	mount_early();
	if (fcntl(2, F_GETFD) < 0 && (fd = open("/dev/console", O_RDWR)) >= 0) {
		/* an initramfs without /dev/console starts init with no stdio */
		dup2(fd, 0), dup2(fd, 1), dup2(fd, 2);
		if (fd > 2)
			close(fd);
	}
	if (gi_load_modules(GI_MODULES_DIR, &err) < 0) /* virtio drivers of a modular kernel */
		fatal_err(QP_PERR_SYSCALL, err);
	setup_before_hello();
	qp_chan_init(&chan, open_channel());
	chan_ready = 1;
	relay_prepare();
	send_hello(init_ns, 0, 0);
	wait_run(&wl.run, init_ns);
	if (wl.run.hostname && wl.run.hostname[0] &&
	    sethostname(wl.run.hostname, strlen(wl.run.hostname)) < 0)
		die("sethostname");
	net_setup(&wl.run);
	enter_rootfs(&wl.run);
	apply_mounts(&wl.run);
	run_workload();
	/* replace: the next RUN runs in the same root, network and hostname */
	while (rl.next) {
		struct qp_run next = rl.next_run;
		close_fd(&wl.stdin_w);
		close_fd(&wl.ev_r);
		close_fd(&wl.ev_w);
		close_fd(&wl.null_fd);
		memset(&rl, 0, sizeof(rl));
		next.rootfs = wl.run.rootfs;
		next.rootfs_tag = wl.run.rootfs_tag;
		wl.run = next;
		run_workload();
	}
	power_off();
}
