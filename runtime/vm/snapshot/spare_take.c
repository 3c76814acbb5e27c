/* runtime/vm/snapshot/spare_take.c — a pod's side of a spare (spare.c): finding a
 * free one of its template, taking it from its holder, and binding the
 * pod's rootfs where the spare's guest will look for it. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/mount.h>

#include "host/cgroup/cgroup.h"
#include "state.h"
#include "util/cleanup.h"
#include "util/clock.h"
#include "util/fdpass.h"
#include "util/log.h"
#include "util/report.h"
#include "vm/snapshot/snapshot.h"
#include "vm/vm.h"

#define TAKE_REPLY_MS 5000 /* the holder moves QEMU into the pod's cgroup first */

void vm_spare_taken_close(struct vm_spare_taken *t)
{
	int *fds[] = { &t->chan_fd, &t->holder_fd, &t->dirfd, &t->sd };

	for (size_t i = 0; i < QP_ARRAY_SIZE(fds); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}

struct find_ctx {
	const char *key;
	char names[VM_SPARES_MAX][16];
	int n;
};

static void find_one(void *ctx, int sd, const struct vm_spare_info *in)
{
	struct find_ctx *c = ctx;

	(void)sd;
	if (in->free && !strcmp(in->key, c->key) && c->n < VM_SPARES_MAX)
		snprintf(c->names[c->n++], sizeof(c->names[0]), "%s", in->name);
}

/* Ask spare NAME's holder for it: 1 taken, 0 gone or refused (another
 * taker was first, it failed: the next one then), -1 an error of ours. */
static int ask(int sd, const char *name, const char *pod_id, const char *cgroup, struct vm_spare_taken *t,
	       qp_error **err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char reply[QP_REPORT_MAX], accel[8], req[QP_ID_MAX + QP_CGROUP_PATH_MAX + 16];
	const char *rest;
	qp_error *why = NULL;
	int fd, chan = -1;

	if ((t->dirfd = openat(sd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return 0;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/%s", t->dirfd, QP_SPARE_TAKE_SOCK);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return qp_fail(err, errno, "socket");
	t->holder_fd = fd;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return 0; /* taken meanwhile, or its holder is gone */
	/* two lines (spare.c); no SIGPIPE from a holder that went away */
	int len = snprintf(req, sizeof(req), "take %s\n%s\n", pod_id, cgroup ? cgroup : "");
	if (len < 0 || (size_t)len >= sizeof(req) || send(fd, req, (size_t)len, MSG_NOSIGNAL) != len)
		return 0;
	struct pollfd p = { .fd = fd, .events = POLLIN };
	if (poll(&p, 1, TAKE_REPLY_MS) != 1)
		return 0;
	ssize_t n = qp_recv_with_fd(fd, reply, sizeof(reply) - 1, &chan);
	if (n <= 0) {
		if (chan >= 0)
			close(chan);
		return 0;
	}
	reply[n] = '\0';
	if (qp_report_parse(reply, &rest, "the spare's holder sent nothing", &why) < 0 || chan < 0 ||
	    sscanf(rest, "%d %llu %7s", &t->qemu, &t->qemu_start, accel) != 3 || t->qemu <= 0 ||
	    proc_start_time(t->qemu) != t->qemu_start) {
		qp_debug("spare %s: not taken: %s", name, why && why->msg ? why->msg : "a malformed answer");
		qp_error_free(&why);
		if (chan >= 0)
			close(chan);
		return 0;
	}
	t->chan_fd = chan;
	t->kvm = !strcmp(accel, "kvm");
	snprintf(t->name, sizeof(t->name), "%s", name);
	return 1;
}

/* The share's path as QEMU (and its jail) see it: the spare dir's. */
static int share_path(struct vm_spare_taken *t, qp_error **err)
{
	char link[64], dir[PATH_MAX];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", t->dirfd);
	n = readlink(link, dir, sizeof(dir) - 1);
	if (n <= 0 || (size_t)n >= sizeof(dir) - 1)
		return qp_fail(err, n < 0 ? errno : ENAMETOOLONG, "spare %s: its path", t->name);
	dir[n] = '\0';
	if ((size_t)snprintf(t->share, sizeof(t->share), "%s/share", dir) >= sizeof(t->share))
		return qp_fail(err, ENAMETOOLONG, "spare %s: its path", t->name);
	return 0;
}

int vm_spare_take(int rootfd, const char *key, const char *pod_id, const char *cgroup,
		  struct vm_spare_taken *out, qp_error **err)
{
	struct find_ctx c = { .key = key };
	qp_error *e = NULL;

	*out = (struct vm_spare_taken){ .chan_fd = -1, .holder_fd = -1, .dirfd = -1, .sd = -1 };
	/* the request's lines: such a cgroup's pod boots without a spare */
	if (cgroup && strchr(cgroup, '\n'))
		return 0;
	if (vm_spares_each(rootfd, find_one, &c, &e) < 0) {
		/* an unreadable spares dir costs this pod its spare, not its start */
		qp_debug("spares: %s", e && e->msg ? e->msg : "?");
		qp_error_free(&e);
		return 0;
	}
	if (!c.n || (out->sd = vm_spares_open(rootfd, false, NULL)) < 0)
		return 0;
	for (int i = 0; i < c.n; i++) {
		int r = ask(out->sd, c.names[i], pod_id, cgroup, out, err);
		/* ours now: it goes with this pod's failure (the holder stops
		 * QEMU when the taker's end of its connection closes) */
		if (r > 0 && share_path(out, err) < 0)
			r = -1;
		if (r != 0) {
			if (r < 0)
				vm_spare_taken_close(out);
			return r;
		}
		if (out->holder_fd >= 0)
			close(out->holder_fd);
		if (out->dirfd >= 0)
			close(out->dirfd);
		out->holder_fd = out->dirfd = -1;
	}
	vm_spare_taken_close(out);
	return 0;
}

int vm_spare_bind_rootfs(pid_t qemu, const char *share, const char *rootfs, bool ro, qp_error **err)
{
	char target[PATH_MAX];

	if ((size_t)snprintf(target, sizeof(target), "%s/%s", share, QP_PROTO_SUBDIR) >= sizeof(target))
		return qp_fail(err, ENAMETOOLONG, "bind the rootfs");
	return vm_qemu_ns_bind(qemu, rootfs, target, ro, err) < 0 ? qp_error_prefix(err, "bind the rootfs") : 0;
}
