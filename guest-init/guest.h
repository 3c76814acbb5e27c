/* guest-init/guest.h — what the parts of the guest binary share: clocks,
 * sending on the control channel, and the fatal-error path (report, then
 * power off), defined in common.c; and each part's entry points.  The
 * binary's layers, top down: main.c (the boot sequence) -> supervise.c
 * (what runs in the guest) -> exec.c (starting processes) -> common.c;
 * mounts.c and net.c serve the boot sequence. */
#ifndef QPOD_GUEST_H
#define QPOD_GUEST_H

#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "guest-init/channel.h"

/* ---- common.c ---- */

/* The control channel to the host: made by main once its port is open
 * (gi_chan_ready set then); read by the boot sequence until RUN, then only
 * by the relay thread (supervise.c). */
extern struct qp_chan gi_chan;
extern int gi_chan_ready;

uint64_t gi_boot_ns(void); /* CLOCK_BOOTTIME in ns */
int64_t gi_mono_ms(void);  /* CLOCK_MONOTONIC in ms */

/* Close *fd if open; *fd = -1. */
void gi_close_fd(int *fd);
/* One read of a relayed output fd: > 0 bytes read; 0 when there is
 * nothing now (EINTR, EAGAIN) or the fd ended (EOF or an error: *fd is
 * closed and -1). */
ssize_t gi_read_chunk(int *fd, void *buf, size_t size);

/* Send one message (thread-safe); the error-returning and the fatal form. */
int gi_send(const struct qp_msg *m, qp_error **err);
void gi_send_or_die(const struct qp_msg *m);

/* Report on the console and the channel, then power off. */
__attribute__((noreturn, format(printf, 3, 4))) void gi_fatal(uint32_t code, int errnum,
							     const char *fmt, ...);
#define die(...) gi_fatal(QP_PERR_SYSCALL, errno, __VA_ARGS__)
/* gi_fatal with e's message */
__attribute__((noreturn)) void gi_fatal_err(uint32_t code, qp_error *e);
/* An ERROR to the host that does not end the VM (fatal if it cannot be sent). */
__attribute__((format(printf, 3, 4))) void gi_send_error(uint32_t code, int errnum, const char *fmt, ...);
/* sync, then reboot: QEMU runs with -no-reboot, so this ends the VM. */
__attribute__((noreturn)) void gi_power_off(void);
/* A small proc/sys file, NUL-terminated (one read); fatal if unreadable. */
void gi_read_text(const char *path, char *buf, size_t size);
/* MEMINFO from /proc/meminfo to the host. */
void gi_send_meminfo(void);
/* Copy RUN's strings out of the channel's store, which the next message
 * reuses, and point r into the copy (one copy: the latest RUN's). */
void gi_keep_run(struct qp_run *r);

/* ---- mounts.c ---- */

void gi_mount_fs(const char *src, const char *dst, const char *type, unsigned long flags,
		 const char *data);
void gi_mount_early(void);    /* proc, sys, dev */
void gi_mount_cgroup2(void);  /* /sys/fs/cgroup, every controller enabled */
/* The workload's root (the 9p share, or its subdirectory), pivot_root'ed. */
void gi_enter_rootfs(const struct qp_run *r);
/* RUN's own mounts, inside the new root. */
void gi_apply_mounts(const struct qp_run *r);
/* The pod share (RUN's podshare mount), O_PATH; -1 when the pod has none. */
extern int gi_pod_share_fd;

/* ---- net.c ---- */

void gi_link_up(int sk, const char *name);
/* The pod's interface from RUN: MAC, address, default route. */
void gi_net_setup(const struct qp_run *r);

/* ---- supervise.c: what runs in the guest ---- */

/* The first workload's relay thread, made before the first HELLO and held
 * behind a gate (a template's clone does not pay pthread_create). */
void gi_supervise_prepare(void);
/* Run first (tinyinit in this thread, the relay thread beside it) and any
 * workload that replaces it; returns when no RUN follows an EXIT. */
void gi_supervise(const struct qp_run *first);

/* ---- inbuf.c: a process's input from the host ---- */

/* The STDIN (id 0) or an exec's EXEC_STDIN (its id) not yet written to the
 * process's stdin fd; each byte written (or dropped: the process closed its
 * stdin) is credited back to the host. */
struct gi_inbuf {
	uint32_t id;
	uint8_t buf[QP_PROTO_STDIN_WINDOW];
	size_t off, len;
	int eof;
};

/* A chunk (len 0: the end of input) for *fd; fatal beyond the window. */
void gi_inbuf_put(struct gi_inbuf *b, int *fd, const uint8_t *data, uint32_t len);
/* *fd writable and b->len != 0: write what it takes. */
void gi_inbuf_flush(struct gi_inbuf *b, int *fd);

/* ---- pty.c: a process's terminal (QP_RUN_F_TERMINAL) ---- */

/* A pty pair for r (its first size set): the slave as in_r, out_w, err_w
 * (the child's stdio), the master as out_r and in_w (the relay's, non-
 * blocking) and *keep (for WINSIZE); all close-on-exec.  -1 with errno. */
int gi_pty_open(const struct qp_run *r, int *keep, int *in_r, int *in_w, int *out_r, int *out_w,
		int *err_w);
