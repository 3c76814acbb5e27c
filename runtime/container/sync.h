/* runtime/container/sync.h — messages between `qpod` and the container
 * child over a SOCK_SEQPACKET socketpair.  parent -> child: GO (uid maps
 * written, cgroup joined), HOOKS_DONE.  child -> parent: HOOKS (mounts
 * ready, before pivot_root: run prestart and createRuntime, then answer
 * HOOKS_DONE), READY (set up, waiting on exec.fifo for start) or ERROR;
 * after start, EXEC_FAILED or EOF (the socket is close-on-exec, so EOF
 * means the workload exec'd).
 *
 * The same messages also go over exec.fifo after start (qp_sync_write /
 * qp_sync_read), for a `start` that is not the creating process: the child
 * keeps the fifo's write end (close-on-exec) and writes ERROR or
 * EXEC_FAILED there if the startContainer hooks, the lockdown or the exec
 * fail; EOF again means the exec happened. */
#ifndef QPOD_SYNC_H
#define QPOD_SYNC_H

#include <stdint.h>

#include "util/error.h"

enum qp_sync_type {
	QP_SYNC_GO = 1,
	QP_SYNC_READY,
	QP_SYNC_ERROR,
	QP_SYNC_EXEC_FAILED,
	QP_SYNC_CONSOLE,      /* carries the pty master fd (SCM_RIGHTS) */
	QP_SYNC_HOOKS,        /* child: run the runtime-namespace create hooks now */
	QP_SYNC_HOOKS_DONE,   /* parent: they succeeded */
};

struct qp_sync_msg {
	uint32_t type;
	int32_t errnum;
	int32_t code;
	char msg[1024];
};

int qp_sync_send(int fd, uint32_t type, const qp_error *e);
/* Send a message carrying a file descriptor. */
int qp_sync_send_fd(int fd, uint32_t type, int passfd);
/* Receive one message; returns 1 on a message, 0 on EOF, -1 on error.
 * timeout_ms < 0 waits forever.  A passed fd lands in *passfd (if not
 * NULL; otherwise it is closed), else *passfd = -1. */
int qp_sync_recv(int fd, struct qp_sync_msg *m, int timeout_ms);
int qp_sync_recv_fd(int fd, struct qp_sync_msg *m, int timeout_ms, int *passfd);
/* The same message over a FIFO (one write, atomic: under PIPE_BUF), and
 * its reading: 1, 0 on EOF, -1 on error (ETIMEDOUT, EPROTO). */
int qp_sync_write(int fd, uint32_t type, const qp_error *e);
int qp_sync_read(int fd, struct qp_sync_msg *m, int timeout_ms);

#endif
