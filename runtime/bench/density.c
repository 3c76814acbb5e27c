/* runtime/bench/density.c — see density.h.
 *
 * Each start runs in a forked worker (pod_create + pod_start, exactly what
 * `qpod run -d` does), so --parallel N keeps N starts in flight and a start
 * that fails cannot take the density run down with it.  The worker reports
 * one line on a pipe: "ok MS" or "err CODE ERRNO TEXT".  Teardown forks up
 * to TEARDOWN_WORKERS deleters. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"
#include "bench/bench.h"
#include "bench/density.h"
#include "util/report.h"
#include "bench/ksm.h"
#include "bench/podmem.h"
#include "pod.h"
#include "util/strv.h"

#define MAX_PARALLEL 64
#define TEARDOWN_WORKERS 8
#define SETTLE_US 1000000      /* before the memory figures: the last guests go idle */
#define FIRST_GUESS_VM_KB (64 * 1024)
#define FIRST_GUESS_CT_KB (4 * 1024)
#define LINE_MAX_ 1024
#define KSM_WAIT_S 300         /* at most, for KSM's two full scans */
#define IDLE_CPU_WINDOW_US 3000000 /* the idle pods' CPU use is measured over this */

struct worker {
	pid_t pid;
	int fd;
	long index;
	char line[LINE_MAX_];
	size_t len;
};

static double now_ms(void)
{
	return (double)qp_now_ns() / 1e6;
}

/* The run's pods are density-<pid of the density process>-<n>. */
static pid_t run_pid;

static void pod_id(char *buf, size_t size, long i)
{
	snprintf(buf, size, "density-%d-%ld", (int)run_pid, i);
}

static struct pod_spec *build_spec(const struct qp_density_opts *o, qp_error **err)
{
	struct pod_spec *s = spec_default();
	char *args[] = { "sleep", "2147483647", NULL };

	if (!s)
		return qp_fail(err, ENOMEM, "build the spec"), NULL;
	qp_strv_free(s->process.args);
	if (!(s->process.args = qp_strv_dup(args))) {
		qp_fail(err, ENOMEM, "build the spec");
		goto fail;
	}
	if (spec_opt_set(s, "qpod.mode", o->vm ? "vm" : "container", err) < 0)
		goto fail;
	if (o->vcpus > 0) {
		char n[16];
		snprintf(n, sizeof(n), "%d", o->vcpus);
		if (spec_opt_set(s, "qpod.vcpus", n, err) < 0)
			goto fail;
	}
	if (o->vm && o->boot && spec_opt_set(s, "qpod.vm.boot", o->boot, err) < 0)
		goto fail;
	s->resources.has_memory_limit = true;
	s->resources.memory_limit = o->memory;
	if (!strcmp(o->net, "bridge") &&
	    (spec_opt_set(s, "qpod.net", "bridge", err) < 0 ||
	     (o->subnet && spec_opt_set(s, "qpod.net.subnet", o->subnet, err) < 0) ||
	     (o->bridge && spec_opt_set(s, "qpod.net.bridge", o->bridge, err) < 0)))
		goto fail;
	return s;
fail:
	spec_free(s);
	return NULL;
}

static __attribute__((noreturn)) void worker_main(const struct qp_density_opts *o, long index, int wfd)
{
	struct pod_io io = { .foreground = false };
	qp_error *e = NULL;
	struct pod_spec *spec = build_spec(o, &e);
	struct pod *pod = NULL;
	char id[64];
	sigset_t none;
	double t0 = now_ms();

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* the pods' stdio: nowhere (an idle workload; and a pipe the caller
	 * reads must not be held open by pods) */
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0)
		_exit(1);
	pod_id(id, sizeof(id), index);
	if (!spec) {
		qp_report_err(wfd, e, "");
		_exit(1);
	}
	if (pod_create(o->rootfd, o->root, id, spec, NULL, o->image, &io, &pod, &e) < 0) {
		spec_free(spec);
		goto fail;
	}
	if (pod_start(pod, &e) < 0) {
		pod_delete(pod, true, NULL);
		pod_free(pod);
		goto fail;
	}
	qp_report_ok(wfd, "%.3f", now_ms() - t0);
	pod_free(pod);
	_exit(0);
fail:
	qp_report_err(wfd, e, "failed");
	_exit(1);
}

