/* runtime/host/cgroup/cgroup.c — cgroup mode detection, path cleaning, the pure
 * translations of OCI limits into cgroup file values, and dispatch to the
 * v1/v2 backends (the file helpers they share: cgroup_files.c). */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "host/cgroup/cgroup.h"
#include "util/clock.h"
#include "util/cleanup.h"
#include "util/log.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

#define NAME_MAX_CG 255
#define CPUSET_MAX 4096

/* ---------------------------------------------------------------- detection */

const char *qp_cgroup_root(void)
{
	/* secure_getenv: a setuid/setcap qpod never takes the root from its caller */
	const char *r = secure_getenv("QPOD_CGROUP_ROOT");
	if (r && r[0] == '/' && strlen(r) < PATH_MAX)
		return r;
	return QP_CGROUP_DEFAULT_ROOT;
}

enum qp_cgroup_mode qp_cgroup_detect(void)
{
	struct statfs sf;
	if (statfs(qp_cgroup_root(), &sf) == 0 && sf.f_type == CGROUP2_SUPER_MAGIC)
		return QP_CGROUP_V2;
	return QP_CGROUP_V1;
}

/* ------------------------------------------------------- pure translations */

int qp_cgroup_clean_path(const char *path, char **out, qp_error **err)
{
	const char *p, *comp;
	size_t depth = 0;
	char *copy;

	if (!path || !*path)
		return qp_error_set(err, QP_E_INVALID, 0, "cgroup path is empty");
	if (strlen(path) > QP_CGROUP_PATH_MAX)
		return qp_error_set(err, QP_E_INVALID, 0, "cgroup path is longer than %u bytes",
				    QP_CGROUP_PATH_MAX);
	p = path[0] == '/' ? path + 1 : path;  /* absolute = from the hierarchy root */
	if (!*p)
		return qp_error_set(err, QP_E_INVALID, 0,
				    "cgroup path \"%s\": a pod cannot use the root cgroup", path);
	for (comp = p;; comp = p + 1) {
		size_t len;
		p = strchr(comp, '/');
		len = p ? (size_t)(p - comp) : strlen(comp);
		if (len == 0)
			return qp_error_set(err, QP_E_INVALID, 0,
					    "cgroup path \"%s\": empty component", path);
		if ((len == 1 && comp[0] == '.') || (len == 2 && comp[0] == '.' && comp[1] == '.'))
			return qp_error_set(err, QP_E_INVALID, 0,
					    "cgroup path \"%s\": \"%.*s\" is not allowed", path,
					    (int)len, comp);
		if (len > NAME_MAX_CG)
			return qp_error_set(err, QP_E_INVALID, 0,
					    "cgroup path \"%s\": component longer than %d bytes", path,
					    NAME_MAX_CG);
		for (size_t i = 0; i < len; i++)
			if ((unsigned char)comp[i] < 0x20 || comp[i] == 0x7f)
				return qp_error_set(err, QP_E_INVALID, 0,
						    "cgroup path: control character in a component");
		if (++depth > QP_CGROUP_MAX_DEPTH / 2)
			return qp_error_set(err, QP_E_INVALID, 0,
					    "cgroup path \"%s\": more than %d components", path,
					    QP_CGROUP_MAX_DEPTH / 2);
		if (!p)
			break;
	}
	copy = strdup(path[0] == '/' ? path + 1 : path);
	if (!copy)
		return qp_fail(err, ENOMEM, "cgroup path");
	*out = copy;
	return 0;
}

uint64_t qp_cgroup_shares_to_weight(uint64_t shares)
{
	if (shares == 0)
		return 0;
	if (shares < 2)
		shares = 2;
	if (shares > 262144)
		shares = 262144;
	return 1 + ((shares - 2) * 9999) / 262142;
}

const char *qp_cgroup_limit_str(int64_t v, const char *unlimited, char *buf, size_t len)
{
	if (v < 0)
		snprintf(buf, len, "%s", unlimited);
	else
		snprintf(buf, len, "%" PRId64, v);
	return buf;
}

int qp_cgroup_cpu_max_str(const struct qp_resources *res, char *buf, size_t len)
{
	uint64_t period = 100000;

	if (!res || (!res->has_cpu_quota && !res->has_cpu_period))
		return 0;
	if (res->has_cpu_period && res->cpu_period > 0)
		period = res->cpu_period;
	if (res->has_cpu_quota && res->cpu_quota > 0)
		snprintf(buf, len, "%" PRId64 " %" PRIu64, res->cpu_quota, period);
	else
		snprintf(buf, len, "max %" PRIu64, period);
	return 1;
}

