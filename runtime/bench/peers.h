/* runtime/bench/peers.h — the other OCI runtimes qpod is measured against
 * on the same bundle: runc, crun and gVisor's runsc (Debian packages that
 * tools/deps.sh installs).  A peer that is missing or refuses this host is
 * still a row of the result, carrying its reason (result.h: reason). */
#ifndef QPOD_BENCH_PEERS_H
#define QPOD_BENCH_PEERS_H

#include <stddef.h>

#include "result/result.h"
#include "util/error.h"

#define QP_PEER_ARGS 12 /* the longest peer argv, NULL included */

struct qp_peer {
	const char *name;    /* "runc", "crun", "runsc": the row's name */
	const char *package; /* the Debian package that ships it */
	const char *kind;    /* "container" or "sandbox" (report/kinds.c) */
};
extern const struct qp_peer qp_peers[]; /* runc, crun, runsc; name NULL ends it */

/* The peer's binary (malloc'ed), or NULL when it is not installed. */
char *qp_peer_find(const struct qp_peer *p);
/* argv of one `PEER --root ROOT run --bundle BUNDLE ID` (runsc: with
 * --network=none: the sandbox's own loopback only, no host interface);
 * the strings are borrowed. */
void qp_peer_run_argv(const struct qp_peer *p, const char *bin, const char *root,
		      const char *bundle, const char *id, const char *argv[QP_PEER_ARGS]);
/* argv of `PEER --root ROOT run --detach --bundle BUNDLE ID`: a pod that
 * serves the network tests in a namespace the bundle joins (runsc with its
 * own default network, the namespace's interfaces in its netstack). */
void qp_peer_serve_argv(const struct qp_peer *p, const char *bin, const char *root, const char *bundle,
			const char *id, const char *argv[QP_PEER_ARGS]);
/* `PEER --root ROOT delete --force ID`, errors ignored: what a failed or
 * interrupted run left. */
void qp_peer_delete(const struct qp_peer *p, const char *bin, const char *root, const char *id);
/* runsc's platform when none is given (its own default, from `runsc
 * flags`) into buf; "unknown" if it does not say. */
void qp_runsc_default_platform(const char *runsc, char *buf, size_t size);
/* bench memory --mode container --baseline: host PSS and MemAvailable
 * drop per idle pod under qpod and each peer (memory_peers.c) */
struct qp_bench_opts;
struct qp_bench_report;
int qp_bench_memory_peers(const struct qp_bench_opts *o, struct qp_bench_report *r, qp_error **err);

/* DIR/config.json: qpod's default spec (runc spec's), root = image,
 * process = args (NULL-terminated), no terminal; cgroupsPath = cgroup
 * (NULL: none, the runtime's default); the network namespace at netns
 * joined (NULL: a fresh one); a memory limit of memory_bytes, swap
 * included (0: none). */
int qp_peer_write_bundle(const char *dir, const char *image, const char *const *args, const char *cgroup,
			 const char *netns, long long memory_bytes, qp_error **err);
/* The cgroup a peer's pod gets when one runs at a time: beside qpod's own
 * pods (qpod/ID), so that on a busy host the CPU share of the peers and of
 * qpod's containers is decided by the same parent; runc's default, /ID at
 * the top, gave each peer a fresh share of the machine there. */
#define QP_PEER_CGROUP "/qpod/qpod-bench-peer"
/* remove DIR/config.json and DIR (errors ignored) */
void qp_peer_remove_bundle(const char *dir);

#endif
