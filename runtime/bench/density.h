/* runtime/bench/density.h — `qpod density`: start pods of one size one
 * after another (or N in flight) until memory, the network (tap, bridge,
 * subnet) or the host's reserve runs out, or --max; measure each start and
 * the host's MemAvailable after it, then every pod's memory, then tear them
 * all down in parallel.  The result (bench/result.h, scenario "density")
 * has "count", "stop_reason" and the per-pod series in pod order. */
#ifndef QPOD_DENSITY_H
#define QPOD_DENSITY_H

#include <stdbool.h>
#include <stdint.h>

#include "result/result.h"
#include "util/error.h"

struct qp_density_opts {
	bool vm;
	int vcpus;                /* 0 = 1 */
	int64_t memory;           /* bytes per pod */
	const char *image;        /* absolute rootfs */
	long max;                 /* 0 = unlimited */
	int64_t reserve;          /* bytes of MemAvailable that must remain */
	int parallel;             /* starts in flight */
	bool keep;                /* leave the pods running */
	bool ksm;                 /* kernel samepage merging on during the run */
	const char *net;          /* "none" or "bridge" */
	const char *subnet, *bridge; /* bridge options, may be NULL */
	const char *boot;         /* vm pods' --boot (auto, template, cold); NULL = auto */
	int rootfd;               /* the state root (cli) */
	const char *root;
	bool progress;
};

/* Stop reasons, exactly as written to "stop_reason". */
#define QP_DENSITY_MAX "max"
#define QP_DENSITY_ENOMEM "enomem"
#define QP_DENSITY_TAP "tap-limit"
#define QP_DENSITY_BRIDGE "bridge-full"
#define QP_DENSITY_SUBNET "subnet-full"
#define QP_DENSITY_RESERVE "reserve"
#define QP_DENSITY_TIMEOUT "start-timeout" /* a guest too slow to boot: CPU, not memory */
#define QP_DENSITY_INTERRUPTED "interrupted"
#define QP_DENSITY_ERROR "error"

/* The reserve rule (also `bench consolidate`'s): would in_flight + 1 more
 * pods take MemAvailable below reserve bytes?  A pod's cost is the
 * MemAvailable drop so far (avail0_kb before the first of count pods) per
 * pod, or a first guess while none runs. */
bool qp_density_reserve_crossed(long long avail0_kb, long long count, bool vm, int64_t reserve,
				int in_flight);
/* The default reserve: max(10% of ram, 1 GiB). */
int64_t qp_density_default_reserve(int64_t ram);

/* Run it; fills r.  Returns -1 only if it could not run at all; a stop
 * for any reason, "error" included, is a result (*detail says more). */
int qp_density_run(const struct qp_density_opts *o, struct qp_bench_report *r, char *detail,
		   size_t detail_size, qp_error **err);

/* --baseline (bench/memory_peers.c): runc, crun and runsc, each starting
 * count idle pods (`sleep`, detached) one after another on the same image,
 * stopping early at the reserve; rows per peer: start_ms per pod,
 * host_pss_mb and per_pod_host_mb per pod, "pods" started and
 * "projected_pods" (how many would fit before the reserve at that cost).
 * In container mode qpod's pods are measured the same way too (row
 * "container": `qpod run -d`, timed as a child like the peers).
 * A peer that is missing or refuses is a row with its reason. */
int qp_density_peers(const struct qp_density_opts *o, long count, struct qp_bench_report *r, qp_error **err);

#endif