static int spawn(const struct qp_density_opts *o, long index, struct worker *w, qp_error **err)
{
	int fd;

	w->pid = qp_report_fork(&fd, "a start worker", err);
	if (w->pid < 0)
		return -1;
	if (w->pid == 0)
		worker_main(o, index, fd);
	w->fd = fd;
	w->index = index;
	w->len = 0;
	return 0;
}

/* Map a failed start to a stop reason. */
static const char *classify(int code, int errnum, const char *text)
{
	if (code == QP_E_TAPLIMIT)
		return QP_DENSITY_TAP;
	if (code == QP_E_BRIDGEFULL)
		return QP_DENSITY_BRIDGE;
	if (code == QP_E_SUBNETFULL)
		return QP_DENSITY_SUBNET;
	if (code == QP_E_TIMEOUT)
		return QP_DENSITY_TIMEOUT;
	if (code == QP_E_NOMEM || errnum == ENOMEM || errnum == EAGAIN ||
	    strstr(text, "Cannot allocate memory") || strstr(text, "Resource temporarily unavailable"))
		return QP_DENSITY_ENOMEM;
	return QP_DENSITY_ERROR;
}

struct run {
	const struct qp_density_opts *o;
	struct qp_bench_report *r;
	struct qp_bench_result *start, *avail;
	long long avail0;
	long count;            /* pods started */
	long *ok;              /* their indexes */
	size_t ok_cap;
	const char *stop;
	char *detail;
	size_t detail_size;
	double last_ms;
};

static int note_ok(struct run *run, long index, double ms, qp_error **err)
{
	long long avail = qp_host_mem_available_kb();

	if ((size_t)run->count == run->ok_cap) {
		size_t cap = run->ok_cap ? run->ok_cap * 2 : 64;
		long *v = realloc(run->ok, cap * sizeof(*v));
		if (!v)
			return qp_fail(err, ENOMEM, "density");
		run->ok = v;
		run->ok_cap = cap;
	}
	run->ok[run->count++] = index;
	run->last_ms = ms;
	if (qp_bench_sample(run->start, ms, err) < 0 ||
	    qp_bench_sample(run->avail, (double)avail / 1024, err) < 0)
		return -1;
	if (run->o->progress)
		fprintf(stderr, "\r\033[Kdensity: %ld pods, last start %.0f ms, MemAvailable %lld MB, %.1f MB/pod",
			run->count, ms, avail / 1024,
			(double)(run->avail0 - avail) / 1024 / (double)run->count);
	return 0;
}

/* A worker's line is complete (or it closed): account for it. */
static int finish_worker(struct run *run, struct worker *w, qp_error **err)
{
	qp_error *e = NULL;
	const char *rest;
	double ms;

	w->line[w->len] = '\0';
	close(w->fd);
	w->fd = -1;
	waitpid(w->pid, NULL, 0);
	w->pid = 0;
	if (qp_report_parse(w->line, &rest, "the start worker died without a report", &e) == 0) {
		if (sscanf(rest, "%lf", &ms) == 1)
			return note_ok(run, w->index, ms, err);
		qp_error_set(&e, QP_E_GENERIC, 0, "the start worker sent a malformed report");
	}
	if (!run->stop) {
		run->stop = classify(e->code, e->errnum, e->msg);
		snprintf(run->detail, run->detail_size, "pod %ld: %s", w->index + 1, e->msg);
	}
	qp_error_free(&e);
	return 0;
}

/* Read a worker's whole report, blocking (it has its own start timeout),
 * and account for it. */
static void drain_worker(struct run *run, struct worker *w)
{
	ssize_t got;

	while (w->len < sizeof(w->line) - 1 &&
	       (got = read(w->fd, w->line + w->len, sizeof(w->line) - 1 - w->len)) != 0) {
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			break;
		w->len += (size_t)got;
		if (memchr(w->line, '\n', w->len))
			break;
	}
	finish_worker(run, w, NULL);
}

static bool reserve_crossed(struct run *run, int in_flight)
{
	long long avail = qp_host_mem_available_kb();
	long long per = run->count ? (run->avail0 - avail) / run->count : 0;

	if (per <= 0)
		per = run->o->vm ? FIRST_GUESS_VM_KB : FIRST_GUESS_CT_KB;
	return avail - per * (in_flight + 1) < run->o->reserve / 1024;
}

