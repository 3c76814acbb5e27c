/* guest-init/guest.h — what the parts of the guest binary share: clocks,
 * sending on the control channel, and the fatal-error path (report, then
 * power off).  Defined in main.c. */
#ifndef QPOD_GUEST_H
#define QPOD_GUEST_H

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <sys/types.h>

#include "guest-init/channel.h"

uint64_t gi_boot_ns(void); /* CLOCK_BOOTTIME in ns */
int64_t gi_mono_ms(void);  /* CLOCK_MONOTONIC in ms */

/* Send one message (thread-safe); the error-returning and the fatal form. */
int gi_send(const struct qp_msg *m, qp_error **err);
void gi_send_or_die(const struct qp_msg *m);

/* Report on the console and the channel, then power off. */
__attribute__((noreturn, format(printf, 3, 4))) void gi_fatal(uint32_t code, int errnum,
							     const char *fmt, ...);
#define die(...) gi_fatal(QP_PERR_SYSCALL, errno, __VA_ARGS__)

/* ---- exec.c: starting processes (the workload and EXECs) ---- */

/* How the forked child of a process failed: written to a close-on-exec
 * pipe, so EOF alone means the exec worked. */
enum { GI_STEP_STDIO = 1, GI_STEP_IDS, GI_STEP_CWD, GI_STEP_EXEC };
struct gi_exec_report {
	int step, errnum;
};

/* In the forked child: default signals, stdio from in/out/err, its own
 * session, no supplementary groups, r's gid/uid, cwd, env, execvp.  A
 * failed step goes to rep_w; then it exits 127 (not found) or 126. */
__attribute__((noreturn)) void gi_exec_child(const struct qp_run *r, int in, int out, int err,
					     int rep_w);
/* Read the report pipe: 0 = exec'd (EOF), 1 = failed (*errnum and a
 * one-line text naming the step and r's command or cwd), -1 = EINTR. */
int gi_exec_report_read(int fd, const struct qp_run *r, int *errnum, char *text, size_t size);

/* ---- exec.c: extra processes in the pod (EXEC messages) ---- */

#define GI_MAX_EXECS 16
#define GI_EXEC_POLLFDS (3 * GI_MAX_EXECS)

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

#endif
