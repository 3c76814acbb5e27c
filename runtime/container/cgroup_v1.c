/* runtime/container/cgroup_v1.c — the cgroup v1 backend, for legacy and
 * hybrid hosts: one directory per mounted controller hierarchy (memory, cpu,
 * cpuacct, pids, cpuset, devices, freezer, blkio; co-mounts such as
 * "cpu,cpuacct" are counted once), cpuset.cpus/mems copied down so tasks can
 * join, limits in memory.limit_in_bytes / memory.memsw.limit_in_bytes /
 * cpu.shares / cpu.cfs_* / cpuset.* / pids.max, and signalling through the
 * freezer so nothing forks past a signal. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "container/cgroup.h"
#include "util/cleanup.h"
#include "util/log.h"

#ifndef CGROUP_SUPER_MAGIC
#define CGROUP_SUPER_MAGIC 0x27e0eb
#endif

#define FREEZE_TIMEOUT_MS 1000
#define SIGNAL_PASSES 5

static const char *const controllers[] = {
	"memory", "cpu", "cpuacct", "pids", "cpuset", "devices", "freezer", "blkio",
};
#define N_CTRL QP_ARRAY_SIZE(controllers)

/* the mounted hierarchies, each an open directory fd */
struct v1_set {
	size_t n;
	struct {
		const char *name;
		int fd;
	} h[N_CTRL];
};

static void v1_set_close(struct v1_set *s)
{
	int e = errno;
	for (size_t i = 0; i < s->n; i++)
		close(s->h[i].fd);
	s->n = 0;
	errno = e;
}
#define _cleanup_v1set_ __attribute__((cleanup(v1_set_close)))

static int v1_hierarchies(const char *root, struct v1_set *s, qp_error **err)
{
	_cleanup_close_ int rootfd = qp_cg_open_root(root, err);
	dev_t devs[N_CTRL];

	s->n = 0;
	if (rootfd < 0)
		return -1;
	for (size_t i = 0; i < N_CTRL; i++) {
		/* follows a top-level symlink: "cpu -> cpu,cpuacct" */
		int fd = openat(rootfd, controllers[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		struct statfs sf;
		struct stat st;
		bool dup = false;

		if (fd < 0)
			continue;
		if (fstatfs(fd, &sf) < 0 || sf.f_type != CGROUP_SUPER_MAGIC || fstat(fd, &st) < 0) {
			close(fd);
			continue;
		}
		for (size_t j = 0; j < s->n; j++)
			dup |= devs[j] == st.st_dev;
		if (dup) {
			close(fd);
			continue;
		}
		devs[s->n] = st.st_dev;
		s->h[s->n].name = controllers[i];
		s->h[s->n].fd = fd;
		s->n++;
	}
	if (s->n == 0)
		return qp_error_set(err, QP_E_NOTFOUND, 0, "no cgroup v1 controller is mounted under %s",
				    root);
	return 0;
}

static int v1_find(const struct v1_set *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->h[i].name, name))
			return s->h[i].fd;
	return -1;
}

/* the leaf directory in hierarchy NAME, or -1 (QP_E_NOTFOUND when absent) */
static int v1_leaf(const struct v1_set *s, const struct qp_cgroup *cg, const char *name,
		   qp_error **err)
{
	int hfd = v1_find(s, name);
	if (hfd < 0)
		return qp_error_set(err, QP_E_NOTFOUND, 0,
				    "the %s controller is not mounted under %s", name, cg->root);
	return qp_cg_openpath(hfd, cg->path, err);
}

/* A new cpuset cgroup has empty cpus/mems and no task may join it: copy the
 * parent's, at every level we walk through. */
static int cpuset_hook(int parentfd, int childfd, bool leaf __attribute__((unused)),
		       void *ud __attribute__((unused)), qp_error **err)
{
	static const char *const files[] = { "cpuset.cpus", "cpuset.mems" };

	for (size_t i = 0; i < QP_ARRAY_SIZE(files); i++) {
		char cur[4096], up[4096];
		if (qp_cg_read(childfd, files[i], cur, sizeof(cur), err) < 0)
			return -1;
		if (cur[0])
			continue;
		if (qp_cg_read(parentfd, files[i], up, sizeof(up), err) < 0 ||
		    qp_cg_write(childfd, files[i], up, err) < 0)
			return -1;
	}
	return 0;
}

