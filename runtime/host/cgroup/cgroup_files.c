/* runtime/host/cgroup/cgroup_files.c — the file helpers both cgroup backends
 * share (cgroup.h, "qp_cg_"): walking and making paths, bounded reads,
 * writes that name file and value, pid collection, removal with
 * kill-and-retry. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "host/cgroup/cgroup.h"
#include "util/clock.h"
#include "util/cleanup.h"
#include "util/log.h"

int qp_cg_open_root(const char *dir, qp_error **err)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return qp_fail(err, errno, "open \"%s\"", dir);
	return fd;
}

static int open_dir_at(int dirfd, const char *name)
{
	return openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

int qp_cg_mkpath(int rootfd, const char *path, qp_cg_hook hook, void *ud, qp_error **err)
{
	_cleanup_free_ char *copy = strdup(path);
	_cleanup_close_ int cur = -1;
	char *save = NULL, *comp;

	if (!copy)
		return qp_fail(err, ENOMEM, "cgroup path");
	cur = fcntl(rootfd, F_DUPFD_CLOEXEC, 3);
	if (cur < 0)
		return qp_fail(err, errno, "dup");
	for (comp = strtok_r(copy, "/", &save); comp; comp = strtok_r(NULL, "/", &save)) {
		int shown = (int)(comp - copy + strlen(comp)), next;
		bool leaf = !save || !*save, created = true;

		if (mkdirat(cur, comp, 0755) < 0) {
			if (errno != EEXIST)
				return qp_fail(err, errno, "mkdir \"%.*s\"", shown, path);
			if (leaf)
				return qp_error_set(err, QP_E_EXISTS, 0, "already exists");
			created = false;
		}
		next = open_dir_at(cur, comp);
		if (next < 0) {
			qp_fail(err, errno, "open \"%.*s\"", shown, path);
			goto undo;
		}
		if (hook && hook(cur, next, leaf, ud, err) < 0) {
			close(next);
			qp_error_prefix(err, "\"%.*s\"", shown, path);
			goto undo;
		}
		close(cur);
		cur = next;
		continue;
undo:
		/* never leave a half-configured leaf behind */
		if (leaf && created)
			unlinkat(cur, comp, AT_REMOVEDIR);
		return -1;
	}
	return steal_fd(&cur);
}

int qp_cg_openpath(int rootfd, const char *path, qp_error **err)
{
	/* One lookup suffices: paths are cleaned (qp_cgroup_clean_path: no
	 * "..", no empty parts) and cgroupfs holds no symlinks; only mkpath
	 * needs to walk, to create each level. */
	int fd = open_dir_at(rootfd, path);

	if (fd < 0)
		return qp_fail(err, errno, "open \"%s\"", path);
	return fd;
}

