/* runtime/pod_identity.c — a pod's state is checked before it is acted on:
 * the pid and cgroup a state.json names are used only when they are the
 * pod's own.  The state root is private (state_check_private), so this is
 * the second line: a stale, damaged or hand-edited state must not make
 * `delete --force` kill or remove what belongs to someone else.
 *   - the ID in the file is the directory's;
 *   - the cgroup is the one the pod's config gives it (cgroupsPath, or
 *     qpod/ID), never another;
 *   - the pid (and a VM's QEMU) is alive with its recorded start time and
 *     is in that cgroup; a foreground VM's monitor stays outside it and is
 *     accepted as the parent of the QEMU inside it; a VMM outside it is
 *     the pod's only by the driver's proof (owns_pid: libvirt's QEMU, and
 *     then a foreground run's monitor).  A pid that fails is
 *     forgotten (the pod reads as stopped), never signalled.
 * A pod without a cgroup (rootless, no delegation) keeps the start-time
 * check only. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/cgroup/cgroup.h"
#include "pod.h"
#include "util/cleanup.h"
#include "util/log.h"

/* field 4 of /proc/PID/stat, 0 if unreadable */
static pid_t parent_of(pid_t pid)
{
	char path[64], buf[1024], *p;
	_cleanup_fclose_ FILE *f = NULL;
	int ppid = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "re")) || !fgets(buf, sizeof(buf), f))
		return 0;
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %*c %d", &ppid) != 1)
		return 0;
	return (pid_t)ppid;
}

static bool in_list(const pid_t *pids, size_t n, pid_t pid)
{
	for (size_t i = 0; i < n; i++)
		if (pids[i] == pid)
			return true;
	return false;
}

int pod_check_identity(struct pod *pod, qp_error **err)
{
	struct pod_state *st = pod->state;
	_cleanup_free_ char *want = NULL;
	struct qp_cgroup *cg = NULL;
	pid_t *pids = NULL;
	size_t n = 0;
	char shown[QP_SHOWN_MAX];

	if (strcmp(st->id, pod->id))
		return qp_error_set(err, QP_E_INVALID, 0, "state.json names pod \"%s\", not \"%s\"",
				    qp_shown(st->id, shown), pod->id);
	if (pod->spec->cgroups_path)
		want = strdup(pod->spec->cgroups_path);
	else if (asprintf(&want, QP_CGROUP_DEFAULT_PARENT "/%s", pod->id) < 0)
		want = NULL;
	if (!want)
		return qp_fail(err, ENOMEM, "check the pod's state");
	if (st->cgroup && strcmp(st->cgroup, want))
		return qp_error_set(err, QP_E_INVALID, 0,
				    "state.json names cgroup \"%s\", not the pod's own \"%s\"",
				    qp_shown(st->cgroup, shown), want);
	if (!st->cgroup || (!state_pid_alive(st) && !state_vmm_alive(st)))
		return 0;
	if (qp_cgroup_open(st->cgroup, &cg, NULL) == 0)
		qp_cgroup_pids(cg, &pids, &n, NULL);
	qp_cgroup_free(cg);
	bool (*owns)(struct pod *, pid_t) = pod->drv->owns_pid;
	bool vmm_ok = state_vmm_alive(st) && (in_list(pids, n, st->vmm_pid) || (owns && owns(pod, st->vmm_pid)));
	if (st->vmm_pid && !vmm_ok) {
		if (state_vmm_alive(st))
			qp_warn("pod \"%s\": pid %d is not in the pod's cgroup: not the pod's VMM",
				pod->id, (int)st->vmm_pid);
		st->vmm_pid = 0;
		st->vmm_pid_start = 0;
	}
	if (state_pid_alive(st) && !in_list(pids, n, st->pid) &&
	    !(st->mode == QP_MODE_VM && vmm_ok &&
	      (parent_of(st->vmm_pid) == st->pid || (owns && owns(pod, st->pid))))) {
		qp_warn("pod \"%s\": pid %d is not in the pod's cgroup: not the pod's process",
			pod->id, (int)st->pid);
		st->pid = 0;
		st->pid_start = 0;
	}
	free(pids);
	return 0;
}
