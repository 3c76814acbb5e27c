/* runtime/host/cgroup/cgroup_limits.c — the one writer of a pod's cgroup limits,
 * for v1 and v2 alike (crun's cgroup-resources.c is the model): memory and
 * swap, cpu shares/weight and quota, cpuset, pids.  The backends only find
 * the leaf directory of each controller (struct qp_cg_leaves); create and
 * update both come here, so a setting is written in one place. */
#include <inttypes.h>
#include <stdio.h>
#include <sys/sysinfo.h>
#include <string.h>

#include "host/cgroup/cgroup.h"
#include "util/log.h"

static const char *const ctrl_names[QP_CG_N] = {
	[QP_CG_MEMORY] = "memory", [QP_CG_CPU] = "cpu",	    [QP_CG_CPUACCT] = "cpuacct",
	[QP_CG_CPUSET] = "cpuset", [QP_CG_PIDS] = "pids",   [QP_CG_FREEZER] = "freezer",
	[QP_CG_DEVICES] = "devices", [QP_CG_BLKIO] = "blkio (v2: io)", [QP_CG_ANY] = "any",
};

int qp_cg_need(const struct qp_cg_leaves *l, enum qp_cg_ctrl c, const char *what, qp_error **err)
{
	if (l->fd[c] >= 0)
		return 0;
	return qp_error_set(err, QP_E_INVALID, 0,
			    "%s was requested but the %s controller is not available (%s)", what,
			    ctrl_names[c], l->why);
}

/* memory.checkBeforeUpdate: refuse a limit below what is in use now (v2
 * would OOM-kill instead of failing, v1 would reclaim for a while) */
static int check_usage(int fd, enum qp_cgroup_mode mode, int64_t limit, qp_error **err)
{
	uint64_t used;

	if (qp_cg_read_u64(fd, mode == QP_CGROUP_V2 ? "memory.current" : "memory.usage_in_bytes",
			   &used, err) < 0)
		return -1;
	if (used > (uint64_t)limit)
		return qp_error_set(err, QP_E_INVALID, 0,
				    "memory.limit %" PRId64 " is below the current usage %" PRIu64
				    " (memory.checkBeforeUpdate)",
				    limit, used);
	return 0;
}

/* Without swap accounting (no memory.swap.max, no memory.memsw.*) a swap
 * limit is honoured only when it asks for nothing: unlimited, or no swap
 * on a machine that has none.  Anything else is refused, not ignored. */
static int swap_unaccounted(const struct qp_resources *res, const char *file, qp_error **err)
{
	struct sysinfo si;
	int64_t swap = 0;
	int r = qp_cgroup_swap_max(res, &swap, err);

	if (r <= 0)
		return r;
	if (swap < 0 || (swap == 0 && sysinfo(&si) == 0 && si.totalswap == 0))
		return 0;
	return qp_error_set(err, QP_E_INVALID, 0,
			    "memory.swap: the kernel does not account swap per cgroup (no %s): "
			    "a swap limit cannot be applied",
			    file);
}

static int memory_v2(int fd, const struct qp_resources *res, qp_error **err)
{
	char buf[32];
	int64_t swap;
	int r;
	bool swap_file = qp_cg_has_file(fd, "memory.swap.max");

	/* a swap limit that cannot be applied is refused before memory.max is
	 * written, so a refused update changes nothing (as memory_v1) */
	if (!swap_file && swap_unaccounted(res, "memory.swap.max", err) < 0)
		return -1;
	if (res->has_memory_limit &&
	    qp_cg_write(fd, "memory.max", qp_cgroup_limit_str(res->memory_limit, "max", buf, sizeof(buf)),
			err) < 0)
		return -1;
	if (!swap_file)
		return 0;
	r = qp_cgroup_swap_max(res, &swap, err);
	if (r <= 0)
		return r;
	return qp_cg_write(fd, "memory.swap.max", qp_cgroup_limit_str(swap, "max", buf, sizeof(buf)),
			   err);
}

