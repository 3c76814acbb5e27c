/* runtime/container/mounts.c — see mounts.h.
 *
 * Every destination is resolved inside the rootfs with util/safepath.c and
 * mounted through its /proc/self/fd/N path, so a rootfs that contains
 * "etc -> /" or "proc -> /host" cannot make us mount onto the host. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <linux/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "container/lsm.h"
#include "container/mounts.h"
#include "util/cleanup.h"
#include "util/log.h"
#include "util/safepath.h"


static const struct {
	const char *name;
	bool clear;
	unsigned long flag;
} mount_opts[] = {
	{ "ro", false, MS_RDONLY },        { "rw", true, MS_RDONLY },
	{ "nosuid", false, MS_NOSUID },    { "suid", true, MS_NOSUID },
	{ "nodev", false, MS_NODEV },      { "dev", true, MS_NODEV },
	{ "noexec", false, MS_NOEXEC },    { "exec", true, MS_NOEXEC },
	{ "sync", false, MS_SYNCHRONOUS }, { "async", true, MS_SYNCHRONOUS },
	{ "dirsync", false, MS_DIRSYNC },  { "remount", false, MS_REMOUNT },
	{ "mand", false, MS_MANDLOCK },    { "nomand", true, MS_MANDLOCK },
	{ "noatime", false, MS_NOATIME },  { "atime", true, MS_NOATIME },
	{ "nodiratime", false, MS_NODIRATIME }, { "diratime", true, MS_NODIRATIME },
	{ "relatime", false, MS_RELATIME }, { "norelatime", true, MS_RELATIME },
	{ "strictatime", false, MS_STRICTATIME }, { "nostrictatime", true, MS_STRICTATIME },
	{ "lazytime", false, MS_LAZYTIME }, { "nolazytime", true, MS_LAZYTIME },
	{ "silent", false, MS_SILENT },    { "loud", true, MS_SILENT },
	{ "defaults", false, 0 }, /* mount(8)'s rw,suid,dev,exec,async: the kernel's own defaults */
};

static const struct {
	const char *name;
	unsigned long flag;
} propagation_opts[] = {
	{ "private", MS_PRIVATE },  { "rprivate", MS_PRIVATE | MS_REC },
	{ "shared", MS_SHARED },    { "rshared", MS_SHARED | MS_REC },
	{ "slave", MS_SLAVE },      { "rslave", MS_SLAVE | MS_REC },
	{ "unbindable", MS_UNBINDABLE }, { "runbindable", MS_UNBINDABLE | MS_REC },
};

int qp_mount_parse_options(char *const *options, struct qp_mount_flags *out, qp_error **err)
{
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; options && options[i]; i++) {
		const char *o = options[i];
		bool known = false;

		if (!strcmp(o, "bind") || !strcmp(o, "rbind")) {
			out->bind = true;
			out->rec = o[0] == 'r';
			continue;
		}
		for (size_t k = 0; k < QP_ARRAY_SIZE(mount_opts) && !known; k++) {
			if (strcmp(o, mount_opts[k].name))
				continue;
			known = true;
			if (mount_opts[k].clear)
				out->flags &= ~mount_opts[k].flag;
			else
				out->flags |= mount_opts[k].flag;
		}
		for (size_t k = 0; k < QP_ARRAY_SIZE(propagation_opts) && !known; k++) {
			if (!strcmp(o, propagation_opts[k].name)) {
				known = true;
				out->propagation = propagation_opts[k].flag;
			}
		}
		if (!known && !strcmp(o, "rro")) {
			/* recursive read-only (mount_setattr, Linux >= 5.12) */
			known = true;
			out->rro = true;
		}
		if (!known && !strcmp(o, "tmpcopyup")) {
			known = true; /* the image's files copied into the tmpfs (copyup.c) */
			out->copyup = true;
		}
		if (!known && (!strcmp(o, "idmap") || !strcmp(o, "ridmap")))
			return qp_error_set(err, QP_E_INVALID, 0, "mount option \"%s\" is not supported", o);
		if (known)
			continue;
		size_t used = strlen(out->data), need = strlen(o) + (used ? 1 : 0);
		if (used + need >= sizeof(out->data))
			return qp_error_set(err, QP_E_INVALID, 0, "mount options too long");
		if (used)
			strcat(out->data, ",");
		strcat(out->data, o);
	}
	return 0;
}

