/* runtime/container/sync.h — messages between `qpod` and the container
 * child over a SOCK_SEQPACKET socketpair.  parent -> child: GO (uid maps
 * written, cgroup joined).  child -> parent: READY (set up, waiting on
 * exec.fifo for start) or ERROR; after start, EXEC_FAILED or EOF (the
 * socket is close-on-exec, so EOF means the workload exec'd). */
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

#endif
