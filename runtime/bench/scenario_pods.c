/* runtime/bench/scenario_pods.c — the scenarios that keep pods running:
 *   `qpod bench replace`: one running pod per mode gets N new workloads;
 *      warm (vm: the VM stays) and cold (a new pod under the same ID);
 *      replace_ms (request to the new workload exec'd) and gap_ms (neither
 *      workload running), as `qpod replace` reports them.
 *   `qpod bench memory`: containers: the cgroup's memory usage of N idle
 *      pods; vm: the minimum guest memory that boots and runs
 *      /bin/true, found by bisection; then N idle pods at that size and at
 *      --memory (default 512M), each measured with `qpod stats`: QEMU's
 *      RSS, PSS and VSZ and the guest's total, used and free. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/bench.h"
#include "bench/peers.h"
#include "util/cleanup.h"

#define MIN_PROBE_LO 16  /* MiB: the VM driver's floor */
#define MIN_PROBE_HI 256
#define SETTLE_US 1500000 /* after boot, before stats: the guest is idle by then */

/* qpod --root R ARGS... as an argv in buf (NULL-terminated). */
static void qpod_argv(const struct qp_bench_opts *o, const char **buf, const char *const *args)
{
	size_t n = 0;

	buf[n++] = o->qpod;
	buf[n++] = "--root";
	buf[n++] = o->root;
	for (size_t i = 0; args[i]; i++)
		buf[n++] = args[i];
	buf[n] = NULL;
}

static int qpod_ok(const struct qp_bench_opts *o, const char *const *args, struct qp_child_out *out,
		   qp_error **err)
{
	const char *argv[40];
	double ms;
	int status;

	qpod_argv(o, argv, args);
	if (qp_bench_child((char *const *)argv, &ms, &status, out, err) < 0)
		return -1;
	if (status != 0) {
		const char *e = out && out->err ? out->err : "";
		qp_error_set(err, QP_E_GENERIC, 0, "qpod %s %s: exit status %d: %.*s", args[0],
			     args[1] ? args[1] : "", status, (int)strcspn(e, "\n"), e);
		return -1;
	}
	return 0;
}

static void delete_pod(const struct qp_bench_opts *o, const char *id)
{
	const char *args[] = { "delete", "--force", id, NULL };
	qpod_ok(o, args, NULL, NULL);
}

/* A detached idle pod: qpod run -d --name ID [--mode vm] [--memory M] IMAGE -- sleep 3600 */
/* boot: vm pods' --boot (NULL: the default, auto) */
static int start_idle(const struct qp_bench_opts *o, const char *id, bool vm, const char *memory,
		      const char *boot, qp_error **err)
{
	const char *args[20];
	size_t n = 0;

	args[n++] = "run";
	args[n++] = "-d";
	args[n++] = "--name";
	args[n++] = id;
	if (vm) {
		args[n++] = "--mode";
		args[n++] = "vm";
	}
	if (vm && boot) {
		args[n++] = "--boot";
		args[n++] = boot;
	}
	if (memory) {
		args[n++] = "--memory";
		args[n++] = memory;
	}
	args[n++] = o->image;
	args[n++] = "--";
	args[n++] = "sleep";
	args[n++] = "3600";
	args[n] = NULL;
	return qpod_ok(o, args, NULL, err);
}

