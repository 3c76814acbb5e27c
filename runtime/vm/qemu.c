/* runtime/vm/qemu.c — finding the guest kernel and init, choosing the
 * accelerator, and starting QEMU for a microVM pod. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "guest-init/protocol.h"
#include "util/cleanup.h"
#include "util/log.h"
#include "vm/vm.h"

/* below $QPOD_CACHE (default /var/cache/qpod), as kernel-config/build.sh puts it */
#define KERNEL_CACHE_DEFAULT "/var/cache/qpod"
#define KERNEL_IN_CACHE "/kernel/current/vmlinux"
#define GUEST_INIT_SYSTEM "/usr/lib/qpod/qpod-init"
#define FIRMWARE_QBOOT "/usr/share/qemu/qboot.rom"
#define FIRMWARE_SEABIOS "/usr/share/qemu/bios-microvm.bin"
/* kernel-config/cmdline.txt, joined; used when that file is not found */
#define CMDLINE_DEFAULT "console=ttyS0 quiet reboot=t panic=-1 no_timer_check tsc=reliable 8250.nr_uarts=1"
#define CMDLINE_MAX 2048

static bool is_file(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static char *exe_dir_file(const char *rel)
{
	const char *dir = getenv("QPOD_EXE_DIR");
	char *p = NULL;

	if (!dir || *dir != '/' || asprintf(&p, "%s/%s", dir, rel) < 0)
		return NULL;
	return p;
}

char *vm_find_kernel(qp_error **err)
{
	const char *env = getenv("QPOD_KERNEL"), *cache = getenv("QPOD_CACHE");
	_cleanup_free_ char *p = NULL;

	if (env && *env)
		p = strdup(env);
	else if (asprintf(&p, "%s" KERNEL_IN_CACHE, cache && *cache ? cache : KERNEL_CACHE_DEFAULT) < 0)
		p = NULL;
	if (!p)
		return qp_fail(err, ENOMEM, "guest kernel path"), NULL;
	if (!is_file(p))
		return qp_error_set(err, QP_E_NOTFOUND, 0,
				    "guest kernel \"%s\" not found (build it with kernel-config/build.sh "
				    "or set QPOD_KERNEL)", p),
		       NULL;
	return steal_ptr(&p);
}

char *vm_find_guest_init(qp_error **err)
{
	const char *env = getenv("QPOD_GUEST_INIT");
	char *p;

	if (env && *env) {
		if (!is_file(env))
			return qp_error_set(err, QP_E_NOTFOUND, 0, "QPOD_GUEST_INIT \"%s\" not found", env),
			       NULL;
		return strdup(env);
	}
	p = exe_dir_file("guest-init/qpod-init");
	if (p && is_file(p))
		return p;
	free(p);
	if (is_file(GUEST_INIT_SYSTEM))
		return strdup(GUEST_INIT_SYSTEM);
	qp_error_set(err, QP_E_NOTFOUND, 0,
		     "guest init qpod-init not found (set QPOD_GUEST_INIT or install " GUEST_INIT_SYSTEM ")");
	return NULL;
}

char *vm_find_firmware(const char *name, qp_error **err)
{
	const char *p = !name || !*name || !strcmp(name, "qboot") ? FIRMWARE_QBOOT
			: !strcmp(name, "seabios")		   ? FIRMWARE_SEABIOS
								   : name;

	if (p == name && *name != '/')
		return qp_error_set(err, QP_E_INVALID, 0,
				    "firmware \"%s\": give qboot, seabios or an absolute path", name),
		       NULL;
	if (!is_file(p))
		return qp_error_set(err, QP_E_NOTFOUND, 0, "firmware \"%s\" not found%s", p,
				    p == name ? "" : " (Debian package qemu-system-data)"),
		       NULL;
	return strdup(p);
}

static bool kvm_opens(void)
{
	int fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

int vm_pick_accel(const char *want, bool *kvm, qp_error **err)
{
	if (!want || !*want || !strcmp(want, "auto")) {
		/* QPOD_ACCEL=tcg|kvm overrides the probe (a /dev/kvm that opens
		 * can still be unusable, e.g. under broken nested virtualisation) */
		const char *force = getenv("QPOD_ACCEL");
		if (force && (!strcmp(force, "tcg") || !strcmp(force, "kvm")))
			want = force;
		else {
			char why[512];
			*kvm = vm_kvm_usable(why, sizeof(why));
			if (!*kvm)
				qp_debug("accel auto: tcg (%s)", why);
			return 0;
		}
	}
	if (!strcmp(want, "tcg")) {
		*kvm = false;
		return 0;
	}
	if (strcmp(want, "kvm"))
		return qp_error_set(err, QP_E_INVALID, 0, "accel \"%s\": give kvm, tcg or auto", want);
	if (!kvm_opens())
		return qp_fail(err, errno, "accel kvm: open /dev/kvm");
	*kvm = true;
	return 0;
}

/* cmdline.txt next to the build (or $QPOD_KERNEL_CMDLINE): '#' lines and blank
 * lines dropped, the rest joined with spaces.  The built-in copy otherwise. */
static void read_cmdline(char *out, size_t size)
{
	const char *env = getenv("QPOD_KERNEL_CMDLINE");
	_cleanup_free_ char *p = env && *env ? strdup(env) : exe_dir_file("../kernel-config/cmdline.txt");
	_cleanup_fclose_ FILE *f = p ? fopen(p, "re") : NULL;
	char line[256];
	size_t len = 0;

	snprintf(out, size, "%s", CMDLINE_DEFAULT);
	if (!f)
		return;
	out[0] = '\0';
	while (fgets(line, sizeof(line), f)) {
		size_t n = strcspn(line, "\r\n");
		line[n] = '\0';
		if (!n || line[0] == '#')
			continue;
		for (size_t i = 0; i < n; i++)
			if ((unsigned char)line[i] < 0x20 || line[i] == 0x7f)
				line[i] = ' ';
		if (len + n + 2 > size)
			break;
		len += (size_t)snprintf(out + len, size - len, "%s%s", len ? " " : "", line);
	}
	if (!len)
		snprintf(out, size, "%s", CMDLINE_DEFAULT);
}

/* A QEMU option value: ',' must be doubled, and we refuse newlines. */
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

pid_t vm_spawn_qemu(const struct vm_qemu_opts *o, qp_error **err)
{
	char mem[32], smp[16], cmdline[CMDLINE_MAX + 32], chardev[64], fsdev[PATH_MAX * 2 + 64];
	char netdev[64], nic[96];
	_cleanup_free_ char *initrd = NULL, *rootfs = NULL;
	_cleanup_close_ int devnull = -1, logfd = -1;
	pid_t pid;

	if (asprintf(&initrd, "%s/%s", o->statedir, QP_VM_INITRD) < 0 ||
	    !(rootfs = qemu_escape(o->rootfs)))
		return qp_fail(err, ENOMEM, "qemu arguments");
	/* the share is as writable as the spec's root (root.readonly), as a
	 * container's rootfs is */
	if ((size_t)snprintf(fsdev, sizeof(fsdev), "local,id=r,path=%s,security_model=none%s", rootfs,
			     o->rootfs_ro ? ",readonly=on" : "") >= sizeof(fsdev))
		return qp_error_set(err, QP_E_INVALID, 0, "rootfs path too long");
	snprintf(mem, sizeof(mem), "%lluM", o->mem_mib);
	snprintf(smp, sizeof(smp), "%d", o->vcpus);
	/* the channel socket path is relative to QEMU's cwd, the state dir:
	 * sun_path holds only 108 bytes */
	snprintf(chardev, sizeof(chardev), "socket,id=c0,path=%s,server=on,wait=off", QP_VM_CHAN_SOCK);
	read_cmdline(cmdline, CMDLINE_MAX);
	if (!o->kvm && o->vcpus == 1)
		strcat(cmdline, " nolapic_timer");

	/* the tap fd keeps its number in QEMU (it is not close-on-exec there) */
	snprintf(netdev, sizeof(netdev), "tap,id=n0,fd=%d,vhost=off", o->tap_fd);
	if (o->tap_fd >= 0)
		snprintf(nic, sizeof(nic), "virtio-net-device,netdev=n0,mac=%02x:%02x:%02x:%02x:%02x:%02x",
			 o->mac[0], o->mac[1], o->mac[2], o->mac[3], o->mac[4], o->mac[5]);

	/* tb-size: TCG's translation cache defaults to 1 GiB of host memory
	 * (reserved, partly touched); 32 MiB holds a small guest's hot code */
	const char *argv[44 + 4 * QP_PROTO_MAX_MOUNTS] = {
		QEMU_BIN, "-M", "microvm,acpi=off", "-nodefaults", "-no-user-config", "-nographic",
		"-no-reboot", "-accel", o->kvm ? "kvm" : "tcg,tb-size=32", "-m", mem, "-smp", smp,
		"-bios", o->firmware, "-kernel", o->kernel, "-initrd", initrd, "-append", cmdline,
		"-device", "virtio-serial-device,max_ports=2", "-chardev", chardev,
		"-device", "virtserialport,chardev=c0,name=" QP_PROTO_PORT_NAME,
		"-fsdev", fsdev, "-device", "virtio-9p-device,fsdev=r,mount_tag=rootfs",
		/* QMP for pause/resume, relative to the state dir like the channel */
		"-qmp", "unix:" QP_VM_QMP_SOCK ",server=on,wait=off",
	};
	size_t argc = 0;
	while (argv[argc])
		argc++;
	if (o->kvm) {
		argv[argc++] = "-cpu";
		argv[argc++] = "host";
	}
	/* the spec's binds: one more 9p share each (mounts.c) */
	char share_fsdev[QP_PROTO_MAX_MOUNTS][4200], share_dev[QP_PROTO_MAX_MOUNTS][96];
	for (size_t i = 0; i < o->nshares && i < QP_PROTO_MAX_MOUNTS; i++) {
		_cleanup_free_ char *p = qemu_escape(o->shares[i].path);
		if (!p)
			return qp_fail(err, ENOMEM, "qemu arguments");
		if ((size_t)snprintf(share_fsdev[i], sizeof(share_fsdev[i]),
				     "local,id=f%zu,path=%s,security_model=none%s", i, p,
				     o->shares[i].ro ? ",readonly=on" : "") >= sizeof(share_fsdev[i]))
			return qp_error_set(err, QP_E_INVALID, 0, "mount source path too long");
		snprintf(share_dev[i], sizeof(share_dev[i]), "virtio-9p-device,fsdev=f%zu,mount_tag=%s", i,
			 o->shares[i].tag);
		argv[argc++] = "-fsdev";
		argv[argc++] = share_fsdev[i];
		argv[argc++] = "-device";
		argv[argc++] = share_dev[i];
	}
	if (o->tap_fd >= 0) {
		argv[argc++] = "-netdev";
		argv[argc++] = netdev;
		argv[argc++] = "-device";
		argv[argc++] = nic;
	}
	argv[argc] = NULL;

	devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	logfd = openat(o->dirfd, QP_VM_QEMU_LOG, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW,
		       0600);
	if (devnull < 0 || logfd < 0)
		return qp_fail(err, errno, "open %s", devnull < 0 ? "/dev/null" : QP_VM_QEMU_LOG);
	pid_t parent = getpid();
	pid = fork();
	if (pid < 0)
		return qp_fail(err, errno, "fork qemu");
	if (pid == 0) {
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		/* QEMU dies with its monitor: no VM without someone holding it */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
			_exit(127);
		setsid();
		if (fchdir(o->dirfd) < 0 || dup2(devnull, 0) < 0 || dup2(logfd, 1) < 0 ||
		    dup2(logfd, 2) < 0)
			_exit(127);
		if (o->tap_fd >= 0 && fcntl(o->tap_fd, F_SETFD, 0) < 0)
			_exit(127);
		/* QPOD_QEMU: another binary (tests put a fake VMM here) */
		const char *bin = getenv("QPOD_QEMU");
		execvp(bin && *bin ? bin : QEMU_BIN, (char **)argv);
		dprintf(2, "qpod: exec %s: %s\n", bin && *bin ? bin : QEMU_BIN, strerror(errno));
		_exit(127);
	}
	return pid;
}

void vm_qemu_log_tail(int dirfd, char *buf, size_t size)
{
	_cleanup_close_ int fd = openat(dirfd, QP_VM_QEMU_LOG, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	char data[1024];
	off_t end;
	ssize_t n;

	buf[0] = '\0';
	if (fd < 0 || (end = lseek(fd, 0, SEEK_END)) < 0)
		return;
	n = pread(fd, data, sizeof(data) - 1, end > (off_t)sizeof(data) - 1 ? end - (off_t)sizeof(data) + 1 : 0);
	if (n <= 0)
		return;
	while (n > 0 && (data[n - 1] == '\n' || data[n - 1] == '\r'))
		n--;
	data[n] = '\0';
	/* QEMU's "error:" line says why (an assertion after it says where) */
	char *line = NULL;
	for (char *e = strstr(data, "error:"); e; e = strstr(e + 1, "error:"))
		line = e;
	if (line) {
		while (line > data && line[-1] != '\n')
			line--;
		line[strcspn(line, "\n")] = '\0';
	} else {
		line = strrchr(data, '\n');
		line = line ? line + 1 : data;
	}
	size_t i = 0;
	for (; line[i] && i + 1 < size && i < 200; i++)
		buf[i] = (unsigned char)line[i] < 0x20 || line[i] == 0x7f ? '?' : line[i];
	buf[i] = '\0';
}
