/* runtime/vm/qemu/qemu_cmd.c — QEMU's command line from one table, and its start.
 *
 * A machine profile (microvm for the pods, pc for the traditional-VM
 * baseline) names the machine and the bus its devices sit on; the device
 * table names each device once per bus.  Both the pods (mon_boot.c) and
 * runtime/vm/tradvm/qpod-tradvm.c build their QEMU through vm_spawn_qemu(), so the
 * baseline differs from a pod only in what its profile says. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "guest-init/protocol.h"
#include "host/cgroup/cgroup.h"
#include "qboot/qpod_abi.h"
#include "util/cleanup.h"
#include "vm/qemu/qemu.h"
#include "vm/vm.h"

enum bus { BUS_MMIO = 0, BUS_PCI };

struct machine_profile {
	const char *machine;   /* -M */
	enum bus bus;
	bool own_firmware;     /* -bios is needed (microvm); pc has SeaBIOS */
};

static const struct machine_profile profiles[] = {
	[VM_MACHINE_MICROVM] = { "microvm,acpi=off", BUS_MMIO, true },
	[VM_MACHINE_PC] = { "pc", BUS_PCI, false },
};

enum dev { DEV_SERIAL, DEV_9P, DEV_NET, DEV_COUNT };

/* the device model per bus */
static const char *const devices[DEV_COUNT][2] = {
	[DEV_SERIAL] = { "virtio-serial-device,max_ports=2", "virtio-serial-pci" },
	[DEV_9P] = { "virtio-9p-device", "virtio-9p-pci" },
	[DEV_NET] = { "virtio-net-device", "virtio-net-pci" },
};

#define MAX_ARGS (64 + 4 * QP_PROTO_MAX_MOUNTS)
#define FW_MARK_FDSET 1 /* -add-fd's set of the marker pipe */
#define ARG_BUF (PATH_MAX * 2 + 128)

/* the argv under construction: every string owned here */
struct qargv {
	char *v[MAX_ARGS + 1];
	size_t n;
	bool oom;
};

static void add(struct qargv *a, const char *s)
{
	char *c = a->oom || a->n >= MAX_ARGS ? NULL : strdup(s);

	if (!c) {
		a->oom = true;
		return;
	}
	a->v[a->n++] = c;
}

static void addf(struct qargv *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void addf(struct qargv *a, const char *fmt, ...)
{
	char buf[ARG_BUF];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(buf))
		a->oom = true;
	else
		add(a, buf);
}

static void qargv_free(struct qargv *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->v[i]);
}

/* A QEMU option value: ',' must be doubled. */
static char *qemu_escape(const char *s)
{
	size_t n = strlen(s), extra = 0;
	char *out, *q;

	for (size_t i = 0; i < n; i++)
		extra += s[i] == ',';
	if (!(out = malloc(n + extra + 1)))
		return NULL;
	for (q = out; *s; s++) {
		*q++ = *s;
		if (*s == ',')
			*q++ = ',';
	}
	*q = '\0';
	return out;
}

static void add_share(struct qargv *a, enum bus bus, const char *id, const char *path, bool ro,
		      const char *tag)
{
	_cleanup_free_ char *p = qemu_escape(path);

	if (!p) {
		a->oom = true;
		return;
	}
	add(a, "-fsdev");
	addf(a, "local,id=%s,path=%s,security_model=none%s", id, p, ro ? ",readonly=on" : "");
	add(a, "-device");
	addf(a, "%s,fsdev=%s,mount_tag=%s", devices[DEV_9P][bus], id, tag);
}

void vm_qemu_cmdline(const struct vm_qemu_opts *o, char *out, size_t size)
{
	if (o->cmdline)
		snprintf(out, size, "%s", o->cmdline);
	else
		vm_guest_cmdline(out, size, o->kvm, o->vcpus, o->template_boot);
}

/* The guest channel (its socket: chan, "fd=N") and the 9p shares: the
 * devices every pod's guest has. */
static void add_guest_devices(struct qargv *a, const struct vm_qemu_opts *o, const char *chan)
{
	enum bus bus = profiles[o->machine].bus;

	add(a, "-device");
	add(a, devices[DEV_SERIAL][bus]);
	add(a, "-chardev");
	addf(a, "socket,id=c0,%s,server=on,wait=off", chan);
	add(a, "-device");
	add(a, "virtserialport,chardev=c0,name=" QP_PROTO_PORT_NAME);
	/* the share is as writable as the spec's root (root.readonly), as a
	 * container's rootfs is */
	if (o->rootfs)
		add_share(a, bus, "r", o->rootfs, o->rootfs_ro, VM_ROOTFS_TAG);
	/* the spec's binds: one more 9p share each (mounts.c) */
	for (size_t i = 0; i < o->nshares && i < QP_PROTO_MAX_MOUNTS; i++) {
		char id[16];
		snprintf(id, sizeof(id), "f%zu", i);
		add_share(a, bus, id, o->shares[i].path, o->shares[i].ro, o->shares[i].tag);
	}
}

/* the listening sockets QEMU serves, made here and passed in (a jailed
 * QEMU sees nothing of the state dir); -1 where not used */
