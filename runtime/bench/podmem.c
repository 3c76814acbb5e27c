/* runtime/bench/podmem.c — see podmem.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/podmem.h"
#include "container/cgroup.h"
#include "pod.h"
#include "vm/vm.h"

/* "Key:   123 kB" of a /proc file; -1 if absent. */
static long long proc_kb(const char *path, const char *key)
{
	char line[256];
	size_t klen = strlen(key);
	long long v = -1;
	FILE *f = fopen(path, "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, klen) && line[klen] == ':') {
			v = strtoll(line + klen + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

static long long pid_kb(pid_t pid, const char *file, const char *key)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	return proc_kb(path, key);
}

long long qp_host_mem_available_kb(void)
{
	return proc_kb("/proc/meminfo", "MemAvailable");
}

int qp_pod_mem(struct pod *pod, struct qp_pod_mem *out, qp_error **err)
{
	memset(out, 0xff, sizeof(*out)); /* -1 everywhere */
	out->vm = pod->state->mode == QP_MODE_VM;
	if (pod_status(pod) == QP_STATUS_STOPPED)
		return qp_error_set(err, QP_E_STATE, 0, "pod \"%s\" is not running", pod->id);
	if (!out->vm) {
		struct qp_cgroup *cg = NULL;
		uint64_t bytes = 0;
		int r = -1;

		if (!pod->state->cgroup)
			return qp_error_set(err, QP_E_STATE, 0, "pod \"%s\" has no cgroup of its own (rootless)",
					    pod->id);
		if (qp_cgroup_open(pod->state->cgroup, &cg, err) == 0 &&
		    qp_cgroup_memory_usage(cg, &bytes, err) == 0) {
			out->cgroup_usage = (long long)(bytes / 1024);
			r = 0;
		}
		qp_cgroup_free(cg);
		return r;
	}
	struct qp_msg req = { .type = QP_MSG_MEMINFO_REQ }, m;
	pid_t pid = pod->state->vmm_pid;

	if (vm_ctl_call(pod->dirfd, &req, &m, NULL, 10000, err) < 0)
		return -1;
	out->guest_total = (long long)m.u.meminfo.total_kb;
	out->guest_free = (long long)m.u.meminfo.free_kb;
	out->guest_available = (long long)m.u.meminfo.available_kb;
	out->guest_buffers = (long long)m.u.meminfo.buffers_kb;
	out->guest_cached = (long long)m.u.meminfo.cached_kb;
	out->guest_used = out->guest_total - out->guest_free - out->guest_buffers - out->guest_cached;
	out->vmm_pid = pid;
	out->vmm_rss = pid_kb(pid, "status", "VmRSS");
	out->vmm_pss = pid_kb(pid, "smaps_rollup", "Pss");
	out->vmm_vsz = pid_kb(pid, "status", "VmSize");
	return 0;
}
