/* runtime/bench/workload_peers.c — `qpod bench workload` under the peer
 * runtimes (runc, crun, gVisor's runsc; bench/peers.h): each measurement
 * is one `PEER run` of a bundle whose rootfs is the bench's image copy and
 * whose process is the tool, with the peer's own --root; the volume tests
 * run the bundle workload_file.c writes (the volume bind-mounted).  The
 * network tests' server pod runs detached (`PEER run --detach`) in a
 * namespace the bench makes with a veth to its own, as vm-netns's
 * (workload_netns.c); tcp_stream_out's client is `PEER exec`'d in it. */
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

/* The peer's binary (malloc'ed) and its --root for the bench (ROOT/.bench-
 * PEER), or -1 with why (not installed). */
static int peer_paths(const struct wl *b, const struct qp_peer *p, char **bin, char **root, qp_error **err)
{
	*root = NULL;
	if (!(*bin = qp_peer_find(p)))
		return qp_error_set(err, QP_E_NOTFOUND, 0, "%s: not installed (Debian package %s; tools/deps.sh installs it)",
				    p->name, p->package);
	if (asprintf(root, "%s/.bench-%s", b->o->root, p->name) < 0) {
		*root = NULL;
		free(*bin);
		*bin = NULL;
		return qp_fail(err, ENOMEM, "bench");
	}
	return 0;
}

/* The server pod's bundle directory (ROOT/.bench-peer-serve). */
static void serve_bundle(const struct wl *b, char *dir, size_t size)
{
	snprintf(dir, size, "%s/.bench-peer-serve", b->o->root);
}

int wl_peer_serve(const struct wl *b, const char *target, const struct wl_netns *ns, const char *id,
		  const char *const *cmd, qp_error **err)
{
	const struct qp_peer *p = peer_of(target);
	_cleanup_free_ char *bin = NULL, *root = NULL;
	struct qp_child_out out = { 0 };
	const char *argv[QP_PEER_ARGS];
	char bundle[4200];
	double ms;
	int status, r;

	serve_bundle(b, bundle, sizeof(bundle));
	if (peer_paths(b, p, &bin, &root, err) < 0 ||
	    qp_peer_write_bundle(bundle, b->img, cmd, QP_PEER_CGROUP, ns->path, 0, err) < 0)
		return -1;
	qp_peer_serve_argv(p, bin, root, bundle, id, argv);
	r = qp_bench_child((char *const *)argv, &ms, &status, &out, err);
	if (r == 0 && status != 0)
		r = qp_error_set(err, QP_E_GENERIC, 0, "%s run --detach (status %d): %.*s", p->name, status,
				 out.err ? (int)strcspn(out.err, "\n") : 0, out.err ? out.err : "");
	qp_child_out_free(&out);
	if (r < 0)
		wl_peer_unserve(b, target, id);
	return r;
}

void wl_peer_unserve(const struct wl *b, const char *target, const char *id)
{
	const struct qp_peer *p = peer_of(target);
	_cleanup_free_ char *bin = NULL, *root = NULL;
	char bundle[4200];

	if (peer_paths(b, p, &bin, &root, NULL) == 0)
		qp_peer_delete(p, bin, root, id);
	serve_bundle(b, bundle, sizeof(bundle));
	qp_peer_remove_bundle(bundle);
}

size_t wl_peer_exec_prefix(const struct wl *b, const char *target, const char *id, const char **argv)
{
	static char *bin, *root; /* the last peer's: argv borrows them */
	size_t n = 0;

	free(bin), free(root);
	if (peer_paths(b, peer_of(target), &bin, &root, NULL) < 0)
		return 0;
	argv[n++] = bin;
	argv[n++] = "--root";
	argv[n++] = root;
	argv[n++] = "exec";
	argv[n++] = id;
	return n;
}

int wl_run_peer_bundle(const struct wl *b, const char *target, const char *bundle, const char *what,
		       struct wl_values *vals, qp_error **err)
{
	const struct qp_peer *p = peer_of(target);
	_cleanup_free_ char *bin = NULL, *root = NULL;
	const char *argv[QP_PEER_ARGS];
	int r;

	if (peer_paths(b, p, &bin, &root, err) < 0)
		return -1;
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
	if (qp_peer_write_bundle(bundle, b->img, cmd, QP_PEER_CGROUP, NULL, 0, err) < 0)
		return -1;
	r = wl_run_peer_bundle(b, target, bundle, what, vals, err);
	qp_peer_remove_bundle(bundle);
	return r;
}
