/* runtime/vm/mounts.c — the spec's own mounts for a VM pod: what the guest
 * does not provide itself (/proc, /dev..., /sys) is planned here and carried
 * out by guest-init (RUN's mounts, guest-init/protocol.h):
 *   tmpfs                  a tmpfs in the guest, with size/mode/uid/gid/nr_inodes
 *   bind of a directory    one more 9p share (read-only if "ro")
 *   bind of a regular file a copy in the pod's state dir (mntN/NAME), shared
 *                          alone and bind-mounted on the destination: the
 *                          guest sees the file as it was at create (what
 *                          podman and the CRI bind: /etc/hosts, resolv.conf)
 * Anything else is not applied, and create says so (vm_mount_applied).
 * A container inside a vm pod's VM (vm/member/) gets the same plan, its
 * binds and copies in its directory of the pod share instead of shares of
 * their own ("pod" entries). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/log.h"
#include "util/safepath.h"
#include "vm/vm.h"

#define STAGE_MAX_FILE (1 << 20) /* a staged file is copied: bounded */

static const char *const provided[] = { "/proc", "/dev", "/dev/pts", "/dev/shm", "/dev/mqueue",
					"/sys", "/sys/fs/cgroup" };
static const char *const tmpfs_data[] = { "size=", "mode=", "uid=", "gid=", "nr_inodes=" };
/* options with no effect on what the guest sees (atime flavours, the
 * recursion of a bind, propagation: the guest has no peers) */
static const char *const no_effect[] = { "rw", "bind", "rbind", "relatime", "norelatime", "noatime",
					 "atime", "strictatime", "nodiratime", "private", "rprivate",
					 "slave", "rslave", "shared", "rshared", "defaults", "suid",
					 "dev", "exec", "async" };

static bool in(const char *s, const char *const *set, size_t n, bool prefix)
{
	for (size_t i = 0; i < n; i++)
		if (prefix ? !strncmp(s, set[i], strlen(set[i])) : !strcmp(s, set[i]))
			return true;
	return false;
}

static bool is_bind(const struct qp_mount *m)
{
	if (m->type && !strcmp(m->type, "bind"))
		return true;
	for (size_t i = 0; m->options && m->options[i]; i++)
		if (!strcmp(m->options[i], "bind") || !strcmp(m->options[i], "rbind"))
			return true;
	return false;
}

/* Options -> flags (ro, nosuid, nodev, noexec) and tmpfs data; false if
 * one of them cannot be honoured in the guest. */
static bool options(const struct qp_mount *m, bool tmpfs, unsigned long *flags, char *data, size_t size,
		    const char **bad)
{
	size_t len = 0;

	*flags = 0;
	data[0] = '\0';
	for (size_t i = 0; m->options && m->options[i]; i++) {
		const char *o = m->options[i];
		if (!strcmp(o, "ro"))
			*flags |= MS_RDONLY;
		else if (!strcmp(o, "nosuid"))
			*flags |= MS_NOSUID;
		else if (!strcmp(o, "nodev"))
			*flags |= MS_NODEV;
		else if (!strcmp(o, "noexec"))
			*flags |= MS_NOEXEC;
		else if (tmpfs && in(o, tmpfs_data, QP_ARRAY_SIZE(tmpfs_data), true) && !strchr(o, '\t') &&
			 len + strlen(o) + 2 < size)
			len += (size_t)snprintf(data + len, size - len, "%s%s", len ? "," : "", o);
		else if (!in(o, no_effect, QP_ARRAY_SIZE(no_effect), false)) {
			*bad = o;
			return false;
		}
	}
	return true;
}

bool vm_mount_applied(const struct qp_mount *m, const char **why)
{
	struct stat st;
	unsigned long fl;
	char data[256];
	const char *bad = NULL;

	*why = NULL;
	if (!m->destination || in(m->destination, provided, QP_ARRAY_SIZE(provided), false))
		return true; /* the guest's own */
	if (m->type && !strcmp(m->type, "tmpfs") && !is_bind(m)) {
		if (!options(m, true, &fl, data, sizeof(data), &bad))
			return *why = bad, false;
		return true;
	}
	if (!is_bind(m))
		return *why = m->type ? m->type : "no type", false;
	if (!options(m, false, &fl, data, sizeof(data), &bad))
		return *why = bad, false;
	if (!m->source || stat(m->source, &st) < 0)
		return *why = "source missing", false;
	if (S_ISREG(st.st_mode) && st.st_size > STAGE_MAX_FILE)
		return *why = "a file over 1 MiB", false;
	if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
		return *why = "neither a directory nor a regular file", false;
	return true;
}

