/* runtime/bench/memory_peers.c — `qpod bench memory --mode container
 * --baseline`: what an idle pod costs the host under qpod and under each
 * peer runtime (runc, crun, gVisor's runsc; bench/peers.h), measured the
 * same way for all: N pods running `sleep 3600`, started one runtime at a
 * time, then
 *   host_pss_mb     the PSS of every process those pods left running (the
 *                   workload, and whatever the runtime keeps beside it:
 *                   qpod's monitor, runsc's sandbox and gofer), per pod;
 *                   the bench is their subreaper while it counts, so
 *                   daemonised processes are its descendants;
 *   mem_available_drop_mb  the host's MemAvailable before minus after, per
 *                   pod (kernel memory included; noisy on a shared host).
 * A peer that is missing or fails is a row with its reason.
 * `qpod density --baseline` runs the peers the same way (qp_density_peers):
 * as many pods as qpod's run started, with each start's time. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/bench.h"
#include "bench/density.h"
#include "bench/peers.h"
#include "bench/podmem.h"
#include "stats.h"
#include "util/cleanup.h"

#define SETTLE_US 1500000
#define MAX_PIDS 4096

/* The parent pid of pid from /proc/PID/stat, -1 if gone. */
static pid_t parent_of(pid_t pid)
{
	char path[64], buf[512];
	FILE *f;
	pid_t pp = -1;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "re")))
		return -1;
	if (fgets(buf, sizeof(buf), f)) {
		char *p = strrchr(buf, ')'); /* the name may hold spaces and parens */
		int v;
		if (p && sscanf(p + 1, " %*c %d", &v) == 1)
			pp = v;
	}
	fclose(f);
	return pp;
}

/* Every descendant of this process (at most max) into pids; how many. */
static size_t descendants(pid_t *out, size_t max)
{
	pid_t pids[MAX_PIDS], parents[MAX_PIDS];
	bool mine[MAX_PIDS] = { false };
	size_t n = 0, found = 0;
	struct dirent *d;
	DIR *dir = opendir("/proc");

	if (!dir)
		return 0;
	while ((d = readdir(dir)) && n < MAX_PIDS) {
		char *end;
		long v = strtol(d->d_name, &end, 10);
		if (*end || v <= 0)
			continue;
		pids[n] = (pid_t)v;
		parents[n++] = parent_of((pid_t)v);
	}
	closedir(dir);
	/* mark the tree under us: repeat until nothing changes (n is small) */
	for (bool grew = true; grew;) {
		grew = false;
		for (size_t i = 0; i < n; i++) {
			if (mine[i])
				continue;
			bool under = parents[i] == getpid();
			for (size_t j = 0; !under && j < n; j++)
				under = mine[j] && parents[i] == pids[j];
			if (under)
				mine[i] = grew = true;
		}
	}
	for (size_t i = 0; i < n && found < max; i++)
		if (mine[i])
			out[found++] = pids[i];
	return found;
}

/* The sum of Pss (kB) over every descendant of this process. */
static long long descendants_pss_kb(void)
{
	pid_t pids[MAX_PIDS];
	size_t n = descendants(pids, MAX_PIDS);
	long long sum = 0;

	for (size_t i = 0; i < n; i++) {
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", (int)pids[i]);
		long long kb = qp_proc_kb(path, "Pss");
		if (kb > 0)
			sum += kb;
	}
	return sum;
}

/* What a delete left running (a runsc sandbox whose delete timed out on a
 * loaded host): our descendants while we are their subreaper, killed and
 * reaped. */
static void kill_leftovers(void)
{
	pid_t pids[MAX_PIDS];

	for (int tries = 0; tries < 20; tries++) {
		size_t n = descendants(pids, MAX_PIDS);
		if (!n)
			return;
		for (size_t i = 0; i < n; i++)
			kill(pids[i], SIGKILL);
		usleep(100000);
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
	}
}

/* rmdir ROOT/PATH in every cgroup hierarchy mounted (v1 and v2): runsc
 * leaves a detached pod's cgroup behind at delete. */
static void remove_cgroup(const char *path)
{
	char line[4096];
	FILE *f = fopen("/proc/self/mountinfo", "re");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char mnt[1024], fs[64];
		const char *sep = strstr(line, " - ");
		/* "ID PARENT MAJ:MIN ROOT MOUNTPOINT ... - FSTYPE SOURCE OPTS" */
		if (!sep || sscanf(line, "%*s %*s %*s %*s %1023s", mnt) != 1 ||
		    sscanf(sep + 3, "%63s", fs) != 1 || (strcmp(fs, "cgroup") && strcmp(fs, "cgroup2")))
			continue;
		char dir[2048];
		snprintf(dir, sizeof(dir), "%s/%s", mnt, path);
		rmdir(dir);
	}
	fclose(f);
}

