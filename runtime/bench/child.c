/* runtime/bench/child.c — running one measured child process (bench.h),
 * and reading numbers out of the one-line JSON that qpod's own commands
 * print (replace, stats, the run timeline). */
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"
#include "bench/bench.h"

#define OUT_MAX (64 * 1024)

static double now_ms(void)
{
	return (double)qp_now_ns() / 1e6;
}

/* The first OUT_MAX bytes of a memfd, NUL-terminated, malloc'ed. */
static char *slurp(int fd)
{
	char *p = calloc(1, OUT_MAX + 1);
	ssize_t n;

	if (p && (n = pread(fd, p, OUT_MAX, 0)) > 0)
		p[n] = '\0';
	return p;
}

int qp_bench_child_start(char *const argv[], struct qp_child_run *run, bool capture, qp_error **err)
{
	/* output into memfds, not pipes: a pod the child leaves running may
	 * keep its stdio, and must not hold us up */
	int fo = -1, fe = -1;

	run->fo = run->fe = run->pid = -1;
	if (capture) {
		fo = memfd_create("bench-out", MFD_CLOEXEC);
		fe = memfd_create("bench-err", MFD_CLOEXEC);
		if (fo < 0 || fe < 0) {
			int e = errno;
			if (fo >= 0) close(fo);
			if (fe >= 0) close(fe);
			return qp_fail(err, e, "bench: memfd");
		}
	}
	run->t0 = now_ms();
	run->pid = fork();
	if (run->pid < 0) {
		int e = errno;
		if (capture)
			close(fo), close(fe);
		return qp_fail(err, e, "bench: fork");
	}
	if (run->pid == 0) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (null < 0 || dup2(null, 0) < 0 || dup2(capture ? fo : null, 1) < 0 ||
		    dup2(capture ? fe : null, 2) < 0)
			_exit(127);
		execv(argv[0], argv);
		_exit(127);
	}
	run->fo = fo;
	run->fe = fe;
	return 0;
}

int qp_bench_child_finish(struct qp_child_run *run, double *ms, int *status, struct qp_child_out *o,
			  qp_error **err)
{
	int ws, r = 0;

	while (waitpid(run->pid, &ws, 0) < 0)
		if (errno != EINTR) {
			r = qp_fail(err, errno, "bench: wait");
			goto out;
		}
	*ms = now_ms() - run->t0;
	*status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
	if (o && run->fo >= 0) {
		o->out = slurp(run->fo);
		o->err = slurp(run->fe);
		if (!o->out || !o->err) {
			qp_child_out_free(o);
			r = qp_fail(err, ENOMEM, "bench");
		}
	}
out:
	if (run->fo >= 0)
		close(run->fo), close(run->fe);
	run->fo = run->fe = -1;
	return r;
}

int qp_bench_child(char *const argv[], double *ms, int *status, struct qp_child_out *o,
		   qp_error **err)
{
	struct qp_child_run run;

	if (o)
		o->out = o->err = NULL;
	if (qp_bench_child_start(argv, &run, o != NULL, err) < 0)
		return -1;
	return qp_bench_child_finish(&run, ms, status, o, err);
}

void qp_child_out_free(struct qp_child_out *o)
{
	if (!o)
		return;
	free(o->out);
	free(o->err);
	o->out = o->err = NULL;
}

yajl_val qp_bench_json_line(const char *text, const char *prefix)
{
	size_t plen = prefix ? strlen(prefix) : 0;
	yajl_val tree = NULL;
	char *line;

	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		if (plen && strncmp(p, prefix, plen))
			continue;
		if (!(line = strndup(p + plen, strcspn(p + plen, "\n"))))
			return NULL;
		if (qp_json_parse(line, "result line", &tree, NULL) < 0 || !YAJL_IS_OBJECT(tree)) {
			yajl_tree_free(tree);
			tree = NULL;
		}
		free(line);
		return tree;
	}
	return NULL;
}

bool qp_bench_json_number(yajl_val obj, const char *section, const char *key, double *out)
{
	yajl_val v = section ? qp_json_get(obj, section) : obj;

	v = v ? qp_json_get(v, key) : NULL;
	if (!v || !YAJL_IS_NUMBER(v))
		return false;
	*out = YAJL_GET_DOUBLE(v);
	return true;
}

void qp_bench_progress(const struct qp_bench_opts *o, const char *what, int i, int n)
{
	if (o->progress)
		fprintf(stderr, "\r\033[K%s %d/%d", what, i, n);
}

void qp_bench_round_progress_text(char *buf, size_t size, const char *what, int i, int warmup,
				  int runs)
{
	if (i < warmup)
		snprintf(buf, size, "%s: warm-up %d/%d", what, i + 1, warmup);
	else
		snprintf(buf, size, "%s: round %d/%d", what, i - warmup + 1, runs);
}

void qp_bench_round_progress(const struct qp_bench_opts *o, const char *what, int i, int warmup,
			     int runs)
{
	char line[256];

	if (!o->progress)
		return;
	qp_bench_round_progress_text(line, sizeof(line), what, i, warmup, runs);
	fprintf(stderr, "\r\033[K%s", line);
}

bool qp_bench_interrupted(qp_error **err)
{
	sigset_t pending;

	sigpending(&pending);
	if (!sigismember(&pending, SIGINT) && !sigismember(&pending, SIGTERM))
		return false;
	qp_error_set(err, QP_E_GENERIC, EINTR, "interrupted");
	return true;
}

void qp_bench_hold_signals(sigset_t *old)
{
	sigset_t block;

	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, old);
	/* an ignored signal is dropped, never pending (a shell's background
	 * job starts with SIGINT ignored) */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
}

void qp_bench_release_signals(const sigset_t *old)
{
	sigset_t block;

	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	/* take a pending Ctrl-C here: unblocked, it would kill us before the
	 * (partial) result is written */
	while (sigtimedwait(&block, NULL, &(struct timespec){ 0 }) > 0)
		;
	sigprocmask(SIG_SETMASK, old, NULL);
}
