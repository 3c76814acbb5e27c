/* runtime/bench/workload_peers.c — `qpod bench workload` under the peer
 * runtimes (runc, crun, gVisor's runsc; bench/peers.h): each measurement
 * is one `PEER run` of a bundle whose rootfs is the bench's image copy and
 * whose process is the tool, with the peer's own --root; the volume tests
 * run the bundle workload_file.c writes (the volume bind-mounted).  The
 * tests with a server in the pod (qpod's bridge) are not run there. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/peers.h"
#include "bench/workload.h"
#include "util/cleanup.h"

static const struct qp_peer *peer_of(const char *target)
{
	for (const struct qp_peer *p = qp_peers; p->name; p++)
		if (!strcmp(p->name, target))
			return p;
	return NULL;
}

bool wl_is_peer(const char *target)
{
	return peer_of(target) != NULL;
}

bool wl_peer_runs(const char *test)
{
	return !wl_is_net(test);
}

int wl_run_peer_bundle(const struct wl *b, const char *target, const char *bundle, const char *what,
		       struct wl_values *vals, qp_error **err)
{
	const struct qp_peer *p = peer_of(target);
	_cleanup_free_ char *bin = qp_peer_find(p), *root = NULL;
	const char *argv[QP_PEER_ARGS];
	int r;

	if (!bin)
		return qp_error_set(err, QP_E_NOTFOUND, 0, "%s: not installed (Debian package %s; tools/deps.sh installs it)",
				    p->name, p->package);
	if (asprintf(&root, "%s/.bench-%s", b->o->root, p->name) < 0) {
		root = NULL;
		return qp_fail(err, ENOMEM, "bench");
	}
	qp_peer_run_argv(p, bin, root, bundle, "qpod-bench-wl", argv);
	if ((r = wl_run_tool(argv, what, NULL, vals, err)) < 0)
		qp_peer_delete(p, bin, root, "qpod-bench-wl");
	return r;
}

int wl_run_peer(const struct wl *b, const char *target, const char *const *cmd, const char *what,
		struct wl_values *vals, qp_error **err)
{
	_cleanup_free_ char *bundle = NULL;
	int r;

	if (asprintf(&bundle, "%s/.bench-peer-bundle", b->o->root) < 0) {
		bundle = NULL;
		return qp_fail(err, ENOMEM, "bench");
	}
	if (qp_peer_write_bundle(bundle, b->img, cmd, QP_PEER_CGROUP, err) < 0)
		return -1;
	r = wl_run_peer_bundle(b, target, bundle, what, vals, err);
	qp_peer_remove_bundle(bundle);
	return r;
}