static int start_loop(struct run *run, qp_error **err)
{
	const struct qp_density_opts *o = run->o;
	struct worker w[MAX_PARALLEL];
	int in_flight = 0, ret = 0;
	long next = 0;

	memset(w, 0, sizeof(w));
	for (;;) {
		/* start more while allowed */
		while (!run->stop && in_flight < o->parallel) {
			qp_error *e = NULL;
			if (qp_bench_interrupted(&e)) {
				qp_error_free(&e);
				run->stop = QP_DENSITY_INTERRUPTED;
				snprintf(run->detail, run->detail_size, "SIGINT or SIGTERM");
				break;
			}
			if (o->max && next >= o->max) {
				run->stop = QP_DENSITY_MAX;
				snprintf(run->detail, run->detail_size, "--max %ld reached", o->max);
				break;
			}
			if (reserve_crossed(run, in_flight)) {
				run->stop = QP_DENSITY_RESERVE;
				snprintf(run->detail, run->detail_size,
					 "the next pod would take MemAvailable below the reserve of %lld MB",
					 (long long)(o->reserve >> 20));
				break;
			}
			int slot = 0;
			while (w[slot].pid)
				slot++;
			if (spawn(o, next, &w[slot], err) < 0) {
				ret = -1;
				run->stop = QP_DENSITY_ERROR;
				break;
			}
			next++;
			in_flight++;
		}
		if (!in_flight)
			break;
		struct pollfd p[MAX_PARALLEL];
		int idx[MAX_PARALLEL], n = 0;
		for (int i = 0; i < MAX_PARALLEL; i++)
			if (w[i].pid) {
				p[n] = (struct pollfd){ .fd = w[i].fd, .events = POLLIN };
				idx[n++] = i;
			}
		if (poll(p, (nfds_t)n, 200) < 0 && errno != EINTR) {
			/* the workers go on starting their pods: wait for each
			 * report, so every pod started reaches the teardown */
			ret = qp_fail(err, errno, "poll");
			if (!run->stop)
				run->stop = QP_DENSITY_ERROR;
			for (int i = 0; i < MAX_PARALLEL; i++)
				if (w[i].pid)
					drain_worker(run, &w[i]);
			return ret;
		}
		for (int k = 0; k < n; k++) {
			struct worker *x = &w[idx[k]];
			if (!p[k].revents)
				continue;
			ssize_t got = read(x->fd, x->line + x->len, sizeof(x->line) - 1 - x->len);
			if (got > 0 && x->len + (size_t)got < sizeof(x->line) - 1 &&
			    !memchr(x->line + x->len, '\n', (size_t)got)) {
				x->len += (size_t)got;
				continue;
			}
			if (got > 0)
				x->len += (size_t)got;
			if (finish_worker(run, x, err) < 0)
				ret = -1;
			in_flight--;
		}
	}
	return ret;
}

static const struct {
	const char *metric;
	size_t off;
	bool vm;
} mem_fields[] = {
	{ "rss_mb", offsetof(struct qp_pod_mem, vmm_rss), true },
	{ "pss_mb", offsetof(struct qp_pod_mem, vmm_pss), true },
	{ "vsz_mb", offsetof(struct qp_pod_mem, vmm_vsz), true },
	{ "guest_total_mb", offsetof(struct qp_pod_mem, guest_total), true },
	{ "guest_used_mb", offsetof(struct qp_pod_mem, guest_used), true },
	{ "guest_free_mb", offsetof(struct qp_pod_mem, guest_free), true },
	{ "cgroup_usage_mb", offsetof(struct qp_pod_mem, cgroup_usage), false },
};
#define N_MEM (sizeof(mem_fields) / sizeof(mem_fields[0]))

