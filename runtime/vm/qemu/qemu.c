/* runtime/vm/qemu/qemu.c — finding the guest kernel, init and firmware, choosing the accelerator, and reading QEMU's log (QEMU's
 * command line and start: qemu_cmd.c). */
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
#include "util/paths.h"
#include "vm/qemu/qemu.h"
#include "vm/vm.h"

/* qpod's own (qboot/), built beside the binary or installed */
#define FIRMWARE_QPOD "qpod-firmware.bin"
#define FIRMWARE_QPOD_BUILT "qboot/" FIRMWARE_QPOD
#define FIRMWARE_QBOOT "/usr/share/qemu/qboot.rom"
#define FIRMWARE_SEABIOS "/usr/share/qemu/bios-microvm.bin"

static bool is_file(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

char *vm_find_kernel(qp_error **err)
{
	const char *env = getenv("QPOD_KERNEL");
	_cleanup_free_ char *cache = NULL;
	char *p;

	if (env && *env) {
		if (!is_file(env))
			return qp_error_set(err, QP_E_NOTFOUND, 0, "guest kernel \"%s\" not found (QPOD_KERNEL)", env), NULL;
		return strdup(env);
	}
	if (asprintf(&cache, "%s/kernel/current/vmlinux", qp_cache_dir()) < 0)
		return qp_fail(err, ENOMEM, "guest kernel"), NULL;
	if ((p = qp_find_shipped(NULL, "vmlinux", cache)))
		return p;
	qp_error_set(err, QP_E_NOTFOUND, 0,
		     "guest kernel not found (looked in PREFIX/lib/qpod beside the binary, %s and "
		     QP_LIBDIR_SYSTEM "; build it with make kernel, or set QPOD_KERNEL)", cache);
	return NULL;
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
	if ((p = qp_find_shipped("guest-init/qpod-init", "qpod-init", NULL)))
		return p;
	qp_error_set(err, QP_E_NOTFOUND, 0,
		     "guest init qpod-init not found (looked in the build tree and PREFIX/lib/qpod "
		     "beside the binary, and " QP_LIBDIR_SYSTEM "; set QPOD_GUEST_INIT)");
	return NULL;
}

bool vm_firmware_is_qpod(const char *name)
{
	return !name || !*name || !strcmp(name, "qpod");
}

char *vm_find_firmware(const char *name, qp_error **err)
{
	if (vm_firmware_is_qpod(name)) {
		char *p = qp_find_shipped(FIRMWARE_QPOD_BUILT, FIRMWARE_QPOD, NULL);
		if (!p)
			qp_error_set(err, QP_E_NOTFOUND, 0,
				     "firmware qpod (" FIRMWARE_QPOD ") not found (looked in the build tree and "
				     "PREFIX/lib/qpod beside the binary, and " QP_LIBDIR_SYSTEM "; build it with make)");
		return p;
	}
	const char *p = !strcmp(name, "qboot") ? FIRMWARE_QBOOT : !strcmp(name, "seabios") ? FIRMWARE_SEABIOS : name;

	if (p == name && *name != '/')
		return qp_error_set(err, QP_E_INVALID, 0,
				    "firmware \"%s\": give qpod, qboot, seabios or an absolute path", name),
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

/* $QPOD_TCG_TB_SIZE as MiB, or 0 if it is not a whole number in range */
static unsigned tb_env(const char *v)
{
	unsigned long n = 0;

	for (const char *p = v; *p; p++) {
		if (*p < '0' || *p > '9' || (n = n * 10 + (unsigned long)(*p - '0')) > QP_TCG_TB_MAX)
			return 0;
	}
	return (unsigned)n;
}

static int tb_check(qp_error **err)
{
	const char *v = getenv("QPOD_TCG_TB_SIZE");
	char shown[QP_SHOWN_MAX];

	if (!v || tb_env(v))
		return 0;
	return qp_error_set(err, QP_E_INVALID, 0, "QPOD_TCG_TB_SIZE must be a number of MiB in 1..%d, not \"%s\"",
			    QP_TCG_TB_MAX, qp_shown(v, shown));
}

unsigned vm_tcg_tb_mib(void)
{
	const char *v = getenv("QPOD_TCG_TB_SIZE");
	unsigned n = v ? tb_env(v) : 0;

	return n ? n : QP_TCG_TB_DEFAULT;
}

int vm_pick_accel(enum qp_accel want, bool *kvm, qp_error **err)
{
	if (tb_check(err) < 0)
		return -1;
	if (want == QP_ACCEL_AUTO) {
		/* QPOD_ACCEL=tcg|kvm overrides the probe (a /dev/kvm that opens
		 * can still be unusable, e.g. under broken nested virtualisation) */
		const char *force = getenv("QPOD_ACCEL");
		if (!force || qp_accel_parse(force, &want) < 0 || want == QP_ACCEL_AUTO) {
			char why[512];
			*kvm = vm_kvm_usable(why, sizeof(why));
			if (!*kvm)
				qp_debug("accel auto: tcg (%s)", why);
			return 0;
		}
	}
	if (want == QP_ACCEL_TCG) {
		*kvm = false;
		return 0;
	}
	if (!kvm_opens())
		return qp_fail(err, errno, "accel kvm: open /dev/kvm");
	*kvm = true;
	return 0;
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
