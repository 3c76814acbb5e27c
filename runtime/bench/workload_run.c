/* runtime/bench/workload_run.c — how `qpod bench workload` runs one tool in
 * a target (the host, a container pod, a microVM pod) and reads its JSON
 * line: shared by the loop (scenario_workload.c) and the network and file
 * tests (workload_net.c, workload_file.c). */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "bench/workload.h"
#include "util/cleanup.h"

size_t wl_target_prefix(const struct wl *b, const char *target, const char **argv, bool detach,
			const char *name)
{
	static char vcpus[16];
	size_t n = 0;

	if (!strcmp(target, "host"))
		return 0;
	argv[n++] = b->o->qpod;
	argv[n++] = "--root";
	argv[n++] = b->o->root;
	argv[n++] = "run";
	if (detach) {
		argv[n++] = "-d";
		argv[n++] = "--name";
		argv[n++] = name;
		argv[n++] = "--net";
		argv[n++] = "bridge";
	} else {
		argv[n++] = "--rm";
	}
	if (!strcmp(target, "vm")) {
		argv[n++] = "--mode";
		argv[n++] = "vm";
		argv[n++] = "--memory";
		argv[n++] = b->o->memory ? b->o->memory : WL_VM_MEMORY_ARG;
		if (b->o->vcpus > 0) {
			snprintf(vcpus, sizeof(vcpus), "%d", b->o->vcpus);
			argv[n++] = "--vcpus";
			argv[n++] = vcpus;
		}
	}
	argv[n++] = b->img;
	argv[n++] = "--";
	return n;
}

const char *wl_tool_path(const struct wl *b, const char *target, const char *tool, char *buf,
			 size_t size)
{
	snprintf(buf, size, "%s/%s", !strcmp(target, "host") ? b->tools : "/bench", tool);
	return buf;
}

int wl_run_tool(const char *const *argv, const char *what, const char *const *extra,
		struct wl_values *vals, qp_error **err)
{
	struct qp_child_out out = { 0 };
	double ms, score;
	int status, r = 0;

	if (qp_bench_child((char *const *)argv, &ms, &status, &out, err) < 0)
		return -1;
	yajl_val obj = status == 0 ? qp_bench_json_line(out.out, NULL) : NULL;
	const char *u = qp_json_get_str(obj, "unit");
	bool ok = qp_bench_json_number(obj, NULL, "score", &score) && u && strlen(u) < sizeof(vals->v[0].unit);
	vals->n = 0;
	if (ok) {
		vals->v[0].metric = "score";
		strcpy(vals->v[0].unit, u);
		vals->v[vals->n++].v = score;
	}
	for (size_t i = 0; ok && extra && extra[i] && vals->n < WL_VALUES; i++) {
		vals->v[vals->n].metric = extra[i];
		strcpy(vals->v[vals->n].unit, "us");
		ok = qp_bench_json_number(obj, NULL, extra[i], &vals->v[vals->n++].v);
	}
	if (!ok) {
		const char *e = out.err && *out.err ? out.err : out.out ? out.out : "";
		r = qp_error_set(err, QP_E_GENERIC, 0, "%s: exit status %d: %.*s", what, status,
				 (int)strcspn(e, "\n"), e);
	}
	yajl_tree_free(obj);
	qp_child_out_free(&out);
	return r;
}

void wl_delete_pod(const struct wl *b, const char *id)
{
	const char *argv[] = { b->o->qpod, "--root", b->o->root, "delete", "--force", id, NULL };
	double ms;
	int status;
	qp_bench_child((char *const *)argv, &ms, &status, NULL, NULL);
}

void wl_stop(struct qp_child_run *run)
{
	double ms;
	int status;

	if (run->pid <= 0)
		return;
	kill(run->pid, SIGTERM);
	qp_bench_child_finish(run, &ms, &status, NULL, NULL);
	run->pid = -1;
}

int wl_run_in(const struct wl *b, const char *target, const char *const *cmd, const char *what,
	      struct wl_values *vals, qp_error **err)
{
	const char *argv[48];
	size_t n;

	if (wl_is_peer(target))
		return wl_run_peer(b, target, cmd, what, vals, err);
	n = wl_target_prefix(b, target, argv, false, NULL);
	for (size_t i = 0; cmd[i] && n < QP_ARRAY_SIZE(argv) - 1; i++)
		argv[n++] = cmd[i];
	argv[n] = NULL;
	return wl_run_tool(argv, what, NULL, vals, err);
}
