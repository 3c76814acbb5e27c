/* runtime/host/cgroup/cgroup_v1.c — the cgroup v1 backend, for legacy and
 * hybrid hosts: one directory per mounted controller hierarchy (memory, cpu,
 * cpuacct, pids, cpuset, devices, freezer, blkio; co-mounts such as
 * "cpu,cpuacct" are counted once; systemd's named one and a hybrid host's
 * unified tree for membership only), cpuset.cpus/mems copied down so tasks can
 * join, and the leaf of each controller as struct qp_cg_leaves (the limits
 * are written by cgroup_limits.c, the freezer driven by freeze.c). */
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

#include "host/cgroup/cgroup.h"
#include "util/cleanup.h"
#include "util/log.h"

#ifndef CGROUP_SUPER_MAGIC
#define CGROUP_SUPER_MAGIC 0x27e0eb
#endif
#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif


/* The last two hold no controller: systemd's named hierarchy and, on a
 * hybrid host, the empty cgroup2 tree.  The pod gets its own directory
 * there too (as runc does), so that its view of them (cgroup_mount.c) is its
 * own cgroup and not the host's, with every other tenant's names below. */
static const char *const controllers[] = {
	"memory", "cpu", "cpuacct", "pids", "cpuset", "devices", "freezer", "blkio",
	"systemd", "unified",
};
#define N_CTRL QP_ARRAY_SIZE(controllers)

/* the mounted hierarchies, each an open directory fd */
struct v1_hier {
	const char *name;
	int fd;
};
struct v1_set {
	size_t n;
	struct v1_hier h[N_CTRL];
};

static bool membership_only(const char *name)
{
	return !strcmp(name, "systemd") || !strcmp(name, "unified");
}

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
		bool v2 = !strcmp(controllers[i], "unified");

		if (fd < 0)
			continue;
		if (fstatfs(fd, &sf) < 0 ||
		    sf.f_type != (v2 ? CGROUP2_SUPER_MAGIC : CGROUP_SUPER_MAGIC) || fstat(fd, &st) < 0) {
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

/* leaves[i] is the leaf fd in s->h[i] (or -1) */
static int leaf_of(const struct v1_set *s, const int *leaves, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->h[i].name, name))
			return leaves[i];
	return -1;
}

/* The per-controller view of the leaves (dup'ed: l owns its fds). */
static int fill_leaves(const struct v1_set *s, const int *leaves, const struct qp_cgroup *cg,
		       struct qp_cg_leaves *l, qp_error **err)
{
	static const char *const names[QP_CG_ANY] = {
		[QP_CG_MEMORY] = "memory", [QP_CG_CPU] = "cpu",   [QP_CG_CPUACCT] = "cpuacct",
		[QP_CG_CPUSET] = "cpuset", [QP_CG_PIDS] = "pids", [QP_CG_FREEZER] = "freezer",
		[QP_CG_DEVICES] = "devices", [QP_CG_BLKIO] = "blkio",
	};
	int any = -1;

	l->mode = QP_CGROUP_V1;
	snprintf(l->why, sizeof(l->why), "not mounted under %s", cg->root);
	for (size_t c = 0; c < QP_CG_N; c++)
		l->fd[c] = -1;
	for (size_t i = 0; i < s->n && any < 0; i++)
		any = leaves[i];
	for (size_t c = 0; c < QP_CG_N; c++) {
		int fd = c == QP_CG_ANY ? any : leaf_of(s, leaves, names[c]);
		/* cpuacct co-mounted with cpu ("cpu,cpuacct") counts once, as cpu */
		if (c == QP_CG_CPUACCT && fd < 0 && l->fd[QP_CG_CPU] >= 0 &&
		    qp_cg_has_file(l->fd[QP_CG_CPU], "cpuacct.usage"))
			fd = l->fd[QP_CG_CPU];
		if (fd >= 0 && (l->fd[c] = fcntl(fd, F_DUPFD_CLOEXEC, 3)) < 0) {
			qp_cg_leaves_close(l);
			return qp_fail(err, errno, "dup");
		}
	}
	return 0;
}