/* Flags a bind remount must keep: the kernel refuses to clear locked ones. */
static unsigned long current_mount_flags(const char *path)
{
	struct statvfs sv;
	unsigned long f = 0;

	if (statvfs(path, &sv) < 0)
		return 0;
	if (sv.f_flag & ST_NOSUID)
		f |= MS_NOSUID;
	if (sv.f_flag & ST_NODEV)
		f |= MS_NODEV;
	if (sv.f_flag & ST_NOEXEC)
		f |= MS_NOEXEC;
	if (sv.f_flag & ST_RDONLY)
		f |= MS_RDONLY;
	if (sv.f_flag & ST_NOATIME)
		f |= MS_NOATIME;
	if (sv.f_flag & ST_NODIRATIME)
		f |= MS_NODIRATIME;
	if (sv.f_flag & ST_RELATIME)
		f |= MS_RELATIME;
	return f;
}

static int remount_bind(const char *target, unsigned long flags, const char *what, qp_error **err)
{
	flags |= current_mount_flags(target) & ~MS_RDONLY;
	if (mount(NULL, target, NULL, MS_REMOUNT | MS_BIND | flags, NULL) < 0)
		return qp_fail(err, errno, "remount \"%s\"", what);
	return 0;
}

/* "rro": read-only for the mount and every mount below it. */
static int set_recursive_readonly(int dfd, const char *what, qp_error **err)
{
	struct mount_attr attr = { .attr_set = MOUNT_ATTR_RDONLY };

	if (syscall(SYS_mount_setattr, dfd, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof(attr)) < 0)
		return qp_fail(err, errno, "make \"%s\" recursively read-only (rro)", what);
	return 0;
}

/* runc's choice: the mount label goes on the pod's own filesystems (tmpfs,
 * devpts, ...), not on proc, sysfs, mqueue or cgroup */
static bool takes_mount_label(const char *type)
{
	static const char *const no[] = { "proc", "sysfs", "mqueue", "cgroup", "cgroup2" };

	for (size_t i = 0; i < QP_ARRAY_SIZE(no); i++)
		if (!strcmp(type, no[i]))
			return false;
	return true;
}

static int do_one_mount(int rootfd, const struct qp_mount *m, bool cgroupns, const char *label,
			qp_error **err)
{
	struct qp_mount_flags mf;
	char target[64];
	_cleanup_close_ int dfd = -1;
	bool src_is_dir = true;
	const char *type = m->type;

	if (qp_mount_parse_options(m->options, &mf, err) < 0)
		return qp_error_prefix(err, "mount \"%s\"", m->destination);
	if (type && !strcmp(type, "bind"))
		mf.bind = true, type = NULL;
	if (!mf.bind && type && takes_mount_label(type) &&
	    qp_lsm_mount_data(label, mf.data, sizeof(mf.data), err) < 0)
		return qp_error_prefix(err, "mount \"%s\"", m->destination);
	if (mf.bind) {
		struct stat st;
		if (!m->source || stat(m->source, &st) < 0)
			return qp_fail(err, m->source ? errno : EINVAL, "bind mount source \"%s\"",
				       m->source ? m->source : "(none)");
		src_is_dir = S_ISDIR(st.st_mode);
	}
	dfd = qp_open_in_root(rootfd, m->destination, src_is_dir ? QP_PATH_MKDIR : QP_PATH_MKFILE, 0,
			      err);
	if (dfd < 0)
		return qp_error_prefix(err, "mount \"%s\"", m->destination);
	qp_fd_path(dfd, target, sizeof(target));

	if (mf.bind) {
		if (mount(m->source, target, NULL, MS_BIND | (mf.rec ? MS_REC : 0), NULL) < 0)
			return qp_fail(err, errno, "bind mount \"%s\" on \"%s\"", m->source,
				       m->destination);
	} else if (type && (!strcmp(type, "cgroup") || !strcmp(type, "cgroup2"))) {
		if (qp_mount_cgroup_view(rootfd, m->destination, target, mf.flags, cgroupns, err) < 0)
			return qp_error_prefix(err, "mount \"%s\"", m->destination);
	} else {
		const char *src = m->source ? m->source : (type ? type : "none");
		if (mount(src, target, type, mf.flags, mf.data[0] ? mf.data : NULL) < 0) {
			int e = errno;
			/* sysfs needs a network namespace we own; fall back to the host's, read-only */
			if (type && !strcmp(type, "sysfs") && (e == EPERM || e == EBUSY)) {
				if (mount("/sys", target, NULL, MS_BIND | MS_REC, NULL) == 0)
					return remount_bind(target, MS_RDONLY | MS_NOSUID | MS_NODEV |
								    MS_NOEXEC, m->destination, err);
			}
			return qp_fail(err, e, "mount %s on \"%s\"", type ? type : "(none)",
				       m->destination);
		}
	}
	if (!(mf.bind && (mf.flags & ~MS_REMOUNT)) && !mf.propagation && !mf.rro && !mf.copyup)
		return 0;
	if (mf.copyup && (!type || strcmp(type, "tmpfs")))
		return qp_error_set(err, QP_E_INVALID, 0, "mount \"%s\": tmpcopyup needs a tmpfs",
				    m->destination);
	/* The new mount covers the inode dfd points at: every later change
	 * (flags, propagation, rro, copy-up) must go through the mount itself,
	 * so resolve the destination again (still without leaving the root);
	 * dfd stays the covered directory, the source of a copy-up. */
	_cleanup_close_ int mfd = qp_open_in_root(rootfd, m->destination, QP_PATH_EXISTING, 0, err);
	if (mfd < 0)
		return qp_error_prefix(err, "mount \"%s\"", m->destination);
	qp_fd_path(mfd, target, sizeof(target));
	if (mf.copyup && qp_mount_copyup(dfd, target, m->destination, err) < 0)
		return -1;
	if (mf.bind && (mf.flags & ~MS_REMOUNT) &&
	    remount_bind(target, mf.flags & ~MS_REMOUNT, m->destination, err) < 0)
		return -1;
	if (mf.propagation && mount(NULL, target, NULL, mf.propagation, NULL) < 0)
		return qp_fail(err, errno, "set propagation of \"%s\"", m->destination);
	if (mf.rro && set_recursive_readonly(mfd, m->destination, err) < 0)
		return -1;
	return 0;
}

