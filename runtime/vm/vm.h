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
 *   driver.c   struct pod_driver on top of those
 * This header holds what the rooms share (state-dir names, the spec's
 * mounts, the monitor's and ctl.sock's entry points); each room's own
 * interface is its header: qemu/qemu.h, monitor/monitor.h (the monitor's
 * seams), snapshot/snapshot.h, libvirt/libvirt.h. *
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
#define QP_VM_NET_MIRROR "net-mirror" /* "IFNAME TAPIFINDEX": a wired netns (mon_net.c) */

/* the 9p tag of a VM's rootfs share (RUN's rootfs_tag) */
#define VM_ROOTFS_TAG "rootfs"

#define QP_VM_SEND_TIMEOUT_MS 5000
#define QP_VM_STOP_TIMEOUT_MS 5000 /* SHUTDOWN -> QEMU gone, else SIGKILL */
/* after the pod's end, a reader of its output that takes nothing for this
 * long loses the rest (at most QP_PROTO_OUT_WINDOW bytes) */
#define QP_VM_OUT_DRAIN_MS 10000

/* The hostname of the UTS namespace at path (uts.c): a VM pod whose spec
 * joins one gets that hostname. */
int vm_uts_hostname(const char *path, char *buf, size_t size, qp_error **err);

/* ---- mounts.c: the spec's own mounts, carried out by guest-init ---- */
struct vm_share {
	char tag[16];           /* "mN" */
	char *path;             /* host directory (a staged copy for a file bind) */
	bool ro;
	bool jail_ro;           /* QEMU's jail binds it read-only although the
				 * guest may write below it (the pod share) */
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
 * are copied to mntN/ in the state dir (dirfd, whose path is statedir).
 * member (a container inside a vm pod's VM: its directory's name in the
 * pod share, dirfd that directory): "pod" entries, each share's tag the
 * subdirectory (mN, a directory to bind its path on; fN, a staged copy:
 * path ""); the mount points, and what the guest mounts itself, are made
 * in the rootfs. */
int vm_mounts_plan(const struct pod_spec *spec, const char *rootfs, int dirfd, const char *statedir,
		   const char *member, struct vm_mounts *out, qp_error **err);
/* dest made in the rootfs (a directory, or an empty file), never leaving it. */
int vm_mount_point(int rootfd, const char *dest, bool dir, qp_error **err);
void vm_mounts_free(struct vm_mounts *p);
/* A copy of the file at src (its mode kept) as SUB/NAME in dirfd, SUB made
 * if missing: a pod's file binds (mntN/NAME), a spare's warm-up program. */
int vm_stage_file(int dirfd, const char *sub, const char *src, const char *name, qp_error **err);
/* Remove the staged copies (mntN/) from the state dir. */
void vm_mounts_unstage(int statefd);

/* ---- monitor/monitor.c ---- */

struct vm_mon;

/* Boot the pod's VM: network, initrd, QEMU, channel, HELLO, ctl.sock.
 * On failure everything it made is undone. */
/* Undo what the pod's monitor wired in the network namespace its spec
 * joins (mon_net.c): nothing recorded, or the namespace gone, is success. */
int vm_net_unwire(struct pod *pod, qp_error **err);
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

/* Build the RUN/EXEC fields from an OCI process (pointers into proc). */
void vm_run_from_process(const struct qp_process *proc, struct qp_run *run);

/* Open the files through which a single-threaded process moves itself
 * into the pod's cgroup (driver.c; no cgroup: e->n = 0; cgroup.h says why
 * a process enters by itself). */
struct qp_cgroup_entry;
int vm_cgroup_entry_open(struct pod *pod, struct qp_cgroup_entry *e, qp_error **err);

/* ---- driver.c, for the member driver (member/) ---- */

/* createContainer and startContainer hooks: refused (they would run in the guest). */
int vm_refuse_guest_hooks(const struct pod_spec *spec, qp_error **err);
/* pod's exec of proc through the monitor at ctl_dirfd (ctr: a container's
 * or join's fields, or NULL): in the foreground, or detached (a relay
 * process, named by --pid-file, that exits with its status). */
int vm_exec_via(struct pod *pod, int ctl_dirfd, const struct qp_run *ctr, const struct qp_process *proc,
		int *status, qp_error **err);

/* ---- qemu/qemu_ns.c: mounts in a running QEMU's mount namespace ---- */

/* src (a copy of its mount tree, nosuid, nodev, read-only if ro) on
 * target (an existing directory or file, at its host path) in QEMU's
 * namespace; and its removal (nothing mounted there: fine). */
int vm_qemu_ns_bind(pid_t qemu, const char *src, const char *target, bool ro, qp_error **err);
int vm_qemu_ns_unbind(pid_t qemu, const char *target, qp_error **err);

/* ---- monitor/ctl.c ---- */

/* One request (CTL_START, SIGNAL, SHUTDOWN, MEMINFO_REQ, CTL_REPLACE) to
 * the pod's monitor and its answer.  A CTL_REPLY with an error becomes -1
 * with that error; *reply (may be NULL) gets MEMINFO; *text (may be NULL)
 * a malloc'ed copy of a successful CTL_REPLY's text. */
int vm_ctl_call(int dirfd, const struct qp_msg *req, struct qp_msg *reply, char **text,
		int timeout_ms, qp_error **err);
/* Run proc in the pod: its output goes to our stdout/stderr, *status gets
 * its exit code.  With proc->terminal: on a pty whose master goes to the
 * unix socket at console (runc's protocol), its input and size relayed.
 * started_fd >= 0: "ok started" (util/report.h) is written to it, and it is
 * closed, once the guest has started the process. */
int vm_ctl_exec(int dirfd, const struct qp_process *proc, const char *console, int started_fd,
		int *status, qp_error **err);
/* vm_ctl_exec with more: a container of the pod, or a join of one
 * (protocol.h; member/), and a descriptor served beside the exec. */
struct vm_exec_opts {
	const char *console;     /* proc->terminal: the console socket, or ... */
	int tty;                 /* ... a terminal's slave made already (-1: none) */
	int started_fd;
	const struct qp_run *ctr; /* NULL, or the fields of a CONTAINER or JOIN
				   * exec: flags, rootfs_tag, hostname, mounts, cgroup */
	int extra_fd;            /* -1, or polled: extra() when readable */
	int (*extra)(void *ctx, struct qp_chan *ch, qp_error **err);
	void *ctx;
	bool *started;           /* NULL, or set once the guest started the process */
};
int vm_ctl_exec_opts(int dirfd, const struct qp_process *proc, const struct vm_exec_opts *o, int *status,
		     qp_error **err);

/* The VM's RAM for a spec: its memory limit (rounded up to MiB, within
 * bounds), 256 MiB without one (mon_boot.c). */
unsigned long long vm_spec_mem_mib(const struct pod_spec *spec);
/* The VM's virtual CPUs (qpod.vcpus, default 1). */
unsigned vm_spec_vcpus(const struct pod_spec *spec);
/* How long a booting guest has to say HELLO ($QPOD_VM_HELLO_TIMEOUT_MS, for
 * tests of that path; else 30 s under TCG, 10 s under KVM). */
int vm_hello_timeout_ms(bool kvm);

#endif
