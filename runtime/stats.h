/* runtime/stats.h — a pod's resource usage as `qpod events` reports it, in
 * runc's terms (types.Stats of runc's `events`): CPU time in ns, memory in
 * bytes, process counts.  A container pod fills it from its cgroup, a VM
 * pod from the VMM process and the guest's meminfo.  A figure whose has_
 * flag is false was not available and is left out of the output. */
#ifndef QPOD_STATS_H
#define QPOD_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/error.h"

#define QP_STATS_MAX_CPUS 1024
#define QP_STATS_MAX_RAW 96     /* memory.stat lines kept */
#define QP_STATS_KEY_MAX 48

/* runc's MemoryEntry: limit UINT64_MAX means "max" (unlimited) */
struct qp_stats_mem_entry {
	bool has;
	uint64_t limit, usage, max, failcnt;
};

struct qp_stats {
	/* cpu.usage */
	bool has_cpu;
	uint64_t cpu_total, cpu_kernel, cpu_user;
	uint64_t *percpu;        /* malloc'd, n_percpu entries (may be NULL) */
	size_t n_percpu;
	/* cpu.throttling */
	bool has_throttling;
	uint64_t periods, throttled_periods, throttled_time;
	/* memory */
	bool has_memory;
	uint64_t cache;
	struct qp_stats_mem_entry usage, swap;
	struct {
		char key[QP_STATS_KEY_MAX];
		uint64_t value;
	} raw[QP_STATS_MAX_RAW];  /* memory.stat, as the kernel names it */
	size_t n_raw;
	/* pids: limit 0 = no limit (runc's convention) */
	bool has_pids;
	uint64_t pids_current, pids_limit;
	/* OOM kills so far (for the "oom" event), when known */
	bool has_oom_kills;
	uint64_t oom_kills;
};

void qp_stats_free(struct qp_stats *st);

/* The memory of one running pod, the figures of `qpod stats`, `qpod bench
 * memory` and `qpod density` (the driver's mem op).  vm pods: the guest's
 * /proc/meminfo through guest-init (used = total - free - buffers - cached,
 * `free`'s arithmetic) and the VMM's RSS, PSS (smaps_rollup) and VSZ;
 * container pods: the cgroup's memory usage.  All in kB; -1 = unknown. */
struct qp_pod_mem {
	bool vm;
	long long guest_total, guest_free, guest_available, guest_buffers, guest_cached, guest_used;
	long long vmm_pid, vmm_rss, vmm_pss, vmm_vsz;
	long long cgroup_usage;
};

/* "Key:   123 kB" of a /proc file (path), in kB; -1 if absent. */
long long qp_proc_kb(const char *path, const char *key);
/* One line of runc's `events` output (malloc'ed, no newline): type "stats"
 * with st as "data", or another type ("oom") with st NULL. */
int qp_stats_event_json(const char *type, const char *id, const struct qp_stats *st, char **out,
			qp_error **err);

#endif