bool qp_cg_has_file(int dirfd, const char *name)
{
	return faccessat(dirfd, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

int qp_cg_write(int dirfd, const char *file, const char *value, qp_error **err)
{
	_cleanup_close_ int fd = openat(dirfd, file, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	size_t len = strlen(value);
	ssize_t n;

	if (fd < 0)
		return qp_fail(err, errno, "write \"%s\" to %s", value, file);
	n = write(fd, value, len);
	if (n < 0)
		return qp_fail(err, errno, "write \"%s\" to %s", value, file);
	if ((size_t)n != len)
		return qp_fail(err, EIO, "write \"%s\" to %s (short write)", value, file);
	return 0;
}

int qp_cg_read(int dirfd, const char *file, char *buf, size_t len, qp_error **err)
{
	_cleanup_close_ int fd = openat(dirfd, file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	size_t got = 0;

	if (fd < 0)
		return qp_fail(err, errno, "read %s", file);
	while (got + 1 < len) {
		ssize_t n = read(fd, buf + got, len - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return qp_fail(err, errno, "read %s", file);
		if (n == 0)
			break;
		got += (size_t)n;
	}
	buf[got] = '\0';
	while (got > 0 && buf[got - 1] == '\n')
		buf[--got] = '\0';
	return 0;
}

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;
	unsigned long long x;

	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	x = strtoull(s, &end, 10);
	if (errno || (*end && *end != '\n'))
		return -1;
	*v = x;
	return 0;
}

int qp_cg_read_u64(int dirfd, const char *file, uint64_t *v, qp_error **err)
{
	char buf[64];

	if (qp_cg_read(dirfd, file, buf, sizeof(buf), err) < 0)
		return -1;
	if (parse_u64(buf, v) < 0)
		return qp_error_set(err, QP_E_GENERIC, 0, "%s: not a number: \"%.32s\"", file, buf);
	return 0;
}

/* fdopen'd FILE of FILE in dirfd, for line-by-line reading */
static FILE *open_lines(int dirfd, const char *file, qp_error **err)
{
	int fd = openat(dirfd, file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	FILE *f;

	if (fd < 0) {
		qp_fail(err, errno, "read %s", file);
		return NULL;
	}
	f = fdopen(fd, "r");
	if (!f) {
		qp_fail(err, errno, "read %s", file);
		close(fd);
	}
	return f;
}

/* fgets that drops the rest of an over-long line; 1 = line, 0 = EOF */
static int read_line(FILE *f, char *line, size_t len, bool *truncated)
{
	size_t l;

	if (!fgets(line, (int)len, f))
		return 0;
	l = strlen(line);
	*truncated = false;
	if (l > 0 && line[l - 1] == '\n') {
		line[l - 1] = '\0';
	} else if (!feof(f)) {
		int c;
		*truncated = true;
		while ((c = fgetc(f)) != EOF && c != '\n')
			;
	}
	return 1;
}

int qp_cg_read_key(int dirfd, const char *file, const char *key, uint64_t *v, qp_error **err)
{
	_cleanup_fclose_ FILE *f = open_lines(dirfd, file, err);
	size_t klen = strlen(key);
	char line[256];
	bool trunc;

	if (!f)
		return -1;
	while (read_line(f, line, sizeof(line), &trunc))
		if (!trunc && !strncmp(line, key, klen) && line[klen] == ' ') {
			if (parse_u64(line + klen + 1, v) < 0)
				break;
			return 0;
		}
	if (ferror(f))
		return qp_fail(err, errno, "read %s", file);
	return qp_error_set(err, QP_E_NOTFOUND, 0, "%s has no \"%s\" value", file, key);
}

bool qp_cg_word_in(const char *s, const char *name)
{
	size_t n = strlen(name);

	while (s && *s) {
		const char *e;
		while (*s == ' ')
			s++;
		e = s + strcspn(s, " ");
		if ((size_t)(e - s) == n && !strncmp(s, name, n))
			return true;
		s = e;
	}
	return false;
}

struct pidvec {
	pid_t *v;
	size_t n, cap;
};

static int pidvec_push(struct pidvec *pv, pid_t pid, qp_error **err)
{
	if (pv->n == pv->cap) {
		size_t cap = pv->cap ? pv->cap * 2 : 64;
		pid_t *nv;
		if (cap > QP_CGROUP_MAX_PIDS)
			return qp_error_set(err, QP_E_GENERIC, 0, "more than %u processes",
					    QP_CGROUP_MAX_PIDS);
		nv = realloc(pv->v, cap * sizeof(*nv));
		if (!nv)
			return qp_fail(err, ENOMEM, "pid list");
		pv->v = nv;
		pv->cap = cap;
	}
	pv->v[pv->n++] = pid;
	return 0;
}

/* the pids of one cgroup.procs (not its children) */
static int read_procs(int dirfd, struct pidvec *pv, qp_error **err)
{
	_cleanup_fclose_ FILE *f = open_lines(dirfd, "cgroup.procs", err);
	char line[32];
	bool trunc;

	if (!f)
		return -1;
	while (read_line(f, line, sizeof(line), &trunc)) {
		uint64_t v;
		if (trunc || parse_u64(line, &v) < 0 || v == 0 || v > INT_MAX)
			return qp_error_set(err, QP_E_GENERIC, 0, "cgroup.procs: bad line");
		if (pidvec_push(pv, (pid_t)v, err) < 0)
			return -1;
	}
	if (ferror(f))
		return qp_fail(err, errno, "read cgroup.procs");
	return 0;
}

/* Call fn for each sub-cgroup (directory) of dirfd. */
static int for_each_child(int dirfd, int (*fn)(int dirfd, const char *name, void *ud),
			  void *ud, qp_error **err)
{
	int dfd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	_cleanup_closedir_ DIR *d = NULL;
	struct dirent *de;

	if (dfd < 0)
		return qp_fail(err, errno, "open cgroup directory");
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return qp_fail(err, errno, "open cgroup directory");
	}
	while ((errno = 0, de = readdir(d))) {
		if (de->d_type != DT_DIR || !strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fn(dirfd, de->d_name, ud) < 0)
			return -1;
	}
	if (errno)
		return qp_fail(err, errno, "read cgroup directory");
	return 0;
}

struct collect_ctx {
	struct pidvec *pv;
	int depth;
	qp_error **err;
};

static int collect_rec(int dirfd, struct pidvec *pv, int depth, qp_error **err);

static int collect_child(int dirfd, const char *name, void *ud)
{
	struct collect_ctx *c = ud;
	_cleanup_close_ int fd = open_dir_at(dirfd, name);

	if (fd < 0)
		return errno == ENOENT ? 0 : qp_fail(c->err, errno, "open \"%s\"", name);
	return collect_rec(fd, c->pv, c->depth + 1, c->err);
}

static int collect_rec(int dirfd, struct pidvec *pv, int depth, qp_error **err)
{
	struct collect_ctx c = { pv, depth, err };

	if (depth > QP_CGROUP_MAX_DEPTH)
		return qp_error_set(err, QP_E_GENERIC, 0, "cgroups nested deeper than %d",
				    QP_CGROUP_MAX_DEPTH);
	if (read_procs(dirfd, pv, err) < 0)
		return -1;
	return for_each_child(dirfd, collect_child, &c, err);
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
	return (x > y) - (x < y);
}

int qp_cg_collect_pids(int dirfd, pid_t **pids, size_t *n, qp_error **err)
{
	struct pidvec pv = { 0 };
	size_t i, j;

	if (collect_rec(dirfd, &pv, 0, err) < 0) {
		free(pv.v);
		return -1;
	}
	if (pv.n)
		qsort(pv.v, pv.n, sizeof(*pv.v), cmp_pid);
	for (i = j = 0; i < pv.n; i++)   /* v1 cgroup.procs may repeat a pid */
		if (j == 0 || pv.v[j - 1] != pv.v[i])
			pv.v[j++] = pv.v[i];
	*pids = pv.v;
	*n = j;
	return 0;
}

int qp_cg_kill_list(const pid_t *pids, size_t n, int sig, qp_error **err)
{
	for (size_t i = 0; i < n; i++)
		if (kill(pids[i], sig) < 0 && errno != ESRCH)
			return qp_fail(err, errno, "kill %d", (int)pids[i]);
	return 0;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static bool file_matches(int dirfd, const char *file, const char *key, const char *want)
{
	char buf[1024];

	if (qp_cg_read(dirfd, file, buf, sizeof(buf), NULL) < 0)
		return false;
	if (!key)
		return !strcmp(buf, want);
	for (char *line = buf, *next; line; line = next) {
		size_t klen = strlen(key);
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (!strncmp(line, key, klen) && line[klen] == ' ' && !strcmp(line + klen + 1, want))
			return true;
	}
	return false;
}

bool qp_cg_wait_for(int dirfd, const char *file, const char *key, const char *want,
		    int timeout_ms)
{
	int64_t deadline = qp_now_ms() + timeout_ms;

	for (;;) {
		if (file_matches(dirfd, file, key, want))
			return true;
		if (qp_now_ms() >= deadline)
			return false;
		sleep_ms(10);
	}
}

/* Removal: children first; on EBUSY thaw, SIGKILL what is inside, retry. */
struct rm_ctx {
	int depth;
	int64_t deadline;
	qp_error **err;
};

static int rmtree(int parentfd, const char *name, struct rm_ctx *c);

static int rm_child(int dirfd, const char *name, void *ud)
{
	struct rm_ctx *c = ud, sub = { c->depth + 1, c->deadline, c->err };
	return rmtree(dirfd, name, &sub);
}

static void kill_inside(int fd)
{
	struct pidvec pv = { 0 };

	/* a frozen v1 task only dies once thawed; v2 kills frozen tasks anyway */
	if (qp_cg_has_file(fd, "freezer.state"))
		qp_cg_write(fd, "freezer.state", "THAWED", NULL);
	if (qp_cg_has_file(fd, "cgroup.kill") && qp_cg_write(fd, "cgroup.kill", "1", NULL) == 0)
		return;
	if (read_procs(fd, &pv, NULL) == 0)
		qp_cg_kill_list(pv.v, pv.n, SIGKILL, NULL);
	free(pv.v);
}

static int rmtree(int parentfd, const char *name, struct rm_ctx *c)
{
	_cleanup_close_ int fd = -1;

	if (c->depth > QP_CGROUP_MAX_DEPTH)
		return qp_error_set(c->err, QP_E_GENERIC, 0, "cgroups nested deeper than %d",
				    QP_CGROUP_MAX_DEPTH);
	fd = open_dir_at(parentfd, name);
	if (fd < 0)
		return errno == ENOENT ? 0 : qp_fail(c->err, errno, "open \"%s\"", name);
	for (;;) {
		if (for_each_child(fd, rm_child, c, c->err) < 0)
			return -1;
		if (unlinkat(parentfd, name, AT_REMOVEDIR) == 0 || errno == ENOENT)
			return 0;
		if (errno != EBUSY || qp_now_ms() >= c->deadline)
			return qp_fail(c->err, errno, "rmdir \"%s\"", name);
		kill_inside(fd);
		sleep_ms(10);
	}
}

/* qpod's own parent ("qpod/ID" -> "qpod") goes when it is empty, so
 * nothing named qpod stays in the host's hierarchies; a concurrent create
 * that loses this race retries (qp_cgroup_create).  Parents of a spec's
 * cgroupsPath belong to whoever made them: left alone. */
void qp_cg_remove_default_parent(int rootfd, const char *path)
{
	const char *slash = strrchr(path, '/');

	if (slash && !strncmp(path, QP_CGROUP_DEFAULT_PARENT "/", sizeof(QP_CGROUP_DEFAULT_PARENT)) &&
	    slash - path == (ptrdiff_t)strlen(QP_CGROUP_DEFAULT_PARENT))
		unlinkat(rootfd, QP_CGROUP_DEFAULT_PARENT, AT_REMOVEDIR); /* ENOTEMPTY: others live */
}

int qp_cg_remove(int rootfd, const char *path, qp_error **err)
{
	const char *slash = strrchr(path, '/');
	struct rm_ctx c = { 0, qp_now_ms() + 1000, err };
	_cleanup_close_ int parent = -1;

	if (slash) {
		_cleanup_free_ char *dir = strndup(path, (size_t)(slash - path));
		if (!dir)
			return qp_fail(err, ENOMEM, "cgroup path");
		parent = qp_cg_openpath(rootfd, dir, NULL);
		if (parent < 0)
			return errno == ENOENT ? 0 : qp_fail(err, errno, "open \"%s\"", dir);
	} else {
		parent = fcntl(rootfd, F_DUPFD_CLOEXEC, 3);
		if (parent < 0)
			return qp_fail(err, errno, "dup");
	}
	if (rmtree(parent, slash ? slash + 1 : path, &c) < 0)
		return qp_error_prefix(err, "remove \"%s\"", path);
	qp_cg_remove_default_parent(rootfd, path);
	return 0;
}
