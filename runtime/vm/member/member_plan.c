/* runtime/vm/member/member_plan.c — a container of a vm pod's VM, from
 * its spec to what its EXEC asks of the guest (protocol.h, CONTAINER):
 * the namespaces of its own, its hostname, its limits in a cgroup of the
 * guest's, its mounts.  A setting the guest cannot apply is refused by
 * name, never dropped. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "spec/resources.h"
#include "util/cleanup.h"
#include "util/log.h"
#include "vm/member/member.h"

static const struct {
	int ns;
	const char *name;
	uint32_t flag;
} own_ns[] = { { QP_NS_PID, "pid", QP_RUN_F_NEW_PID },    { QP_NS_IPC, "ipc", QP_RUN_F_NEW_IPC },
	       { QP_NS_UTS, "uts", QP_RUN_F_NEW_UTS },    { QP_NS_NET, "network", QP_RUN_F_NEW_NET },
	       { QP_NS_CGROUP, "cgroup", QP_RUN_F_NEW_CGROUP } };
static const char *const proc_ns[] = { [QP_NS_PID] = "pid", [QP_NS_IPC] = "ipc", [QP_NS_UTS] = "uts",
				       [QP_NS_NET] = "net", [QP_NS_CGROUP] = "cgroup" };

/* Does path name the pod's own namespace of that kind: the one its VM's
 * monitor (the sandbox's pid, what a client joins) is in?  The guest has
 * no other to offer. */
