/* runtime/vm/qemu/qemu.h — QEMU itself, for the rest of the VM driver: the
 * guest's files (kernel, init, firmware, initramfs), the accelerator, the
 * guest's command line, QEMU's command line and start (in the jail), and
 * QMP. */
#ifndef QPOD_VM_QEMU_H
#define QPOD_VM_QEMU_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "vm/vm.h"

/* Write a cpio "newc" archive `name` (in dirfd) holding the directories
 * /dev /proc /sys /newroot /tmp, the node /dev/console (5,1) and /init = a
 * copy of the file at init_path (mode 0755).  The copy is bounded to 64 MiB. */
int vm_write_initrd(int dirfd, const char *name, const char *init_path, qp_error **err);

/* A host directory copied into the initramfs: src's contents go under dst
 * (relative, no "..", "" = the archive root; missing parents are added). */
struct vm_initrd_tree {
	const char *src, *dst;
};

/* vm_write_initrd plus the trees, written before /init and the fixed
 * entries (so those win): directories, regular files (each <= 64 MiB) and
 * symlinks as they are, links not followed, device nodes/fifos/sockets
 * skipped, at most 65536 entries, 32 levels and 1 GiB in all.  Owners are
 * root; modes are kept.  For a modular guest kernel: { modules dir,
 * GI_MODULES_DIR + 1 } (guest-init/modules.h); for a rootfs in the
 * initramfs: { rootfs, "" }. */
int vm_write_initrd_trees(int dirfd, const char *name, const char *init_path,
			  const struct vm_initrd_tree *trees, size_t ntrees, qp_error **err);

/* Where the guest kernel and guest init are: $QPOD_KERNEL, else
 * util/paths.h's order (installed vmlinux, the kernel cache
 * $QPOD_CACHE/kernel/current/vmlinux, /usr/lib/qpod/vmlinux);
 * $QPOD_GUEST_INIT, else the build tree's guest-init/qpod-init, the
 * installed qpod-init, /usr/lib/qpod/qpod-init.
 * Return a malloc'ed path of a file that exists, or NULL with an error. */
char *vm_find_kernel(qp_error **err);
char *vm_find_guest_init(qp_error **err);

/* Firmware: "qpod" (default, NULL too: qpod's own, qboot/, built as
 * qboot/qpod-firmware.bin beside the binary or installed in PREFIX/lib/qpod),
 * "qboot" (Debian's qboot.rom), "seabios" (QEMU's microvm SeaBIOS build) or an
 * absolute path.  Returns a malloc'ed path of a file that exists, or NULL
 * with an error. */
char *vm_find_firmware(const char *name, qp_error **err);
/* Whether name is qpod's own firmware: the one that marks its boundaries
 * (qboot/qpod_abi.h), so QEMU gets the marker device. */
bool vm_firmware_is_qpod(const char *name);

/* Accelerator for `want`: auto picks KVM when a probe boot under KVM works
 * (kvm_probe.c; $QPOD_ACCEL=kvm|tcg overrides auto).  kvm without a
 * /dev/kvm that opens is an error. */
int vm_pick_accel(enum qp_accel want, bool *kvm, qp_error **err);
/* TCG's translation cache in MiB: $QPOD_TCG_TB_SIZE, else 32 (holds a
 * small guest's hot code; QEMU's own default is 1 GiB).  Under KVM there is
 * no translation cache.  vm_pick_accel refuses a value that is not a whole
 * number in 1..QP_TCG_TB_MAX; here one falls back to the default. */
#define QP_TCG_TB_DEFAULT 32
#define QP_TCG_TB_MAX 4096
unsigned vm_tcg_tb_mib(void);
/* Whether KVM really runs a guest here (cached probe boot); why says why not. */
bool vm_kvm_usable(char *why, size_t size);

/* ---- qemu/guest_cmdline.c ---- */
/* The guest kernel's command line: kernel-config/cmdline.txt next to the
 * build (or $QPOD_KERNEL_CMDLINE), '#' and blank lines dropped, the rest
 * joined with spaces; a built-in copy otherwise. */
#define VM_CMDLINE_MAX 2048
void vm_read_cmdline(char *out, size_t size);
/* The line a pod's guest boots with: vm_read_cmdline's, plus under TCG the
 * TSC's rate (tsc_early_khz=), noreplace-smp and, for one vCPU except in a
 * template's boot, nolapic_timer.  A template's key holds exactly this line. */
void vm_guest_cmdline(char *out, size_t size, bool kvm, int vcpus, bool template_boot);

/* ---- qemu/tsc.c ---- */
/* The host's TSC rate in kHz (0: not invariant or not measurable); cached
 * per host boot in $QPOD_CACHE/tsc-khz. */
long vm_host_tsc_khz(void);

/* ---- qemu/qemu_cmd.c: QEMU's command line and its start ---- */

/* The machine profiles: a VM pod is a microvm (virtio-mmio devices, no
 * PCI, no ACPI); the traditional-VM baseline a pc (PCI, the default
 * SeaBIOS).  Both get their devices from the one table in qemu_cmd.c. */
enum vm_machine { VM_MACHINE_MICROVM = 0, VM_MACHINE_PC };

