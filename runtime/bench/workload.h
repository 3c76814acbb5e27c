/* runtime/bench/workload.h — what the parts of `qpod bench workload` share
 * (scenario_workload.c runs the loop; workload_net.c the tests with a server
 * in the pod, workload_file.c the file I/O tests; workload_run.c how a tool
 * runs in a target, which all three use).  One measurement of a
 * test yields up to WL_VALUES values, each a sample of its own result
 * (target, test, metric). */
#ifndef QPOD_BENCH_WORKLOAD_H
#define QPOD_BENCH_WORKLOAD_H

#include "bench/bench.h"

#define WL_VALUES 3
#define WL_TARGETS 7 /* host, runc, crun, runsc, container, vm, vm-netns */
#define WL_VM_MEMORY_ARG "2G" /* a vm pod's memory unless --memory says */
#define WL_VM_MEMORY (2LL << 30)

struct wl {
	const struct qp_bench_opts *o;
	const struct qp_workload_opts *w;
	struct qp_bench_report *r; /* the network tests name their links' settings in its params */
	char img[4200];   /* the private image copy */
	char tools[4200]; /* exe_dir/tools/bench */
	char vol[4200];   /* the scratch volume's host directory */
	char dur[32];
};

struct wl_values {
	struct {
		const char *metric; /* "score", "p50_us", "p99_us" */
		char unit[32];
		double v;
	} v[WL_VALUES];
	int n;
};

/* ---- workload_run.c ---- */
/* argv prefix that runs a command in `target` ("host": nothing): `qpod run
 * --rm`, or detached under `name` on the bridge; returns its length. */
size_t wl_target_prefix(const struct wl *b, const char *target, const char **argv, bool detach,
			const char *name);
/* A tool's path as the target sees it (host: the build dir; pods: /bench). */
const char *wl_tool_path(const struct wl *b, const char *target, const char *tool, char *buf,
			 size_t size);
/* Run argv; its JSON line's score (and unit) into vals as "score", and each
 * of the NULL-terminated extra keys (microseconds) as a metric of that name. */
int wl_run_tool(const char *const *argv, const char *what, const char *const *extra,
		struct wl_values *vals, qp_error **err);
/* cmd (NULL-terminated) in target as one measurement (wl_run_tool): on
 * the host, in a `qpod run --rm` pod, or under a peer runtime. */
int wl_run_in(const struct wl *b, const char *target, const char *const *cmd, const char *what,
	      struct wl_values *vals, qp_error **err);
/* workload_peers.c: "runc", "crun", "runsc" (bench/peers.h) as targets */
bool wl_is_peer(const char *target);
/* cmd under peer `target` on a bundle of the bench image (its own root) */
int wl_run_peer(const struct wl *b, const char *target, const char *const *cmd, const char *what,
		struct wl_values *vals, qp_error **err);
/* The network tests' server pod `id` under peer target, running cmd
 * detached in the namespace ns (made by wl_netns_make). */
struct wl_netns;
int wl_peer_serve(const struct wl *b, const char *target, const struct wl_netns *ns, const char *id,
		  const char *const *cmd, qp_error **err);
/* It deleted and its bundle removed (errors ignored: cleanup). */
void wl_peer_unserve(const struct wl *b, const char *target, const char *id);
/* `PEER --root R exec id` into argv (0 if the peer is not installed). */
size_t wl_peer_exec_prefix(const struct wl *b, const char *target, const char *id, const char **argv);
/* the bundle in directory bundle under peer `target` (its own root) */
int wl_run_peer_bundle(const struct wl *b, const char *target, const char *bundle, const char *what,
		       struct wl_values *vals, qp_error **err);
/* `qpod --root R delete --force id`, errors ignored (cleanup). */
void wl_delete_pod(const struct wl *b, const char *id);
/* SIGTERM to a child started with qp_bench_child_start (pid > 0), and wait
 * for it; pid -1 after. */
void wl_stop(struct qp_child_run *run);

/* ---- workload_netns.c: the vm-netns target (a VM pod on the CNI path) ---- */
#define WL_NETNS_POD_ADDR "10.215.0.2" /* the pod's veth, in its namespace */
#define WL_NETNS_POD_IF "eth0"
#define WL_NETNS_CLIENT_IF "qpb-cl0" /* its peer, in the bench's namespace */
struct wl_netns {
	pid_t holder; /* -1: none */
	bool veth;    /* the pair exists */
	char path[64]; /* /proc/HOLDER/ns/net */
};
bool wl_is_netns(const char *target);
/* The pod's namespace with its veth (ns->holder -1 before, on failure). */
int wl_netns_make(struct wl_netns *ns, qp_error **err);
/* The veth pair and the namespace gone; safe on a part-made or removed ns. */
void wl_netns_remove(struct wl_netns *ns);
/* VM pod `name` running cmd (NULL-terminated), detached, joining ns by path. */
int wl_netns_pod(const struct wl *b, const struct wl_netns *ns, const char *name, const char *const *cmd,
		 qp_error **err);

/* ---- scenario_workload.c ---- */
/* Our own network namespace with lo up: the pods' bridge lives there, and
 * no packet reaches the machine's interfaces. */
int wl_private_netns(qp_error **err);
/* IMAGE copied to ROOT/.bench-image, the tools into its /bench, then
 * wl_prepare_dirs; b->o and b->tools must be set. */
int wl_make_image(struct wl *b, qp_error **err);

bool wl_is_net(const char *test);
/* The pod's address from the state root's IPAM file ("ADDR ID IFNAME"). */
int wl_pod_addr(const struct wl *b, const char *id, char *addr, size_t size, qp_error **err);
/* test's client against addr for b->dur seconds, retried until the server
 * answers (up to 30 s).  http: requests/s, p50_us and p99_us; tcp_rr,
 * tcp_stream: the rate; rr_*: only p50_us and p99_us (their rate is
 * tcp_rr's); any other name: a TCP_RR rate, p50_us and p99_us. */
int wl_net_client(const struct wl *b, const char *test, const char *addr, struct wl_values *vals,
		  qp_error **err);
int wl_run_net(const struct wl *b, const char *target, const char *test, struct wl_values *vals,
	       qp_error **err);
bool wl_is_file(const char *test);
/* The image's web root (/www/index.html) and I/O directory (/bench-io), and
 * the scratch volume's directory b->vol (made by make_image's caller). */
int wl_prepare_dirs(struct wl *b, qp_error **err);
int wl_run_file(const struct wl *b, const char *target, const char *test, struct wl_values *vals,
		qp_error **err);

#endif
