/* runtime/container/control.c — the container driver's ops that act on a
 * running pod through its cgroup: pause and resume (the freezer), update
 * (the limit writers create uses) and stats.  A pod without a cgroup of
 * its own (rootless, no delegation) cannot do these and says so. */
#include "host/cgroup/cgroup.h"
#include "container/container.h"
#include "pod.h"

/* The pod's cgroup, or NULL with an error that says what needed it. */
static struct qp_cgroup *pod_cgroup(struct pod *pod, const char *what, qp_error **err)
{
	struct qp_cgroup *cg = NULL;

	if (!pod->state->cgroup)
		qp_error_set(err, QP_E_STATE, 0,
			     "pod \"%s\" has no cgroup of its own (rootless), so %s is not possible",
			     pod->id, what);
	else
		qp_cgroup_open(pod->state->cgroup, &cg, err);
	return cg;
}

static int freeze(struct pod *pod, bool on, qp_error **err)
{
	struct qp_cgroup *cg = pod_cgroup(pod, on ? "pause" : "resume", err);
	int r = cg ? qp_cgroup_freeze(cg, on, err) : -1;

	qp_cgroup_free(cg);
	return r;
}

int qp_container_pause(struct pod *pod, qp_error **err)
{
	return freeze(pod, true, err);
}

int qp_container_resume(struct pod *pod, qp_error **err)
{
	return freeze(pod, false, err);
}

bool qp_container_frozen(struct pod *pod)
{
	struct qp_cgroup *cg = NULL;
	bool frozen = pod->state->cgroup && qp_cgroup_open(pod->state->cgroup, &cg, NULL) == 0 &&
		      qp_cgroup_is_frozen(cg);

	qp_cgroup_free(cg);
	return frozen;
}

int qp_container_update(struct pod *pod, const struct qp_resources *res, qp_error **err)
{
	struct qp_cgroup *cg = pod_cgroup(pod, "an update of its limits", err);
	int r = cg ? qp_cgroup_update(cg, res, err) : -1;

	qp_cgroup_free(cg);
	return r;
}

int qp_container_stats(struct pod *pod, struct qp_stats *st, qp_error **err)
{
	struct qp_cgroup *cg = pod_cgroup(pod, "reading its usage", err);
	int r = cg ? qp_cgroup_stats(cg, st, err) : -1;

	qp_cgroup_free(cg);
	return r;
}

/* the driver's mem op: the cgroup's memory usage */
int qp_container_mem(struct pod *pod, struct qp_pod_mem *out, qp_error **err)
{
	struct qp_cgroup *cg = NULL;
	uint64_t bytes = 0;
	int r = -1;

	if (!pod->state->cgroup)
		return qp_error_set(err, QP_E_STATE, 0, "pod \"%s\" has no cgroup of its own (rootless)", pod->id);
	if (qp_cgroup_open(pod->state->cgroup, &cg, err) == 0 && qp_cgroup_memory_usage(cg, &bytes, err) == 0) {
		out->cgroup_usage = (long long)(bytes / 1024);
		r = 0;
	}
	qp_cgroup_free(cg);
	return r;
}