static int need(const struct v1_set *s, const struct qp_cgroup *cg, const char *ctrl,
		const char *what, qp_error **err)
{
	if (v1_find(s, ctrl) >= 0)
		return 0;
	return qp_error_set(err, QP_E_INVALID, 0,
			    "%s was requested but the %s controller is not available (not mounted under %s)",
			    what, ctrl, cg->root);
}

/* leaves[i] is the leaf fd in s->h[i] */
static int leaf_of(const struct v1_set *s, const int *leaves, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->h[i].name, name))
			return leaves[i];
	return -1;
}

static int set_memory(const struct v1_set *s, const int *leaves, const struct qp_cgroup *cg,
		      const struct qp_resources *res, qp_error **err)
{
	int fd = leaf_of(s, leaves, "memory");
	char buf[32];

	if (!res->has_memory_limit && !res->has_memory_swap)
		return 0;
	if (need(s, cg, "memory", "a memory limit", err) < 0)
		return -1;
	/* limit first: memsw may never be below it */
	if (res->has_memory_limit &&
	    qp_cg_write(fd, "memory.limit_in_bytes",
			qp_cgroup_limit_str(res->memory_limit, "-1", buf, sizeof(buf)), err) < 0)
		return -1;
	if (!res->has_memory_swap)
		return 0;
	if (!qp_cg_has_file(fd, "memory.memsw.limit_in_bytes")) {
		qp_warn("cgroup: no memory.memsw.limit_in_bytes (swap accounting off); "
			"swap limit ignored");
		return 0;
	}
	return qp_cg_write(fd, "memory.memsw.limit_in_bytes",
			   qp_cgroup_limit_str(res->memory_swap, "-1", buf, sizeof(buf)), err);
}

static int set_cpu(const struct v1_set *s, const int *leaves, const struct qp_cgroup *cg,
		   const struct qp_resources *res, qp_error **err)
{
	int fd = leaf_of(s, leaves, "cpu");
	bool shares = res->has_cpu_shares && res->cpu_shares > 0;
	char buf[32];

	if (!shares && !res->has_cpu_quota && !res->has_cpu_period)
		return 0;
	if (need(s, cg, "cpu", "a cpu limit", err) < 0)
		return -1;
	if (shares) {
		snprintf(buf, sizeof(buf), "%" PRIu64, res->cpu_shares);
		if (qp_cg_write(fd, "cpu.shares", buf, err) < 0)
			return -1;
	}
	/* period before quota, as the kernel checks quota against it */
	if (res->has_cpu_period && res->cpu_period > 0) {
		snprintf(buf, sizeof(buf), "%" PRIu64, res->cpu_period);
		if (qp_cg_write(fd, "cpu.cfs_period_us", buf, err) < 0)
			return -1;
	}
	if (res->has_cpu_quota &&
	    qp_cg_write(fd, "cpu.cfs_quota_us",
			qp_cgroup_limit_str(res->cpu_quota > 0 ? res->cpu_quota : -1, "-1", buf,
					    sizeof(buf)),
			err) < 0)
		return -1;
	return 0;
}

static int set_limits(const struct v1_set *s, const int *leaves, const struct qp_cgroup *cg,
		      const struct qp_resources *res, qp_error **err)
{
	char buf[32];

	if (!res)
		return 0;
	if (set_memory(s, leaves, cg, res, err) < 0 || set_cpu(s, leaves, cg, res, err) < 0)
		return -1;
	if (res->cpuset_cpus || res->cpuset_mems) {
		int fd = leaf_of(s, leaves, "cpuset");
		if (need(s, cg, "cpuset", "a cpuset", err) < 0)
			return -1;
		if (res->cpuset_cpus && qp_cg_write(fd, "cpuset.cpus", res->cpuset_cpus, err) < 0)
			return -1;
		if (res->cpuset_mems && qp_cg_write(fd, "cpuset.mems", res->cpuset_mems, err) < 0)
			return -1;
	}
	if (res->has_pids_limit) {
		int64_t lim = res->pids_limit > 0 ? res->pids_limit : -1;
		if (need(s, cg, "pids", "a pids limit", err) < 0 ||
		    qp_cg_write(leaf_of(s, leaves, "pids"), "pids.max",
				qp_cgroup_limit_str(lim, "max", buf, sizeof(buf)), err) < 0)
			return -1;
	}
	return 0;
}

