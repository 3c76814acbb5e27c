/* runtime/bench/podmem.h — the memory of one running pod, the figures of
 * `qpod stats`, `qpod bench memory` and `qpod density`.  vm pods: the
 * guest's /proc/meminfo through guest-init (used = total - free - buffers -
 * cached, `free`'s arithmetic) and the VMM's RSS, PSS (smaps_rollup) and VSZ;
 * container pods: the cgroup's memory usage.  All in kB; -1 = unknown. */
#ifndef QPOD_PODMEM_H
#define QPOD_PODMEM_H

#include <stdbool.h>

#include "util/error.h"

struct pod;

struct qp_pod_mem {
	bool vm;
	long long guest_total, guest_free, guest_available, guest_buffers, guest_cached, guest_used;
	long long vmm_pid, vmm_rss, vmm_pss, vmm_vsz;
	long long cgroup_usage;
};

/* The pod must be running (QP_E_STATE otherwise). */
int qp_pod_mem(struct pod *pod, struct qp_pod_mem *out, qp_error **err);
/* /proc/meminfo MemAvailable in kB, -1 if unreadable. */
long long qp_host_mem_available_kb(void);

#endif
