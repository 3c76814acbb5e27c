/* runtime/bench/podmem.c — see podmem.h. */
#include <string.h>

#include "bench/podmem.h"
#include "pod.h"

long long qp_host_mem_available_kb(void)
{
	return qp_proc_kb("/proc/meminfo", "MemAvailable");
}

int qp_pod_mem(struct pod *pod, struct qp_pod_mem *out, qp_error **err)
{
	memset(out, 0xff, sizeof(*out)); /* -1 everywhere */
	out->vm = false;
	if (pod_status(pod) == QP_STATUS_STOPPED)
		return qp_error_set(err, QP_E_STATE, 0, "pod \"%s\" is not running", pod->id);
	return pod->drv->mem(pod, out, err);
}
