/* runtime/vm/stats.c — a VM pod's usage for `qpod events`, in runc's terms
 * (stats.h): cpu = the VMM process's CPU time (/proc/PID/stat utime and
 * stime: the guest's vCPUs plus QEMU's own work); memory, while the guest
 * runs, from its meminfo (usage = MemTotal - MemAvailable, limit =
 * MemTotal).  A paused guest cannot answer, so its memory is left out.  The
 * guest's processes have no host pids: there are no pids figures. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "pod.h"
#include "vm/vm.h"

#define MEMINFO_TIMEOUT_MS 5000

/* utime and stime (fields 14, 15) of /proc/PID/stat, in clock ticks */
static bool proc_cpu_ticks(pid_t pid, unsigned long long *utime, unsigned long long *stime)
{
	char path[64], buf[1024];
	FILE *f;
	size_t n;
	char *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "re")))
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* the command name may hold spaces and ')': fields follow the last ')' */
	if (!(p = strrchr(buf, ')')))
		return false;
	return sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", utime, stime) == 2;
}

int vm_stats(struct pod *pod, struct qp_stats *st, qp_error **err)
{
	struct qp_msg req = { .type = QP_MSG_MEMINFO_REQ }, m;
	unsigned long long ut, stt;
	long hz = sysconf(_SC_CLK_TCK);
	unsigned long long ns_per_tick = hz > 0 ? 1000000000ULL / (unsigned long long)hz : 10000000ULL;

	memset(st, 0, sizeof(*st));
	if (!state_pid_alive(pod->state))
		return qp_error_set(err, QP_E_STATE, 0, "pod \"%s\" is not running", pod->id);
	if (state_vmm_alive(pod->state) && proc_cpu_ticks(pod->state->vmm_pid, &ut, &stt)) {
		st->has_cpu = true;
		st->cpu_user = ut * ns_per_tick;
		st->cpu_kernel = stt * ns_per_tick;
		st->cpu_total = st->cpu_user + st->cpu_kernel;
	}
	if (faccessat(pod->dirfd, QP_VM_PAUSED, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
		return 0;
	if (vm_ctl_call(pod->dirfd, &req, &m, NULL, MEMINFO_TIMEOUT_MS, err) < 0)
		return qp_error_prefix(err, "the guest's meminfo");
	st->has_memory = true;
	st->usage.has = true;
	st->usage.limit = m.u.meminfo.total_kb * 1024;
	st->usage.usage = m.u.meminfo.available_kb <= m.u.meminfo.total_kb
				  ? (m.u.meminfo.total_kb - m.u.meminfo.available_kb) * 1024
				  : 0;
	st->cache = m.u.meminfo.cached_kb * 1024;
	return 0;
}

/* the driver's mem op: the guest's meminfo and the VMM's own figures */
int vm_pod_mem(struct pod *pod, struct qp_pod_mem *out, qp_error **err)
{
	struct qp_msg req = { .type = QP_MSG_MEMINFO_REQ }, m;
	pid_t pid = pod->state->vmm_pid;
	char path[64];

	out->vm = true;
	if (vm_ctl_call(pod->dirfd, &req, &m, NULL, 10000, err) < 0)
		return -1;
	out->guest_total = (long long)m.u.meminfo.total_kb;
	out->guest_free = (long long)m.u.meminfo.free_kb;
	out->guest_available = (long long)m.u.meminfo.available_kb;
	out->guest_buffers = (long long)m.u.meminfo.buffers_kb;
	out->guest_cached = (long long)m.u.meminfo.cached_kb;
	out->guest_used = out->guest_total - out->guest_free - out->guest_buffers - out->guest_cached;
	out->vmm_pid = pid;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	out->vmm_rss = qp_proc_kb(path, "VmRSS");
	out->vmm_vsz = qp_proc_kb(path, "VmSize");
	snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", (int)pid);
	out->vmm_pss = qp_proc_kb(path, "Pss");
	return 0;
}