/* N replaces of pod id (cold or warm) into replace_ms and gap_ms. */
static int replaces(const struct qp_bench_opts *o, struct qp_bench_report *r, const char *id,
		    const char *name, bool cold, qp_error **err)
{
	const char *warm_args[] = { "replace", id, "--", "sleep", "3600", NULL };
	const char *cold_args[] = { "replace", "--cold", id, "--", "sleep", "3600", NULL };
	struct qp_bench_result *rep, *gap;
	int total = o->warmup + o->runs;

	if (qp_bench_result_add(r, name, "replace_ms", "ms", &rep, err) < 0 ||
	    qp_bench_result_add(r, name, "gap_ms", "ms", &gap, err) < 0)
		return -1;
	for (int i = 0; i < total; i++) {
		struct qp_child_out out = { 0 };
		double a, b;
		char what[64];

		snprintf(what, sizeof(what), "bench replace: %s", name);
		qp_bench_round_progress(o, what, i, o->warmup, o->runs);
		if (qp_bench_interrupted(err))
			return -1;
		if (qpod_ok(o, cold ? cold_args : warm_args, &out, err) < 0) {
			qp_child_out_free(&out);
			return -1;
		}
		yajl_val obj = qp_bench_json_line(out.out, NULL);
		bool ok = qp_bench_json_number(obj, NULL, "replace_ms", &a) &&
			  qp_bench_json_number(obj, NULL, "gap_ms", &b);
		yajl_tree_free(obj);
		qp_child_out_free(&out);
		if (!ok)
			return qp_error_set(err, QP_E_GENERIC, 0, "qpod replace printed no timings");
		if (i >= o->warmup && (qp_bench_sample(rep, a, err) < 0 || qp_bench_sample(gap, b, err) < 0))
			return -1;
	}
	return 0;
}

int qp_bench_replace(const struct qp_bench_opts *o, struct qp_bench_report *r, qp_error **err)
{
	for (int vm = 0; vm < 2; vm++) {
		const char *id = vm ? "bench-replace-vm" : "bench-replace-container";
		bool both = o->container && o->vm;
		int ret;

		if (!(vm ? o->vm : o->container))
			continue;
		if (start_idle(o, id, vm, o->memory, NULL, err) < 0)
			return -1;
		if (vm)
			ret = replaces(o, r, id, both ? "vm-warm" : "warm", false, err);
		else
			ret = 0;
		if (ret == 0)
			ret = replaces(o, r, id, vm ? (both ? "vm-cold" : "cold") : (both ? "container-cold" : "cold"),
				       true, err);
		delete_pod(o, id);
		if (ret < 0) {
			r->partial = true;
			return -1;
		}
	}
	return 0;
}

/* Does a VM with mib MiB boot and run /bin/true? */
static int boots(const struct qp_bench_opts *o, int mib, bool *ok, qp_error **err)
{
	char mem[32];
	/* what a kernel needs to boot: a cold boot (a template per probed size
	 * would be made, and a clone boots no kernel) */
	const char *args[] = { "run",	"--rm", "--mode", "vm",	       "--boot", "cold", "--memory",
			       mem,	o->image, "--",	  "/bin/true", NULL };
	qp_error *e = NULL;

	snprintf(mem, sizeof(mem), "%dM", mib);
	*ok = qpod_ok(o, args, NULL, &e) == 0;
	qp_error_free(&e);
	(void)err;
	return 0;
}

static int min_memory(const struct qp_bench_opts *o, int *out, qp_error **err)
{
	int lo = MIN_PROBE_LO, hi = MIN_PROBE_HI, step = 0;
	bool ok;

	if (boots(o, hi, &ok, err) < 0)
		return -1;
	if (!ok)
		return qp_error_set(err, QP_E_GENERIC, 0, "a %d MiB VM does not boot and run /bin/true", hi);
	if (boots(o, lo, &ok, err) < 0)
		return -1;
	if (ok) {
		*out = lo;
		return 0;
	}
	/* invariant: lo fails, hi works */
	while (hi - lo > 1) {
		int mid = (lo + hi) / 2;
		qp_bench_progress(o, "bench memory: bisection step", ++step, 8);
		if (qp_bench_interrupted(err) || boots(o, mid, &ok, err) < 0)
			return -1;
		if (ok)
			hi = mid;
		else
			lo = mid;
	}
	*out = hi;
	return 0;
}

struct stats_field {
	const char *metric, *key, *section;
};
static const struct stats_field vm_fields[] = {
	{ "rss_mb", "rss_kb", "vmm" },      { "pss_mb", "pss_kb", "vmm" },
	{ "vsz_mb", "vsz_kb", "vmm" },      { "guest_total_mb", "total_kb", "guest" },
	{ "guest_used_mb", "used_kb", "guest" }, { "guest_free_mb", "free_kb", "guest" },
};
static const struct stats_field ct_fields[] = { { "cgroup_usage_mb", "usage_kb", "cgroup" } };
#define MAX_FIELDS 6

