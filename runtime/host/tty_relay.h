/* runtime/host/tty_relay.h — `qpod run -t` (and `exec -t` without a console
 * socket) of a container pod: the pod's
 * pty master (made in the pod, as for --console-socket) relayed to qpod's
 * own terminal, which is raw meanwhile (the pod's pty does the line
 * discipline) and whose window size the pod's pty follows (looked at every
 * QP_CONSOLE_SIZE_POLL_MS).  A VM pod's monitor relays its own (mon_tty.c). */
#ifndef QPOD_TTY_RELAY_H
#define QPOD_TTY_RELAY_H

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <termios.h>

#include "util/error.h"

struct qp_tty_relay {
	int master;           /* -1: none (or closed) */
	int in;               /* our input, -1 at its end */
	bool raw;
	struct termios saved; /* our terminal before */
	uint16_t rows, cols;
};

/* Take master (owned from now on), make our terminal raw, size the pod's. */
int qp_tty_relay_start(struct qp_tty_relay *r, int master, qp_error **err);
/* The fds to poll (2) and the poll timeout it needs (-1: none). */
int qp_tty_relay_pollfds(const struct qp_tty_relay *r, struct pollfd p[2]);
/* After poll: copy both ways, follow our size. */
void qp_tty_relay_handle(struct qp_tty_relay *r, const struct pollfd p[2]);
void qp_tty_relay_size(struct qp_tty_relay *r);
/* The pod ended: drain its terminal, restore ours. */
void qp_tty_relay_end(struct qp_tty_relay *r);
/* `qpod exec -t` without a console socket: the master arrives on sock;
 * relay it to our terminal until pid (the exec's waiter) ends, then end. */
int qp_tty_relay_own(struct qp_tty_relay *r, int sock, pid_t pid, qp_error **err);

#endif