struct vm_qemu_opts {
	enum vm_machine machine;
	const char *statedir;   /* absolute path of the pod's state dir */
	int dirfd;              /* the same, open */
	const char *kernel;
	const char *initrd;     /* a file in the state dir; NULL: QP_VM_INITRD */
	const char *cmdline;    /* NULL: kernel-config/cmdline.txt (qpod's kernel) */
	const char *firmware;   /* NULL: the machine's own (pc: SeaBIOS) */
	const char *rootfs;     /* shared over 9p as "rootfs"; NULL: none */
	bool rootfs_ro;         /* root.readonly: a read-only 9p share */
	bool rootfs_jail_ro;    /* the jail binds it read-only, whatever
				 * rootfs_ro: a spare's share/, whose root/
				 * gets the taking pod's rootfs, with that
				 * pod's flags, mounted over it (spare.c) */
	const char *console;    /* the serial console to this file in the
				 * state dir; NULL: none */
	bool qmp;               /* QMP server on QP_VM_QMP_SOCK (pause, resume) */
	bool kvm;
	int vcpus;
	unsigned long long mem_mib;
	int tap_fd;             /* -1: no network */
	int vhost_fd;           /* with tap_fd: vhost-net's (vm_nic_vhost_open);
				 * <= 0 (0: unset; fds 0..2 are never it):
				 * QEMU's userspace virtio-net */
	const unsigned char *mac; /* of the NIC, with tap_fd */
	const struct vm_share *shares; /* more 9p shares (the spec's binds) */
	size_t nshares;
	const char *mem_path;   /* RAM is this file (templates); NULL: anonymous */
	bool mem_shared;        /* mem_path mapped shared (a template being made),
				 * else private, copy-on-write (a clone) */
	bool incoming;          /* -incoming defer: wait for migrate-incoming */
	bool template_boot;     /* the boot of a template (vm_guest_cmdline) */
	bool fw_markers;        /* the firmware's marker port (qboot/qpod_abi.h) */
	int fw_mark_fd;         /* with fw_markers: where its bytes go (a pipe's write end) */
	const struct qp_cgroup_entry *cg_entry; /* QEMU's child moves itself in; NULL: none */
};

/* Fork and exec QEMU ($QPOD_QEMU instead, for tests) with o's machine and
 * devices (stdin /dev/null, stdout/stderr appended to qemu.log in the state
 * dir, its own session, cwd = the state dir, SIGKILLed if the caller
 * dies), in the jail (qemu/jail_qemu.c) unless that is off.  The channel and QMP
 * sockets (QP_VM_CHAN_SOCK, QP_VM_QMP_SOCK in the state dir) are made here
 * and passed in as listening fds.  Returns the pid. */
pid_t vm_spawn_qemu(const struct vm_qemu_opts *o, qp_error **err);

/* The guest's kernel command line for o: o->cmdline, else
 * vm_read_cmdline's plus what o's accel needs (size >= VM_CMDLINE_MAX + 32). */
void vm_qemu_cmdline(const struct vm_qemu_opts *o, char *out, size_t size);

/* ---- qemu/nic_backend.c: vhost-net or QEMU's userspace virtio-net ---- */
#define VM_VHOST_NET "/dev/vhost-net"
#define VM_NIC_BACKEND_MAX 96 /* the text's size */
/* The decision, from whether KVM runs the guest and /dev/vhost-net's
 * open() errno (0: it opened): true for vhost-net; text "vhost-net",
 * "userspace: TCG", "userspace: no /dev/vhost-net" or "userspace:
 * /dev/vhost-net: REASON". */
bool vm_nic_backend(bool kvm, int vhost_errno, char *text, size_t size);
/* /dev/vhost-net opened when kvm (fd >= 3, O_CLOEXEC), else -1; text as
 * vm_nic_backend's for what happened.  One fd per QEMU (it becomes its
 * owner). */
int vm_nic_vhost_open(bool kvm, char *text, size_t size);

/* ---- qemu/jail_qemu.c: QEMU in the host's jail (host/jail.h, docs/JAIL.md) ---- */

/* Whether QEMU goes in the jail: QPOD_VM_JAIL on (default) / off; off
 * anyway when qpod is not root (QEMU then runs as the caller). */
int vm_jail_wanted(bool *on, qp_error **err);
/* The value of QEMU's -sandbox option in the jail. */
const char *vm_jail_sandbox_arg(void);
/* In QEMU's child before exec: the mount namespace with only what o needs
 * (bin: the VMM about to be exec'd), rlimits, the uid switch, capabilities,
 * no_new_privs.  -1 after writing the reason to stderr (qemu.log). */
int vm_jail_enter(const struct vm_qemu_opts *o, const char *bin);

/* The last "error:" line of qemu.log's tail, else its last non-empty line
 * (printable, bounded), into buf; "" if none. */
void vm_qemu_log_tail(int dirfd, char *buf, size_t size);

/* ---- qemu/qmp.c ---- */

struct vm_qmp;
/* Connect to QP_VM_QMP_SOCK in dirfd and leave QMP's negotiation mode. */
int vm_qmp_connect(int dirfd, struct vm_qmp **out, qp_error **err);
/* Run a QMP command without arguments ("stop", "cont"); qemu's error text
 * becomes the error. */
int vm_qmp_execute(struct vm_qmp *q, const char *command, qp_error **err);
/* Run one QMP command given as a JSON object ({"execute": ...}); passfd >=
 * 0 goes with it (SCM_RIGHTS, for "getfd"); status (may be NULL) gets the
 * answer's "return"."status" string if it has one (query-migrate). */
int vm_qmp_command(struct vm_qmp *q, const char *json, int passfd, char *status, size_t status_size,
		   qp_error **err);
void vm_qmp_free(struct vm_qmp *q);

#endif