static int measure(struct run *run, qp_error **err)
{
	struct qp_bench_result *res[N_MEM] = { 0 };
	char id[64];

	for (size_t f = 0; f < N_MEM; f++)
		if (mem_fields[f].vm == run->o->vm &&
		    qp_bench_result_add(run->r, "qpod", mem_fields[f].metric, "MB", &res[f], err) < 0)
			return -1;
	for (long i = 0; i < run->count; i++) {
		struct pod *pod = NULL;
		struct qp_pod_mem m;
		qp_error *e = NULL;

		pod_id(id, sizeof(id), run->ok[i]);
		if (pod_open(run->o->rootfd, run->o->root, id, false, &pod, &e) < 0 ||
		    qp_pod_mem(pod, &m, &e) < 0) {
			/* a pod that died meanwhile is not measured, and says so */
			fprintf(stderr, "\r\033[Kqpod: density: measure %s: %s\n", id, e && e->msg ? e->msg : "?");
			qp_error_free(&e);
			pod_free(pod);
			continue;
		}
		pod_free(pod);
		for (size_t f = 0; f < N_MEM; f++) {
			long long v = *(long long *)((char *)&m + mem_fields[f].off);
			if (res[f] && v >= 0 && qp_bench_sample(res[f], (double)v / 1024, err) < 0)
				return -1;
		}
	}
	return 0;
}

/* busy and total jiffies of the whole host (/proc/stat "cpu" line) */
static bool host_cpu_jiffies(unsigned long long *busy, unsigned long long *total)
{
	unsigned long long v[8] = { 0 };
	FILE *f = fopen("/proc/stat", "re");
	int n;

	if (!f)
		return false;
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
		   &v[6], &v[7]);
	fclose(f);
	if (n < 5)
		return false;
	*total = 0;
	for (int i = 0; i < 8; i++)
		*total += v[i];
	*busy = *total - v[3] - v[4]; /* idle, iowait */
	return true;
}

/* What the idle pods cost in CPU: each pod's CPU time (a VM pod's VMM, a
 * container's cgroup: the stats op) over IDLE_CPU_WINDOW_US, in percent of
 * one CPU ("idle_cpu_pct", per pod), and the whole host's busy share
 * meanwhile, in percent of all its CPUs ("host_cpu_busy_pct"). */
static int idle_cpu(struct run *run, qp_error **err)
{
	struct qp_bench_result *per_pod, *host;
	uint64_t *t0 = calloc((size_t)run->count, sizeof(*t0));
	unsigned long long b0, tot0, b1, tot1;
	bool have_host;
	double t_start, secs;
	char id[64];
	int ret = -1;

	if (!t0)
		return qp_fail(err, ENOMEM, "density");
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 0) {
			have_host = host_cpu_jiffies(&b0, &tot0);
			t_start = now_ms();
		} else {
			if (run->o->progress)
				fputs("\r\033[Kdensity: measuring the idle pods' CPU use", stderr);
			usleep(IDLE_CPU_WINDOW_US);
			have_host = have_host && host_cpu_jiffies(&b1, &tot1);
			secs = (now_ms() - t_start) / 1000;
			if (qp_bench_result_add(run->r, "qpod", "idle_cpu_pct", "%", &per_pod, err) < 0)
				goto out;
		}
		for (long i = 0; i < run->count; i++) {
			struct pod *pod = NULL;
			struct qp_stats st = { 0 };
			pod_id(id, sizeof(id), run->ok[i]);
			bool ok = pod_open(run->o->rootfd, run->o->root, id, false, &pod, NULL) == 0 &&
				  pod_stats(pod, &st, NULL) == 0 && st.has_cpu;
			pod_free(pod);
			qp_stats_free(&st);
			if (pass == 0)
				t0[i] = ok ? st.cpu_total : UINT64_MAX;
			else if (ok && t0[i] != UINT64_MAX && st.cpu_total >= t0[i] &&
				 qp_bench_sample(per_pod, (double)(st.cpu_total - t0[i]) / 1e9 / secs * 100, err) < 0)
				goto out;
		}
	}
	if (run->o->progress)
		fputs("\r\033[K", stderr);
	if (have_host && tot1 > tot0 &&
	    (qp_bench_result_add(run->r, "qpod", "host_cpu_busy_pct", "%", &host, err) < 0 ||
	     qp_bench_sample(host, (double)(b1 - b0) * 100 / (double)(tot1 - tot0), err) < 0))
		goto out;
	ret = 0;
out:
	free(t0);
	return ret;
}