static int memory_v1(int fd, const struct qp_resources *res, qp_error **err)
{
	char lim[32], sw[32];
	bool swap_file = qp_cg_has_file(fd, "memory.memsw.limit_in_bytes");
	bool swap_first = false;

	qp_cgroup_limit_str(res->memory_limit, "-1", lim, sizeof(lim));
	qp_cgroup_limit_str(res->memory_swap, "-1", sw, sizeof(sw));
	if (res->has_memory_swap && !swap_file) {
		if (swap_unaccounted(res, "memory.memsw.limit_in_bytes", err) < 0)
			return -1;
	} else if (res->has_memory_swap && res->has_memory_limit) {
		/* memsw may never be below the limit: a rise of memsw goes first,
		 * a cut after the limit's */
		uint64_t cur;
		swap_first = qp_cg_read_u64(fd, "memory.memsw.limit_in_bytes", &cur, NULL) == 0 &&
			     (res->memory_swap < 0 || (uint64_t)res->memory_swap > cur);
	}
	if (swap_first && qp_cg_write(fd, "memory.memsw.limit_in_bytes", sw, err) < 0)
		return -1;
	if (res->has_memory_limit && qp_cg_write(fd, "memory.limit_in_bytes", lim, err) < 0)
		return -1;
	if (res->has_memory_swap && swap_file && !swap_first &&
	    qp_cg_write(fd, "memory.memsw.limit_in_bytes", sw, err) < 0)
		return -1;
	return 0;
}

/* reservation, swappiness, the OOM killer: v1 has a file for each; v2
 * has memory.low for the first and nothing for the others (refused) */
static int memory_soft(int fd, enum qp_cgroup_mode mode, const struct qp_resources *res,
		       qp_error **err)
{
	char buf[32];

	if (res->has_memory_reservation &&
	    qp_cg_write(fd, mode == QP_CGROUP_V2 ? "memory.low" : "memory.soft_limit_in_bytes",
			qp_cgroup_limit_str(res->memory_reservation, mode == QP_CGROUP_V2 ? "max" : "-1",
					    buf, sizeof(buf)),
			err) < 0)
		return -1;
	if (mode == QP_CGROUP_V2 && (res->has_memory_swappiness || res->memory_disable_oom_killer))
		return qp_error_set(err, QP_E_INVALID, 0, "memory.%s has no cgroup v2 equivalent",
				    res->has_memory_swappiness ? "swappiness" : "disableOOMKiller");
	if (res->has_memory_swappiness) {
		snprintf(buf, sizeof(buf), "%" PRIu64, res->memory_swappiness);
		if (qp_cg_write(fd, "memory.swappiness", buf, err) < 0)
			return -1;
	}
	if (res->memory_disable_oom_killer && qp_cg_write(fd, "memory.oom_control", "1", err) < 0)
		return -1;
	return 0;
}

static int set_memory(const struct qp_cg_leaves *l, const struct qp_resources *res, qp_error **err)
{
	int fd = l->fd[QP_CG_MEMORY];
	bool soft = res->has_memory_reservation || res->has_memory_swappiness ||
		    res->memory_disable_oom_killer;

	if (!res->has_memory_limit && !res->has_memory_swap && !soft)
		return 0;
	if (qp_cg_need(l, QP_CG_MEMORY, res->has_memory_limit ? "a memory limit" : "a memory setting", err) < 0)
		return -1;
	if (soft && memory_soft(fd, l->mode, res, err) < 0)
		return -1;
	if (!res->has_memory_limit && !res->has_memory_swap)
		return 0;
	if (res->memory_check_before_update && res->has_memory_limit && res->memory_limit > 0 &&
	    check_usage(fd, l->mode, res->memory_limit, err) < 0)
		return -1;
	return l->mode == QP_CGROUP_V2 ? memory_v2(fd, res, err) : memory_v1(fd, res, err);
}

static int cpu_v2(int fd, const struct qp_resources *res, qp_error **err)
{
	char buf[64];
	uint64_t w = res->has_cpu_shares ? qp_cgroup_shares_to_weight(res->cpu_shares) : 0;

	if (w) {
		snprintf(buf, sizeof(buf), "%" PRIu64, w);
		if (qp_cg_write(fd, "cpu.weight", buf, err) < 0)
			return -1;
	}
	if (qp_cgroup_cpu_max_str(res, buf, sizeof(buf)) && qp_cg_write(fd, "cpu.max", buf, err) < 0)
		return -1;
	return 0;
}

