/* runtime/vm/vm.h — what the rooms of the QEMU microVM pod driver share:
 *   qemu/      QEMU itself: kernel/init/firmware lookup, accelerator choice,
 *              the command line and spawn (qemu_cmd.c), QMP (qmp.c), the
 *              KVM and TSC probes, the guest's cmdline, the initramfs
 *              writer (initrd.c), QEMU's part of the jail (jail_qemu.c)
 *   monitor/   the pod's monitor: owns QEMU, the guest channel and ctl.sock
 *              (split by job: mon_boot.c, mon_ctl.c, mon_guest.c,
 *              mon_replace.c; their seams in monitor.h); ctl.c is the
 *              client side of ctl.sock (start, kill, exec... from any qpod)
 *   libvirt/   the same guest as a transient libvirt domain
 *   snapshot/  templates (booted once, cloned by pods) and spares
 *   stats.c    the pod's usage for `qpod events`
 *   driver.c   struct pod_driver on top of those *
 * Process model.  Every VM pod has one monitor: the process that is QEMU's
 * parent, holds the guest control channel, relays the workload's stdout and
 * stderr to its own fds 1 and 2, and serves ctl.sock in the state dir for
 * other qpod processes.  `qpod run` (foreground) is the monitor itself;
 * `qpod create` forks a monitor that outlives it (like a container's init,
 * it keeps the caller's stdio).  QEMU dies with its monitor (PDEATHSIG), and
 * the guest powers off when the channel closes, so nothing outlives both. */
#ifndef QPOD_VM_H
#define QPOD_VM_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>

#include "driver.h"
#include "guest-init/channel.h"
#include "net/net.h"
#include "util/error.h"

struct pod;

/* The VMM binary, found on PATH ($QPOD_QEMU replaces it in tests). */
#define QEMU_BIN "qemu-system-x86_64"

/* Files in the pod's state dir. */
#define QP_VM_INITRD "initrd.cpio"
#define QP_VM_CHAN_SOCK "ch.sock"   /* QEMU's end of the guest channel */
#define QP_VM_CTL_SOCK "ctl.sock"   /* the monitor's control socket */
#define QP_VM_QEMU_LOG "qemu.log"
#define QP_VM_STOPPED "stopped"     /* one line: why the VM stopped */
#define QP_VM_QMP_SOCK "qmp.sock"   /* QEMU's QMP server, the monitor its client */
#define QP_VM_PAUSED "paused"       /* exists while the monitor holds the VM stopped */

/* the 9p tag of a VM's rootfs share (RUN's rootfs_tag) */
#define VM_ROOTFS_TAG "rootfs"

#define QP_VM_SEND_TIMEOUT_MS 5000
#define QP_VM_STOP_TIMEOUT_MS 5000 /* SHUTDOWN -> QEMU gone, else SIGKILL */

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
/* Whether KVM really runs a guest here (cached probe boot); why says why not. */
bool vm_kvm_usable(char *why, size_t size);

/* The hostname of the UTS namespace at path (uts.c): a VM pod whose spec
 * joins one gets that hostname. */
int vm_uts_hostname(const char *path, char *buf, size_t size, qp_error **err);

/* ---- mounts.c: the spec's own mounts, carried out by guest-init ---- */
struct vm_share {
	char tag[16];           /* "mN" */
	char *path;             /* host directory (a staged copy for a file bind) */
	bool ro;
};
struct vm_mounts {
	struct vm_share shares[QP_PROTO_MAX_MOUNTS];
	size_t nshares;
	char *entries[QP_PROTO_MAX_MOUNTS + 1]; /* RUN's mounts */
	size_t n;
};
/* Does the guest apply m (or provide it itself)?  false: *why names what
 * stops it (an option, the type, the source). */
bool vm_mount_applied(const struct qp_mount *m, const char **why);
/* The shares and RUN entries for the spec's applicable mounts; file binds
 * are copied to mntN/ in the state dir (dirfd, whose path is statedir). */
int vm_mounts_plan(const struct pod_spec *spec, const char *rootfs, int dirfd, const char *statedir,
		   struct vm_mounts *out, qp_error **err);
void vm_mounts_free(struct vm_mounts *p);
/* A copy of the file at src (its mode kept) as SUB/NAME in dirfd, SUB made
 * if missing: a pod's file binds (mntN/NAME), a spare's warm-up program. */
int vm_stage_file(int dirfd, const char *sub, const char *src, const char *name, qp_error **err);
/* Remove the staged copies (mntN/) from the state dir. */
void vm_mounts_unstage(int statefd);

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
/* The QEMU arguments of the devices every pod's guest has, whatever runs
 * its QEMU (the libvirt backend passes them through qemu:commandline):
 * the guest channel, its socket at chan_path, and the 9p shares of o.
 * *argv is malloc'ed (qp_strv_free). */
int vm_qemu_guest_devices(const struct vm_qemu_opts *o, const char *chan_path, char ***argv, qp_error **err);

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

/* ---- monitor/monitor.c ---- */

struct vm_mon;

/* Boot the pod's VM: network, initrd, QEMU, channel, HELLO, ctl.sock.
 * On failure everything it made is undone. */
