/* runtime/state.c — the state directory (see state.h). */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/fs.h>
#include <sys/syscall.h>

#include "state.h"
#include "util/io.h"
#include "util/cleanup.h"
#include "util/json.h"
#include "util/strv.h"

#define STATE_FILE "state.json"
#define STATE_MAX (1u << 20)

static const char *const status_names[] = { "creating", "created", "running", "stopped",
					     "paused" };

const char *qp_status_name(enum qp_status s)
{
	return (unsigned)s < QP_ARRAY_SIZE(status_names) ? status_names[s] : "unknown";
}

int state_validate_id(const char *id, qp_error **err)
{
	return spec_validate_pod_id(id, err);
}

/* The root, a pod dir and each file read back from it must be the caller's
 * and writable by nobody else, as a careful daemon checks its run directory:
 * whoever could write there could plant a state naming another's process
 * or cgroup for `delete --force` to kill. */
int state_check_private(int fd, const char *what, qp_error **err)
{
	struct stat s;

	if (fstat(fd, &s) < 0)
		return qp_fail(err, errno, "stat %s", what);
	if (s.st_uid != geteuid())
		return qp_error_set(err, QP_E_INVALID, 0,
				    "%s is owned by uid %u, not by the caller (uid %u): refused", what,
				    (unsigned)s.st_uid, (unsigned)geteuid());
	if (s.st_mode & (S_IWGRP | S_IWOTH))
		return qp_error_set(err, QP_E_INVALID, 0,
				    "%s is writable by group or others (mode %04o): refused", what,
				    (unsigned)(s.st_mode & 07777));
	return 0;
}