/* Delete every pod, TEARDOWN_WORKERS at a time. */
static void teardown(struct run *run)
{
	pid_t pids[TEARDOWN_WORKERS];
	int nw = run->count < TEARDOWN_WORKERS ? (int)run->count : TEARDOWN_WORKERS;

	for (int k = 0; k < nw; k++) {
		pids[k] = fork();
		if (pids[k] == 0) {
			sigset_t none;
			sigemptyset(&none);
			sigprocmask(SIG_SETMASK, &none, NULL);
			for (long i = k; i < run->count; i += nw) {
				struct pod *pod = NULL;
				char id[64];
				pod_id(id, sizeof(id), run->ok[i]);
				if (pod_open(run->o->rootfd, run->o->root, id, true, &pod, NULL) == 0)
					pod_delete(pod, true, NULL);
				pod_free(pod);
			}
			_exit(0);
		}
	}
	for (int k = 0; k < nw; k++)
		if (pids[k] > 0)
			waitpid(pids[k], NULL, 0);
}

/* With --ksm: wait (bounded) for two full KSM scans after the last start,
 * so every pod's pages were compared, then record what merging saved. */
static int ksm_settle(struct run *run, qp_error **err)
{
	struct qp_bench_result *res;
	long start = qp_ksm_full_scans();

	for (int s = 0; s < KSM_WAIT_S && qp_ksm_full_scans() < start + 2; s++) {
		if (qp_bench_interrupted(NULL))
			break;
		if (run->o->progress)
			fprintf(stderr, "\r\033[Kdensity: waiting for KSM (%d s, %.0f MB merged)", s, qp_ksm_saved_mb());
		sleep(1);
	}
	if (run->o->progress)
		fputs("\r\033[K", stderr);
	if (qp_bench_result_add(run->r, "qpod", "ksm_saved_mb", "MB", &res, err) < 0 ||
	    qp_bench_sample(res, qp_ksm_saved_mb(), err) < 0)
		return -1;
	return 0;
}

int qp_density_run(const struct qp_density_opts *o, struct qp_bench_report *r, char *detail,
		   size_t detail_size, qp_error **err)
{
	struct run run = { .o = o, .r = r, .detail = detail, .detail_size = detail_size };
	struct qp_ksm ksm = { .run = -1, .pages_to_scan = -1 };
	struct qp_bench_result *res;
	long long avail_end;
	int ret = -1;

	detail[0] = '\0';
	run_pid = getpid();
	/* the pods' options, checked once before any pod starts */
	struct pod_spec *check = build_spec(o, err);
	if (!check)
		return -1;
	spec_free(check);
	if (o->ksm && qp_ksm_on(&ksm, err) < 0)
		return -1;
	run.avail0 = qp_host_mem_available_kb();
	if (run.avail0 < 0)
		return qp_error_set(err, QP_E_GENERIC, 0, "cannot read MemAvailable from /proc/meminfo");
	if (qp_bench_result_add(r, "qpod", "start_ms", "ms", &run.start, err) < 0 ||
	    qp_bench_result_add(r, "qpod", "host_mem_available_mb", "MB", &run.avail, err) < 0)
		return -1;
	if (start_loop(&run, err) < 0)
		r->partial = true;
	if (o->progress)
		fputs("\r\033[K", stderr);
	r->has_count = true;
	r->count = run.count;
	qp_bench_set(&r->stop_reason, run.stop ? run.stop : QP_DENSITY_ERROR, NULL);
	if (run.count && !(run.stop && !strcmp(run.stop, QP_DENSITY_INTERRUPTED))) {
		usleep(SETTLE_US);
		if (o->ksm && ksm_settle(&run, err) < 0)
			goto out;
		avail_end = qp_host_mem_available_kb();
		if (qp_bench_result_add(r, "qpod", "per_pod_host_mb", "MB", &res, err) < 0 ||
		    qp_bench_sample(res, (double)(run.avail0 - avail_end) / 1024 / (double)run.count, err) < 0 ||
		    qp_bench_param_num(r, "host_mem_available_before_mb", (double)run.avail0 / 1024, err) < 0 ||
		    qp_bench_param_num(r, "host_mem_available_after_mb", (double)avail_end / 1024, err) < 0 ||
		    measure(&run, err) < 0 || idle_cpu(&run, err) < 0)
			goto out;
	}
	ret = 0;
out:
	if (!o->keep && run.count) {
		double t0 = now_ms();
		teardown(&run);
		if (qp_bench_result_add(r, "qpod", "teardown_ms", "ms", &res, ret ? NULL : err) < 0 ||
		    qp_bench_sample(res, now_ms() - t0, ret ? NULL : err) < 0)
			ret = -1;
	}
	if (ksm.active)
		qp_ksm_restore(&ksm);
	free(run.ok);
	return ret;
}