int qp_cgroup_swap_max(const struct qp_resources *res, int64_t *out, qp_error **err)
{
	if (!res || !res->has_memory_swap)
		return 0;
	if (res->memory_swap < 0) {
		*out = -1;
		return 1;
	}
	if (!res->has_memory_limit || res->memory_limit < 0)
		return qp_error_set(err, QP_E_INVALID, 0,
				    "memory.swap (%" PRId64 ") needs a memory limit", res->memory_swap);
	if (res->memory_swap < res->memory_limit)
		return qp_error_set(err, QP_E_INVALID, 0,
				    "memory.swap (%" PRId64 ") is below memory.limit (%" PRId64 ")",
				    res->memory_swap, res->memory_limit);
	*out = res->memory_swap - res->memory_limit;
	return 1;
}

bool qp_cgroup_cpuset_valid(const char *s)
{
	size_t n = 0;

	if (!s || !*s)
		return false;
	for (; *s; s++, n++)
		if (n >= CPUSET_MAX || !(isdigit((unsigned char)*s) || *s == ',' || *s == '-'))
			return false;
	return true;
}

/* ------------------------------------------------------------- dispatch */

static int cg_new(const char *path, struct qp_cgroup **out, qp_error **err)
{
	struct qp_cgroup *cg = calloc(1, sizeof(*cg));

	if (!cg)
		return qp_fail(err, ENOMEM, "cgroup");
	if (qp_cgroup_clean_path(path, &cg->path, err) < 0) {
		free(cg);
		return -1;
	}
	cg->root = strdup(qp_cgroup_root());
	if (!cg->root) {
		qp_cgroup_free(cg);
		return qp_fail(err, ENOMEM, "cgroup");
	}
	cg->mode = qp_cgroup_detect();
	cg->ops = cg->mode == QP_CGROUP_V2 ? &qp_cgroup_v2_ops : &qp_cgroup_v1_ops;
	*out = cg;
	return 0;
}

static int check_resources(const struct qp_resources *res, qp_error **err)
{
	if (!res)
		return 0;
	if (res->cpuset_cpus && !qp_cgroup_cpuset_valid(res->cpuset_cpus))
		return qp_error_set(err, QP_E_INVALID, 0, "invalid cpuset.cpus \"%.64s\"",
				    res->cpuset_cpus);
	if (res->cpuset_mems && !qp_cgroup_cpuset_valid(res->cpuset_mems))
		return qp_error_set(err, QP_E_INVALID, 0, "invalid cpuset.mems \"%.64s\"",
				    res->cpuset_mems);
	if (res->has_memory_limit && res->memory_limit == 0)
		return qp_error_set(err, QP_E_INVALID, 0, "memory.limit of 0 bytes");
	return 0;
}

int qp_cgroup_create(const char *path, const struct qp_resources *res, struct qp_cgroup **out,
		     qp_error **err)
{
	struct qp_cgroup *cg = NULL;
	int64_t swap;

	if (cg_new(path, &cg, err) < 0)
		return -1;
	if (check_resources(res, err) < 0 || qp_cgroup_swap_max(res, &swap, err) < 0) {
		qp_error_prefix(err, "cgroup \"%s\"", cg->path);
		qp_cgroup_free(cg);
		return -1;
	}
	/* a parent removed by a concurrent destroy (see qp_cg_remove) makes
	 * the create fail with ENOENT: try again a few times */
	int r;
	for (int tries = 0; (r = cg->ops->create(cg, res, err)) < 0 && tries < 5; tries++)
		if (!*err || (*err)->errnum != ENOENT)
			break;
	if (r < 0) {
		qp_error_prefix(err, "cgroup \"%s\"", cg->path);
		qp_cgroup_free(cg);
		return -1;
	}
	qp_debug("cgroup \"%s\" created (%s, %s)", cg->path,
		 cg->mode == QP_CGROUP_V2 ? "v2" : "v1", cg->root);
	*out = cg;
	return 0;
}

int qp_cgroup_open(const char *path, struct qp_cgroup **out, qp_error **err)
{
	struct qp_cgroup *cg = NULL;

	if (cg_new(path, &cg, err) < 0)
		return -1;
	if (cg->ops->exists(cg, err) < 0) {
		qp_error_prefix(err, "cgroup \"%s\"", cg->path);
		qp_cgroup_free(cg);
		return -1;
	}
	*out = cg;
	return 0;
}

#define DISPATCH(call)                                                       \
	do {                                                                 \
		if (call < 0)                                                \
			return qp_error_prefix(err, "cgroup \"%s\"", cg->path); \
		return 0;                                                    \
	} while (0)