int state_root_open(const char *root, qp_error **err)
{
	_cleanup_free_ char *copy = strdup(root);
	int fd;

	if (!copy)
		return qp_fail(err, ENOMEM, "state root");
	/* mkdir -p, 0700: the state holds pids and paths of every pod */
	for (char *p = copy + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(copy, 0755) < 0 && errno != EEXIST)
			return qp_fail(err, errno, "create state root \"%s\"", copy);
		*p = '/';
	}
	if (mkdir(copy, 0700) < 0 && errno != EEXIST)
		return qp_fail(err, errno, "create state root \"%s\"", root);
	fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return qp_fail(err, errno, "open state root \"%s\"", root);
	char what[64];
	char shown[QP_SHOWN_MAX];
	snprintf(what, sizeof(what), "state root \"%s\"", qp_shown(root, shown));
	if (state_check_private(fd, what, err) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

int state_lock(int fd, const char *id, bool exclusive, qp_error **err)
{
	if (flock(fd, exclusive ? LOCK_EX : LOCK_SH) < 0)
		return qp_fail(err, errno, "lock pod \"%s\"", id);
	return 0;
}

static int remove_tree_at(int parent, const char *name, int depth);

int state_claim(int rootfd, const char *id, qp_error **err)
{
	_cleanup_close_ int fd = -1;

	static unsigned seq;
	char tmp[64];

	if (state_validate_id(id, err) < 0)
		return -1;
	if (faccessat(rootfd, id, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
		return qp_error_set(err, QP_E_EXISTS, 0, "pod ID \"%s\" is already in use", id);
	/* The dir is made under a private name, locked and marked as qpod's
	 * (gc removes nothing without the mark), then renamed into place
	 * without replacing anything: a pod dir always carries its mark, and
	 * a crash leaves at most a QP_CLAIM_PREFIX dir for gc. */
	snprintf(tmp, sizeof(tmp), QP_CLAIM_PREFIX "%d-%u", (int)getpid(), seq++);
	if (mkdirat(rootfd, tmp, 0700) < 0)
		return qp_fail(err, errno, "create state dir for \"%s\"", id);
	fd = openat(rootfd, tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 || state_lock(fd, id, true, err) < 0) {
		int e = errno;
		unlinkat(rootfd, tmp, AT_REMOVEDIR);
		return fd < 0 ? qp_fail(err, e, "open state dir for \"%s\"", id) : -1;
	}
	_cleanup_close_ int mark = openat(fd, QP_POD_MARKER, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (mark < 0 || syscall(SYS_renameat2, rootfd, tmp, rootfd, id, RENAME_NOREPLACE) < 0) {
		int e = errno;
		remove_tree_at(rootfd, tmp, 0);
		if (e == EEXIST)
			return qp_error_set(err, QP_E_EXISTS, 0, "pod ID \"%s\" is already in use", id);
		return qp_fail(err, e, "claim the state dir of \"%s\"", id);
	}
	return steal_fd(&fd);
}

bool state_lock_busy(int dirfd)
{
	_cleanup_close_ int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	/* a new open file description: its lock is not ours; exclusive, as
	 * a creator runs its hooks under a shared lock */
	return fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK;
}

int state_open(int rootfd, const char *id, int lock, qp_error **err)
{
	_cleanup_close_ int fd = -1;

	if (state_validate_id(id, err) < 0)
		return -1;
	fd = openat(rootfd, id, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		if (errno == ENOENT)
			return qp_error_set(err, QP_E_NOTFOUND, 0, "pod \"%s\" does not exist", id);
		return qp_fail(err, errno, "open state dir of \"%s\"", id);
	}
	char what[QP_ID_MAX + 32];
	snprintf(what, sizeof(what), "the state dir of \"%s\"", id);
	if (state_check_private(fd, what, err) < 0 ||
	    (lock != QP_LOCK_NONE && state_lock(fd, id, lock == QP_LOCK_EXCLUSIVE, err) < 0))
		return -1;
	/* deleted while we waited for the lock? */
	if (faccessat(fd, ".", F_OK, 0) < 0 || fstatat(rootfd, id, &(struct stat){0}, AT_SYMLINK_NOFOLLOW) < 0)
		return qp_error_set(err, QP_E_NOTFOUND, 0, "pod \"%s\" does not exist", id);
	return steal_fd(&fd);
}

static int remove_tree_at(int parent, const char *name, int depth)
{
	_cleanup_close_ int fd = -1;
	DIR *d;
	struct dirent *de;
	int ret = 0;

	if (unlinkat(parent, name, 0) == 0 || errno == ENOENT)
		return 0;
	if ((errno != EISDIR && errno != EPERM) || depth > 8)
		return -1;
	fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -1;
	/* never into another file system (a mount inside a state dir) */
	struct stat ps, cs;
	if (fstat(parent, &ps) < 0 || fstat(fd, &cs) < 0)
		return -1;
	if (ps.st_dev != cs.st_dev) {
		errno = EXDEV;
		return -1;
	}
	d = fdopendir(fd);
	if (!d)
		return -1;
	fd = -1; /* owned by d now */
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (remove_tree_at(dirfd(d), de->d_name, depth + 1) < 0)
			ret = -1;
	}
	closedir(d);
	if (unlinkat(parent, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
		ret = -1;
	return ret;
}

int state_remove_tree(int parent, const char *name)
{
	return remove_tree_at(parent, name, 0);
}

bool state_remove_stale_claim(int rootfd, const char *name)
{
	_cleanup_close_ int fd = -1;

	if (strncmp(name, QP_CLAIM_PREFIX, strlen(QP_CLAIM_PREFIX)) || strchr(name, '/'))
		return false;
	fd = openat(rootfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	/* still being claimed (locked), or not qpod's (no mark): left alone */
	if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) < 0 ||
	    faccessat(fd, QP_POD_MARKER, F_OK, AT_SYMLINK_NOFOLLOW) < 0)
		return false;
	return remove_tree_at(rootfd, name, 0) == 0;
}

int state_remove(int rootfd, const char *id, qp_error **err)
{
	if (state_validate_id(id, err) < 0)
		return -1;
	if (remove_tree_at(rootfd, id, 0) < 0)
		return qp_fail(err, errno, "remove state dir of \"%s\"", id);
	return 0;
}

int state_write_file(int dirfd, const char *name, const char *data, size_t len, qp_error **err)
{
	char tmp[256];
	_cleanup_close_ int fd = -1;

	snprintf(tmp, sizeof(tmp), ".%s.tmp", name);
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return qp_fail(err, errno, "write %s", name);
	for (size_t off = 0; off < len;) {
		ssize_t w = write(fd, data + off, len - off);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			unlinkat(dirfd, tmp, 0);
			return qp_fail(err, errno, "write %s", name);
		}
		off += (size_t)w;
	}
	if (renameat(dirfd, tmp, dirfd, name) < 0) {
		unlinkat(dirfd, tmp, 0);
		return qp_fail(err, errno, "write %s", name);
	}
	return 0;
}

int state_read_file(int dirfd, const char *name, size_t max, char **out, size_t *len, qp_error **err)
{
	_cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);

	if (fd < 0)
		return qp_fail(err, errno, "read %s", name);
	struct stat sb;
	if (fstat(fd, &sb) < 0)
		return qp_fail(err, errno, "read %s", name);
	if (!S_ISREG(sb.st_mode))
		return qp_error_set(err, QP_E_INVALID, 0, "read %s: not a regular file", name);
	if (state_check_private(fd, name, err) < 0)
		return -1;
	if (qp_read_all(fd, max, out, len) < 0) {
		if (errno == EFBIG)
			return qp_error_set(err, QP_E_INVALID, 0, "read %s: larger than %zu bytes", name, max);
		return qp_fail(err, errno, "read %s", name);
	}
	return 0;
}

void qp_state_put_annotations(yajl_gen g, const char *key, const struct qp_kv *kv, size_t n)
{
	qp_json_key(g, key);
	yajl_gen_map_open(g);
	for (size_t i = 0; i < n; i++)
		qp_json_kstr(g, kv[i].key, kv[i].value);
	yajl_gen_map_close(g);
}

int state_save(int dirfd, const struct pod_state *st, qp_error **err)
{
	yajl_gen g = qp_json_gen_new(false);
	_cleanup_free_ char *text = NULL;
	size_t len;

	if (!g)
		return qp_fail(err, ENOMEM, "save state");
	yajl_gen_map_open(g);
	qp_json_kstr(g, "id", st->id);
	qp_json_kstr(g, "status", qp_status_name(st->status));
	qp_json_kint(g, "pid", st->pid);
	qp_json_kint(g, "pid_start", (long long)st->pid_start);
	if (st->vmm_pid > 0) {
		qp_json_kint(g, "vmm_pid", st->vmm_pid);
		qp_json_kint(g, "vmm_pid_start", (long long)st->vmm_pid_start);
	}
	qp_json_kstr(g, "bundle", st->bundle);
	qp_json_kstr(g, "rootfs", st->rootfs);
	qp_json_kstr(g, "mode", qp_mode_name(st->mode));
	qp_json_kstr(g, "created", st->created);
	qp_json_kstr(g, "cgroup", st->cgroup);
	qp_json_kstr(g, "accel", st->accel);
	if (st->nic)
		qp_json_kstr(g, "nic", st->nic);
	qp_json_kstr(g, "stop_reason", st->stop_reason);
	qp_json_kstr(g, "owner", st->owner);
	if (st->sandbox)
		qp_json_kstr(g, "sandbox", st->sandbox);
	qp_state_put_annotations(g, "annotations", st->annotations, st->n_annotations);
	yajl_gen_map_close(g);
	if (qp_json_gen_finish(g, &text, &len, err) < 0)
		return qp_error_prefix(err, "save state");
	return state_write_file(dirfd, STATE_FILE, text, len, err);
}

static int dup_opt(const char *s, char **out)
{
	*out = NULL;
	if (!s)
		return 0;
	*out = strdup(s);
	return *out ? 0 : -1;
}

int state_load(int dirfd, struct pod_state **out, qp_error **err)
{
	_cleanup_free_ char *text = NULL;
	size_t len;

	if (state_read_file(dirfd, STATE_FILE, STATE_MAX, &text, &len, err) < 0)
		return -1;
	return state_parse(text, len, out, err);
}

int state_parse(const char *text, size_t len, struct pod_state **out, qp_error **err)
{
	struct pod_state *st;
	yajl_val root = NULL, ann;
	long long v;
	const char *s;
	int ret = -1;

	if (len > STATE_MAX)
		return qp_error_set(err, QP_E_INVALID, 0, "state.json: larger than %u bytes", STATE_MAX);
	if (strlen(text) != len)
		return qp_error_set(err, QP_E_INVALID, 0, "state.json: contains a NUL byte");
	if (qp_json_parse(text, "state.json", &root, err) < 0)
		return -1;
	st = calloc(1, sizeof(*st));
	if (!st)
		goto oom;
	if (dup_opt(qp_json_get_str(root, "id"), &st->id) < 0 ||
	    dup_opt(qp_json_get_str(root, "bundle"), &st->bundle) < 0 ||
	    dup_opt(qp_json_get_str(root, "rootfs"), &st->rootfs) < 0 ||
	    dup_opt(qp_json_get_str(root, "created"), &st->created) < 0 ||
	    dup_opt(qp_json_get_str(root, "cgroup"), &st->cgroup) < 0 ||
	    dup_opt(qp_json_get_str(root, "accel"), &st->accel) < 0 ||
	    dup_opt(qp_json_get_str(root, "nic"), &st->nic) < 0 ||
	    dup_opt(qp_json_get_str(root, "stop_reason"), &st->stop_reason) < 0 ||
	    dup_opt(qp_json_get_str(root, "owner"), &st->owner) < 0 ||
	    dup_opt(qp_json_get_str(root, "sandbox"), &st->sandbox) < 0)
		goto oom;
	if (st->sandbox && state_validate_id(st->sandbox, NULL) < 0) {
		qp_error_set(err, QP_E_INVALID, 0, "state.json: sandbox is not a pod ID");
		goto out;
	}
	if (!st->id) {
		qp_error_set(err, QP_E_INVALID, 0, "state.json: no id");
		goto out;
	}
	s = qp_json_get_str(root, "mode");
	st->mode = QP_MODE_CONTAINER;
	if (s)
		qp_mode_parse(s, &st->mode);
	s = qp_json_get_str(root, "status");
	st->status = QP_STATUS_STOPPED;
	for (size_t i = 0; s && i < QP_ARRAY_SIZE(status_names); i++)
		if (!strcmp(s, status_names[i]))
			st->status = (enum qp_status)i;
	if (qp_json_get_int(root, "pid", &v) && v > 0 && v < (1 << 30))
		st->pid = (pid_t)v;
	if (qp_json_get_int(root, "pid_start", &v) && v > 0)
		st->pid_start = (unsigned long long)v;
	if (qp_json_get_int(root, "vmm_pid", &v) && v > 0 && v < (1 << 30))
		st->vmm_pid = (pid_t)v;
	if (qp_json_get_int(root, "vmm_pid_start", &v) && v > 0)
		st->vmm_pid_start = (unsigned long long)v;
	ann = qp_json_get(root, "annotations");
	if (YAJL_IS_OBJECT(ann) && ann->u.object.len) {
		st->annotations = calloc(ann->u.object.len, sizeof(*st->annotations));
		if (!st->annotations)
			goto oom;
		for (size_t i = 0; i < ann->u.object.len; i++) {
			yajl_val val = ann->u.object.values[i];
			if (!YAJL_IS_STRING(val) || !ann->u.object.keys[i])
				continue;
			struct qp_kv *kv = &st->annotations[st->n_annotations++];
			kv->key = strdup(ann->u.object.keys[i]);
			kv->value = strdup(val->u.string);
			if (!kv->key || !kv->value)
				goto oom;
		}
	}
	*out = st;
	st = NULL;
	ret = 0;
	goto out;
oom:
	qp_fail(err, ENOMEM, "load state");
out:
	state_free(st);
	yajl_tree_free(root);
	return ret;
}

void state_free(struct pod_state *st)
{
	if (!st)
		return;
	free(st->id);
	free(st->bundle);
	free(st->rootfs);
	free(st->created);
	free(st->cgroup);
	free(st->accel);
	free(st->nic);
	free(st->stop_reason);
	free(st->owner);
	free(st->sandbox);
	for (size_t i = 0; i < st->n_annotations; i++) {
		free(st->annotations[i].key);
		free(st->annotations[i].value);
	}
	free(st->annotations);
	free(st);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int state_list(int rootfd, char ***ids, qp_error **err)
{
	_cleanup_close_ int fd = openat(rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d;
	struct dirent *de;
	char **v = NULL;
	size_t n = 0, cap = 0;

	if (fd < 0 || !(d = fdopendir(fd)))
		return qp_fail(err, errno, "list state root");
	fd = -1;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || de->d_type != DT_DIR)
			continue;
		if (state_validate_id(de->d_name, NULL) < 0)
			continue; /* not a pod dir */
		if (n + 2 > cap) {
			char **nv = realloc(v, (cap = cap ? cap * 2 : 16) * sizeof(*v));
			if (!nv)
				goto oom;
			v = nv;
		}
		if (faccessat(dirfd(d), de->d_name, F_OK, 0) < 0)
			continue;
		/* only directories that hold a state file (even one that cannot
		 * be read: list shows it broken) */
		char probe[QP_ID_MAX + 32];
		snprintf(probe, sizeof(probe), "%s/" STATE_FILE, de->d_name);
		if (faccessat(dirfd(d), probe, F_OK, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (!(v[n++] = strdup(de->d_name)))
			goto oom;
		v[n] = NULL;
	}
	closedir(d);
	if (!v && !(v = calloc(1, sizeof(*v))))
		return qp_fail(err, ENOMEM, "list state root");
	qsort(v, n, sizeof(*v), cmp_str);
	*ids = v;
	return 0;
oom:
	closedir(d);
	qp_strv_free(v);
	return qp_fail(err, ENOMEM, "list state root");
}

unsigned long long proc_start_time(pid_t pid)
{
	char path[64], buf[1024];
	_cleanup_close_ int fd = -1;
	ssize_t n;
	char *p;
	unsigned long long start = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* comm may contain spaces and parens: fields resume after the last ')' */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return 0;
	p += 2;
	/* p is at field 3 (state); starttime is field 22 */
	char state = *p;
	if (state == 'Z' || state == 'X')
		return 0;
	for (int field = 3; field < 22 && p; field++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	if (p)
		start = strtoull(p, NULL, 10);
	return start;
}

static bool pid_is(pid_t pid, unsigned long long start)
{
	unsigned long long now = pid > 0 ? proc_start_time(pid) : 0;
	return now != 0 && now == start;
}

bool state_pid_alive(const struct pod_state *st)
{
	return st && pid_is(st->pid, st->pid_start);
}

bool state_vmm_alive(const struct pod_state *st)
{
	return st && pid_is(st->vmm_pid, st->vmm_pid_start);
}