static const struct {
	const char *name;
	unsigned maj, min;
} default_devices[] = {
	{ "null", 1, 3 }, { "zero", 1, 5 }, { "full", 1, 7 },
	{ "random", 1, 8 }, { "urandom", 1, 9 }, { "tty", 5, 0 },
};

static int make_device(int rootfd, const char *path, mode_t mode, dev_t dev, uid_t uid,
		       gid_t gid, bool in_userns, qp_error **err)
{
	_cleanup_close_ int fd = -1;
	char target[64];
	const char *rel = path;

	while (*rel == '/')
		rel++;
	if (!in_userns) {
		/* parent dir inside the root, then mknod relative to it */
		_cleanup_free_ char *dir = strdup(rel);
		if (!dir)
			return qp_fail(err, ENOMEM, "device \"%s\"", path);
		char *slash = strrchr(dir, '/');
		const char *leaf = slash ? slash + 1 : dir;
		if (slash)
			*slash = '\0';
		_cleanup_close_ int dfd =
			qp_open_in_root(rootfd, slash ? dir : ".", QP_PATH_MKDIR, O_DIRECTORY, err);
		if (dfd < 0)
			return qp_error_prefix(err, "device \"%s\"", path);
		unlinkat(dfd, leaf, 0);
		if (mknodat(dfd, leaf, mode, dev) < 0)
			return qp_fail(err, errno, "mknod \"%s\"", path);
		/* mknod honours the umask; the spec's mode is the mode */
		if (fchmodat(dfd, leaf, mode & 07777, 0) < 0)
			return qp_fail(err, errno, "chmod \"%s\"", path);
		if (fchownat(dfd, leaf, uid, gid, AT_SYMLINK_NOFOLLOW) < 0)
			return qp_fail(err, errno, "chown \"%s\"", path);
		return 0;
	}
	/* in a user namespace mknod is refused: bind the host's node */
	char host[64];
	snprintf(host, sizeof(host), "/dev/%s", strrchr(path, '/') ? strrchr(path, '/') + 1 : path);
	fd = qp_open_in_root(rootfd, rel, QP_PATH_MKFILE, 0, err);
	if (fd < 0)
		return qp_error_prefix(err, "device \"%s\"", path);
	if (mount(host, qp_fd_path(fd, target, sizeof(target)), NULL, MS_BIND, NULL) < 0)
		return qp_fail(err, errno, "bind device \"%s\"", path);
	return 0;
}

