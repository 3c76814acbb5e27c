/* runtime/host/console.c — see console.h. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>

#include "host/console.h"
#include "util/cleanup.h"
#include "util/fdpass.h"

int qp_console_pair(int *master, int *slave, qp_error **err)
{
	_cleanup_close_ int m = open("/dev/pts/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
	int unlock = 0, s;

	if (m < 0)
		return qp_fail(err, errno, "open /dev/pts/ptmx");
	if (ioctl(m, TIOCSPTLCK, &unlock) < 0)
		return qp_fail(err, errno, "unlock pty");
	/* TIOCGPTPEER opens the slave without a path lookup */
	s = ioctl(m, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (s < 0)
		return qp_fail(err, errno, "open pty slave");
	*slave = s;
	*master = steal_fd(&m);
	return 0;
}

int qp_console_setup(int *master, qp_error **err)
{
	_cleanup_close_ int m = -1, s = -1;

	if (qp_console_pair(&m, &s, err) < 0)
		return -1;
	for (int fd = 0; fd < 3; fd++)
		if (dup2(s, fd) < 0)
			return qp_fail(err, errno, "dup pty slave");
	*master = steal_fd(&m);
	return 0;
}

void qp_console_make_controlling(void)
{
	setsid();
	ioctl(0, TIOCSCTTY, 0);
}

int qp_console_connect(const char *socket_path, qp_error **err)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	_cleanup_close_ int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (strlen(socket_path) >= sizeof(addr.sun_path))
		return qp_error_set(err, QP_E_INVALID, 0, "console socket path too long");
	strcpy(addr.sun_path, socket_path);
	if (s < 0 || connect(s, (struct sockaddr *)&addr, sizeof(addr)) < 0)
		return qp_fail(err, errno, "connect to console socket \"%s\"", socket_path);
	return steal_fd(&s);
}

int qp_console_send_fd(int sock, int master, qp_error **err)
{
	static const char name[] = "/dev/pts/ptmx";

	if (qp_send_with_fd(sock, name, sizeof(name) - 1, master) < 0)
		return qp_fail(err, errno, "send the console to the console socket");
	return 0;
}

int qp_console_send(const char *socket_path, int master, qp_error **err)
{
	_cleanup_close_ int s = qp_console_connect(socket_path, err);

	if (s < 0)
		return -1;
	return qp_console_send_fd(s, master, err);
}

int qp_console_raw(int fd, struct termios *saved, qp_error **err)
{
	struct termios t;

	if (tcgetattr(fd, &t) < 0)
		return qp_fail(err, errno, "read the terminal's settings");
	if (saved)
		*saved = t;
	cfmakeraw(&t);
	if (tcsetattr(fd, TCSANOW, &t) < 0)
		return qp_fail(err, errno, "make the terminal raw");
	return 0;
}

int qp_console_own_raw(struct termios *saved, qp_error **err)
{
	struct pollfd p = { .fd = 0, .events = POLLIN };
	int queued = -1, eof = 0;
	char c;

	if (!isatty(0) || !isatty(1))
		return qp_error_set(err, QP_E_INVALID, 0, "a terminal (-t) needs qpod's stdin and stdout to be one");
	/* a lone EOF typed before we came (script(1) sends one at once when
	 * its stdin is at its end) waits in the canonical line discipline as a
	 * NUL that a raw read would return: read it here (0 bytes) instead,
	 * and the caller sends VEOF on, which the pod's terminal turns into
	 * the EOF it was */
	if (poll(&p, 1, 0) == 1 && p.revents == POLLIN && ioctl(0, TIOCINQ, &queued) == 0 && queued == 0 &&
	    read(0, &c, 1) == 0)
		eof = 1;
	if (qp_console_raw(0, saved, err) < 0)
		return -1;
	return eof;
}

int qp_console_size_changed(int fd, uint16_t *rows, uint16_t *cols)
{
	struct winsize ws;

	if (ioctl(fd, TIOCGWINSZ, &ws) < 0)
		return -1;
	if (!ws.ws_row || !ws.ws_col || (ws.ws_row == *rows && ws.ws_col == *cols))
		return 0;
	*rows = ws.ws_row;
	*cols = ws.ws_col;
	return 1;
}