struct qsocks {
	int chan, qmp;
};

static int build_argv(const struct vm_qemu_opts *o, const struct qsocks *s, bool jail, struct qargv *a,
		      qp_error **err)
{
	const struct machine_profile *pr = &profiles[o->machine];
	char cmdline[VM_CMDLINE_MAX + 64];

	vm_qemu_cmdline(o, cmdline, sizeof(cmdline));
	add(a, QEMU_BIN);
	add(a, "-M");
	add(a, pr->machine);
	add(a, "-nodefaults");
	add(a, "-no-user-config");
	add(a, "-nographic");
	add(a, "-no-reboot");
	add(a, "-accel");
	/* tb-size: TCG's translation cache defaults to 1 GiB of host memory
	 * (reserved, partly touched); 32 MiB holds a small guest's hot code
	 * ($QPOD_TCG_TB_SIZE: vm_tcg_tb_mib) */
	if (o->kvm)
		add(a, "kvm");
	else
		addf(a, "tcg,tb-size=%u", vm_tcg_tb_mib());
	if (o->kvm) {
		add(a, "-cpu");
		add(a, "host");
	}
	add(a, "-m");
	addf(a, "%lluM", o->mem_mib);
	if (o->mem_path) {
		_cleanup_free_ char *p = qemu_escape(o->mem_path);
		if (!p)
			a->oom = true;
		add(a, "-object");
		addf(a, "memory-backend-file,id=ram,size=%lluM,mem-path=%s,share=%s", o->mem_mib, p ? p : "",
		     o->mem_shared ? "on" : "off");
		add(a, "-machine");
		add(a, "memory-backend=ram");
	}
	if (o->incoming) {
		add(a, "-incoming");
		add(a, "defer");
	}
	add(a, "-smp");
	addf(a, "%d", o->vcpus);
	if (pr->own_firmware || o->firmware) {
		if (!o->firmware)
			return qp_error_set(err, QP_E_INVALID, 0, "machine %s needs a firmware", pr->machine);
		add(a, "-bios");
		add(a, o->firmware);
	}
	if (o->fw_markers) {
		/* the firmware's marker port: isa-debugcon into the pipe the
		 * monitor reads (mon_fwmark.c), by an fd set, which needs no
		 * /proc or /dev/fd in QEMU's view (append: QEMU would truncate
		 * the file, which a pipe refuses) */
		add(a, "-add-fd");
		addf(a, "fd=%d,set=%d", o->fw_mark_fd, FW_MARK_FDSET);
		add(a, "-chardev");
		addf(a, "file,id=fwmark,path=/dev/fdset/%d,append=on", FW_MARK_FDSET);
		add(a, "-device");
		addf(a, "isa-debugcon,iobase=%#x,chardev=fwmark", MARK_PORT);
	}
	/* the firmware's test hook (qboot/qpod_abi.h): one fw_cfg answer it
	 * takes as corrupt */
	const char *corrupt = getenv("QPOD_TEST_FWCFG_CORRUPT");
	if (corrupt && *corrupt) {
		_cleanup_free_ char *c = qemu_escape(corrupt);
		add(a, "-fw_cfg");
		addf(a, "name=" FW_CFG_TEST_CORRUPT_FILE ",string=%s", c ? c : "");
		a->oom |= !c;
	}
	/* a clone boots nothing: its kernel is in the template's RAM, and
	 * QEMU would still read the kernel's ELF segments into a copy of its
	 * own (~10 MB of this process's memory, faulted in at every start) */
	if (!o->incoming) {
		add(a, "-kernel");
		add(a, o->kernel);
		add(a, "-initrd");
		addf(a, "%s/%s", o->statedir, o->initrd ? o->initrd : QP_VM_INITRD);
		add(a, "-append");
		add(a, cmdline);
	}
	if (o->console) {
		add(a, "-serial");
		addf(a, "file:%s", o->console);
	}
	/* the guest channel: qpod's listening socket (listen_at) */
	{
		char chan[32];
		snprintf(chan, sizeof(chan), "fd=%d", s->chan);
		add_guest_devices(a, o, chan);
	}
	if (o->tap_fd >= 0) {
		/* the tap fd keeps its number in QEMU (it is not close-on-exec there) */
		add(a, "-netdev");
		if (o->vhost_fd > 0)
			addf(a, "tap,id=n0,fd=%d,vhost=on,vhostfd=%d", o->tap_fd, o->vhost_fd);
		else
			addf(a, "tap,id=n0,fd=%d,vhost=off", o->tap_fd);
		add(a, "-device");
		addf(a, "%s,netdev=n0,mac=%02x:%02x:%02x:%02x:%02x:%02x", devices[DEV_NET][pr->bus], o->mac[0],
		     o->mac[1], o->mac[2], o->mac[3], o->mac[4], o->mac[5]);
	}
	if (o->qmp) {
		/* relative to the state dir like the channel */
		add(a, "-chardev");
		addf(a, "socket,id=q0,fd=%d,server=on,wait=off", s->qmp);
		add(a, "-mon");
		add(a, "chardev=q0,mode=control");
	}
	if (jail) {
		add(a, "-sandbox");
		add(a, vm_jail_sandbox_arg());
	}
	if (a->oom)
		return qp_error_set(err, QP_E_INVALID, 0, "qemu arguments: out of memory or a path too long");
	a->v[a->n] = NULL;
	return 0;
}

