/* runtime/container/cgroup_v2.c — the cgroup v2 (unified) backend: one tree,
 * controllers enabled through every ancestor's cgroup.subtree_control,
 * limits in memory.max / memory.swap.max / cpu.weight / cpu.max /
 * cpuset.cpus / cpuset.mems / pids.max, cgroup.kill and cgroup.freeze for
 * signalling.  A tree without controllers (such as the empty unified tree of
 * a hybrid host) still works for grouping; asking it for a limit is an error
 * that names the missing controller. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "container/cgroup.h"
#include "util/cleanup.h"
#include "util/log.h"

#define FREEZE_TIMEOUT_MS 1000

/* the controllers a pod's limits need, enabled where the kernel offers them */
static const char *const wanted[] = { "cpuset", "cpu", "memory", "pids" };

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

static int need(const char *avail, const char *ctrl, const char *what, qp_error **err)
{
	if (qp_cg_word_in(avail, ctrl))
		return 0;
	return qp_error_set(err, QP_E_INVALID, 0,
			    "%s was requested but the %s controller is not available "
			    "(cgroup.controllers: \"%s\")",
			    what, ctrl, avail);
}

static int set_memory(int fd, const char *avail, const struct qp_resources *res, qp_error **err)
{
	char buf[32];
	int64_t swap;
	int r;

	if (res->has_memory_limit) {
		if (need(avail, "memory", "a memory limit", err) < 0 ||
		    qp_cg_write(fd, "memory.max",
				qp_cgroup_limit_str(res->memory_limit, "max", buf, sizeof(buf)),
				err) < 0)
			return -1;
	}
	r = qp_cgroup_swap_max(res, &swap, err);
	if (r <= 0)
		return r;
	if (need(avail, "memory", "a swap limit", err) < 0)
		return -1;
	if (!qp_cg_has_file(fd, "memory.swap.max")) {
		qp_warn("cgroup: no memory.swap.max (swap accounting off); swap limit ignored");
		return 0;
	}
	return qp_cg_write(fd, "memory.swap.max", qp_cgroup_limit_str(swap, "max", buf, sizeof(buf)),
			   err);
}

static int set_cpu(int fd, const char *avail, const struct qp_resources *res, qp_error **err)
{
	char buf[64];
	uint64_t w = res->has_cpu_shares ? qp_cgroup_shares_to_weight(res->cpu_shares) : 0;
	int quota = qp_cgroup_cpu_max_str(res, buf, sizeof(buf));

	if (!w && !quota)
		return 0;
	if (need(avail, "cpu", "a cpu limit", err) < 0)
		return -1;
	if (w) {
		char wb[32];
		snprintf(wb, sizeof(wb), "%" PRIu64, w);
		if (qp_cg_write(fd, "cpu.weight", wb, err) < 0)
			return -1;
	}
	return quota ? qp_cg_write(fd, "cpu.max", buf, err) : 0;
}

static int set_limits(int fd, const struct qp_resources *res, qp_error **err)
{
	char avail[1024], buf[32];

	if (!res)
		return 0;
	if (qp_cg_read(fd, "cgroup.controllers", avail, sizeof(avail), err) < 0)
		return -1;
	if (set_memory(fd, avail, res, err) < 0 || set_cpu(fd, avail, res, err) < 0)
		return -1;
	if ((res->cpuset_cpus || res->cpuset_mems) && need(avail, "cpuset", "a cpuset", err) < 0)
		return -1;
	if (res->cpuset_cpus && qp_cg_write(fd, "cpuset.cpus", res->cpuset_cpus, err) < 0)
		return -1;
	if (res->cpuset_mems && qp_cg_write(fd, "cpuset.mems", res->cpuset_mems, err) < 0)
		return -1;
	if (res->has_pids_limit) {
		int64_t lim = res->pids_limit > 0 ? res->pids_limit : -1;
		if (need(avail, "pids", "a pids limit", err) < 0 ||
		    qp_cg_write(fd, "pids.max", qp_cgroup_limit_str(lim, "max", buf, sizeof(buf)),
				err) < 0)
			return -1;
	}
	return 0;
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

static int v2_enter(struct qp_cgroup *cg, pid_t pid, qp_error **err)
{
	_cleanup_close_ int fd = open_leaf(cg, err);
	char buf[32];

	if (fd < 0)
		return -1;
	snprintf(buf, sizeof(buf), "%d", (int)pid);
	return qp_cg_write(fd, "cgroup.procs", buf, err);
}

static int v2_pids(struct qp_cgroup *cg, pid_t **pids, size_t *n, qp_error **err)
{
	_cleanup_close_ int fd = open_leaf(cg, err);
	if (fd < 0)
		return -1;
	return qp_cg_collect_pids(fd, pids, n, err);
}

static int v2_signal_all(struct qp_cgroup *cg, int sig, qp_error **err)
{
	_cleanup_close_ int fd = open_leaf(cg, err);
	_cleanup_free_ pid_t *pids = NULL;
	bool frozen = false;
	size_t n = 0;
	int r;

	if (fd < 0)
		return -1;
	/* cgroup.kill (Linux 5.14) kills the whole subtree atomically */
	if (sig == SIGKILL && qp_cg_has_file(fd, "cgroup.kill"))
		return qp_cg_write(fd, "cgroup.kill", "1", err);
	/* otherwise freeze first so nothing forks past the signal */
	if (qp_cg_has_file(fd, "cgroup.freeze") && qp_cg_write(fd, "cgroup.freeze", "1", NULL) == 0) {
		frozen = true;
		if (!qp_cg_wait_for(fd, "cgroup.events", "frozen", "1", FREEZE_TIMEOUT_MS))
			qp_debug("cgroup \"%s\": not frozen after %d ms, signalling anyway",
				 cg->path, FREEZE_TIMEOUT_MS);
	}
	r = qp_cg_collect_pids(fd, &pids, &n, err);
	if (r == 0)
		r = qp_cg_kill_list(pids, n, sig, err);
	if (frozen && qp_cg_write(fd, "cgroup.freeze", "0", r < 0 ? NULL : err) < 0)
		r = -1;
	return r;
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

const struct qp_cgroup_ops qp_cgroup_v2_ops = {
	.create = v2_create,
	.exists = v2_exists,
	.enter = v2_enter,
	.pids = v2_pids,
	.signal_all = v2_signal_all,
	.destroy = v2_destroy,
	.memory_usage = v2_memory_usage,
	.oom_kills = v2_oom_kills,
};
