/* runtime/bench/scenario_consolidate.c — `qpod bench consolidate`, after
 * OpenVZ's vConsolidate and LAMP pages: N pods run the same mixed workload
 * at the same time, for N = 1, 2, ... --pods, container pods and then VM
 * pods on the same host.  Each pod serves netbench's TCP_RR (its main
 * process); at each step one more pod is started, then every pod runs,
 * through `qpod exec`, intbench (CPU) and stream (memory bandwidth, a
 * STREAM_SIZE array) side by side for --duration seconds, while the host
 * runs one TCP_RR client per pod for the same time.  Per step: aggregate
 * DMIPS, stream GB/s (triad) and round trips/s over the pods, and the worst
 * pod's median and p99 round trip.  Sample i of every result belongs to
 * i+1 pods (as density's pod order).  density's reserve rule decides
 * whether one more pod may start (bench/density.h): a step that would take
 * MemAvailable below the reserve is not run (stop_reason "reserve").  Runs
 * in the bench's own network namespace, like the workload's network tests. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/density.h"
#include "bench/podmem.h"
#include "bench/workload.h"

#define STREAM_SIZE "4000000" /* elements: 3 arrays of 32 MB, beyond a common L3 */
#define RR_PORT "12867"
#define POD_MAX 64

static const struct {
	const char *metric, *unit;
} metrics[] = {
	{ "aggregate_int_dmips", "DMIPS" }, { "aggregate_stream_gbs", "GB/s" }, { "aggregate_rr_rate", "trans/s" },
	{ "worst_p50_us", "us" },	   { "worst_p99_us", "us" },
};
#define NMETRICS (sizeof(metrics) / sizeof(metrics[0]))

struct pods {
	char id[POD_MAX][64];
	char addr[POD_MAX][32];
	int n;
};

static void pod_id(char *buf, size_t size, bool vm, int i)
{
	snprintf(buf, size, "bench-cons-%s-%d", vm ? "vm" : "ct", i);
}

/* One more pod serving TCP_RR; waits until it answers. */
static int add_pod(struct wl *b, struct pods *p, bool vm, qp_error **err)
{
	const char *argv[32];
	char vcpus[16], tool[4300];
	size_t n = 0;
	double ms;
	int status, i = p->n;

	pod_id(p->id[i], sizeof(p->id[i]), vm, i);
	argv[n++] = b->o->qpod, argv[n++] = "--root", argv[n++] = b->o->root;
	argv[n++] = "run", argv[n++] = "-d", argv[n++] = "--name", argv[n++] = p->id[i];
	argv[n++] = "--net", argv[n++] = "bridge";
	if (vm) {
		argv[n++] = "--mode", argv[n++] = "vm";
		argv[n++] = "--memory", argv[n++] = b->o->memory ? b->o->memory : "512M";
		snprintf(vcpus, sizeof(vcpus), "%d", b->o->vcpus > 0 ? b->o->vcpus : 1);
		argv[n++] = "--vcpus", argv[n++] = vcpus;
	}
	argv[n++] = b->img, argv[n++] = "--";
	argv[n++] = wl_tool_path(b, "pod", "netbench", tool, sizeof(tool));
	argv[n++] = "server", argv[n++] = "--port", argv[n++] = RR_PORT;
	argv[n] = NULL;
	if (qp_bench_child((char *const *)argv, &ms, &status, NULL, err) < 0)
		return -1;
	p->n++; /* deleted at the end even if what follows fails */
	if (status != 0)
		return qp_error_set(err, QP_E_GENERIC, 0, "pod %d (%s) did not start (status %d)", i + 1,
				    vm ? "vm" : "container", status);
	if (wl_pod_addr(b, p->id[i], p->addr[i], sizeof(p->addr[i]), err) < 0)
		return -1;
	struct wl quick = *b;
	struct wl_values v;
	snprintf(quick.dur, sizeof(quick.dur), "0.05");
	return wl_net_client(&quick, "ready", p->addr[i], &v, err);
}

/* obj's number `key` in the line of text whose "tool" is tool. */
static bool tool_number(const char *text, const char *tool, const char *key, double *out)
{
	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		yajl_val obj = qp_bench_json_line(l, NULL);
		const char *t = qp_json_get_str(obj, "tool");
		bool ok = t && !strcmp(t, tool) && qp_bench_json_number(obj, NULL, key, out);
		yajl_tree_free(obj);
		if (ok)
			return true;
	}
	return false;
}

