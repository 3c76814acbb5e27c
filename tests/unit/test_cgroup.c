/* tests/unit/test_cgroup.c — cgroup support: the pure translations and path
 * checks, then real cgroups on this host (root only): create with limits,
 * enter a forked child, pids, signal_all, OOM accounting, destroy with
 * processes and sub-cgroups left inside; freeze/thaw, update and stats.  The
 * same life cycle also runs on
 * a controller-less cgroup2 tree (the unified tree of a hybrid host) through
 * QPOD_CGROUP_ROOT.  Every real test removes its cgroups and children in its
 * teardown, which cmocka runs even when an assertion fails. */
#include <errno.h>
#include <dirent.h>
#include <pthread.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "host/cgroup/cgroup.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

#define MIB (1024 * 1024)
#define UNIFIED "/sys/fs/cgroup/unified"

/* every hierarchy a test's cgroup may be made in (v1 joins systemd's named
 * one and the hybrid unified tree too), for the teardown's plain rmdir */
static const char *const hier[] = { "memory", "cpu", "cpuacct", "pids", "cpuset", "devices",
				    "freezer", "blkio", "systemd", "unified", "" /* v2 root itself */ };

/* ------------------------------------------------------------------ pure */

static void test_shares_to_weight(void **state)
{
	(void)state;
	assert_int_equal(qp_cgroup_shares_to_weight(0), 0);
	assert_int_equal(qp_cgroup_shares_to_weight(1), 1);
	assert_int_equal(qp_cgroup_shares_to_weight(2), 1);
	assert_int_equal(qp_cgroup_shares_to_weight(1024), 39);
	assert_int_equal(qp_cgroup_shares_to_weight(262144), 10000);
	assert_int_equal(qp_cgroup_shares_to_weight(1000000), 10000);
}

static void test_limit_str(void **state)
{
	char buf[32];
	(void)state;
	assert_string_equal(qp_cgroup_limit_str(-1, "max", buf, sizeof(buf)), "max");
	assert_string_equal(qp_cgroup_limit_str(-1, "-1", buf, sizeof(buf)), "-1");
	assert_string_equal(qp_cgroup_limit_str(64 * MIB, "max", buf, sizeof(buf)), "67108864");
	assert_string_equal(qp_cgroup_limit_str(INT64_MAX, "max", buf, sizeof(buf)),
			    "9223372036854775807");
}

static void test_cpu_max(void **state)
{
	struct qp_resources r = { 0 };
	char buf[64];
	(void)state;

	assert_int_equal(qp_cgroup_cpu_max_str(&r, buf, sizeof(buf)), 0);
	assert_int_equal(qp_cgroup_cpu_max_str(NULL, buf, sizeof(buf)), 0);
	r.has_cpu_quota = true;
	r.cpu_quota = 50000;
	assert_int_equal(qp_cgroup_cpu_max_str(&r, buf, sizeof(buf)), 1);
	assert_string_equal(buf, "50000 100000");
	r.has_cpu_period = true;
	r.cpu_period = 250000;
	qp_cgroup_cpu_max_str(&r, buf, sizeof(buf));
	assert_string_equal(buf, "50000 250000");
	r.cpu_quota = -1;
	qp_cgroup_cpu_max_str(&r, buf, sizeof(buf));
	assert_string_equal(buf, "max 250000");
	r.has_cpu_quota = false;
	qp_cgroup_cpu_max_str(&r, buf, sizeof(buf));
	assert_string_equal(buf, "max 250000");
}

static void test_swap_max(void **state)
{
	struct qp_resources r = { 0 };
	qp_error *err = NULL;
	int64_t v = 0;
	(void)state;

	assert_int_equal(qp_cgroup_swap_max(&r, &v, &err), 0);
	r.has_memory_swap = true;
	r.memory_swap = -1;
	assert_int_equal(qp_cgroup_swap_max(&r, &v, &err), 1);
	assert_int_equal(v, -1);
	r.memory_swap = 2 * 64 * MIB;
	assert_int_equal(qp_cgroup_swap_max(&r, &v, &err), -1); /* no memory limit */
	assert_non_null(err);
	assert_int_equal(err->code, QP_E_INVALID);
	qp_error_free(&err);
	r.has_memory_limit = true;
	r.memory_limit = 64 * MIB;
	assert_int_equal(qp_cgroup_swap_max(&r, &v, &err), 1);
	assert_int_equal(v, 64 * MIB);
	r.memory_swap = 32 * MIB; /* below the limit */
	assert_int_equal(qp_cgroup_swap_max(&r, &v, &err), -1);
	assert_non_null(strstr(err->msg, "below"));
	qp_error_free(&err);
}

