/* runtime/container/child_hooks.c — the container child's part of the OCI
 * hooks (runtime/hooks.h says who runs which).  Like runc, the hooks that
 * run in the container see the pod's pid as the pod sees it (getpid(): 1
 * in a pid namespace of its own). */
#include <errno.h>
#include <unistd.h>

#include "container/container.h"
#include "container/sync.h"
#include "hooks.h"

static struct qp_oci_state child_state(const struct qp_child_ctx *c, enum qp_status status)
{
	return (struct qp_oci_state){ .id = c->id, .status = status, .pid = getpid(),
				      .bundle = c->bundle, .annotations = c->spec->annotations,
				      .n_annotations = c->spec->n_annotations };
}

int qp_child_create_hooks(const struct qp_child_ctx *c, int sync_fd, qp_error **err)
{
	const struct pod_spec *spec = c->spec;
	struct qp_oci_state st = child_state(c, QP_STATUS_CREATING);
	struct qp_sync_msg m;

	/* no round trip for pods without such hooks: it costs start time */
	if (spec->n_hooks[QP_HOOK_PRESTART] || spec->n_hooks[QP_HOOK_CREATE_RUNTIME]) {
		if (qp_sync_send(sync_fd, QP_SYNC_HOOKS, NULL) < 0)
			return qp_fail(err, errno, "ask qpod to run the create hooks");
		/* no timeout of ours: qpod kills us if its hooks fail or hang */
		errno = 0;
		if (qp_sync_recv(sync_fd, &m, -1) != 1 || m.type != QP_SYNC_HOOKS_DONE)
			return qp_fail(err, errno ? errno : EPROTO, "wait for the create hooks");
	}
	if (!spec->n_hooks[QP_HOOK_CREATE_CONTAINER])
		return 0;
	/* as runc: the new mounts are in place, the host's root is still "/",
	 * and the hook starts in the pod's rootfs */
	if (chdir(c->rootfs) < 0)
		return qp_fail(err, errno, "chdir to the rootfs");
	return qp_hooks_run(spec, QP_HOOK_CREATE_CONTAINER, &st, NULL, err);
}

int qp_child_start_hooks(const struct qp_child_ctx *c, qp_error **err)
{
	struct qp_oci_state st = child_state(c, QP_STATUS_CREATED);

	/* a hook without "env" gets the workload's, as under runc */
	return qp_hooks_run(c->spec, QP_HOOK_START_CONTAINER, &st, c->spec->process.env, err);
}