static int cpu_v1(int fd, const struct qp_resources *res, qp_error **err)
{
	char buf[32];

	if (res->has_cpu_shares && res->cpu_shares > 0) {
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

static bool wants_cpu(const struct qp_resources *res)
{
	return (res->has_cpu_shares && res->cpu_shares > 0) || res->has_cpu_quota || res->has_cpu_period;
}

static int set_cpu(const struct qp_cg_leaves *l, const struct qp_resources *res, qp_error **err)
{
	if (!wants_cpu(res))
		return 0;
	if (qp_cg_need(l, QP_CG_CPU, "a cpu limit", err) < 0)
		return -1;
	return l->mode == QP_CGROUP_V2 ? cpu_v2(l->fd[QP_CG_CPU], res, err)
				       : cpu_v1(l->fd[QP_CG_CPU], res, err);
}

/* linux.resources.unified: raw cgroup v2 files, after the typed limits (so
 * they win, as runc orders them).  Only files the pod's cgroup has: a
 * controller that is not enabled there has none, and that is an error. */
static int set_unified(const struct qp_cg_leaves *l, const struct qp_resources *res, qp_error **err)
{
	if (!res->n_unified)
		return 0;
	if (l->mode != QP_CGROUP_V2)
		return qp_error_set(err, QP_E_INVALID, 0,
				    "linux.resources.unified needs a cgroup v2 host (this one is v1 or hybrid)");
	if (l->fd[QP_CG_ANY] < 0)
		return qp_error_set(err, QP_E_INVALID, 0, "linux.resources.unified: the pod has no cgroup");
	for (size_t i = 0; i < res->n_unified; i++) {
		const struct qp_kv *kv = &res->unified[i];
		if (!qp_cg_has_file(l->fd[QP_CG_ANY], kv->key))
			return qp_error_set(err, QP_E_INVALID, 0,
					    "linux.resources.unified: the pod's cgroup has no file \"%s\" "
					    "(controller not enabled?)",
					    kv->key);
		if (qp_cg_write(l->fd[QP_CG_ANY], kv->key, kv->value, err) < 0)
			return qp_error_prefix(err, "linux.resources.unified");
	}
	return 0;
}

/* Every controller a setting needs is there, before anything is written:
 * a refused create or update leaves the cgroup as it was (the v2 guest
 * showed memory.max written before a cpuset that could not be). */
static int need_controllers(const struct qp_cg_leaves *l, const struct qp_resources *res, qp_error **err)
{
	if (wants_cpu(res) && qp_cg_need(l, QP_CG_CPU, "a cpu limit", err) < 0)
		return -1;
	if ((res->cpuset_cpus || res->cpuset_mems) && qp_cg_need(l, QP_CG_CPUSET, "a cpuset", err) < 0)
		return -1;
	if (res->has_pids_limit && qp_cg_need(l, QP_CG_PIDS, "a pids limit", err) < 0)
		return -1;
	return 0;
}

int qp_cg_set_limits(const struct qp_cg_leaves *l, const struct qp_resources *res, qp_error **err)
{
	char buf[32];

	if (!res)
		return 0;
	if (need_controllers(l, res, err) < 0 || set_memory(l, res, err) < 0 || set_cpu(l, res, err) < 0)
		return -1;
	if (res->cpuset_cpus && qp_cg_write(l->fd[QP_CG_CPUSET], "cpuset.cpus", res->cpuset_cpus, err) < 0)
		return -1;
	if (res->cpuset_mems && qp_cg_write(l->fd[QP_CG_CPUSET], "cpuset.mems", res->cpuset_mems, err) < 0)
		return -1;
	if (res->has_pids_limit) {
		int64_t lim = res->pids_limit > 0 ? res->pids_limit : -1;
		if (qp_cg_write(l->fd[QP_CG_PIDS], "pids.max",
				qp_cgroup_limit_str(lim, "max", buf, sizeof(buf)), err) < 0)
			return -1;
	}
	if (qp_cg_set_blkio(l, res, err) < 0 || set_unified(l, res, err) < 0)
		return -1;
	return qp_cg_set_devices(l, res, err);
}
