/* runtime/host/console.h — process.terminal: a pty (a container pod's made
 * inside the pod, in its own devpts instance; a VM pod's on the host, the
 * guest's own pty behind it), whose master goes to the caller's
 * --console-socket as SCM_RIGHTS, the way containerd and runc expect. */
#ifndef QPOD_CONSOLE_H
#define QPOD_CONSOLE_H

#include <stdint.h>
#include <termios.h>

#include "util/error.h"

/* How often a relay looks at a terminal's size (docs/DECISIONS.md: a
 * timer, not SIGWINCH). */
#define QP_CONSOLE_SIZE_POLL_MS 250

/* A pty pair of the devpts at /dev/pts, both ends close-on-exec. */
int qp_console_pair(int *master, int *slave, qp_error **err);
/* In the pod, after /dev/pts is mounted: open a pty pair; the slave
 * becomes fds 0, 1, 2; *master gets the master. */
int qp_console_setup(int *master, qp_error **err);
/* In the workload child: new session, the pty as controlling terminal. */
void qp_console_make_controlling(void);
/* Host side: send the master to the unix socket at path. */
int qp_console_send(const char *socket_path, int master, qp_error **err);
/* The same in two steps, for a sender that must connect (on the host)
 * before it enters the pod's mount namespace: the connected socket fd. */
int qp_console_connect(const char *socket_path, qp_error **err);
int qp_console_send_fd(int sock, int master, qp_error **err);

/* A VM pod's host-side terminal carries bytes only (the guest's pty has the
 * line discipline): fd raw, its settings before in *saved (may be NULL). */
int qp_console_raw(int fd, struct termios *saved, qp_error **err);
/* qpod's own terminal (`run -t`, `exec -t` without a console socket):
 * stdin and stdout must be one; stdin raw, its settings before in *saved.
 * 1 when a lone EOF was typed before (script(1) with stdin at its end): it
 * was taken, and the caller sends saved->c_cc[VEOF] to the pod's terminal
 * first (docs/DECISIONS.md: else it arrives as a NUL). */
int qp_console_own_raw(struct termios *saved, qp_error **err);
/* fd's window size into *rows, *cols if it is set and differs from them:
 * 1 changed, 0 not, -1 not a terminal. */
int qp_console_size_changed(int fd, uint16_t *rows, uint16_t *cols);

#endif
