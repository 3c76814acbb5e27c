/* runtime/bench/scenario_workload.c — `qpod bench workload`: the same
 * static benchmark binaries (tools/bench/, built by make) on the host, in a
 * container pod and in a microVM pod (and under runc, crun and runsc:
 * workload_peers.c), N runs each, every run of a test going through the
 * targets in turn (interleaved), the score of every run
 * a sample (result name = target, metric "score", with target and test).
 *
 * The binaries are copied into a private copy of the image (IMAGE/bench/),
 * so any rootfs works and nothing is written into the user's image.  The
 * network tests run netbench's server in the pod (bridge network) and the
 * client on the host; the host's own figure is loopback.  So that no packet
 * touches the machine's real interfaces, the whole bench then runs in a
 * network namespace of its own (unshare), where the bridge is created.
 * The tests with a server in the pod (tcp_*, rr_* under load, http) are in
 * workload_net.c, the file I/O tests in workload_file.c. */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/workload.h"
#include "util/cleanup.h"

const char *const qp_workload_tests[] = { "ctxsw", "ctxsw8", "fork", "execve", "syscall", "int",
					  "fp", "stream", "tcp_rr", "tcp_stream", "tcp_stream_out", "rr_idle",
					  "rr_busy_host", "rr_busy_pod", "http", "file_write",
					  "file_read", "file_copy", "file_create", "vol_write",
					  "vol_read", "vol_copy", "vol_create", NULL };

/* The tool and its extra argument for each non-network test. */
static const struct {
	const char *test, *tool, *extra;
} tools[] = {
	{ "ctxsw", "ctxsw", NULL },	   { "ctxsw8", "ctxsw", "--pairs=8" },
	{ "fork", "forkbench", NULL },	   { "execve", "execbench", NULL },
	{ "syscall", "syscallbench", NULL }, { "int", "intbench", NULL },
	{ "fp", "fpbench", NULL },	   { "stream", "stream", NULL },
};

static const char *tool_of(const char *test, const char **extra)
{
	for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++)
		if (!strcmp(tools[i].test, test)) {
			*extra = tools[i].extra;
			return tools[i].tool;
		}
	*extra = NULL;
	return NULL;
}

static int run_local(const struct wl *b, const char *target, const char *test, struct wl_values *vals,
		     qp_error **err)
{
	const char *extra;
	const char *tool = tool_of(test, &extra);
	char path[4300];
	const char *cmd[] = { wl_tool_path(b, target, tool, path, sizeof(path)), "--duration", b->dur, extra,
			      NULL };

	return wl_run_in(b, target, cmd, test, vals, err);
}