int vm_mon_boot(struct pod *pod, struct vm_mon **out, qp_error **err);
/* Send RUN (the pod's process).  Its outcome arrives in vm_mon_serve. */
int vm_mon_run(struct vm_mon *m, qp_error **err);
/* After vm_mon_run in the creating process (a foreground run): wait until
 * the guest answers RUN (STARTED, or its exec error, which vm_mon_serve
 * then reports), bounded; QP_E_TIMEOUT if it does not. */
int vm_mon_wait_started(struct vm_mon *m, qp_error **err);
/* Serve until the VM is over: guest messages, ctl clients, and signals on
 * sigfd (>= 0: forwarded to the workload).  *code = the workload's exit
 * code.  Returns -1 if it could not run or the VM died without an exit
 * status.  Then the VM is stopped (SHUTDOWN, SIGKILL after a timeout) and
 * the reason written to QP_VM_STOPPED. */
int vm_mon_serve(struct vm_mon *m, int sigfd, int *code, qp_error **err);
/* Stop (if needed) and free everything the monitor holds. */
void vm_mon_free(struct vm_mon *m);
pid_t vm_mon_qemu_pid(const struct vm_mon *m);
const char *vm_mon_accel(const struct vm_mon *m);
/* An fd for pod_wait that is readable at once: everything the pod does is
 * handled in vm_mon_serve (the guest's messages may already sit in the
 * channel's buffer, read there while waiting for STARTED, so the channel's
 * socket would never turn readable again: the pod hung after EXIT). */
int vm_mon_poll_fd(struct vm_mon *m);
/* A signal for the workload (before start: stop the VM). */
int vm_mon_signal(struct vm_mon *m, int sig, qp_error **err);
/* Pause (QMP "stop") or resume ("cont") the VM; QP_VM_PAUSED says which. */
int vm_mon_pause(struct vm_mon *m, bool pause, qp_error **err);

/* ---- stats.c ---- */

/* The pod's usage (the driver's stats op). */
int vm_stats(struct pod *pod, struct qp_stats *st, qp_error **err);
/* The pod's memory figures (the driver's mem op). */
int vm_pod_mem(struct pod *pod, struct qp_pod_mem *out, qp_error **err);

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

/* Build the RUN/EXEC fields from an OCI process (pointers into proc). */
void vm_run_from_process(const struct qp_process *proc, struct qp_run *run);

/* Open the files through which a single-threaded process moves itself
 * into the pod's cgroup (driver.c; no cgroup: e->n = 0; cgroup.h says why
 * a process enters by itself). */
struct qp_cgroup_entry;
int vm_cgroup_entry_open(struct pod *pod, struct qp_cgroup_entry *e, qp_error **err);

/* ---- monitor/ctl.c ---- */

/* One request (CTL_START, SIGNAL, SHUTDOWN, MEMINFO_REQ, CTL_REPLACE) to
 * the pod's monitor and its answer.  A CTL_REPLY with an error becomes -1
 * with that error; *reply (may be NULL) gets MEMINFO; *text (may be NULL)
 * a malloc'ed copy of a successful CTL_REPLY's text. */
int vm_ctl_call(int dirfd, const struct qp_msg *req, struct qp_msg *reply, char **text,
		int timeout_ms, qp_error **err);
/* Run proc in the pod: its output goes to our stdout/stderr, *status gets
 * its exit code.  started_fd >= 0: "ok started" (util/report.h) is written
 * to it, and it is closed, once the guest has started the process. */
int vm_ctl_exec(int dirfd, const struct qp_process *proc, int started_fd, int *status,
		qp_error **err);

/* The VM's RAM for a spec: its memory limit (rounded up to MiB, within
 * bounds), 256 MiB without one (mon_boot.c). */
unsigned long long vm_spec_mem_mib(const struct pod_spec *spec);
/* How long a booting guest has to say HELLO ($QPOD_VM_HELLO_TIMEOUT_MS, for
 * tests of that path; else 30 s under TCG, 10 s under KVM). */
int vm_hello_timeout_ms(bool kvm);

/* ---- snapshot/template.c: VM templates (booted once, cloned by pods) ---- */

/* What shapes a booted guest (a template's identity). */
struct vm_template_params {
	const char *kernel, *firmware, *init;
	bool kvm;
	int vcpus;
	unsigned long long mem_mib;
	bool nic;               /* a virtio-net device (the clone's tap replaces
				 * the template's; guest-init sets the MAC) */
	unsigned nshares;       /* 9p shares besides the rootfs (tags m0..) */
};
struct vm_template {
	char key[17];           /* 16 hex digits */
	char dir[PATH_MAX + 24]; /* CACHE/templates/KEY */
	char mem[PATH_MAX + 32], state[PATH_MAX + 32];
};
/* The template for p: a complete one of exactly p, or (create) made now,
 * under its lock (one boot to HELLO, paused, saved).  QP_E_NOTFOUND
 * without create.  A failed making is remembered (KEY.failed, its reason,
 * for VM_TEMPLATE_RETRY_S): with skip_failed such a key fails at once.
 * *made (may be NULL): whether this call made it. */