static int entry_open(struct qp_cgroup *cg, struct qp_cgroup_entry *e, bool whole, qp_error **err)
{
	e->n = 0;
	e->dir_fd = -1;
	if (cg->ops->entry_open(cg, e, whole, err) < 0) {
		qp_cgroup_entry_close(e);
		return qp_error_prefix(err, "cgroup \"%s\"", cg->path);
	}
	return 0;
}

int qp_cgroup_entry_open(struct qp_cgroup *cg, struct qp_cgroup_entry *e, qp_error **err)
{
	return entry_open(cg, e, false, err);
}

int qp_cgroup_entry_open_procs(struct qp_cgroup *cg, struct qp_cgroup_entry *e, qp_error **err)
{
	return entry_open(cg, e, true, err);
}

int qp_cgroup_entry_move(const struct qp_cgroup_entry *e, pid_t pid, qp_error **err)
{
	char buf[24];
	int n = snprintf(buf, sizeof(buf), "%d", (int)pid);

	for (size_t i = 0; i < e->n; i++)
		if (write(e->fd[i], buf, (size_t)n) != n)
			return qp_fail(err, errno, "move process %d into the pod's cgroup (%s)", (int)pid, e->name[i]);
	return 0;
}

int qp_cgroup_entry_use(const struct qp_cgroup_entry *e, qp_error **err)
{
	for (size_t i = 0; i < e->n; i++) {
		ssize_t n = write(e->fd[i], "0", 1);
		if (n != 1)
			return qp_fail(err, n < 0 ? errno : EIO, "enter the pod cgroup (%s)", e->name[i]);
	}
	return 0;
}

void qp_cgroup_entry_close(struct qp_cgroup_entry *e)
{
	int saved = errno;
	for (size_t i = 0; i < e->n; i++)
		close(e->fd[i]);
	e->n = 0;
	if (e->dir_fd >= 0)
		close(e->dir_fd);
	e->dir_fd = -1;
	errno = saved;
}

int qp_cgroup_pids(struct qp_cgroup *cg, pid_t **pids, size_t *n, qp_error **err)
{
	*pids = NULL;
	*n = 0;
	DISPATCH(cg->ops->pids(cg, pids, n, err));
}

int qp_cgroup_update(struct qp_cgroup *cg, const struct qp_resources *res, qp_error **err)
{
	struct qp_cg_leaves l = QP_CG_LEAVES_INIT;
	int64_t swap;
	int r;

	if (check_resources(res, err) < 0 || qp_cgroup_swap_max(res, &swap, err) < 0 ||
	    cg->ops->leaves(cg, &l, err) < 0)
		return qp_error_prefix(err, "cgroup \"%s\"", cg->path);
	r = qp_cg_set_limits(&l, res, err);
	qp_cg_leaves_close(&l);
	DISPATCH(r);
}

int qp_cgroup_destroy(struct qp_cgroup *cg, qp_error **err)
{
	DISPATCH(cg->ops->destroy(cg, err));
}

int qp_cgroup_memory_usage(struct qp_cgroup *cg, uint64_t *bytes, qp_error **err)
{
	DISPATCH(cg->ops->memory_usage(cg, bytes, err));
}

int qp_cgroup_oom_kills(struct qp_cgroup *cg, uint64_t *n, qp_error **err)
{
	DISPATCH(cg->ops->oom_kills(cg, n, err));
}

const char *qp_cgroup_path(const struct qp_cgroup *cg)
{
	return cg->path;
}

enum qp_cgroup_mode qp_cgroup_mode_of(const struct qp_cgroup *cg)
{
	return cg->mode;
}

void qp_cgroup_free(struct qp_cgroup *cg)
{
	if (!cg)
		return;
	free(cg->root);
	free(cg->path);
	free(cg);
}

void qp_cgroup_leave(struct qp_cgroup *cg)
{
	int fds[QP_CGROUP_ENTRY_MAX];
	int n = cg->ops->roots(cg, fds, QP_CGROUP_ENTRY_MAX, NULL);

	for (int i = 0; i < n; i++) {
		int procs = openat(fds[i], "cgroup.procs", O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
		/* EBUSY: others are still in it */
		if (procs >= 0 && write(procs, "0", 1) == 1 && unlinkat(fds[i], cg->path, AT_REMOVEDIR) == 0)
			qp_cg_remove_default_parent(fds[i], cg->path);
		if (procs >= 0)
			close(procs);
		close(fds[i]);
	}
}