/* What one runtime's run records, and under which names. */
struct peer_run {
	const char *prefix;      /* pod ids PREFIX-RUNTIME-N, peers' cgroups qpod/ID */
	const char *drop_metric; /* the MemAvailable drop per pod */
	bool starts;             /* density: start_ms per pod, "pods" and "projected_pods" */
	long long reserve;       /* density: bytes of MemAvailable that must remain */
};

static const struct peer_run memory_run = { .prefix = "bench-mem", .drop_metric = "mem_available_drop_mb" };

struct mem_runtime {
	const char *name;         /* the row */
	const struct qp_peer *peer; /* NULL: qpod */
	char *bin, *root;         /* a peer's binary and --root */
};

/* start (or, stop: delete) idle pod i of rt; the reason of a failure into *why */
static int pod_op(const struct qp_bench_opts *o, const struct peer_run *pr, struct mem_runtime *rt,
		  const char *bundle, int i, bool stop, char **why, double *ms, qp_error **err)
{
	char id[32];
	const char *argv[QP_PEER_ARGS + 8];
	struct qp_child_out out = { 0 };
	double unused;
	int status;

	snprintf(id, sizeof(id), "%s-%s-%d", pr->prefix, rt->name, i);
	if (rt->peer && stop) {
		qp_peer_delete(rt->peer, rt->bin, rt->root, id);
		return 0;
	}
	if (rt->peer) {
		static const char *const args[] = { "sleep", "3600", NULL };
		char cg[64];
		/* its own cgroup, named, so that what runsc leaves can be removed */
		snprintf(cg, sizeof(cg), "/qpod/%s", id);
		if (qp_peer_write_bundle(bundle, o->image, args, cg, NULL, 0, err) < 0)
			return -1;
		qp_peer_run_argv(rt->peer, rt->bin, rt->root, bundle, id, argv);
		/* PEER [--network=none] run --detach --bundle B ID */
		size_t n = 0, at = 0;
		while (argv[n])
			n++;
		while (strcmp(argv[at], "run"))
			at++;
		memmove(&argv[at + 2], &argv[at + 1], (n - at) * sizeof(argv[0]));
		argv[at + 1] = "--detach";
	} else if (stop) {
		const char *a[] = { o->qpod, "--root", o->root, "delete", "--force", id, NULL };
		memcpy(argv, a, sizeof(a));
	} else {
		const char *a[] = { o->qpod, "--root", o->root, "run", "-d", "--name", id, o->image, "--",
				    "sleep", "3600", NULL };
		memcpy(argv, a, sizeof(a));
	}
	if (qp_bench_child((char *const *)argv, ms ? ms : &unused, &status, &out, err) < 0)
		return -1;
	if (status != 0 && !stop) {
		char *e = out.err && *out.err ? out.err : "(nothing on stderr)";
		if (asprintf(why, "exited with status %d: %.*s", status, (int)strcspn(e, "\n"), e) < 0)
			*why = NULL;
	}
	qp_child_out_free(&out);
	return 0;
}