/* Every pod's load and every host client at once; the step's figures. */
static int step(struct wl *b, const struct pods *p, double *fig, qp_error **err)
{
	struct qp_child_run load[POD_MAX], rr[POD_MAX];
	char script[256], client[4300];
	int started = 0, ret = 0;

	snprintf(script, sizeof(script),
		 "/bench/intbench --duration %s & /bench/stream --size " STREAM_SIZE " --duration %s; wait", b->dur,
		 b->dur);
	snprintf(client, sizeof(client), "%s/netbench", b->tools);
	for (; started < p->n; started++) {
		const char *largv[] = { b->o->qpod, "--root", b->o->root, "exec", p->id[started], "--", "/bin/sh", "-c",
					script, NULL };
		const char *cargv[] = { client, "client", "--host", p->addr[started], "--port", RR_PORT, "--test", "rr",
					"--duration", b->dur, NULL };
		if (qp_bench_child_start((char *const *)largv, &load[started], true, err) < 0)
			break;
		if (qp_bench_child_start((char *const *)cargv, &rr[started], true, err) < 0) {
			kill(load[started].pid, SIGTERM);
			double ms;
			int st;
			qp_bench_child_finish(&load[started], &ms, &st, NULL, NULL);
			break;
		}
	}
	if (started < p->n)
		ret = -1;
	for (size_t m = 0; m < NMETRICS; m++)
		fig[m] = 0;
	for (int i = 0; i < started; i++) {
		struct qp_child_out lo = { 0 }, ro = { 0 };
		double ms, dmips, gbs, rate, p50, p99;
		int ls, rs;
		int a = qp_bench_child_finish(&load[i], &ms, &ls, &lo, ret ? NULL : err);
		int c = qp_bench_child_finish(&rr[i], &ms, &rs, &ro, ret ? NULL : err);
		if (a < 0 || c < 0)
			ret = -1;
		else if (!ret && (ls || rs || !tool_number(lo.out, "intbench", "score", &dmips) ||
				  !tool_number(lo.out, "stream", "score", &gbs) ||
				  !tool_number(ro.out, "netbench", "score", &rate) ||
				  !tool_number(ro.out, "netbench", "p50_us", &p50) ||
				  !tool_number(ro.out, "netbench", "p99_us", &p99))) {
			const char *e = ls ? lo.err : ro.err;
			ret = qp_error_set(err, QP_E_GENERIC, 0, "pod %d's workload (exit %d) or client (exit %d) failed: %.*s",
					   i + 1, ls, rs, e ? (int)strcspn(e, "\n") : 0, e ? e : "");
		} else if (!ret) {
			fig[0] += dmips, fig[1] += gbs, fig[2] += rate;
			fig[3] = p50 > fig[3] ? p50 : fig[3];
			fig[4] = p99 > fig[4] ? p99 : fig[4];
		}
		qp_child_out_free(&lo);
		qp_child_out_free(&ro);
	}
	return ret;
}

/* All steps of one mode; *reserve_hit when the reserve stopped it. */
static int one_mode(struct wl *b, const struct qp_consolidate_opts *c, bool vm, struct qp_bench_report *r,
		    bool *reserve_hit, qp_error **err)
{
	const char *name = vm ? "vm" : "container";
	struct qp_bench_result *res[NMETRICS];
	struct pods *p = calloc(1, sizeof(*p));
	long long avail0 = qp_host_mem_available_kb();
	int ret = 0;

	if (!p)
		return qp_fail(err, ENOMEM, "bench consolidate");
	for (size_t m = 0; m < NMETRICS; m++)
		if (qp_bench_result_add(r, name, metrics[m].metric, metrics[m].unit, &res[m], err) < 0 ||
		    qp_bench_result_tag(res[m], name, NULL, err) < 0) {
			free(p);
			return -1;
		}
	for (int n = 1; n <= c->pods && ret == 0; n++) {
		double fig[NMETRICS];
		char what[64];

		snprintf(what, sizeof(what), "bench consolidate: %s pods", name);
		qp_bench_progress(b->o, what, n, c->pods);
		if (qp_bench_interrupted(err)) {
			ret = -1;
			break;
		}
		if (qp_density_reserve_crossed(avail0, p->n, vm, c->reserve, 0)) {
			*reserve_hit = true;
			break;
		}
		if (add_pod(b, p, vm, err) < 0 || step(b, p, fig, err) < 0) {
			ret = -1;
			break;
		}
		for (size_t m = 0; m < NMETRICS && ret == 0; m++)
			ret = qp_bench_sample(res[m], fig[m], err);
	}
	for (int i = 0; i < p->n; i++)
		wl_delete_pod(b, p->id[i]);
	free(p);
	return ret;
}

int qp_bench_consolidate(const struct qp_bench_opts *o, const struct qp_consolidate_opts *c,
			 struct qp_bench_report *r, qp_error **err)
{
	struct wl b = { .o = o };
	bool reserve_hit = false;

	snprintf(b.tools, sizeof(b.tools), "%s/tools/bench", o->exe_dir);
	snprintf(b.dur, sizeof(b.dur), "%g", c->duration);
	if (c->pods < 1 || c->pods > POD_MAX)
		return qp_error_set(err, QP_E_INVALID, 0, "--pods must be 1..%d", POD_MAX);
	if (access(b.tools, X_OK) != 0)
		return qp_error_set(err, QP_E_NOTFOUND, 0, "the benchmark tools are not built (%s; run make)", b.tools);
	if (wl_private_netns(err) < 0 || wl_make_image(&b, err) < 0)
		return -1;
	for (int vm = 0; vm < 2; vm++) {
		if (!(vm ? o->vm : o->container))
			continue;
		bool hit = false;
		if (one_mode(&b, c, vm, r, &hit, err) < 0) {
			r->partial = true;
			return -1;
		}
		if (hit)
			fprintf(stderr, "\r\033[Kqpod: bench consolidate: %s pods: the next pod would take MemAvailable "
					"below the reserve of %lld MB: stopped there\n",
				vm ? "vm" : "container", (long long)(c->reserve >> 20));
		reserve_hit |= hit;
	}
	return qp_bench_set(&r->stop_reason, reserve_hit ? "reserve" : "max", err);
}