/* WINSIZE for the pty whose master is given (-1: none, a STATE error). */
void gi_pty_winsize(int master, uint16_t rows, uint16_t cols);
/* The end of a terminal's input (its client closed it): the terminal's
 * hangup.  What b holds is dropped, every master fd closed. */
void gi_pty_hangup(struct gi_inbuf *b, int *in_w, int *out_r, int *keep);

/* ---- exec.c: starting processes (the workload and EXECs) ---- */

struct gi_ctr; /* container.c */

/* How the forked child of a process failed: written to a close-on-exec
 * pipe, so EOF alone means the exec worked. */
enum { GI_STEP_STDIO = 1, GI_STEP_IDS, GI_STEP_CWD, GI_STEP_EXEC, GI_STEP_CONTAINER };
struct gi_exec_report {
	int step, errnum;
};

/* In the forked child: default signals, stdio from in/out/err, its own
 * session (with QP_RUN_F_TERMINAL: stdin as its controlling terminal), no
 * supplementary groups, r's gid/uid, cwd, env, execvp.  A
 * failed step goes to rep_w; then it exits 127 (not found) or 126. */
__attribute__((noreturn)) void gi_exec_child(const struct qp_run *r, int in, int out, int err,
					     int rep_w);
/* The same, for a container's process: c entered first (gi_ctr_enter). */
__attribute__((noreturn)) void gi_exec_ctr_child(const struct qp_run *r, struct gi_ctr *c, int in, int out,
						 int err, int rep_w);
/* Read the report pipe: 0 = exec'd (EOF), 1 = failed (*errnum and a
 * one-line text naming the step and r's command or cwd), -1 = EINTR. */
int gi_exec_report_read(int fd, const struct qp_run *r, int *errnum, char *text, size_t size);

/* ---- container.c: the pod's containers (EXEC with CONTAINER or JOIN) ---- */

#define GI_CTR_TREES (1 + QP_PROTO_MAX_MOUNTS) /* the root, then one per mount */
#define GI_CTR_NS 5
struct gi_ctr {
	int trees[GI_CTR_TREES]; /* detached copies from the pod share (-1: none) */
	int cg;                  /* the container's cgroup directory */
	int ns[GI_CTR_NS];       /* JOIN: the container's ipc, uts, net, cgroup, mnt */
	int pidns, self_pidns;   /* JOIN: its PID namespace; ours, to set back */
};
void gi_ctr_init(struct gi_ctr *c);
void gi_ctr_close(struct gi_ctr *c);
/* In the relay thread: what the child needs (join_pid: JOIN's container's
 * process); -1 with errno and why. */
int gi_ctr_prepare(const struct qp_run *r, pid_t join_pid, struct gi_ctr *c, char *why, size_t n);
/* fork(), the child in the PID namespace r asks for. */
pid_t gi_ctr_fork(const struct qp_run *r, struct gi_ctr *c);
/* In the child: the container's root and namespaces (or join them); -1
 * with errno. */
int gi_ctr_enter(const struct qp_run *r, struct gi_ctr *c);
/* A container ended: what is left in its cgroup killed, the cgroup removed. */
void gi_ctr_end(const char *name);
/* CTR_STATS of the container named in a CTR_STATS_REQ (its cgroup's
 * files; found 0 when it has none: not running). */
void gi_ctr_stats(const struct qp_msg *req);
/* CTR_UPDATED for a CTR_UPDATE: its limits written to the container's cgroup. */
void gi_ctr_update(const struct qp_msg *req);
/* A detached copy of path in the pod share (open_tree), -1 with errno. */
int gi_pod_share_tree(const char *path);
/* tree (a detached copy) moved onto dst, then remounted with flags
 * (MS_RDONLY...) if any; -1 with errno. */
int gi_bind_tree(int tree, const char *dst, unsigned long flags);

/* ---- exec.c: extra processes in the pod (EXEC messages) ---- */

#define GI_MAX_EXECS 16
#define GI_EXEC_POLLFDS (4 * GI_MAX_EXECS)

/* Start the process of an EXEC message (its strings are copied).  Failures
 * are reported to the host as EXEC_EXIT, never fatal. */
void gi_exec_start(const struct qp_run *r);
/* Fill p[0..GI_EXEC_POLLFDS) with the fds to watch; returns the poll timeout
 * the execs need (-1 = none). */
int gi_exec_pollfds(struct pollfd *p);
/* After poll: relay output, exec reports, and send EXEC_EXIT when due. */
void gi_exec_handle(const struct pollfd *p);
/* tinyinit reaped pid (not the workload): if it is an exec, note its code.
 * Called from the relay thread (through the event pipe). */
void gi_exec_reaped(pid_t pid, int code);
/* WINSIZE, EXEC_SIGNAL and EXEC_STDIN for an exec (its id != 0). */
void gi_exec_winsize(const struct qp_msg *m);
void gi_exec_signal(const struct qp_msg *m);
void gi_exec_stdin(const struct qp_msg *m);
/* EXEC_OUT_CREDIT: more of an exec's output may go (protocol.h). */
void gi_exec_out_credit(const struct qp_msg *m);

#endif
