/* runtime/bench/peers.c — runc, crun and gVisor's runsc as the bench runs
 * them (peers.h): where they are, their command lines, the bundle they
 * share with qpod.
 *
 * runsc and the network: with its default (--network=sandbox) runsc takes
 * the interfaces of the spec's network namespace into its own netstack,
 * and when the spec names no namespace path it refuses ("cannot run with
 * network enabled in root network namespace").  The bench's bundle has a
 * fresh network namespace, as runc and qpod give it (loopback only), so
 * runsc runs with --network=none: netstack's loopback, no host interface
 * seen or touched.  The network tests' server pod is the exception: its
 * bundle joins a namespace the bench made, with a veth to the bench's own
 * (bench/workload_netns.c), and runsc runs with its default network there
 * (qp_peer_serve_argv), as runc and crun use that veth.  Its platform is
 * left to runsc (ptrace in Debian's 20221219 build; KVM only when asked),
 * and named in the result. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench/bench.h"
#include "bench/peers.h"
#include "spec/spec.h"
#include "util/cleanup.h"
#include "util/strv.h"

const struct qp_peer qp_peers[] = {
	{ "runc", "runc", "container" },
	{ "crun", "crun", "container" },
	{ "runsc", "runsc", "sandbox" },
	{ NULL, NULL, NULL },
};

char *qp_peer_find(const struct qp_peer *p)
{
	static const char *const dirs[] = { "/usr/sbin", "/usr/bin", "/sbin", "/bin", "/usr/local/bin",
					    "/usr/local/sbin", NULL };
	char path[64];

	for (int i = 0; dirs[i]; i++) {
		snprintf(path, sizeof(path), "%s/%s", dirs[i], p->name);
		if (access(path, X_OK) == 0)
			return strdup(path);
	}
	return NULL;
}

/* `PEER --root ROOT run [--detach] --bundle BUNDLE ID`; runsc on a fresh
 * namespace (not serve) with --network=none (above). */
static void run_argv(const struct qp_peer *p, const char *bin, const char *root, const char *bundle,
		     const char *id, bool serve, const char *argv[QP_PEER_ARGS])
{
	size_t n = 0;

	argv[n++] = bin;
	argv[n++] = "--root";
	argv[n++] = root;
	if (!serve && !strcmp(p->name, "runsc"))
		argv[n++] = "--network=none";
	argv[n++] = "run";
	if (serve)
		argv[n++] = "--detach";
	argv[n++] = "--bundle";
	argv[n++] = bundle;
	argv[n++] = id;
	argv[n] = NULL;
}

void qp_peer_run_argv(const struct qp_peer *p, const char *bin, const char *root,
		      const char *bundle, const char *id, const char *argv[QP_PEER_ARGS])
{
	run_argv(p, bin, root, bundle, id, false, argv);
}

void qp_peer_serve_argv(const struct qp_peer *p, const char *bin, const char *root, const char *bundle,
			const char *id, const char *argv[QP_PEER_ARGS])
{
	run_argv(p, bin, root, bundle, id, true, argv);
}

void qp_peer_delete(const struct qp_peer *p, const char *bin, const char *root, const char *id)
{
	const char *argv[] = { bin, "--root", root, "delete", "--force", id, NULL };
	double ms;
	int status;

	(void)p;
	qp_bench_child((char *const *)argv, &ms, &status, NULL, NULL);
}

void qp_runsc_default_platform(const char *runsc, char *buf, size_t size)
{
	const char *argv[] = { runsc, "flags", NULL };
	struct qp_child_out out = { 0 };
	double ms;
	int status;
	char *at, *q;

	snprintf(buf, size, "unknown");
	if (qp_bench_child((char *const *)argv, &ms, &status, &out, NULL) < 0)
		return;
	/* on stderr (Go's flag package): "  -platform string\n    \tspecifies
	 * ... (default \"ptrace\")" */
	at = strstr(out.err ? out.err : "", "-platform string");
	at = at ? strchr(at + 1, '\n') : NULL;
	if (at && (q = strchr(at + 1, '\n')) != NULL)
		*q = '\0'; /* the description is the next line */
	if (at && (at = strstr(at, "(default \"")) != NULL) {
		at += strlen("(default \"");
		size_t len = strcspn(at, "\"");
		if (len > 0 && len < size && len < 32)
			snprintf(buf, size, "%.*s", (int)len, at);
	}
	qp_child_out_free(&out);
}

int qp_peer_write_bundle(const char *dir, const char *image, const char *const *args, const char *cgroup,
			 const char *netns, long long memory_bytes, qp_error **err)
{
	struct pod_spec *spec = spec_default();
	int r = -1;

	if (!spec)
		return qp_fail(err, ENOMEM, "bench: spec");
	free(spec->root_path);
	qp_strv_free(spec->process.args);
	spec->process.args = NULL;
	spec->process.terminal = false;
	free(spec->cgroups_path);
	spec->cgroups_path = NULL;
	if (memory_bytes > 0) { /* as qpod run --memory: no swap beyond it */
		spec->resources.has_memory_limit = spec->resources.has_memory_swap = true;
		spec->resources.memory_limit = spec->resources.memory_swap = memory_bytes;
	}
	if (netns) {
		free(spec->ns[QP_NS_NET].path);
		spec->ns[QP_NS_NET].enabled = true;
		spec->ns[QP_NS_NET].path = strdup(netns);
	}
	if (!(spec->root_path = strdup(image)) || !(spec->process.args = qp_strv_dup((char *const *)args)) ||
	    (cgroup && !(spec->cgroups_path = strdup(cgroup))) || (netns && !spec->ns[QP_NS_NET].path)) {
		qp_fail(err, ENOMEM, "bench: spec");
		goto out;
	}
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		qp_fail(err, errno, "bench: mkdir \"%s\"", dir);
		goto out;
	}
	if (spec_write_bundle(spec, dir, err) < 0)
		goto out;
	r = 0;
out:
	spec_free(spec);
	return r;
}

void qp_peer_remove_bundle(const char *dir)
{
	_cleanup_free_ char *cfg = NULL;

	if (asprintf(&cfg, "%s/config.json", dir) >= 0)
		unlink(cfg);
	rmdir(dir);
}
