/* runtime/net/netns.c — reaching into a pod's network namespace.
 *
 * A netlink socket belongs to the netns it was created in, for its whole
 * life.  So to configure a pod's eth0 we enter the pod's netns just long
 * enough to create a socket, and go back at once.  setns() changes only the
 * calling thread; the original netns is kept open and restored on every
 * path, success or not. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "net/internal.h"
#include "util/cleanup.h"

#define SELF_NETNS "/proc/thread-self/ns/net"

/* fd of the netns at path (O_CLOEXEC); QP_E_INVALID if it is our own. */
static int open_not_ours(const char *path, const char *what, qp_error **err)
{
	_cleanup_close_ int fd = -1;
	struct stat a, b;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return qp_fail(err, errno, "open \"%s\"", path);
	if (fstat(fd, &a) < 0)
		return qp_fail(err, errno, "stat \"%s\"", path);
	if (stat(SELF_NETNS, &b) < 0)
		return qp_fail(err, errno, "stat \"" SELF_NETNS "\"");
	if (a.st_dev == b.st_dev && a.st_ino == b.st_ino)
		return qp_error_set(err, QP_E_INVALID, 0, "%s is the host's network namespace", what);
	return steal_fd(&fd);
}

int qp_netns_open(pid_t pid, qp_error **err)
{
	char path[64], what[64];

	if (pid <= 0)
		return qp_error_set(err, QP_E_INVALID, 0, "invalid pod PID %d", (int)pid);
	snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)pid);
	snprintf(what, sizeof(what), "the netns of pod PID %d", (int)pid);
	return open_not_ours(path, what, err);
}

int qp_netns_open_path(const char *path, qp_error **err)
{
	char what[PATH_MAX + 8];

	snprintf(what, sizeof(what), "\"%s\"", path);
	return open_not_ours(path, what, err);
}

int qp_netns_call(int nsfd, int (*fn)(void *arg, qp_error **err), void *arg, qp_error **err)
{
	_cleanup_close_ int orig = -1;
	int r;

	orig = open(SELF_NETNS, O_RDONLY | O_CLOEXEC);
	if (orig < 0)
		return qp_fail(err, errno, "open \"" SELF_NETNS "\"");
	if (setns(nsfd, CLONE_NEWNET) < 0)
		return qp_fail(err, errno, "enter pod network namespace");
	r = fn(arg, err);
	if (setns(orig, CLONE_NEWNET) < 0)
		/* Should not happen (we held the fd and came from there).  Say so
		 * loudly: this thread is now in the pod's netns. */
		return qp_fail(err, errno, "return to the original network namespace "
			       "(this thread is stuck in the pod's)");
	if (r < 0)
		return qp_error_prefix(err, "in pod network namespace");
	return r;
}

static int nl_open_here(void *arg, qp_error **err)
{
	return qp_nl_open(arg, err);
}

int qp_netns_nl_open(int nsfd, struct qp_nl **out, qp_error **err)
{
	*out = NULL;
	if (qp_netns_call(nsfd, nl_open_here, out, err) < 0) {
		if (*out)
			qp_nl_free(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}
