/* runtime/bench/scenario_cri.c — `qpod bench cri`: pod start as a kubelet
 * sees it, through containerd's CRI, for each runtime handler (runc, qpod,
 * qpod-vm) side by side.  The CRI calls, the timing and the private
 * containerd live in a Python driver shipped beside qpod
 * (tools/cri/bench_cri.py, on Debian's python3-grpcio: docs/DECISIONS.md
 * "bench cri"); this side runs it, forwards Ctrl-C/SIGTERM to it (it then
 * removes everything it made and writes what it measured), and turns its
 * JSON into the result report. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench.h"
#include "util/cleanup.h"
#include "util/io.h"
#include "util/paths.h"

#define PYTHON "/usr/bin/python3"
#define DRIVER_OUT_MAX (16u << 20)
#define ERR_MAX 300

/* The driver's stderr (a memfd): its last line, for an error that the
 * driver could not write into its result (a crash). */
static void last_line_of(int fd, char *buf, size_t size)
{
	char text[4096];
	ssize_t n = fd >= 0 ? pread(fd, text, sizeof(text) - 1, 0) : -1;
	char *p;

	buf[0] = '\0';
	if (n <= 0)
		return;
	text[n] = '\0';
	while (n && (text[n - 1] == '\n' || text[n - 1] == '\r'))
		text[--n] = '\0';
	p = strrchr(text, '\n');
	snprintf(buf, size, "%.*s", ERR_MAX, p ? p + 1 : text);
}

/* Run argv with stdin and stdout on /dev/null, stderr into errfd (-1: ours,
 * for its progress line); a SIGINT/SIGTERM that reaches us (they are
 * blocked while a bench runs) becomes a SIGTERM to it.  *status as
 * qp_bench_child's. */
static int run_driver(char *const argv[], int errfd, int *status, qp_error **err)
{
	sigset_t sigs;
	int ws;
	pid_t pid;

	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	pid = fork();
	if (pid < 0)
		return qp_fail(err, errno, "fork");
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || (errfd >= 0 && dup2(errfd, 2) < 0))
			_exit(127);
		execv(argv[0], argv);
		_exit(127);
	}
	for (;;) {
		pid_t w = waitpid(pid, &ws, WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR)
			return qp_fail(err, errno, "wait");
		if (sigtimedwait(&sigs, NULL, &(struct timespec){ .tv_nsec = 200 * 1000 * 1000 }) > 0)
			kill(pid, SIGTERM);
	}
	*status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
	return 0;
}

/* The driver's {"results": [...], "phases": {...}} into r. */
static int take_results(yajl_val top, struct qp_bench_report *r, qp_error **err)
{
	yajl_val res = qp_json_get(top, "results"), ph = qp_json_get(top, "phases");

	if (!res || !YAJL_IS_ARRAY(res) || !ph || !YAJL_IS_OBJECT(ph))
		return qp_error_set(err, QP_E_GENERIC, 0, "the driver's result has no results or phases");
	for (size_t i = 0; i < res->u.array.len; i++) {
		yajl_val row = res->u.array.values[i], samples = qp_json_get(row, "samples");
		const char *name = qp_json_get_str(row, "name"), *metric = qp_json_get_str(row, "metric"),
			   *unit = qp_json_get_str(row, "unit");
		struct qp_bench_result *out;
		if (!name || !metric || !unit || !samples || !YAJL_IS_ARRAY(samples))
			return qp_error_set(err, QP_E_GENERIC, 0, "the driver's results[%zu] is malformed", i);
		if (qp_bench_result_add(r, name, metric, unit, &out, err) < 0)
			return -1;
		for (size_t k = 0; k < samples->u.array.len; k++) {
			yajl_val v = samples->u.array.values[k];
			if (!YAJL_IS_NUMBER(v))
				return qp_error_set(err, QP_E_GENERIC, 0, "the driver's results[%zu] has a sample that is not a number", i);
			if (qp_bench_sample(out, YAJL_GET_DOUBLE(v), err) < 0)
				return -1;
		}
	}
	for (size_t i = 0; i < ph->u.object.len; i++) {
		yajl_val one = ph->u.object.values[i];
		if (!YAJL_IS_OBJECT(one))
			return qp_error_set(err, QP_E_GENERIC, 0, "the driver's phases of %s are malformed", ph->u.object.keys[i]);
		for (size_t k = 0; k < one->u.object.len; k++)
			if (YAJL_IS_NUMBER(one->u.object.values[k]) &&
			    qp_bench_phase(r, ph->u.object.keys[i], one->u.object.keys[k],
					   YAJL_GET_DOUBLE(one->u.object.values[k]), err) < 0)
				return -1;
	}
	return 0;
}

