/* runtime/bench/podmem.h — the memory of one running pod (struct
 * qp_pod_mem, stats.h, filled by its driver) and of the host. */
#ifndef QPOD_PODMEM_H
#define QPOD_PODMEM_H

#include "stats.h"
#include "util/error.h"

struct pod;

/* The pod must be running (QP_E_STATE otherwise). */
int qp_pod_mem(struct pod *pod, struct qp_pod_mem *out, qp_error **err);
/* /proc/meminfo MemAvailable in kB, -1 if unreadable. */
long long qp_host_mem_available_kb(void);

#endif
