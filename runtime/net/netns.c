/* runtime/net/netns.c — reaching into a pod's network namespace.
 *
 * A netlink socket belongs to the netns it was created in, for its whole
 * life.  So to configure a pod's eth0 we enter the pod's netns just long
 * enough to create a socket, and go back at once.  setns() changes only the
 * calling thread; the original netns is kept open and restored on every
 * path, success or not. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "net/internal.h"
#include "util/cleanup.h"

#define SELF_NETNS "/proc/thread-self/ns/net"

int qp_netns_open(pid_t pid, qp_error **err)
{
	_cleanup_close_ int fd = -1;
	char path[64];
	struct stat a, b;

	if (pid <= 0)
		return qp_error_set(err, QP_E_INVALID, 0, "invalid pod PID %d", (int)pid);
	snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return qp_fail(err, errno, "open \"%s\"", path);
	if (fstat(fd, &a) < 0)
		return qp_fail(err, errno, "stat \"%s\"", path);
	if (stat(SELF_NETNS, &b) < 0)
		return qp_fail(err, errno, "stat \"" SELF_NETNS "\"");
	if (a.st_dev == b.st_dev && a.st_ino == b.st_ino)
		return qp_error_set(err, QP_E_INVALID, 0,
				    "pod PID %d shares the host's network namespace", (int)pid);
	return steal_fd(&fd);
}

int qp_netns_nl_open(int nsfd, struct qp_nl **out, qp_error **err)
{
	_cleanup_close_ int orig = -1;
	int r;

	orig = open(SELF_NETNS, O_RDONLY | O_CLOEXEC);
	if (orig < 0)
		return qp_fail(err, errno, "open \"" SELF_NETNS "\"");
	if (setns(nsfd, CLONE_NEWNET) < 0)
		return qp_fail(err, errno, "enter pod network namespace");
	r = qp_nl_open(out, err);
	if (setns(orig, CLONE_NEWNET) < 0) {
		/* Should not happen (we held the fd and came from there).  Say so
		 * loudly: this thread is now in the pod's netns. */
		int e = errno;
		if (r == 0) {
			qp_nl_free(*out);
			*out = NULL;
		}
		return qp_fail(err, e, "return to the original network namespace "
			       "(this thread is stuck in the pod's)");
	}
	if (r < 0)
		return qp_error_prefix(err, "in pod network namespace");
	return 0;
}