static int set_limits(const struct v1_set *s, const int *leaves, const struct qp_cgroup *cg,
		      const struct qp_resources *res, qp_error **err)
{
	_cleanup_leaves_ struct qp_cg_leaves l = QP_CG_LEAVES_INIT;

	if (!res)
		return 0;
	if (fill_leaves(s, leaves, cg, &l, err) < 0)
		return -1;
	return qp_cg_set_limits(&l, res, err);
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

/* Hierarchy h's part of entry e: pass 0 opens what exists, pass 1 makes
 * what a membership-only hierarchy lacks. */
static int entry_open_one(const struct v1_hier *h, struct qp_cgroup *cg, struct qp_cgroup_entry *e, bool whole,
			  bool make, bool *made, qp_error **err)
{
	/* cgroup2 has no "tasks": its cgroup.procs moves the whole process,
	 * which is all a controller-less tree needs */
	bool v2 = !strcmp(h->name, "unified");
	const char *file = whole || v2 ? "cgroup.procs" : "tasks";
	_cleanup_close_ int dir = -1;
	int fd;

	for (size_t j = 0; j < e->n; j++)
		if (!strcmp(e->name[j], h->name))
			return 0; /* pass 0 did it */
	dir = qp_cg_openpath(h->fd, cg->path, NULL);
	if (dir < 0 && errno == ENOENT && membership_only(h->name)) {
		if (!make)
			return 0;
		/* (or a concurrent joiner made it meanwhile) */
		if ((dir = qp_cg_mkpath(h->fd, cg->path, NULL, NULL, NULL)) < 0)
			dir = qp_cg_openpath(h->fd, cg->path, NULL);
		else
			*made = true;
	}
	if (dir < 0)
		qp_fail(err, errno, "open \"%s\"", cg->path);
	fd = dir < 0 ? -1 : openat(dir, file, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	if (dir >= 0 && fd < 0)
		qp_fail(err, errno, "open %s", file);
	if (fd < 0)
		return qp_error_prefix(err, "%s", h->name);
	e->fd[e->n] = fd;
	e->name[e->n++] = h->name;
	return 0;
}

static int v1_entry_open(struct qp_cgroup *cg, struct qp_cgroup_entry *e, bool whole, qp_error **err)
{
	_cleanup_v1set_ struct v1_set s = { 0 };

	if (v1_hierarchies(cg->root, &s, err) < 0)
		return -1;
	_Static_assert(N_CTRL <= QP_CGROUP_ENTRY_MAX, "an entry per hierarchy");
	/* a cgroup made before qpod joined those two (an older pod,
	 * qpod/spares) has no directory there: it gets one, once all the
	 * others opened (nothing is made for an entry that fails) */
	bool made[N_CTRL] = { false };
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < s.n; i++) {
			if (entry_open_one(&s.h[i], cg, e, whole, pass == 1, &made[i], err) == 0)
				continue;
			for (size_t j = 0; j < s.n; j++)
				if (made[j])
					qp_cg_remove(s.h[j].fd, cg->path, NULL);
			return -1;
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

static int v1_leaves(struct qp_cgroup *cg, struct qp_cg_leaves *l, qp_error **err)
{
	_cleanup_v1set_ struct v1_set s = { 0 };
	int leaves[N_CTRL];
	int r;

	if (v1_hierarchies(cg->root, &s, err) < 0)
		return -1;
	for (size_t i = 0; i < N_CTRL; i++)
		leaves[i] = i < s.n ? qp_cg_openpath(s.h[i].fd, cg->path, NULL) : -1;
	r = fill_leaves(&s, leaves, cg, l, err);
	close_all(leaves, s.n);
	if (r == 0 && l->fd[QP_CG_ANY] < 0) {
		qp_cg_leaves_close(l);
		return qp_error_set(err, QP_E_NOTFOUND, 0, "does not exist");
	}
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

static int v1_roots(struct qp_cgroup *cg, int *fds, size_t max, qp_error **err)
{
	_cleanup_v1set_ struct v1_set s = { 0 };
	size_t n = 0;

	if (v1_hierarchies(cg->root, &s, err) < 0)
		return -1;
	for (size_t i = 0; i < s.n && n < max; i++) {
		fds[n] = s.h[i].fd;
		s.h[i].fd = -1; /* the caller's now */
		n++;
	}
	return (int)n;
}

const struct qp_cgroup_ops qp_cgroup_v1_ops = {
	.create = v1_create,
	.exists = v1_exists,
	.entry_open = v1_entry_open,
	.pids = v1_pids,
	.leaves = v1_leaves,
	.destroy = v1_destroy,
	.roots = v1_roots,
	.memory_usage = v1_memory_usage,
	.oom_kills = v1_oom_kills,
};