/* a listening socket at name in dirfd (an old one replaced) */
static int listen_at(int dirfd, const char *name, qp_error **err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	/* through the dir fd: the state dir's own path may not fit sun_path */
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/%s", dirfd, name);
	if (fd < 0)
		return qp_fail(err, errno, "socket for %s", name);
	if (unlinkat(dirfd, name, 0) < 0 && errno != ENOENT) {
		int e = errno;
		close(fd);
		return qp_fail(err, e, "remove the old %s", name);
	}
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 4) < 0) {
		int e = errno;
		close(fd);
		return qp_fail(err, e, "listen on %s", name);
	}
	return fd;
}

/* the fds QEMU keeps: its stdio and these (every other one is closed at exec) */
static int keep_fds(const struct vm_qemu_opts *o, const struct qsocks *s)
{
	const int keep[] = { o->tap_fd, o->tap_fd >= 0 && o->vhost_fd > 0 ? o->vhost_fd : -1, s->chan, s->qmp,
			     o->fw_markers ? o->fw_mark_fd : -1 };

	if (syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC) < 0)
		return -1;
	for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++)
		if (keep[i] >= 0 && fcntl(keep[i], F_SETFD, 0) < 0)
			return -1;
	return 0;
}

/* QEMU's environment gets glibc.malloc.hugetlb=1: its heap on transparent
 * huge pages.  QEMU's start is mostly page faults (its 51 libraries, their
 * relocations, its heap), and where a fault is costly (a nested VM: ~15 us
 * each here) that start dominates a clone's: 85 -> 77 ms to a QMP-ready
 * QEMU, template clones 0.97x and cold boots 0.96x run to exit, for 0.6 to
 * 1.5 MB more RSS (docs/BENCHMARKS.md, "QEMU's start").  A tunable the
 * caller set is kept. */
static void qemu_tunables(char *buf, size_t size)
{
	const char *cur = getenv("GLIBC_TUNABLES");

	if (cur && strstr(cur, "glibc.malloc.hugetlb"))
		snprintf(buf, size, "GLIBC_TUNABLES=%s", cur);
	else if (cur && *cur)
		snprintf(buf, size, "GLIBC_TUNABLES=%s:glibc.malloc.hugetlb=1", cur);
	else
		snprintf(buf, size, "GLIBC_TUNABLES=glibc.malloc.hugetlb=1");
}

pid_t vm_spawn_qemu(const struct vm_qemu_opts *o, qp_error **err)
{
	static char tunables[1024];
	struct qargv a = { .n = 0 };
	_cleanup_close_ int devnull = -1, logfd = -1, chan = -1, qmp = -1;
	pid_t pid = -1;
	bool jail;

	if (vm_jail_wanted(&jail, err) < 0 || (chan = listen_at(o->dirfd, QP_VM_CHAN_SOCK, err)) < 0 ||
	    (o->qmp && (qmp = listen_at(o->dirfd, QP_VM_QMP_SOCK, err)) < 0))
		goto out;
	const struct qsocks socks = { .chan = chan, .qmp = qmp };
	if (build_argv(o, &socks, jail, &a, err) < 0)
		goto out;
	devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	logfd = openat(o->dirfd, QP_VM_QEMU_LOG, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW,
		       0600);
	if (devnull < 0 || logfd < 0) {
		qp_fail(err, errno, "open %s", devnull < 0 ? "/dev/null" : QP_VM_QEMU_LOG);
		goto out;
	}
	qemu_tunables(tunables, sizeof(tunables));
	pid_t parent = getpid();
	pid = fork();
	if (pid < 0) {
		qp_fail(err, errno, "fork qemu");
		goto out;
	}
	if (pid == 0) {
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		setsid();
		if (fchdir(o->dirfd) < 0 || dup2(devnull, 0) < 0 || dup2(logfd, 1) < 0 ||
		    dup2(logfd, 2) < 0)
			_exit(127);
		/* QPOD_QEMU: another binary (tests put a fake VMM here) */
		const char *bin = getenv("QPOD_QEMU");
		bin = bin && *bin ? bin : QEMU_BIN;
		qp_error *e = NULL;
		if (o->cg_entry && qp_cgroup_entry_use(o->cg_entry, &e) < 0) {
			dprintf(2, "qpod: %s\n", e->msg);
			_exit(127);
		}
		if ((jail && vm_jail_enter(o, bin) < 0) || keep_fds(o, &socks) < 0)
			_exit(127);
		/* QEMU dies with its monitor: no VM without someone holding it
		 * (set after the jail's uid switch, which clears it) */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent || putenv(tunables) != 0)
			_exit(127);
		execvp(bin, a.v);
		dprintf(2, "qpod: exec %s: %s\n", bin, strerror(errno));
		_exit(127);
	}
out:
	qargv_free(&a);
	return pid;
}