/* The handlers the driver measured, as the parameter "handlers". */
static int take_handlers(yajl_val top, struct qp_bench_report *r, qp_error **err)
{
	yajl_val hs = qp_json_get(top, "handlers");
	char list[1024] = "";
	size_t n = 0;

	if (!hs || !YAJL_IS_ARRAY(hs))
		return 0;
	for (size_t i = 0; i < hs->u.array.len; i++)
		if (YAJL_IS_STRING(hs->u.array.values[i]))
			n += (size_t)snprintf(list + n, n < sizeof(list) ? sizeof(list) - n : 0, "%s%s", n ? "," : "",
					      YAJL_GET_STRING(hs->u.array.values[i]));
	return qp_bench_param_str(r, "handlers", list, err);
}

int qp_bench_cri(const struct qp_bench_opts *o, const struct qp_cri_opts *c, struct qp_bench_report *r,
		 qp_error **err)
{
	_cleanup_free_ char *driver = NULL, *out = NULL, *text = NULL;
	char runs[16], warmup[16], parallel[16], mem_pods[16], spares[16], line[ERR_MAX + 1];
	const char *argv[32];
	yajl_val top = NULL;
	size_t n = 0, len;
	int errfd = -1, fd, status = -1, ret = -1;

	driver = qp_find_shipped("../tools/cri/bench_cri.py", "cri/bench_cri.py", NULL);
	if (!driver)
		return qp_error_set(err, QP_E_NOTFOUND, 0,
				    "its driver cri/bench_cri.py is not beside qpod (make install, or run build/qpod)");
	if (access(PYTHON, X_OK) != 0)
		return qp_error_set(err, QP_E_NOTFOUND, 0, PYTHON " not found (Debian package python3)");
	if (asprintf(&out, "%s/cri.json", o->root) < 0)
		return qp_fail(err, ENOMEM, "bench");
	snprintf(runs, sizeof(runs), "%d", o->runs);
	snprintf(warmup, sizeof(warmup), "%d", o->warmup);
	snprintf(parallel, sizeof(parallel), "%d", c->parallel);
	snprintf(mem_pods, sizeof(mem_pods), "%d", c->mem_pods);
	snprintf(spares, sizeof(spares), "%d", c->spares);
	argv[n++] = PYTHON;
	argv[n++] = driver;
	argv[n++] = "--qpod";
	argv[n++] = o->qpod;
	argv[n++] = "--image";
	argv[n++] = o->image;
	argv[n++] = "--runs";
	argv[n++] = runs;
	argv[n++] = "--warmup";
	argv[n++] = warmup;
	argv[n++] = "--parallel";
	argv[n++] = parallel;
	argv[n++] = "--mem-pods";
	argv[n++] = mem_pods;
	argv[n++] = "--spares";
	argv[n++] = spares;
	argv[n++] = "--out";
	argv[n++] = out;
	if (c->handlers) {
		argv[n++] = "--handlers";
		argv[n++] = c->handlers;
	}
	if (c->socket) {
		argv[n++] = "--cri-socket";
		argv[n++] = c->socket;
	}
	if (o->progress)
		argv[n++] = "--progress";
	argv[n] = NULL;

	if (!o->progress && (errfd = memfd_create("bench-cri-err", MFD_CLOEXEC)) < 0)
		return qp_fail(err, errno, "bench: memfd");
	if (run_driver((char *const *)argv, errfd, &status, err) < 0)
		goto out;
	fd = open(out, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || qp_read_all(fd, DRIVER_OUT_MAX, &text, &len) < 0 ||
	    qp_json_parse_buf(text, len, DRIVER_OUT_MAX, "the driver's result", &top, NULL) < 0 ||
	    !YAJL_IS_OBJECT(top)) {
		last_line_of(errfd, line, sizeof(line));
		qp_error_set(err, QP_E_GENERIC, 0, "%s exited with status %d and no result: %s", driver, status,
			     *line ? line : "(no output)");
		if (fd >= 0)
			close(fd);
		goto out;
	}
	close(fd);
	unlink(out);
	if (take_handlers(top, r, err) < 0 || take_results(top, r, err) < 0)
		goto out;
	yajl_val e = qp_json_get(top, "error");
	if (e && YAJL_IS_STRING(e)) {
		yajl_val partial = qp_json_get(top, "partial");
		r->partial = partial && YAJL_IS_TRUE(partial);
		qp_error_set(err, QP_E_GENERIC, 0, "%.*s", ERR_MAX, YAJL_GET_STRING(e));
		goto out;
	}
	if (status != 0) {
		last_line_of(errfd, line, sizeof(line));
		qp_error_set(err, QP_E_GENERIC, 0, "%s exited with status %d: %s", driver, status, line);
		goto out;
	}
	ret = 0;
out:
	yajl_tree_free(top);
	if (errfd >= 0)
		close(errfd);
	return ret;
}