static int setup_dev(int rootfd, const struct pod_spec *spec, bool in_userns, qp_error **err)
{
	static const char *const links[][2] = {
		{ "/proc/self/fd", "fd" },      { "/proc/self/fd/0", "stdin" },
		{ "/proc/self/fd/1", "stdout" }, { "/proc/self/fd/2", "stderr" },
		{ "pts/ptmx", "ptmx" },
	};
	_cleanup_close_ int devfd = qp_open_in_root(rootfd, "/dev", QP_PATH_MKDIR, O_DIRECTORY, err);

	if (devfd < 0)
		return -1;
	for (size_t i = 0; i < QP_ARRAY_SIZE(default_devices); i++) {
		char path[32];
		snprintf(path, sizeof(path), "/dev/%s", default_devices[i].name);
		if (make_device(rootfd, path, S_IFCHR | 0666,
				makedev(default_devices[i].maj, default_devices[i].min), 0, 0, in_userns,
				err) < 0)
			return -1;
	}
	for (size_t i = 0; i < spec->n_devices; i++) {
		const struct qp_device *d = &spec->devices[i];
		mode_t type = d->type == 'b' ? S_IFBLK : d->type == 'p' ? S_IFIFO : S_IFCHR;
		mode_t perm = d->has_mode ? (d->mode & 07777) : 0666;
		if (make_device(rootfd, d->path, type | perm, makedev(d->major, d->minor),
				d->has_uid ? d->uid : 0, d->has_gid ? d->gid : 0, in_userns, err) < 0)
			return -1;
	}
	/* devfd is a resolved O_PATH dir; the links are created relative to it */
	char dpath[64];
	qp_fd_path(devfd, dpath, sizeof(dpath));
	_cleanup_close_ int d = open(dpath, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d < 0)
		return qp_fail(err, errno, "open /dev");
	for (size_t i = 0; i < QP_ARRAY_SIZE(links); i++)
		if (symlinkat(links[i][0], d, links[i][1]) < 0 && errno != EEXIST)
			return qp_fail(err, errno, "symlink /dev/%s", links[i][1]);
	return 0;
}

