/* runtime/host/cgroup/cgroup_pod.c — a pod's own cgroup, for both drivers:
 * its path (linux.cgroupsPath, or qpod/ID), recorded in the state before
 * the cgroup exists (a qpod killed from then on leaves a state that `qpod
 * gc` can follow to it), then made with the pod's resources. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/cgroup/cgroup.h"
#include "pod.h"
#include "util/log.h"

int qp_cgroup_create_for_pod(struct pod *pod, const struct qp_resources *res, bool limits,
			     struct qp_cgroup **out, qp_error **err)
{
	struct qp_cgroup *cg = NULL;

	*out = NULL;
	free(pod->state->cgroup);
	if (pod->spec->cgroups_path)
		pod->state->cgroup = strdup(pod->spec->cgroups_path);
	else if (asprintf(&pod->state->cgroup, QP_CGROUP_DEFAULT_PARENT "/%s", pod->id) < 0)
		pod->state->cgroup = NULL;
	if (!pod->state->cgroup)
		return qp_fail(err, ENOMEM, "cgroup path");
	if (state_save(pod->dirfd, pod->state, err) < 0)
		return -1;
	if (qp_cgroup_create(pod->state->cgroup, res, &cg, err) == 0) {
		*out = cg;
		return 0;
	}
	/* Rootless without a delegated cgroup: a pod that asks for no limits
	 * runs without one of its own (ps and kill --all then say so); one
	 * that asks for limits fails here, as it must. */
	int e = *err ? (*err)->errnum : 0;
	if (geteuid() == 0 || limits || (e != EACCES && e != EPERM && e != EROFS))
		return -1;
	qp_debug("rootless: no cgroup for pod \"%s\": %s", pod->id, (*err)->msg);
	qp_error_free(err);
	free(pod->state->cgroup);
	pod->state->cgroup = NULL;
	return state_save(pod->dirfd, pod->state, err);
}
