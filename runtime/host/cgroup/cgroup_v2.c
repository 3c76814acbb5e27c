/* runtime/host/cgroup/cgroup_v2.c — the cgroup v2 (unified) backend: one tree,
 * controllers enabled through every ancestor's cgroup.subtree_control, and
 * the leaf's controllers as struct qp_cg_leaves (the limits are written by
 * cgroup_limits.c, the freezer driven by freeze.c).  A tree without controllers (such as the empty unified tree of
 * a hybrid host) still works for grouping; asking it for a limit is an error
 * that names the missing controller. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/cgroup/cgroup.h"
#include "util/cleanup.h"
#include "util/log.h"

/* the controllers a pod's limits need, enabled where the kernel offers them */
static const char *const wanted[] = { "cpuset", "cpu", "memory", "pids", "io" };

static int open_leaf(struct qp_cgroup *cg, qp_error **err)
{
	_cleanup_close_ int rootfd = qp_cg_open_root(cg->root, err);
	if (rootfd < 0)
		return -1;
	return qp_cg_openpath(rootfd, cg->path, err);
}

/* Enable in dirfd's subtree_control every wanted controller it has.  A
 * failure (EBUSY: processes inside; EINVAL: unusable here) is only logged:
 * the leaf then lacks the controller and a limit needing it says so. */
static void enable_controllers(int dirfd)
{
	char have[1024], on[1024];

	if (qp_cg_read(dirfd, "cgroup.controllers", have, sizeof(have), NULL) < 0)
		return;
	if (qp_cg_read(dirfd, "cgroup.subtree_control", on, sizeof(on), NULL) < 0)
		on[0] = '\0';
	for (size_t i = 0; i < QP_ARRAY_SIZE(wanted); i++) {
		char word[32];
		qp_error *e = NULL;

		if (!qp_cg_word_in(have, wanted[i]) || qp_cg_word_in(on, wanted[i]))
			continue;
		snprintf(word, sizeof(word), "+%s", wanted[i]);
		if (qp_cg_write(dirfd, "cgroup.subtree_control", word, &e) < 0)
			qp_warn("cgroup: %s", e && e->msg ? e->msg : word);
		qp_error_free(&e);
	}
}

static int enable_hook(int parentfd __attribute__((unused)), int childfd, bool leaf,
		       void *ud __attribute__((unused)), qp_error **err __attribute__((unused)))
{
	if (!leaf)
		enable_controllers(childfd);
	return 0;
}

int qp_cg_leaves_v2(int fd, struct qp_cg_leaves *l, qp_error **err)
{
	static const char *const names[QP_CG_N] = {
		[QP_CG_MEMORY] = "memory", [QP_CG_CPU] = "cpu", [QP_CG_CPUSET] = "cpuset",
		[QP_CG_PIDS] = "pids", [QP_CG_BLKIO] = "io",
	};
	char avail[1024];

	if (qp_cg_read(fd, "cgroup.controllers", avail, sizeof(avail), err) < 0)
		return -1;
	l->mode = QP_CGROUP_V2;
	snprintf(l->why, sizeof(l->why), "cgroup.controllers: \"%s\"", avail);
	for (size_t c = 0; c < QP_CG_N; c++) {
		/* cpu.stat (usage) is in every v2 cgroup; the freezer needs cgroup.freeze */
		bool have = names[c] ? qp_cg_word_in(avail, names[c])
			    : c == QP_CG_FREEZER ? qp_cg_has_file(fd, "cgroup.freeze")
						 : true;
		l->fd[c] = have ? fcntl(fd, F_DUPFD_CLOEXEC, 3) : -1;
		if (have && l->fd[c] < 0) {
			qp_cg_leaves_close(l);
			return qp_fail(err, errno, "dup");
		}
	}
	return 0;
}

static int set_limits(int fd, const struct qp_resources *res, qp_error **err)
{
	_cleanup_leaves_ struct qp_cg_leaves l = QP_CG_LEAVES_INIT;

	if (!res)
		return 0;
	if (qp_cg_leaves_v2(fd, &l, err) < 0)
		return -1;
	return qp_cg_set_limits(&l, res, err);
}