int vm_stage_file(int dirfd, const char *sub, const char *src, const char *name, qp_error **err)
{
	_cleanup_close_ int in_fd = open(src, O_RDONLY | O_CLOEXEC);
	_cleanup_close_ int d = -1, out = -1;
	struct stat st;

	if (in_fd < 0 || fstat(in_fd, &st) < 0)
		return qp_fail(err, errno, "open \"%s\"", src);
	if (mkdirat(dirfd, sub, 0755) < 0 && errno != EEXIST)
		return qp_fail(err, errno, "mkdir %s", sub);
	if ((d = openat(dirfd, sub, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return qp_fail(err, errno, "open %s", sub);
	out = openat(d, name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, st.st_mode & 0777);
	if (out < 0)
		return qp_fail(err, errno, "create %s/%s", sub, name);
	for (off_t left = st.st_size; left > 0;) {
		ssize_t n = sendfile(out, in_fd, NULL, (size_t)left);
		if (n <= 0)
			return qp_fail(err, n < 0 ? errno : EIO, "copy \"%s\"", src);
		left -= n;
	}
	return 0;
}

/* The mount point must exist in the rootfs, which the guest may see
 * read-only: made here on the host, resolved inside the rootfs (never
 * leaving it), as the container driver does for a container's mounts. */
int vm_mount_point(int rootfd, const char *dest, bool dir, qp_error **err)
{
	_cleanup_close_ int fd = qp_open_in_root(rootfd, dest, dir ? QP_PATH_MKDIR : QP_PATH_MKFILE, 0, err);

	return fd < 0 ? qp_error_prefix(err, "mount point \"%s\"", dest) : 0;
}

/* What the guest mounts in a root itself (a pod's /tmp too; a container's
 * root gets the point as well).  A read-only root (the CRI's pause image:
 * only /pause in it) gets them here. */
static int guest_points(int rootfd, qp_error **err)
{
	static const char *const points[] = { "/proc", "/sys", "/dev", "/tmp" };

	for (size_t i = 0; i < QP_ARRAY_SIZE(points); i++)
		if (vm_mount_point(rootfd, points[i], true, err) < 0)
			return -1;
	return 0;
}

/* One bind of the spec: a pod's share (a directory, or the staged copy's
 * directory), or a container's in its directory of the pod share. */
static int plan_bind(const struct qp_mount *m, const struct stat *st, int dirfd, const char *statedir,
		     const char *member, struct vm_mounts *out, struct qp_run_mount *rm, qp_error **err)
{
	struct vm_share *sh = &out->shares[out->nshares];
	_cleanup_free_ char *copy = strdup(m->source);
	char sub[16];

	if (!copy)
		return qp_fail(err, ENOMEM, "mounts");
	snprintf(sub, sizeof(sub), "%s%zu", S_ISDIR(st->st_mode) ? "m" : member ? "f" : "mnt", out->nshares);
	snprintf(sh->tag, sizeof(sh->tag), "m%zu", out->nshares);
	sh->ro = rm->flags & MS_RDONLY;
	if (S_ISDIR(st->st_mode)) {
		sh->path = strdup(m->source);
	} else {
		snprintf(rm->name, sizeof(rm->name), "%s", basename(copy));
		if (vm_stage_file(dirfd, sub, m->source, rm->name, err) < 0)
			return qp_error_prefix(err, "mount \"%s\"", m->destination);
		sh->ro = true; /* a copy: writes could not reach the source anyway */
		if (!member && asprintf(&sh->path, "%s/%s", statedir, sub) < 0)
			sh->path = NULL;
		if (member)
			sh->path = strdup(""); /* staged in place: nothing to bind */
	}
	if (!sh->path)
		return qp_fail(err, ENOMEM, "mounts");
	if (member) {
		char path[600];
		rm->kind = QP_RM_POD;
		if (S_ISDIR(st->st_mode))
			snprintf(path, sizeof(path), "%s/%s", member, sub);
		else
			snprintf(path, sizeof(path), "%s/%s/%s", member, sub, rm->name);
		if (strlen(path) >= sizeof(rm->name))
			return qp_error_set(err, QP_E_INVALID, 0, "mount \"%s\": a name too long for the guest",
					    m->destination);
		memcpy(rm->name, path, strlen(path) + 1);
		snprintf(sh->tag, sizeof(sh->tag), "%s", sub);
	} else {
		rm->kind = S_ISDIR(st->st_mode) ? QP_RM_9P : QP_RM_9PFILE;
		snprintf(rm->tag, sizeof(rm->tag), "%s", sh->tag);
	}
	out->nshares++;
	return 0;
}

int vm_mounts_plan(const struct pod_spec *spec, const char *rootfs, int dirfd, const char *statedir,
		   const char *member, struct vm_mounts *out, qp_error **err)
{
	_cleanup_close_ int rootfd = open(rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);

	memset(out, 0, sizeof(*out));
	if (rootfd < 0)
		return qp_fail(err, errno, "open rootfs \"%s\"", rootfs);
	if (guest_points(rootfd, err) < 0)
		return -1;
	for (size_t i = 0; i < spec->n_mounts; i++) {
		const struct qp_mount *m = &spec->mounts[i];
		struct qp_run_mount rm = { 0 };
		const char *why;
		char data[256];
		struct stat st;

		if (!vm_mount_applied(m, &why) || in(m->destination, provided, QP_ARRAY_SIZE(provided), false))
			continue; /* named by create as not applied, or the guest's own */
		if (out->n >= QP_PROTO_MAX_MOUNTS)
			return qp_error_set(err, QP_E_INVALID, 0, "vm pods take at most %d mounts of their own",
					    QP_PROTO_MAX_MOUNTS);
		snprintf(rm.dest, sizeof(rm.dest), "%s", m->destination);
		bool tmpfs = m->type && !strcmp(m->type, "tmpfs") && !is_bind(m);
		options(m, tmpfs, &rm.flags, data, sizeof(data), &why);
		if (!tmpfs && stat(m->source, &st) < 0)
			return qp_fail(err, errno, "mount source \"%s\"", m->source);
		if (vm_mount_point(rootfd, m->destination, tmpfs || S_ISDIR(st.st_mode), err) < 0)
			return -1;
		if (tmpfs) {
			rm.kind = QP_RM_TMPFS;
			snprintf(rm.data, sizeof(rm.data), "%s", data);
		} else if (plan_bind(m, &st, dirfd, statedir, member, out, &rm, err) < 0) {
			return -1;
		}
		char entry[2048];
		if (qp_run_mount_format(&rm, entry, sizeof(entry)) < 0 || !(out->entries[out->n] = strdup(entry)))
			return qp_error_set(err, QP_E_INVALID, 0, "mount \"%s\": cannot be passed to the guest",
					    m->destination);
		out->n++;
	}
	return 0;
}

void vm_mounts_free(struct vm_mounts *p)
{
	for (size_t i = 0; i < p->nshares; i++)
		free(p->shares[i].path);
	for (size_t i = 0; i < p->n; i++)
		free(p->entries[i]);
	memset(p, 0, sizeof(*p));
}

void vm_mounts_unstage(int statefd)
{
	char sub[16];

	for (int i = 0; i < QP_PROTO_MAX_MOUNTS; i++) {
		snprintf(sub, sizeof(sub), "mnt%d", i);
		_cleanup_closedir_ DIR *d = NULL;
		int fd = openat(statefd, sub, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (!(d = fdopendir(fd))) {
			close(fd);
			continue;
		}
		struct dirent *de;
		while ((de = readdir(d)))
			if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
				unlinkat(dirfd(d), de->d_name, 0);
		unlinkat(statefd, sub, AT_REMOVEDIR);
	}
}
