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