static void close_all(int *fds, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

static int v1_create(struct qp_cgroup *cg, const struct qp_resources *res, qp_error **err)
{
	_cleanup_v1set_ struct v1_set s = { 0 };
	int leaves[N_CTRL];
	size_t i;
	int r = 0;

	if (v1_hierarchies(cg->root, &s, err) < 0)
		return -1;
	for (i = 0; i < s.n; i++) {
		bool cpuset = !strcmp(s.h[i].name, "cpuset");
		leaves[i] = qp_cg_mkpath(s.h[i].fd, cg->path, cpuset ? cpuset_hook : NULL, NULL, err);
		if (leaves[i] < 0) {
			if (err && *err && (*err)->code != QP_E_EXISTS)
				qp_error_prefix(err, "%s", s.h[i].name);
			break;
		}
	}
	if (i == s.n)
		r = set_limits(&s, leaves, cg, res, err);
	else
		r = -1;
	close_all(leaves, i);
	if (r < 0) /* undo the leaves this call created (an existing one is not ours) */
		for (size_t j = 0; j < i; j++)
			qp_cg_remove(s.h[j].fd, cg->path, NULL);
	return r;
}

static int v1_exists(struct qp_cgroup *cg, qp_error **err)
{
	_cleanup_v1set_ struct v1_set s = { 0 };

	if (v1_hierarchies(cg->root, &s, err) < 0)
		return -1;
	for (size_t i = 0; i < s.n; i++) {
		int fd = qp_cg_openpath(s.h[i].fd, cg->path, NULL);
		if (fd >= 0) {
			close(fd);
			return 0;
		}
	}
	return qp_error_set(err, QP_E_NOTFOUND, 0, "does not exist");
}

static int v1_enter(struct qp_cgroup *cg, pid_t pid, qp_error **err)
{
	_cleanup_v1set_ struct v1_set s = { 0 };
	char buf[32];

	if (v1_hierarchies(cg->root, &s, err) < 0)
		return -1;
	snprintf(buf, sizeof(buf), "%d", (int)pid);
	for (size_t i = 0; i < s.n; i++) {
		_cleanup_close_ int fd = qp_cg_openpath(s.h[i].fd, cg->path, err);
		if (fd < 0 || qp_cg_write(fd, "cgroup.procs", buf, err) < 0)
			return qp_error_prefix(err, "%s", s.h[i].name);
	}
	return 0;
}

/* the leaf of the first hierarchy that has it (all hold the same tasks) */
static int any_leaf(const struct v1_set *s, const struct qp_cgroup *cg, qp_error **err)
{
	for (size_t i = 0; i < s->n; i++) {
		int fd = qp_cg_openpath(s->h[i].fd, cg->path, NULL);
		if (fd >= 0)
			return fd;
	}
	return qp_error_set(err, QP_E_NOTFOUND, 0, "does not exist");
}

static int v1_pids(struct qp_cgroup *cg, pid_t **pids, size_t *n, qp_error **err)
{
	_cleanup_v1set_ struct v1_set s = { 0 };
	_cleanup_close_ int fd = -1;

	if (v1_hierarchies(cg->root, &s, err) < 0 || (fd = any_leaf(&s, cg, err)) < 0)
		return -1;
	return qp_cg_collect_pids(fd, pids, n, err);
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
	return (x > y) - (x < y);
}

/* Without a freezer: signal, look again, signal the newcomers (pids not in
 * the previous, sorted, list), a few times. */
static int signal_passes(int fd, int sig, qp_error **err)
{
	_cleanup_free_ pid_t *prev = NULL;
	size_t nprev = 0;

	for (int pass = 0; pass < SIGNAL_PASSES; pass++) {
		pid_t *pids = NULL;
		size_t n = 0, fresh = 0;

		if (qp_cg_collect_pids(fd, &pids, &n, err) < 0)
			return -1;
		for (size_t i = 0; i < n; i++) {
			if (nprev && bsearch(&pids[i], prev, nprev, sizeof(*prev), cmp_pid))
				continue;
			if (qp_cg_kill_list(&pids[i], 1, sig, err) < 0) {
				free(pids);
				return -1;
			}
			fresh++;
		}
		free(prev);
		prev = pids;
		nprev = n;
		if (!fresh)
			break;
	}
	return 0;
}

static int v1_signal_all(struct qp_cgroup *cg, int sig, qp_error **err)
{
	_cleanup_v1set_ struct v1_set s = { 0 };
	_cleanup_close_ int fz = -1, fd = -1;
	_cleanup_free_ pid_t *pids = NULL;
	size_t n = 0;
	int r;

	if (v1_hierarchies(cg->root, &s, err) < 0)
		return -1;
	if (v1_find(&s, "freezer") >= 0)
		fz = v1_leaf(&s, cg, "freezer", NULL);
	if (fz < 0) {
		if ((fd = any_leaf(&s, cg, err)) < 0)
			return -1;
		return signal_passes(fd, sig, err);
	}
	if (qp_cg_write(fz, "freezer.state", "FROZEN", err) < 0)
		return -1;
	if (!qp_cg_wait_for(fz, "freezer.state", NULL, "FROZEN", FREEZE_TIMEOUT_MS))
		qp_debug("cgroup \"%s\": not frozen after %d ms, signalling anyway", cg->path,
			 FREEZE_TIMEOUT_MS);
	r = qp_cg_collect_pids(fz, &pids, &n, err);
	if (r == 0)
		r = qp_cg_kill_list(pids, n, sig, err);
	/* always thaw: a frozen pod would hang, and SIGKILL lands on thaw */
	if (qp_cg_write(fz, "freezer.state", "THAWED", r < 0 ? NULL : err) < 0)
		r = -1;
	return r;
}

static int v1_destroy(struct qp_cgroup *cg, qp_error **err)
{
	_cleanup_v1set_ struct v1_set s = { 0 };
	int r = 0;

	if (v1_hierarchies(cg->root, &s, err) < 0)
		return -1;
	/* the freezer first, so that no frozen task keeps another hierarchy busy */
	for (size_t pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < s.n; i++) {
			if ((pass == 0) != !strcmp(s.h[i].name, "freezer"))
				continue;
			if (qp_cg_remove(s.h[i].fd, cg->path, r < 0 ? NULL : err) < 0) {
				if (r == 0)
					qp_error_prefix(err, "%s", s.h[i].name);
				r = -1; /* go on: remove what can be removed */
			}
		}
	return r;
}

static int v1_memory_usage(struct qp_cgroup *cg, uint64_t *bytes, qp_error **err)
{
	_cleanup_v1set_ struct v1_set s = { 0 };
	_cleanup_close_ int fd = -1;

	if (v1_hierarchies(cg->root, &s, err) < 0 || (fd = v1_leaf(&s, cg, "memory", err)) < 0)
		return -1;
	return qp_cg_read_u64(fd, "memory.usage_in_bytes", bytes, err);
}

static int v1_oom_kills(struct qp_cgroup *cg, uint64_t *n, qp_error **err)
{
	_cleanup_v1set_ struct v1_set s = { 0 };
	_cleanup_close_ int fd = -1;

	if (v1_hierarchies(cg->root, &s, err) < 0 || (fd = v1_leaf(&s, cg, "memory", err)) < 0)
		return -1;
	return qp_cg_read_key(fd, "memory.oom_control", "oom_kill", n, err);
}

const struct qp_cgroup_ops qp_cgroup_v1_ops = {
	.create = v1_create,
	.exists = v1_exists,
	.enter = v1_enter,
	.pids = v1_pids,
	.signal_all = v1_signal_all,
	.destroy = v1_destroy,
	.memory_usage = v1_memory_usage,
	.oom_kills = v1_oom_kills,
};