static int v2_create(struct qp_cgroup *cg, const struct qp_resources *res, qp_error **err)
{
	_cleanup_close_ int rootfd = qp_cg_open_root(cg->root, err);
	_cleanup_close_ int leaf = -1;

	if (rootfd < 0)
		return -1;
	enable_controllers(rootfd);
	leaf = qp_cg_mkpath(rootfd, cg->path, enable_hook, NULL, err);
	if (leaf < 0)
		return -1;
	if (set_limits(leaf, res, err) < 0) {
		qp_cg_remove(rootfd, cg->path, NULL);
		return -1;
	}
	return 0;
}

static int v2_exists(struct qp_cgroup *cg, qp_error **err)
{
	_cleanup_close_ int fd = open_leaf(cg, NULL);

	if (fd >= 0)
		return 0;
	if (errno == ENOENT)
		return qp_error_set(err, QP_E_NOTFOUND, 0, "does not exist");
	return qp_fail(err, errno, "open \"%s/%s\"", cg->root, cg->path);
}

static int v2_entry_open(struct qp_cgroup *cg, struct qp_cgroup_entry *e, bool whole, qp_error **err)
{
	(void)whole; /* cgroup.procs moves a whole process either way */
	int dir = open_leaf(cg, err);
	int fd = dir < 0 ? -1 : openat(dir, "cgroup.procs", O_WRONLY | O_CLOEXEC | O_NOFOLLOW);

	if (dir < 0)
		return -1;
	e->dir_fd = dir;
	if (fd < 0)
		return qp_fail(err, errno, "open cgroup.procs");
	e->fd[0] = fd;
	e->name[0] = "unified";
	e->n = 1;
	return 0;
}

static int v2_pids(struct qp_cgroup *cg, pid_t **pids, size_t *n, qp_error **err)
{
	_cleanup_close_ int fd = open_leaf(cg, err);
	if (fd < 0)
		return -1;
	return qp_cg_collect_pids(fd, pids, n, err);
}

static int v2_leaves(struct qp_cgroup *cg, struct qp_cg_leaves *l, qp_error **err)
{
	_cleanup_close_ int fd = open_leaf(cg, NULL);

	if (fd < 0)
		return errno == ENOENT ? qp_error_set(err, QP_E_NOTFOUND, 0, "does not exist")
				       : qp_fail(err, errno, "open \"%s/%s\"", cg->root, cg->path);
	return qp_cg_leaves_v2(fd, l, err);
}

static int v2_destroy(struct qp_cgroup *cg, qp_error **err)
{
	_cleanup_close_ int rootfd = qp_cg_open_root(cg->root, err);
	if (rootfd < 0)
		return -1;
	return qp_cg_remove(rootfd, cg->path, err);
}

static int open_memory(struct qp_cgroup *cg, qp_error **err)
{
	int fd = open_leaf(cg, err);
	if (fd >= 0 && !qp_cg_has_file(fd, "memory.current")) {
		close(fd);
		return qp_error_set(err, QP_E_NOTFOUND, 0, "the memory controller is not available");
	}
	return fd;
}

static int v2_memory_usage(struct qp_cgroup *cg, uint64_t *bytes, qp_error **err)
{
	_cleanup_close_ int fd = open_memory(cg, err);
	return fd < 0 ? -1 : qp_cg_read_u64(fd, "memory.current", bytes, err);
}

static int v2_oom_kills(struct qp_cgroup *cg, uint64_t *n, qp_error **err)
{
	_cleanup_close_ int fd = open_memory(cg, err);
	return fd < 0 ? -1 : qp_cg_read_key(fd, "memory.events", "oom_kill", n, err);
}

static int v2_roots(struct qp_cgroup *cg, int *fds, size_t max, qp_error **err)
{
	if (max < 1)
		return 0;
	fds[0] = qp_cg_open_root(cg->root, err);
	return fds[0] < 0 ? -1 : 1;
}

const struct qp_cgroup_ops qp_cgroup_v2_ops = {
	.create = v2_create,
	.exists = v2_exists,
	.entry_open = v2_entry_open,
	.pids = v2_pids,
	.leaves = v2_leaves,
	.destroy = v2_destroy,
	.roots = v2_roots,
	.memory_usage = v2_memory_usage,
	.oom_kills = v2_oom_kills,
};