/* N idle pods (vm, or container) of `memory` (vm: booted as `boot` says),
 * then qpod stats on each. */
static int measure_pods(const struct qp_bench_opts *o, struct qp_bench_report *r, bool vm,
			const char *memory, const char *boot, const char *name, qp_error **err)
{
	const struct stats_field *fields = vm ? vm_fields : ct_fields;
	size_t nf = vm ? QP_ARRAY_SIZE(vm_fields) : QP_ARRAY_SIZE(ct_fields);
	struct qp_bench_result *res[MAX_FIELDS];
	char id[64];
	int started = 0, ret = -1;

	for (size_t f = 0; f < nf; f++)
		if (qp_bench_result_add(r, name, fields[f].metric, "MB", &res[f], err) < 0)
			return -1;
	for (; started < o->runs; started++) {
		snprintf(id, sizeof(id), "bench-mem-%d", started);
		qp_bench_progress(o, "bench memory: pods", started + 1, o->runs);
		if (qp_bench_interrupted(err) || start_idle(o, id, vm, memory, boot, err) < 0)
			goto out;
	}
	usleep(SETTLE_US);
	for (int i = 0; i < started; i++) {
		const char *args[] = { "stats", id, NULL };
		struct qp_child_out out = { 0 };

		snprintf(id, sizeof(id), "bench-mem-%d", i);
		if (qpod_ok(o, args, &out, err) < 0) {
			qp_child_out_free(&out);
			goto out;
		}
		yajl_val obj = qp_bench_json_line(out.out, NULL);
		qp_child_out_free(&out);
		for (size_t f = 0; f < nf; f++) {
			double v;
			if (!qp_bench_json_number(obj, fields[f].section, fields[f].key, &v) ||
			    qp_bench_sample(res[f], v / 1024, err) < 0) {
				if (err && !*err)
					qp_error_set(err, QP_E_GENERIC, 0, "qpod stats: no %s.%s", fields[f].section,
						     fields[f].key);
				yajl_tree_free(obj);
				goto out;
			}
		}
		yajl_tree_free(obj);
	}
	ret = 0;
out:
	for (int i = 0; i < started; i++) {
		snprintf(id, sizeof(id), "bench-mem-%d", i);
		delete_pod(o, id);
	}
	return ret;
}

int qp_bench_memory(const struct qp_bench_opts *o, struct qp_bench_report *r, qp_error **err)
{
	struct qp_bench_result *res;
	char min[32], name[64];
	int mib = 0;

	if (o->container && measure_pods(o, r, false, o->memory, NULL, "container", err) < 0)
		goto partial;
	if (o->container && o->baseline && qp_bench_memory_peers(o, r, err) < 0)
		goto partial;
	if (!o->vm)
		return 0;
	if (min_memory(o, &mib, err) < 0 || qp_bench_result_add(r, "qpod", "min_memory_mb", "MB", &res, err) < 0 ||
	    qp_bench_sample(res, mib, err) < 0)
		goto partial;
	snprintf(min, sizeof(min), "%dM", mib);
	/* the smallest VM that boots, cold; then the asked size as a template's
	 * clones (the default) beside cold boots */
	snprintf(name, sizeof(name), "qpod-cold@%s", min);
	if (measure_pods(o, r, true, min, "cold", name, err) < 0)
		goto partial;
	const char *size = o->memory ? o->memory : "512M";
	snprintf(name, sizeof(name), "qpod@%s", size);
	if (measure_pods(o, r, true, size, NULL, name, err) < 0)
		goto partial;
	snprintf(name, sizeof(name), "qpod-cold@%s", size);
	if (measure_pods(o, r, true, size, "cold", name, err) < 0)
		goto partial;
	return 0;
partial:
	r->partial = true;
	return -1;
}