int qp_mounts_prepare(const struct pod_spec *spec, const char *rootfs, bool in_userns,
		      qp_error **err)
{
	_cleanup_close_ int rootfd = -1;
	bool dev_is_tmpfs = false;

	const bool own_ns = qp_mounts_own_ns(spec);

	/* nothing we mount may propagate back to the host; without a mount
	 * namespace of its own the host's / is left as it is, and only the
	 * rootfs bind below is made private */
	if (own_ns && mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
		return qp_fail(err, errno, "make / a slave mount");
	/* pivot_root needs the new root to be a mount point; without a mount
	 * namespace it is the one mount delete detaches, with all below it */
	if (mount(rootfs, rootfs, NULL, MS_BIND | MS_REC, NULL) < 0)
		return qp_fail(err, errno, "bind rootfs \"%s\"", rootfs);
	if (!own_ns && mount(NULL, rootfs, NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return qp_fail(err, errno, "make the rootfs bind private");
	rootfd = open(rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return qp_fail(err, errno, "open rootfs \"%s\"", rootfs);

	for (size_t i = 0; i < spec->n_mounts; i++) {
		const struct qp_mount *m = &spec->mounts[i];
		if (do_one_mount(rootfd, m, spec->ns[QP_NS_CGROUP].enabled, spec->mount_label, err) < 0)
			return -1;
		if (!strcmp(m->destination, "/dev") && m->type && !strcmp(m->type, "tmpfs"))
			dev_is_tmpfs = true;
	}
	if (dev_is_tmpfs || spec->n_devices)
		if (setup_dev(rootfd, spec, in_userns, err) < 0)
			return qp_error_prefix(err, "prepare /dev");
	return 0;
}

bool qp_mounts_own_ns(const struct pod_spec *spec)
{
	return spec->ns[QP_NS_MOUNT].enabled;
}

void qp_mounts_unbuild(const struct pod_spec *spec, const char *rootfs)
{
	if (!spec || qp_mounts_own_ns(spec) || !rootfs)
		return;
	/* only our bind: a rootfs that was a mount point itself stays; EINVAL,
	 * not a mount point: the pod never got as far as the bind */
	if (umount2(rootfs, MNT_DETACH) < 0 && errno != EINVAL && errno != ENOENT)
		qp_warn("detach the rootfs mounts of \"%s\": %s", rootfs, strerror(errno));
}

int qp_mounts_pivot(const struct pod_spec *spec, const char *rootfs, bool no_pivot, qp_error **err)
{
	if (chdir(rootfs) < 0)
		return qp_fail(err, errno, "chdir to rootfs");
	if (!qp_mounts_own_ns(spec)) {
		/* runc's choice without a mount namespace: neither pivot_root nor
		 * a move of the rootfs onto /, which would change the host's root */
		if (chroot(".") < 0)
			return qp_fail(err, errno, "chroot (no mount namespace)");
		if (chdir("/") < 0)
			return qp_fail(err, errno, "chdir /");
		return 0;
	}
	if (no_pivot) {
		if (mount(rootfs, "/", NULL, MS_MOVE, NULL) < 0)
			return qp_fail(err, errno, "move the rootfs onto / (--no-pivot)");
		if (chroot(".") < 0)
			return qp_fail(err, errno, "chroot (--no-pivot)");
		if (chdir("/") < 0)
			return qp_fail(err, errno, "chdir /");
		return 0;
	}
	/* pivot_root(".", "."): the old root is stacked under the new one and
	 * detached at once, without needing a directory for it in the rootfs */
	if (syscall(SYS_pivot_root, ".", ".") < 0)
		return qp_fail(err, errno, "pivot_root");
	if (umount2(".", MNT_DETACH) < 0)
		return qp_fail(err, errno, "detach the old root");
	if (chdir("/") < 0)
		return qp_fail(err, errno, "chdir /");
	return 0;
}

static int mask_path(int rootfd, const char *path, qp_error **err)
{
	_cleanup_close_ int fd = qp_open_in_root(rootfd, path, QP_PATH_EXISTING, 0, NULL);
	struct stat st;
	char target[64];

	if (fd < 0)
		return 0; /* absent: nothing to mask */
	if (fstat(fd, &st) < 0)
		return qp_fail(err, errno, "mask \"%s\"", path);
	qp_fd_path(fd, target, sizeof(target));
	if (S_ISDIR(st.st_mode)) {
		if (mount("tmpfs", target, "tmpfs", MS_RDONLY, "size=0") < 0)
			return qp_fail(err, errno, "mask \"%s\"", path);
	} else if (mount("/dev/null", target, NULL, MS_BIND, NULL) < 0) {
		return qp_fail(err, errno, "mask \"%s\"", path);
	}
	return 0;
}

static int readonly_path(int rootfd, const char *path, qp_error **err)
{
	_cleanup_close_ int fd = qp_open_in_root(rootfd, path, QP_PATH_EXISTING, 0, NULL);
	char target[64];

	if (fd < 0)
		return 0;
	qp_fd_path(fd, target, sizeof(target));
	if (mount(target, target, NULL, MS_BIND | MS_REC, NULL) < 0)
		return qp_fail(err, errno, "read-only \"%s\"", path);
	close(fd);
	fd = qp_open_in_root(rootfd, path, QP_PATH_EXISTING, 0, err);
	if (fd < 0)
		return -1;
	qp_fd_path(fd, target, sizeof(target));
	return remount_bind(target, MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, path, err);
}

int qp_mounts_finish(const struct pod_spec *spec, qp_error **err)
{
	_cleanup_close_ int rootfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (rootfd < 0)
		return qp_fail(err, errno, "open /");
	for (size_t i = 0; spec->masked_paths && spec->masked_paths[i]; i++)
		if (mask_path(rootfd, spec->masked_paths[i], err) < 0)
			return -1;
	for (size_t i = 0; spec->readonly_paths && spec->readonly_paths[i]; i++)
		if (readonly_path(rootfd, spec->readonly_paths[i], err) < 0)
			return -1;
	if (spec->root_readonly && remount_bind("/", MS_RDONLY, "/", err) < 0)
		return -1;
	if (spec->rootfs_propagation) {
		char *opts[] = { spec->rootfs_propagation, NULL };
		struct qp_mount_flags mf;
		if (qp_mount_parse_options(opts, &mf, err) < 0 || !mf.propagation)
			return qp_error_set(err, QP_E_INVALID, 0, "rootfsPropagation \"%s\" is not valid",
					    spec->rootfs_propagation);
		if (mount(NULL, "/", NULL, mf.propagation, NULL) < 0)
			return qp_fail(err, errno, "set rootfs propagation");
	}
	return 0;
}