/* reap what the pods left us (we were their subreaper) */
static void reap(void)
{
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

/* the rows of a runtime that did not run, each with why */
static int set_reason(struct qp_bench_result *const *rows, size_t n, const char *why, qp_error **err)
{
	for (size_t i = 0; i < n; i++)
		if (rows[i] && qp_bench_set(&rows[i]->reason, why, err) < 0)
			return -1;
	return 0;
}

static int measure(const struct qp_bench_opts *o, const struct peer_run *pr, struct qp_bench_report *r,
		   struct mem_runtime *rt, const char *bundle, qp_error **err)
{
	struct qp_bench_result *pss, *drop, *start = NULL, *pods = NULL, *fit = NULL;
	_cleanup_free_ char *why = NULL;
	int tried = 0, ret = -1;

	if ((pr->starts && qp_bench_result_add(r, rt->name, "start_ms", "ms", &start, err) < 0) ||
	    qp_bench_result_add(r, rt->name, "host_pss_mb", "MB", &pss, err) < 0 ||
	    qp_bench_result_add(r, rt->name, pr->drop_metric, "MB", &drop, err) < 0 ||
	    (pr->starts && (qp_bench_result_add(r, rt->name, "pods", "pods", &pods, err) < 0 ||
			    qp_bench_result_add(r, rt->name, "projected_pods", "pods", &fit, err) < 0)))
		return -1;
	struct qp_bench_result *rows[] = { start, pss, drop, pods, fit };
	if (rt->peer && !rt->bin) {
		if (asprintf(&why, "not installed (Debian package %s; tools/deps.sh installs it)", rt->peer->package) < 0)
			why = NULL;
		goto reason;
	}
	long long before = qp_host_mem_available_kb();
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	for (; tried < o->runs && !why; tried++) {
		double ms;
		qp_bench_progress(o, pr->starts ? "density: peers" : "bench memory: peers", tried + 1, o->runs);
		/* density's reserve rule holds for the peers too */
		if (pr->reserve > 0 && before > 0 && qp_density_reserve_crossed(before, tried, false, pr->reserve, 0))
			break;
		if (qp_bench_interrupted(err) || pod_op(o, pr, rt, bundle, tried, false, &why, &ms, err) < 0)
			goto out;
		if (!why && start && qp_bench_sample(start, ms, err) < 0) {
			tried++;
			goto out;
		}
	}
	if (why || !tried)
		goto out;
	usleep(SETTLE_US);
	long long pss_kb = descendants_pss_kb(), after = qp_host_mem_available_kb();
	double drop_mb = (before - after) / 1024.0 / tried;
	if (pss_kb < 0 || qp_bench_sample(pss, pss_kb / 1024.0 / tried, err) < 0 ||
	    (before > 0 && after > 0 && qp_bench_sample(drop, drop_mb, err) < 0) ||
	    (pods && qp_bench_sample(pods, tried, err) < 0))
		goto out;
	/* how many would fit before the reserve, at this cost per pod */
	if (fit && before > 0 && after > 0 && drop_mb > 0 &&
	    qp_bench_sample(fit, (double)(long long)((before / 1024.0 - pr->reserve / 1048576.0) / drop_mb), err) < 0)
		goto out;
	if (fit && !fit->n && qp_bench_set(&fit->reason, "MemAvailable did not drop: the pods cost less than the "
				       "host's noise", err) < 0)
		goto out;
	ret = 0;
out:
	for (int i = 0; i < tried; i++)
		pod_op(o, pr, rt, bundle, i, true, NULL, NULL, NULL);
	usleep(200000); /* what the deletes killed has exited by now */
	kill_leftovers();
	for (int i = 0; rt->peer && i < tried; i++) { /* the cgroups of what was killed */
		char cg[64];
		snprintf(cg, sizeof(cg), "qpod/%s-%s-%d", pr->prefix, rt->name, i);
		remove_cgroup(cg);
	}
	prctl(PR_SET_CHILD_SUBREAPER, 0);
	reap();
	if (ret < 0 && !why)
		return -1;
reason:
	if (why && set_reason(rows, sizeof(rows) / sizeof(rows[0]), why, err) < 0)
		return -1;
	return 0;
}

/* qpod's row (with_qpod) and every peer's, measured by pr */
static int run_all(const struct qp_bench_opts *o, const struct peer_run *pr, bool with_qpod,
		   struct qp_bench_report *r, qp_error **err)
{
	struct mem_runtime rts[4] = { { .name = "container" } };
	_cleanup_free_ char *bundle = NULL;
	size_t n = 1;
	int ret = 0;

	if (asprintf(&bundle, "%s/.%s-bundle", o->root, pr->prefix) < 0)
		return qp_fail(err, ENOMEM, "bench");
	for (const struct qp_peer *p = qp_peers; p->name && n < 4; p++, n++) {
		rts[n] = (struct mem_runtime){ .name = p->name, .peer = p, .bin = qp_peer_find(p) };
		if (asprintf(&rts[n].root, "%s/.%s-%s", o->root, pr->prefix, p->name) < 0) {
			rts[n].root = NULL;
			ret = qp_fail(err, ENOMEM, "bench");
		}
	}
	for (size_t i = with_qpod ? 0 : 1; i < n && ret == 0; i++)
		ret = measure(o, pr, r, &rts[i], bundle, err);
	for (size_t i = 1; i < n; i++) {
		if (rts[i].root)
			rmdir(rts[i].root);
		free(rts[i].root);
		free(rts[i].bin);
	}
	qp_peer_remove_bundle(bundle);
	return ret;
}

int qp_bench_memory_peers(const struct qp_bench_opts *o, struct qp_bench_report *r, qp_error **err)
{
	return run_all(o, &memory_run, true, r, err);
}

int qp_density_peers(const struct qp_density_opts *d, long count, struct qp_bench_report *r, qp_error **err)
{
	const struct peer_run pr = { .prefix = "density-peer", .drop_metric = "per_pod_host_mb", .starts = true,
				     .reserve = d->reserve };
	/* this binary: density runs from a guarded view (util/exe_guard.h),
	 * which a child can execute through the same link */
	const struct qp_bench_opts o = { .runs = (int)count, .image = d->image, .root = d->root,
					 .progress = d->progress, .qpod = "/proc/self/exe" };

	/* container pods: qpod's too as a `qpod run -d` child (row "container"),
	 * timed as the peers are; the "qpod" rows start in a forked worker */
	return run_all(&o, &pr, !d->vm, r, err);
}