#define VM_TEMPLATE_RETRY_S 600
/* The key of p's template (whether it exists or not). */
int vm_template_key(const struct vm_template_params *p, char key[17], qp_error **err);
int vm_template_get(const struct vm_template_params *p, bool create, bool skip_failed,
		    struct vm_template *out, bool *made, qp_error **err);
/* Save (incoming false: QMP migrate) or restore (migrate-incoming) the
 * device state through fd, RAM excluded (x-ignore-shared), and wait until
 * QEMU says completed. */
int vm_template_migrate(struct vm_qmp *q, int fd, bool incoming, qp_error **err);
/* Every template: its key, its meta line ("" if unreadable), its RAM
 * file's size (-1 if missing) and whether it is stale (its inputs as they
 * are now describe another template: a rebuilt kernel or guest-init, a new
 * QEMU, another command line; no pod clones it again). */
int vm_template_list(void (*each)(void *ctx, const char *key, const char *meta, long long mem_bytes, bool stale),
		     void *ctx, qp_error **err);
/* Remove the stale templates (under their locks; running clones keep
 * their memory), half-made ones of dead makers and old failure notes. */
int vm_template_prune(void (*each)(void *ctx, const char *key), void *ctx, qp_error **err);
int vm_template_remove(const char *key, qp_error **err);

/* ---- snapshot/spare.c, spare_pool.c, spare_take.c: spares, a template's clones started ahead
 * of the pods that take them (docs/TEMPLATES.md, "Spares") ---- */

#define QP_SPARES_DIR ".spares"        /* in the state root */
#define QP_SPARE_TAKE_SOCK "take.sock" /* in a spare's dir, while it is free */
#define QP_SPARE_TAKEN "taken"         /* in a spare's dir: the ID of the pod that took it */
#define VM_SPARES_MAX 64               /* fill's --count at most */

/* What a spare is made for (a pod with the same values, no NIC and no
 * shares of its own, takes it). */
struct vm_spare_params {
	unsigned long long mem_mib;
	int vcpus;
	const char *firmware;   /* NULL: the default (qpod's) */
	enum qp_accel accel;
};
struct vm_spare_info {
	char name[16], key[17], accel[8];
	char taken_by[QP_ID_MAX + 1]; /* "" while nobody took it */
	char firmware[PATH_MAX];      /* its path */
	unsigned long long mem_mib, holder_start;
	int vcpus;
	pid_t holder, qemu;
	bool holder_alive;      /* its holder (QEMU's parent) is there */
	bool ready;             /* booted, unique, warm */
	bool free;              /* ready and not taken: a pod may take it */
};
/* ROOT/.spares, checked private; -1 with *err untouched when it does not
 * exist and !make. */
int vm_spares_open(int rootfd, bool make, qp_error **err);
/* Each spare of the state root (fn gets the spares dir and what is known). */
int vm_spares_each(int rootfd, void (*fn)(void *ctx, int sd, const struct vm_spare_info *in), void *ctx,
		   qp_error **err);
/* Make spares of sp until COUNT are free (those of the same parameters but
 * another template key, stale, are stopped), each started and waited for
 * in turn.  KEEP: COUNT and sp are also the pool's target, which every
 * take then tops up (vm_spares_refill); ONCE: no target; REFILL: only
 * while the target is there.  made (may be NULL) hears of each.  Spares
 * need QEMU's jail (their rootfs is bound into its mount namespace). */
enum vm_fill { VM_FILL_KEEP, VM_FILL_ONCE, VM_FILL_REFILL };
int vm_spares_fill(int rootfd, const struct vm_spare_params *sp, int count, enum vm_fill mode,
		   void (*made)(void *ctx, const char *name), void *ctx, qp_error **err);
/* After a take: a detached, lower-priority fill to the pool's target. */
void vm_spares_refill(int rootfd);
/* Stop every spare no pod has taken (and forget the target); *n of them. */
int vm_spares_drain(int rootfd, int *n, qp_error **err);
/* Remove the dirs of spares whose holder is gone; *n of them. */
int vm_spares_gc(int rootfd, int *n, qp_error **err);

/* A spare, taken: its QEMU (moved into the pod's cgroup), the guest
 * channel, the holder's connection ("exit STATUS" when QEMU ends), its dir
 * (QEMU's sockets and log) in the spares dir sd, and its share's path. */
struct vm_spare_taken {
	pid_t qemu;
	unsigned long long qemu_start;
	bool kvm;
	int chan_fd, holder_fd, dirfd, sd;
	char name[16];
	char share[PATH_MAX];
};
/* Take a free spare of template KEY for pod POD_ID (cgroup NULL: none):
 * 1 with *out, 0 if there is none to take. */
int vm_spare_take(int rootfd, const char *key, const char *pod_id, const char *cgroup,
		  struct vm_spare_taken *out, qp_error **err);
void vm_spare_taken_close(struct vm_spare_taken *t);
/* Bind ROOTFS (read-only if ro) on SHARE/root in QEMU's mount namespace. */
int vm_spare_bind_rootfs(pid_t qemu, const char *share, const char *rootfs, bool ro, qp_error **err);

#endif