static void test_cpuset_valid(void **state)
{
	char big[5000];
	(void)state;
	assert_true(qp_cgroup_cpuset_valid("0"));
	assert_true(qp_cgroup_cpuset_valid("0-3,5,7-8"));
	assert_false(qp_cgroup_cpuset_valid(""));
	assert_false(qp_cgroup_cpuset_valid(NULL));
	assert_false(qp_cgroup_cpuset_valid("0\n1"));
	assert_false(qp_cgroup_cpuset_valid("0 1"));
	assert_false(qp_cgroup_cpuset_valid("all"));
	memset(big, '1', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_false(qp_cgroup_cpuset_valid(big));
}

static void clean_ok(const char *in, const char *want)
{
	char *out = NULL;
	qp_error *err = NULL;
	assert_int_equal(qp_cgroup_clean_path(in, &out, &err), 0);
	assert_string_equal(out, want);
	free(out);
}

static void clean_bad(const char *in)
{
	char *out = NULL;
	qp_error *err = NULL;
	assert_int_equal(qp_cgroup_clean_path(in, &out, &err), -1);
	assert_null(out);
	assert_non_null(err);
	assert_int_equal(err->code, QP_E_INVALID);
	qp_error_free(&err);
}

static void test_clean_path(void **state)
{
	char longc[300], deep[200] = "", longp[QP_CGROUP_PATH_MAX + 10];
	(void)state;

	clean_ok("qpod/x", "qpod/x");
	clean_ok("/qpod/x", "qpod/x");
	clean_ok("/a", "a");
	clean_ok("a.b/..c/c..", "a.b/..c/c..");
	clean_bad(NULL);
	clean_bad("");
	clean_bad("/");
	clean_bad("..");
	clean_bad("/..");
	clean_bad("a/../b");
	clean_bad("a/..");
	clean_bad("./a");
	clean_bad("a/.");
	clean_bad("a//b");
	clean_bad("//a");
	clean_bad("a/");
	clean_bad("a\nb");
	clean_bad("a/\x7f");
	memset(longc, 'c', sizeof(longc) - 1);
	longc[sizeof(longc) - 1] = '\0';
	clean_bad(longc);
	for (int i = 0; i < QP_CGROUP_MAX_DEPTH; i++)
		strcat(deep, "d/");
	strcat(deep, "d");
	clean_bad(deep);
	memset(longp, 'a', sizeof(longp) - 1);
	for (size_t i = 100; i < sizeof(longp) - 1; i += 100)
		longp[i] = '/';
	longp[sizeof(longp) - 1] = '\0';
	clean_bad(longp);
}

static void test_bad_inputs(void **state)
{
	struct qp_resources r = { 0 };
	struct qp_cgroup *cg = NULL;
	qp_error *err = NULL;
	(void)state;

	r.cpuset_cpus = "0;rm";
	assert_int_equal(qp_cgroup_create("qpod-unittest-never", &r, &cg, &err), -1);
	assert_null(cg);
	assert_int_equal(err->code, QP_E_INVALID);
	qp_error_free(&err);
	assert_int_equal(qp_cgroup_create("../etc", NULL, &cg, &err), -1);
	assert_int_equal(err->code, QP_E_INVALID);
	qp_error_free(&err);
}

/* ------------------------------------------------------------- real ones */

struct fixture {
	char top[64];       /* "qpod-unittest-PID" */
	char path[96];      /* top + "/x" */
	const char *root;   /* hierarchy root the test uses */
	pid_t child[4];
	struct qp_cgroup *cg;
};

static char *slurp(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *slurp(const char *fmt, ...)
{
	static char buf[4096];
	char path[512];
	va_list ap;
	ssize_t n;
	int fd;

	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return NULL;
	buf[n] = '\0';
	while (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	return buf;
}

static bool dir_exists(const char *root, const char *h, const char *path)
{
	char p[512];
	struct stat st;
	snprintf(p, sizeof(p), "%s/%s%s%s", root, h, *h ? "/" : "", path);
	return stat(p, &st) == 0;
}

/* true if PATH exists in no hierarchy under root */
static bool gone_everywhere(const char *root, const char *path)
{
	for (size_t i = 0; i < sizeof(hier) / sizeof(hier[0]); i++)
		if (dir_exists(root, hier[i], path))
			return false;
	return true;
}

static void rmdir_retry(const char *p)
{
	for (int i = 0; i < 100 && rmdir(p) < 0 && errno == EBUSY; i++)
		usleep(10000);
}

static void kill_children(struct fixture *f)
{
	for (size_t i = 0; i < 4; i++)
		if (f->child[i] > 0) {
			kill(f->child[i], SIGKILL);
			waitpid(f->child[i], NULL, 0);
			f->child[i] = 0;
		}
}

static int setup_fixture(struct fixture *f, const char *root)
{
	memset(f, 0, sizeof(*f));
	snprintf(f->top, sizeof(f->top), "qpod-unittest-%d", (int)getpid());
	snprintf(f->path, sizeof(f->path), "%s/x", f->top);
	f->root = root;
	return 0;
}

static int teardown_fixture(void **state)
{
	struct fixture *f = *state;
	const char *sub[] = { "x/sub", "x", "" };

	kill_children(f);
	if (f->cg)
		qp_cgroup_free(f->cg);
	/* independent of the code under test: plain rmdir everywhere */
	for (size_t i = 0; i < sizeof(hier) / sizeof(hier[0]); i++)
		for (size_t j = 0; j < 3; j++) {
			char p[512];
			snprintf(p, sizeof(p), "%s/%s%s%s/%s", f->root, hier[i], *hier[i] ? "/" : "",
				 f->top, sub[j]);
			rmdir_retry(p);
		}
	unsetenv("QPOD_CGROUP_ROOT");
	free(f);
	return 0;
}

static int setup_host(void **state)
{
	struct fixture *f = malloc(sizeof(*f));
	if (!f)
		return -1;
	setup_fixture(f, "/sys/fs/cgroup");
	*state = f;
	return 0;
}

static int setup_unified(void **state)
{
	struct fixture *f = malloc(sizeof(*f));
	if (!f)
		return -1;
	setup_fixture(f, UNIFIED);
	setenv("QPOD_CGROUP_ROOT", UNIFIED, 1);
	*state = f;
	return 0;
}

static void need_root(void)
{
	if (geteuid() != 0) {
		print_message("not root: skipped\n");
		skip();
	}
}

/* A child that waits for a byte, touches MB mebibytes, answers, sleeps. */
/* cg: the child moves itself in first (qp_cgroup_entry_*), and spawn
 * returns once it is in */
static pid_t spawn(struct qp_cgroup *cg, int *go, int *ack, int mb)
{
	int p1[2], p2[2], p3[2];
	pid_t pid;
	char in = 0;

	assert_int_equal(pipe2(p1, O_CLOEXEC), 0);
	assert_int_equal(pipe2(p2, O_CLOEXEC), 0);
	assert_int_equal(pipe2(p3, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char c;
		signal(SIGTERM, SIG_DFL);
		if (cg) {
			struct qp_cgroup_entry e = QP_CGROUP_ENTRY_INIT;
			qp_error *err = NULL;
			int r = qp_cgroup_entry_open(cg, &e, &err) < 0 ? -1 : qp_cgroup_entry_use(&e, &err);
			if (r < 0)
				fprintf(stderr, "enter: %s\n", err->msg);
			if (write(p3[1], r < 0 ? "x" : "e", 1) != 1 || r < 0)
				_exit(4);
			qp_cgroup_entry_close(&e);
		}
		if (read(p1[0], &c, 1) != 1)
			_exit(1);
		if (mb > 0) {
			char *m = malloc((size_t)mb * MIB);
			if (!m)
				_exit(2);
			for (size_t i = 0; i < (size_t)mb * MIB; i += 4096)
				m[i] = 1;
		}
		if (write(p2[1], "k", 1) != 1)
			_exit(3);
		for (;;)
			pause();
	}
	close(p1[0]);
	close(p2[1]);
	close(p3[1]);
	if (cg)
		assert_int_equal(read(p3[0], &in, 1), 1);
	close(p3[0]);
	if (cg)
		assert_int_equal(in, 'e');
	*go = p1[1];
	*ack = p2[0];
	return pid;
}

static void go_and_wait(int go, int ack)
{
	char c;
	assert_int_equal(write(go, "g", 1), 1);
	assert_int_equal(read(ack, &c, 1), 1);
	close(go);
	close(ack);
}

static int reap(pid_t *pid)
{
	int st = 0;
	assert_int_equal(waitpid(*pid, &st, 0), *pid);
	*pid = 0;
	return WIFSIGNALED(st) ? WTERMSIG(st) : -1;
}

static void assert_in_pids(struct qp_cgroup *cg, pid_t want, size_t n_want)
{
	pid_t *pids = NULL;
	size_t n = 99;
	qp_error *err = NULL;
	bool found = false;

	assert_int_equal(qp_cgroup_pids(cg, &pids, &n, &err), 0);
	assert_int_equal(n, n_want);
	for (size_t i = 0; i < n; i++)
		found |= pids[i] == want;
	if (want > 0)
		assert_true(found);
	free(pids);
}

static void check_err(int r, qp_error **err)
{
	if (r < 0)
		print_message("error: %s\n", *err ? (*err)->msg : "?");
	assert_int_equal(r, 0);
}

/* create with limits, check the files, enter, pids, signal_all, destroy */
static void test_host_lifecycle(void **state)
{
	struct fixture *f = *state;
	struct qp_resources r = { 0 };
	struct qp_cgroup *cg2 = NULL;
	qp_error *err = NULL;
	int go, ack;
	uint64_t mem = 0, ooms = 99;
	char *v;

	need_root();
	r.has_memory_limit = true;
	r.memory_limit = 64 * MIB;
	r.has_pids_limit = true;
	r.pids_limit = 10;
	r.has_cpu_quota = r.has_cpu_period = r.has_cpu_shares = true;
	r.cpu_quota = 50000;
	r.cpu_period = 100000;
	r.cpu_shares = 512;
	r.cpuset_cpus = "0";
	check_err(qp_cgroup_create(f->path, &r, &f->cg, &err), &err);
	assert_string_equal(qp_cgroup_path(f->cg), f->path);

	if (qp_cgroup_mode_of(f->cg) == QP_CGROUP_V1) {
		assert_string_equal(slurp("/sys/fs/cgroup/memory/%s/memory.limit_in_bytes", f->path),
				    "67108864");
		assert_string_equal(slurp("/sys/fs/cgroup/pids/%s/pids.max", f->path), "10");
		assert_string_equal(slurp("/sys/fs/cgroup/cpu/%s/cpu.cfs_quota_us", f->path),
				    "50000");
		assert_string_equal(slurp("/sys/fs/cgroup/cpu/%s/cpu.cfs_period_us", f->path),
				    "100000");
		assert_string_equal(slurp("/sys/fs/cgroup/cpu/%s/cpu.shares", f->path), "512");
		assert_string_equal(slurp("/sys/fs/cgroup/cpuset/%s/cpuset.cpus", f->path), "0");
		/* the intermediate level got the parent's cpus and mems */
		v = slurp("/sys/fs/cgroup/cpuset/%s/cpuset.mems", f->top);
		assert_non_null(v);
		assert_true(v[0] != '\0');
		for (size_t i = 0; i < 8; i++)
			if (dir_exists("/sys/fs/cgroup", hier[i], ""))
				assert_true(dir_exists("/sys/fs/cgroup", hier[i], f->path));
	} else {
		assert_string_equal(slurp("/sys/fs/cgroup/%s/memory.max", f->path), "67108864");
		assert_string_equal(slurp("/sys/fs/cgroup/%s/pids.max", f->path), "10");
		assert_string_equal(slurp("/sys/fs/cgroup/%s/cpu.max", f->path), "50000 100000");
		assert_string_equal(slurp("/sys/fs/cgroup/%s/cpu.weight", f->path), "20");
	}

	/* a second pod may never share it */
	assert_int_equal(qp_cgroup_create(f->path, NULL, &cg2, &err), -1);
	assert_null(cg2);
	assert_int_equal(err->code, QP_E_EXISTS);
	assert_non_null(strstr(err->msg, "already exists"));
	qp_error_free(&err);
	assert_true(dir_exists("/sys/fs/cgroup", qp_cgroup_mode_of(f->cg) == QP_CGROUP_V1 ?
				"memory" : "", f->path));

	f->child[0] = spawn(f->cg, &go, &ack, 8);
	go_and_wait(go, ack);
	v = slurp("/proc/%d/cgroup", (int)f->child[0]);
	assert_non_null(v);
	assert_non_null(strstr(v, f->path));
	assert_in_pids(f->cg, f->child[0], 1);
	check_err(qp_cgroup_memory_usage(f->cg, &mem, &err), &err);
	assert_true(mem >= 8 * MIB);
	check_err(qp_cgroup_oom_kills(f->cg, &ooms, &err), &err);
	assert_int_equal(ooms, 0);

	/* SIGTERM goes through the freezer (v1) / cgroup.freeze (v2) */
	check_err(qp_cgroup_signal_all(f->cg, SIGTERM, &err), &err);
	assert_int_equal(reap(&f->child[0]), SIGTERM);
	assert_in_pids(f->cg, 0, 0);
	if (qp_cgroup_mode_of(f->cg) == QP_CGROUP_V1)
		assert_string_equal(slurp("/sys/fs/cgroup/freezer/%s/freezer.state", f->path),
				    "THAWED");

	f->child[1] = spawn(f->cg, &go, &ack, 0);
	go_and_wait(go, ack);
	check_err(qp_cgroup_signal_all(f->cg, SIGKILL, &err), &err);
	assert_int_equal(reap(&f->child[1]), SIGKILL);

	check_err(qp_cgroup_destroy(f->cg, &err), &err);
	assert_true(gone_everywhere("/sys/fs/cgroup", f->path));
	check_err(qp_cgroup_destroy(f->cg, &err), &err); /* idempotent */

	assert_int_equal(qp_cgroup_open(f->path, &cg2, &err), -1);
	assert_int_equal(err->code, QP_E_NOTFOUND);
	qp_error_free(&err);
}

static void *pause_thread(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

/* another process, started outside, with a second thread: an entry of
 * cgroup.procs (qp_cgroup_entry_open_procs, _move) takes all of it in (a
 * spare's QEMU when a pod takes the spare) */
static void test_host_move(void **state)
{
	struct fixture *f = *state;
	qp_error *err = NULL;
	int ready[2];
	char c, path[64];

	need_root();
	check_err(qp_cgroup_create(f->path, NULL, &f->cg, &err), &err);
	assert_int_equal(pipe2(ready, O_CLOEXEC), 0);
	f->child[0] = fork();
	assert_true(f->child[0] >= 0);
	if (f->child[0] == 0) {
		pthread_t th;
		signal(SIGTERM, SIG_DFL);
		if (pthread_create(&th, NULL, pause_thread, NULL) != 0 || write(ready[1], "r", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(ready[1]);
	assert_int_equal(read(ready[0], &c, 1), 1);
	close(ready[0]);
	assert_in_pids(f->cg, 0, 0);
	struct qp_cgroup_entry e = QP_CGROUP_ENTRY_INIT;
	check_err(qp_cgroup_entry_open_procs(f->cg, &e, &err), &err);
	assert_in_pids(f->cg, 0, 0); /* an entry touches no process */
	check_err(qp_cgroup_entry_move(&e, f->child[0], &err), &err);
	assert_in_pids(f->cg, f->child[0], 1);
	/* every thread moved, in every hierarchy */
	snprintf(path, sizeof(path), "/proc/%d/task", (int)f->child[0]);
	DIR *d = opendir(path);
	struct dirent *de;
	int threads = 0;
	assert_non_null(d);
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char *v = slurp("/proc/%d/task/%s/cgroup", (int)f->child[0], de->d_name);
		assert_non_null(v);
		for (char *line = strtok(v, "\n"); line; line = strtok(NULL, "\n"))
			if (strstr(line, ":name=") == NULL && strstr(line, "::/") == NULL)
				assert_non_null(strstr(line, f->path));
		threads++;
	}
	closedir(d);
	assert_int_equal(threads, 2);
	/* a process that is not there */
	assert_int_equal(qp_cgroup_entry_move(&e, 0x3fffffff, &err), -1);
	assert_non_null(strstr(err->msg, "move process"));
	qp_error_free(&err);
	qp_cgroup_entry_close(&e);
	check_err(qp_cgroup_destroy(f->cg, &err), &err);
	assert_int_equal(reap(&f->child[0]), SIGKILL);
}

/* destroy with a live process and a sub-cgroup inside; open() re-finds it */
static void test_host_destroy_busy(void **state)
{
	struct fixture *f = *state;
	struct qp_cgroup *cg = NULL;
	qp_error *err = NULL;
	char p[512];
	int go, ack;

	need_root();
	/* the OCI form "/a/b" names the same cgroup as "a/b" */
	snprintf(p, sizeof(p), "/%s", f->path);
	check_err(qp_cgroup_create(p, NULL, &cg, &err), &err);
	assert_string_equal(qp_cgroup_path(cg), f->path);
	qp_cgroup_free(cg);
	qp_cgroup_free(f->cg);
	f->cg = NULL;
	check_err(qp_cgroup_open(f->path, &f->cg, &err), &err);
	f->child[0] = spawn(f->cg, &go, &ack, 0);
	go_and_wait(go, ack);
	/* a nested cgroup, as a pod with its own cgroup namespace could make */
	snprintf(p, sizeof(p), "%s/%s%s%s/sub", f->root,
		 qp_cgroup_mode_of(f->cg) == QP_CGROUP_V1 ? "memory" : "",
		 qp_cgroup_mode_of(f->cg) == QP_CGROUP_V1 ? "/" : "", f->path);
	assert_int_equal(mkdir(p, 0755), 0);

	check_err(qp_cgroup_destroy(f->cg, &err), &err);
	assert_int_equal(reap(&f->child[0]), SIGKILL);
	assert_true(gone_everywhere("/sys/fs/cgroup", f->path));
}

/* a limit the host cannot enforce never leaves a half-made cgroup behind;
 * v1 OOM accounting */
static void test_host_oom(void **state)
{
	struct fixture *f = *state;
	struct qp_resources r = { 0 };
	qp_error *err = NULL;
	uint64_t ooms = 0;
	int go, ack;
	char c;

	need_root();
	r.has_memory_limit = true;
	r.memory_limit = 16 * MIB;
	r.has_memory_swap = true;
	r.memory_swap = 16 * MIB;
	check_err(qp_cgroup_create(f->path, &r, &f->cg, &err), &err);
	f->child[0] = spawn(f->cg, &go, &ack, 64);
	assert_int_equal(write(go, "g", 1), 1);
	assert_int_equal(read(ack, &c, 1), 0); /* killed before answering */
	close(go);
	close(ack);
	assert_int_equal(reap(&f->child[0]), SIGKILL);
	check_err(qp_cgroup_oom_kills(f->cg, &ooms, &err), &err);
	assert_int_equal(ooms, 1);
	check_err(qp_cgroup_destroy(f->cg, &err), &err);
	assert_true(gone_everywhere("/sys/fs/cgroup", f->path));
}

/* a limit the kernel refuses names file and value and leaves nothing; a
 * leftover leaf in one hierarchy makes create fail without touching it and
 * without leaving the leaves it made in the others */
static void test_host_rollback(void **state)
{
	struct fixture *f = *state;
	struct qp_resources r = { 0 };
	struct qp_cgroup *cg = NULL;
	qp_error *err = NULL;
	bool v1 = qp_cgroup_detect() == QP_CGROUP_V1;
	char p[512];

	need_root();
	r.has_cpu_period = true;
	r.cpu_period = 10; /* below the kernel's 1 ms minimum */
	assert_int_equal(qp_cgroup_create(f->path, &r, &cg, &err), -1);
	assert_null(cg);
	print_message("expected: %s\n", err->msg);
	assert_non_null(strstr(err->msg, v1 ? "write \"10\" to cpu.cfs_period_us"
					    : "write \"max 10\" to cpu.max"));
	assert_int_equal(err->errnum, EINVAL);
	qp_error_free(&err);
	assert_true(gone_everywhere("/sys/fs/cgroup", f->path));

	if (!v1 || !dir_exists("/sys/fs/cgroup", "pids", ""))
		return;
	snprintf(p, sizeof(p), "/sys/fs/cgroup/pids/%s", f->path);
	assert_int_equal(mkdir(p, 0755), 0);
	assert_int_equal(qp_cgroup_create(f->path, NULL, &cg, &err), -1);
	assert_int_equal(err->code, QP_E_EXISTS);
	print_message("expected: %s\n", err->msg);
	qp_error_free(&err);
	assert_true(dir_exists("/sys/fs/cgroup", "pids", f->path));
	assert_false(dir_exists("/sys/fs/cgroup", "memory", f->path));
	assert_false(dir_exists("/sys/fs/cgroup", "cpu", f->path));
	/* open() finds a cgroup present in any hierarchy, destroy removes it */
	check_err(qp_cgroup_open(f->path, &f->cg, &err), &err);
	check_err(qp_cgroup_destroy(f->cg, &err), &err);
	assert_true(gone_everywhere("/sys/fs/cgroup", f->path));
}

/* the v2 backend on a cgroup2 tree without the controllers we use */
static void test_unified_lifecycle(void **state)
{
	struct fixture *f = *state;
	struct qp_resources r = { 0 };
	struct qp_cgroup *cg = NULL;
	qp_error *err = NULL;
	struct statfs sf;
	bool has_mem;
	uint64_t mem;
	int go, ack;
	char *v, want[128];

	need_root();
	if (statfs(UNIFIED, &sf) < 0 || sf.f_type != CGROUP2_SUPER_MAGIC) {
		print_message(UNIFIED " is not a cgroup2 tree: skipped\n");
		skip();
	}
	assert_int_equal(qp_cgroup_detect(), QP_CGROUP_V2);
	assert_string_equal(qp_cgroup_root(), UNIFIED);

	v = slurp(UNIFIED "/cgroup.controllers");
	has_mem = v && strstr(v, "memory");
	if (!has_mem) {
		/* asking for a limit says which controller is missing, leaves nothing */
		r.has_memory_limit = true;
		r.memory_limit = 64 * MIB;
		assert_int_equal(qp_cgroup_create(f->path, &r, &cg, &err), -1);
		assert_null(cg);
		print_message("expected: %s\n", err->msg);
		assert_non_null(strstr(err->msg, "memory controller is not available"));
		qp_error_free(&err);
		assert_false(dir_exists(UNIFIED, "", f->path));
	}

	check_err(qp_cgroup_create(f->path, NULL, &f->cg, &err), &err);
	assert_int_equal(qp_cgroup_mode_of(f->cg), QP_CGROUP_V2);
	assert_true(dir_exists(UNIFIED, "", f->path));
	f->child[0] = spawn(f->cg, &go, &ack, 0);
	go_and_wait(go, ack);
	v = slurp("/proc/%d/cgroup", (int)f->child[0]);
	snprintf(want, sizeof(want), "0::/%s", f->path);
	assert_non_null(v);
	assert_non_null(strstr(v, want));
	assert_in_pids(f->cg, f->child[0], 1);
	if (!has_mem) {
		assert_int_equal(qp_cgroup_memory_usage(f->cg, &mem, &err), -1);
		assert_int_equal(err->code, QP_E_NOTFOUND);
		qp_error_free(&err);
	}

	/* SIGTERM: cgroup.freeze, signal, thaw */
	check_err(qp_cgroup_signal_all(f->cg, SIGTERM, &err), &err);
	assert_int_equal(reap(&f->child[0]), SIGTERM);
	assert_string_equal(slurp(UNIFIED "/%s/cgroup.freeze", f->path), "0");

	/* SIGKILL: cgroup.kill */
	f->child[1] = spawn(f->cg, &go, &ack, 0);
	go_and_wait(go, ack);
	check_err(qp_cgroup_signal_all(f->cg, SIGKILL, &err), &err);
	assert_int_equal(reap(&f->child[1]), SIGKILL);

	/* destroy with a live process inside */
	f->child[2] = spawn(f->cg, &go, &ack, 0);
	go_and_wait(go, ack);
	check_err(qp_cgroup_destroy(f->cg, &err), &err);
	assert_int_equal(reap(&f->child[2]), SIGKILL);
	assert_false(dir_exists(UNIFIED, "", f->path));

	assert_int_equal(qp_cgroup_open(f->path, &cg, &err), -1);
	assert_int_equal(err->code, QP_E_NOTFOUND);
	qp_error_free(&err);
}

/* pause/resume (freezer), update through the create writers (memsw order),
 * checkBeforeUpdate, stats, and SIGKILL of a frozen cgroup */
static void test_host_freeze_update_stats(void **state)
{
	struct fixture *f = *state;
	struct qp_resources r = { 0 }, u = { 0 };
	struct qp_stats st;
	qp_error *err = NULL;
	bool memsw;
	int go, ack;

	need_root();
	r.has_memory_limit = r.has_pids_limit = true;
	r.memory_limit = 64 * MIB;
	r.pids_limit = 10;
	check_err(qp_cgroup_create(f->path, &r, &f->cg, &err), &err);
	if (qp_cgroup_mode_of(f->cg) != QP_CGROUP_V1) {
		print_message("not a v1 host: skipped\n");
		skip();
	}
	f->child[0] = spawn(f->cg, &go, &ack, 0);
	go_and_wait(go, ack);

	assert_false(qp_cgroup_is_frozen(f->cg));
	check_err(qp_cgroup_freeze(f->cg, true, &err), &err);
	assert_string_equal(slurp("/sys/fs/cgroup/freezer/%s/freezer.state", f->path), "FROZEN");
	assert_true(qp_cgroup_is_frozen(f->cg));
	/* a signal to a paused cgroup leaves it paused */
	check_err(qp_cgroup_signal_all(f->cg, SIGCONT, &err), &err);
	assert_string_equal(slurp("/sys/fs/cgroup/freezer/%s/freezer.state", f->path), "FROZEN");
	check_err(qp_cgroup_freeze(f->cg, false, &err), &err);
	assert_string_equal(slurp("/sys/fs/cgroup/freezer/%s/freezer.state", f->path), "THAWED");
	assert_false(qp_cgroup_is_frozen(f->cg));

	/* update: raise memory and memsw (memsw first), then cut both (limit first) */
	memsw = slurp("/sys/fs/cgroup/memory/%s/memory.memsw.limit_in_bytes", f->path) != NULL;
	u = r;
	u.memory_limit = 128 * MIB;
	u.has_memory_swap = memsw;
	u.memory_swap = 256 * MIB;
	u.pids_limit = 20;
	check_err(qp_cgroup_update(f->cg, &u, &err), &err);
	assert_string_equal(slurp("/sys/fs/cgroup/memory/%s/memory.limit_in_bytes", f->path), "134217728");
	assert_string_equal(slurp("/sys/fs/cgroup/pids/%s/pids.max", f->path), "20");
	if (memsw)
		assert_string_equal(slurp("/sys/fs/cgroup/memory/%s/memory.memsw.limit_in_bytes", f->path),
				    "268435456");
	u.memory_limit = 32 * MIB;
	u.memory_swap = 48 * MIB;
	check_err(qp_cgroup_update(f->cg, &u, &err), &err);
	assert_string_equal(slurp("/sys/fs/cgroup/memory/%s/memory.limit_in_bytes", f->path), "33554432");
	u.has_memory_swap = false;
	/* below the usage: refused with checkBeforeUpdate, nothing written */
	u.memory_limit = 4096;
	u.memory_check_before_update = true;
	assert_int_equal(qp_cgroup_update(f->cg, &u, &err), -1);
	assert_non_null(strstr(err->msg, "below the current usage"));
	qp_error_free(&err);
	assert_string_equal(slurp("/sys/fs/cgroup/memory/%s/memory.limit_in_bytes", f->path), "33554432");

	check_err(qp_cgroup_stats(f->cg, &st, &err), &err);
	assert_true(st.has_memory && st.usage.has);
	assert_int_equal(st.usage.limit, 32 * MIB);
	assert_true(st.usage.usage > 0);
	assert_true(st.has_pids);
	assert_int_equal(st.pids_current, 1);
	assert_int_equal(st.pids_limit, 20);
	assert_true(st.has_cpu);
	assert_true(st.n_raw > 0);
	qp_stats_free(&st);

	/* SIGKILL of a frozen cgroup lands: it is thawed */
	check_err(qp_cgroup_freeze(f->cg, true, &err), &err);
	check_err(qp_cgroup_signal_all(f->cg, SIGKILL, &err), &err);
	assert_int_equal(reap(&f->child[0]), SIGKILL);
	assert_string_equal(slurp("/sys/fs/cgroup/freezer/%s/freezer.state", f->path), "THAWED");
	check_err(qp_cgroup_destroy(f->cg, &err), &err);
}

/* the v2 freezer (cgroup.freeze) on the controller-less unified tree */
static void test_unified_freeze(void **state)
{
	struct fixture *f = *state;
	struct qp_resources r = { 0 };
	struct qp_stats st;
	qp_error *err = NULL;
	struct statfs sf;
	int go, ack;

	need_root();
	if (statfs(UNIFIED, &sf) < 0 || sf.f_type != CGROUP2_SUPER_MAGIC) {
		print_message(UNIFIED " is not a cgroup2 tree: skipped\n");
		skip();
	}
	check_err(qp_cgroup_create(f->path, NULL, &f->cg, &err), &err);
	f->child[0] = spawn(f->cg, &go, &ack, 0);
	go_and_wait(go, ack);
	check_err(qp_cgroup_freeze(f->cg, true, &err), &err);
	assert_string_equal(slurp(UNIFIED "/%s/cgroup.freeze", f->path), "1");
	assert_non_null(strstr(slurp(UNIFIED "/%s/cgroup.events", f->path), "frozen 1"));
	assert_true(qp_cgroup_is_frozen(f->cg));
	check_err(qp_cgroup_freeze(f->cg, false, &err), &err);
	assert_false(qp_cgroup_is_frozen(f->cg));

	/* no controllers: an update of a limit says so; stats have cpu only */
	r.has_pids_limit = true;
	r.pids_limit = 5;
	assert_int_equal(qp_cgroup_update(f->cg, &r, &err), -1);
	assert_non_null(strstr(err->msg, "pids controller is not available"));
	qp_error_free(&err);
	check_err(qp_cgroup_stats(f->cg, &st, &err), &err);
	assert_true(st.has_cpu);
	assert_false(st.has_memory);
	assert_false(st.has_pids);
	qp_stats_free(&st);

	check_err(qp_cgroup_freeze(f->cg, true, &err), &err);
	check_err(qp_cgroup_signal_all(f->cg, SIGKILL, &err), &err);
	assert_int_equal(reap(&f->child[0]), SIGKILL);
	check_err(qp_cgroup_destroy(f->cg, &err), &err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shares_to_weight),
		cmocka_unit_test(test_limit_str),
		cmocka_unit_test(test_cpu_max),
		cmocka_unit_test(test_swap_max),
		cmocka_unit_test(test_cpuset_valid),
		cmocka_unit_test(test_clean_path),
		cmocka_unit_test(test_bad_inputs),
		cmocka_unit_test_setup_teardown(test_host_lifecycle, setup_host, teardown_fixture),
		cmocka_unit_test_setup_teardown(test_host_destroy_busy, setup_host,
						teardown_fixture),
		cmocka_unit_test_setup_teardown(test_host_oom, setup_host, teardown_fixture),
		cmocka_unit_test_setup_teardown(test_host_move, setup_host, teardown_fixture),
		cmocka_unit_test_setup_teardown(test_host_rollback, setup_host, teardown_fixture),
		cmocka_unit_test_setup_teardown(test_unified_lifecycle, setup_unified,
						teardown_fixture),
		cmocka_unit_test_setup_teardown(test_host_freeze_update_stats, setup_host,
						teardown_fixture),
		cmocka_unit_test_setup_teardown(test_unified_freeze, setup_unified, teardown_fixture),
	};
	return cmocka_run_group_tests_name("cgroup", tests, NULL, NULL);
}