int wl_private_netns(qp_error **err)
{
	struct ifreq ifr = { 0 };
	int sk;

	if (unshare(CLONE_NEWNET) < 0)
		return qp_fail(err, errno, "unshare a network namespace for the network tests");
	if ((sk = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0)
		return qp_fail(err, errno, "socket");
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (ioctl(sk, SIOCGIFFLAGS, &ifr) < 0 || (ifr.ifr_flags |= IFF_UP, ioctl(sk, SIOCSIFFLAGS, &ifr)) < 0) {
		int e = errno;
		close(sk);
		return qp_fail(err, e, "lo up");
	}
	close(sk);
	return 0;
}

int wl_make_image(struct wl *b, qp_error **err)
{
	char dst[4300];
	double ms;
	int status;

	snprintf(b->img, sizeof(b->img), "%s/.bench-image", b->o->root);
	const char *cp[] = { "/bin/cp", "-a", b->o->image, b->img, NULL };
	if (qp_bench_child((char *const *)cp, &ms, &status, NULL, err) < 0)
		return -1;
	if (status != 0)
		return qp_error_set(err, QP_E_GENERIC, 0, "copy the image \"%s\" (cp status %d)", b->o->image, status);
	snprintf(dst, sizeof(dst), "%s/bench", b->img);
	const char *cp2[] = { "/bin/cp", "-r", b->tools, dst, NULL };
	if (qp_bench_child((char *const *)cp2, &ms, &status, NULL, err) < 0)
		return -1;
	if (status != 0)
		return qp_error_set(err, QP_E_GENERIC, 0, "copy %s into the image (build them with make)", b->tools);
	return wl_prepare_dirs(b, err);
}

/* One measurement of test in target into vals. */
static int measure(const struct wl *b, const char *target, const char *test, struct wl_values *vals,
		   qp_error **err)
{
	if (wl_is_netns(target) && !wl_is_net(test))
		return qp_error_set(err, QP_E_GENERIC, 0, "%s: not a network test: vm-netns is the vm target's "
				    "network path (a namespace mirrored into the guest); its other figures are vm's", test);
	if (wl_is_net(test))
		return wl_run_net(b, target, test, vals, err);
	if (wl_is_file(test))
		return wl_run_file(b, target, test, vals, err);
	return run_local(b, target, test, vals, err);
}

/* A target that cannot run a test gives a row with its reason (a peer;
 * vm-netns a test without network), not a failure of the bench. */
static bool reason_row(const char *target, const char *test)
{
	return wl_is_peer(target) || (wl_is_netns(target) && !wl_is_net(test));
}

/* the row of target for test (*res, made if NULL), with e's message
 * as its reason */
static int target_reason(struct qp_bench_report *r, const char *target, const char *test, const qp_error *e,
		       struct qp_bench_result **res, qp_error **err)
{
	if (!*res && (qp_bench_result_add(r, target, "score", "", res, err) < 0 ||
		      qp_bench_result_tag(*res, target, test, err) < 0))
		return -1;
	return qp_bench_set(&(*res)->reason, e && e->msg ? e->msg : "failed", err);
}

int qp_bench_workload(const struct qp_bench_opts *o, const struct qp_workload_opts *w,
		      struct qp_bench_report *r, qp_error **err)
{
	struct wl b = { .o = o, .w = w, .r = r };
	bool net = false;
	int total = 0, done = 0, failures = 0;

	snprintf(b.tools, sizeof(b.tools), "%s/tools/bench", o->exe_dir);
	snprintf(b.dur, sizeof(b.dur), "%g", w->duration);
	if (access(b.tools, X_OK) != 0)
		return qp_error_set(err, QP_E_NOTFOUND, 0, "the benchmark tools are not built (%s; run make)", b.tools);
	for (size_t t = 0; w->tests[t]; t++)
		net |= wl_is_net(w->tests[t]);
	if (net && wl_private_netns(err) < 0)
		return -1;
	if (wl_make_image(&b, err) < 0)
		return -1;
	for (size_t g = 0; w->targets[g]; g++)
		for (size_t t = 0; w->tests[t]; t++)
			total += o->runs;
	/* interleaved: each run of a test goes through every target in turn,
	 * so drift in the machine's load hits them all alike */
	for (size_t t = 0; w->tests[t]; t++) {
		struct qp_bench_result *res[WL_TARGETS][WL_VALUES] = { { NULL } };
		bool out[WL_TARGETS] = { false };
		const char *test = w->tests[t];

		for (int i = 0; i < o->runs; i++) {
			for (size_t g = 0; w->targets[g] && g < WL_TARGETS; g++) {
				const char *target = w->targets[g];
				struct wl_values vals = { .n = 0 };
				qp_error *e = NULL;
				char what[96];

				snprintf(what, sizeof(what), "bench workload: %s %s", target, test);
				qp_bench_progress(o, what, ++done, total);
				if (out[g])
					continue;
				int mr = qp_bench_interrupted(err) ? -2 : measure(&b, target, test, &vals, &e);
				/* a test cut short by Ctrl-C is the interruption, not a failure */
				if (mr == -2 || (mr < 0 && qp_bench_interrupted(NULL))) {
					qp_error_free(&e);
					qp_bench_interrupted(err);
					r->partial = true;
					return -1;
				}
				if (mr < 0 && reason_row(target, test)) {
					int pr = target_reason(r, target, test, e, &res[g][0], err);
					qp_error_free(&e);
					if (pr < 0)
						return -1;
					out[g] = true;
					continue;
				} else if (mr < 0) {
					/* a target that cannot run is reported; the others go on */
					fprintf(stderr, "\r\033[Kqpod: bench workload: %s %s: %s\n", target, test,
						e && e->msg ? e->msg : "failed");
					qp_error_free(&e);
					failures++;
					r->partial = true;
					out[g] = true;
					continue;
				}
				for (int v = 0; v < vals.n; v++) {
					if (!res[g][v] &&
					    (qp_bench_result_add(r, target, vals.v[v].metric, vals.v[v].unit, &res[g][v],
								 err) < 0 ||
					     qp_bench_result_tag(res[g][v], target, test, err) < 0))
						return -1;
					if (qp_bench_sample(res[g][v], vals.v[v].v, err) < 0)
						return -1;
				}
			}
		}
	}
	if (failures)
		return qp_error_set(err, QP_E_GENERIC, 0, "%d test(s) could not run (see above); the rest is reported",
				    failures);
	return 0;
}