static bool is_pods(const char *path, int ns, pid_t pod_pid)
{
	char want[64];
	struct stat a, b;

	snprintf(want, sizeof(want), "/proc/%d/ns/%s", (int)pod_pid, proc_ns[ns]);
	return stat(path, &a) == 0 && stat(want, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

static int namespaces(const struct pod_spec *spec, const struct pod *sb, pid_t infra, uint32_t *flags,
		      qp_error **err)
{
	char shown[QP_SHOWN_MAX];

	if (spec->ns[QP_NS_USER].enabled || spec->ns[QP_NS_TIME].enabled)
		return qp_error_set(err, QP_E_INVALID, 0, "linux.namespaces: %s: not supported for a container "
				    "inside a vm pod", spec->ns[QP_NS_USER].enabled ? "user" : "time");
	if (spec->ns[QP_NS_MOUNT].path)
		return qp_error_set(err, QP_E_INVALID, 0, "linux.namespaces: mount: a path is not supported for a "
				    "container inside a vm pod (each has its own)");
	for (size_t i = 0; i < QP_ARRAY_SIZE(own_ns); i++) {
		const struct qp_namespace *n = &spec->ns[own_ns[i].ns];
		if (!n->enabled)
			continue; /* the pod's (the guest's own) */
		if (!n->path)
			*flags |= own_ns[i].flag;
		else if (!is_pods(n->path, own_ns[i].ns, sb->state->pid) &&
			 !(infra > 0 && is_pods(n->path, own_ns[i].ns, infra)))
			return qp_error_set(err, QP_E_INVALID, 0, "linux.namespaces: %s: \"%s\" is not pod \"%s\"'s "
					    "(a container inside a vm pod has its pod's namespaces or its own)",
					    own_ns[i].name, qp_shown(n->path, shown), sb->id);
	}
	if (spec->hostname && !(*flags & QP_RUN_F_NEW_UTS))
		return qp_error_set(err, QP_E_INVALID, 0, "hostname: a container inside a vm pod sets one only "
				    "with a UTS namespace of its own (the pod's is its VM's)");
	return 0;
}

static int add_cg(struct vm_member_plan *p, qp_error **err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int add_cg(struct vm_member_plan *p, qp_error **err, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (p->ncg >= QP_PROTO_MAX_CGROUP)
		return qp_error_set(err, QP_E_INVALID, 0, "too many limits");
	va_start(ap, fmt);
	n = vasprintf(&p->cgroup[p->ncg], fmt, ap);
	va_end(ap);
	if (n < 0)
		return qp_fail(err, ENOMEM, "limits");
	p->ncg++;
	return 0;
}

/* Whether list is a cpuset list ("0-1,3") of numbers below n. */
static bool cpulist_within(const char *list, unsigned n)
{
	const char *p = list;

	while (*p) {
		char *end;
		unsigned long a, b;
		if (*p < '0' || *p > '9')
			return false;
		a = b = strtoul(p, &end, 10);
		if (*end == '-') {
			if (end[1] < '0' || end[1] > '9')
				return false;
			b = strtoul(end + 1, &end, 10);
		}
		if (a > b || b >= n || (*end && *end != ','))
			return false;
		p = *end ? end + 1 : end;
		if (*end && !*p)
			return false; /* a trailing comma */
	}
	return p != list;
}

/* The limits the guest's cgroup v2 applies; the rest refused by name.
 * full: every limit the guest applies, "max" where r sets none (an
 * update: what is gone must go in the guest too). */
int vm_member_limits(const struct qp_resources *r, unsigned long long vm_mib, unsigned vcpus, bool full,
		     struct vm_member_plan *p, qp_error **err)
{
	const char *no = r->has_memory_reservation ? "memory.reservation"
		       : r->has_memory_swappiness ? "memory.swappiness"
		       : r->memory_disable_oom_killer ? "memory.disableOOMKiller"
		       : r->n_unified ? "unified"
		       : spec_resources_has_blkio(r) ? "blockIO"
		       : NULL;

	if (no)
		return qp_error_set(err, QP_E_INVALID, 0, "linux.resources.%s: not supported for a container "
				    "inside a vm pod", no);
	bool mem = r->has_memory_limit && r->memory_limit > 0;
	if (mem && (unsigned long long)r->memory_limit > vm_mib << 20)
		return qp_error_set(err, QP_E_INVALID, 0, "linux.resources.memory.limit: %lld bytes is more "
				    "than the pod's VM has (%llu MiB)", (long long)r->memory_limit, vm_mib);
	if (mem && add_cg(p, err, "memory.max=%lld", (long long)r->memory_limit) < 0)
		return -1;
	if (!mem && full && add_cg(p, err, "memory.max=max") < 0)
		return -1;
	if (r->has_memory_swap && r->memory_swap != 0) {
		if (!mem && r->memory_swap > 0)
			return qp_error_set(err, QP_E_INVALID, 0, "linux.resources.memory.swap without a limit");
		if (r->memory_swap > 0 && r->memory_swap < r->memory_limit)
			return qp_error_set(err, QP_E_INVALID, 0, "linux.resources.memory.swap below the limit");
		if (r->memory_swap < 0 ? add_cg(p, err, "memory.swap.max=max")
				       : add_cg(p, err, "memory.swap.max=%lld",
						(long long)(r->memory_swap - r->memory_limit)))
			return -1;
	}
	bool pids = r->has_pids_limit && r->pids_limit > 0, quota = r->has_cpu_quota && r->cpu_quota > 0;
	unsigned long long period = r->has_cpu_period && r->cpu_period ? r->cpu_period : 100000;
	if (pids ? add_cg(p, err, "pids.max=%lld", (long long)r->pids_limit) < 0
		 : full && add_cg(p, err, "pids.max=max") < 0)
		return -1;
	if (quota ? add_cg(p, err, "cpu.max=%lld %llu", (long long)r->cpu_quota, period) < 0
		  : full && add_cg(p, err, "cpu.max=max %llu", period) < 0)
		return -1;
	/* the VM's own CPUs and its one memory node; an update without them
	 * leaves them as they are (as runc's) */
	if (r->cpuset_cpus && *r->cpuset_cpus && !cpulist_within(r->cpuset_cpus, vcpus))
		return qp_error_set(err, QP_E_INVALID, 0, "linux.resources.cpu.cpus: \"%s\" is not a list of the "
				    "pod's VM's CPUs (0-%u)", r->cpuset_cpus, vcpus - 1);
	if (r->cpuset_mems && *r->cpuset_mems && !cpulist_within(r->cpuset_mems, 1))
		return qp_error_set(err, QP_E_INVALID, 0, "linux.resources.cpu.mems: \"%s\" is not a list of the "
				    "pod's VM's memory nodes (0)", r->cpuset_mems);
	if ((r->cpuset_cpus && *r->cpuset_cpus && add_cg(p, err, "cpuset.cpus=%s", r->cpuset_cpus) < 0) ||
	    (r->cpuset_mems && *r->cpuset_mems && add_cg(p, err, "cpuset.mems=%s", r->cpuset_mems) < 0))
		return -1;
	if (r->has_cpu_shares && r->cpu_shares) {
		/* the kernel's own v1 -> v2 mapping (2..262144 -> 1..10000) */
		unsigned long long s = r->cpu_shares < 2 ? 2 : r->cpu_shares > 262144 ? 262144 : r->cpu_shares;
		if (add_cg(p, err, "cpu.weight=%llu", 1 + ((s - 2) * 9999) / 262142) < 0)
			return -1;
	}
	return 0;
}

int vm_member_plan(const struct pod_spec *spec, const char *id, const char *rootfs, const struct pod *sandbox,
		   pid_t infra_pid, int ctrfd, struct vm_member_plan *p, qp_error **err)
{
	uint32_t flags = QP_RUN_F_CONTAINER | (spec->root_readonly ? QP_RUN_F_ROOTFS_RO : 0);

	memset(p, 0, sizeof(*p));
	if (namespaces(spec, sandbox, infra_pid, &flags, err) < 0 ||
	    vm_member_limits(&spec->resources, vm_spec_mem_mib(sandbox->spec), vm_spec_vcpus(sandbox->spec), false, p,
			     err) < 0 ||
	    vm_mounts_plan(spec, rootfs, ctrfd, NULL, id, &p->mounts, err) < 0)
		return -1;
	p->run.flags = flags;
	p->run.rootfs = QP_ROOTFS_9P_SUBDIR;
	p->run.rootfs_tag = id;
	p->run.hostname = spec->hostname ? spec->hostname : "";
	p->run.mounts = (const char *const *)p->mounts.entries;
	p->run.mountc = (uint32_t)p->mounts.n;
	p->run.cgroup = (const char *const *)p->cgroup;
	p->run.cgroupc = (uint32_t)p->ncg;
	return 0;
}

void vm_member_plan_free(struct vm_member_plan *p)
{
	vm_mounts_free(&p->mounts);
	for (size_t i = 0; i < p->ncg; i++)
		free(p->cgroup[i]);
	memset(p, 0, sizeof(*p));
}
