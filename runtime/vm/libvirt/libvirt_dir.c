/* runtime/vm/libvirt/libvirt_dir.c — what a libvirt QEMU that does not run as root
 * can open: a directory of the pod's own, owned by QEMU's user, outside
 * qpod's state root (which stays root's alone).
 *
 * A distribution's libvirtd runs QEMU as its qemu.conf user (Debian:
 * libvirt-qemu:libvirt-qemu).  That user cannot pass the state root's
 * 0700, nor write a rootfs that root owns.  So, for the domain's start
 * only, the directory RUNDIR/ID.XXXXXX holds copies of the
 * kernel, firmware and initrd, and the rootfs and the spec's shares as
 * idmapped bind mounts: the host's uid/gid 0 appears there as QEMU's
 * uid/gid, so QEMU owns what root owns (and what it creates is root's on
 * the disk).  The directory is root's, mode 0710 with QEMU's group: QEMU
 * passes it, and neither it nor another QEMU of the same user can change
 * what is in it (so a mount qpod makes there lands where qpod means).
 * QEMU reads kernel, firmware and initrd, and opens each 9p
 * share's root, while it starts; once the domain runs, the mounts are
 * detached (QEMU's open directories keep them alive) and the directory is
 * removed, so nothing of it outlives the start, whatever happens later. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/mount.h>

#include "util/cleanup.h"
#include "util/log.h"
#include "vm/libvirt/libvirt.h"

#define LV_FILES 3 /* kernel, firmware, initrd */

struct vm_lv_dir {
	char path[PATH_MAX];
	int fd;
	char *files[LV_FILES]; /* NULL where none */
	char *mounts[1 + QP_PROTO_MAX_MOUNTS]; /* the rootfs, then the shares */
	size_t nmounts;
	size_t share0; /* mounts[share0] is the first share (1 with a rootfs) */
};

static const char *const file_names[LV_FILES] = { "kernel", "firmware", QP_VM_INITRD };
static const char *const mount_names[1 + QP_PROTO_MAX_MOUNTS] = {
	"r", "f0", "f1", "f2", "f3", "f4", "f5", "f6", "f7", "f8", "f9", "f10", "f11", "f12", "f13", "f14", "f15",
};

/* RUNDIR: $QPOD_LIBVIRT_RUNDIR, else QP_LV_RUNDIR_DEFAULT; made 0711 (QEMU
 * passes, nobody lists); an existing one must be root's and writable by
 * root alone, as the state root must be. */
static int rundir(char *out, size_t size, qp_error **err)
{
	const char *env = getenv("QPOD_LIBVIRT_RUNDIR");
	const char *p = env && *env ? env : QP_LV_RUNDIR_DEFAULT;
	struct stat st;

	if (p[0] != '/' || (size_t)snprintf(out, size, "%s", p) >= size)
		return qp_error_set(err, QP_E_INVALID, 0,
				    "libvirt backend: QPOD_LIBVIRT_RUNDIR \"%s\" is not an absolute path", p);
	if (mkdir(p, 0711) == 0) {
		if (chmod(p, 0711) < 0) /* whatever the umask */
			return qp_fail(err, errno, "libvirt backend: chmod %s", p);
	} else if (errno != EEXIST) {
		return qp_fail(err, errno, "libvirt backend: mkdir %s", p);
	}
	if (lstat(p, &st) < 0)
		return qp_fail(err, errno, "libvirt backend: %s", p);
	if (!S_ISDIR(st.st_mode) || st.st_uid != 0 || (st.st_mode & 022))
		return qp_error_set(err, QP_E_INVALID, 0,
				    "libvirt backend: %s must be a directory of root's that only root can write "
				    "(it holds the pods' directories for QEMU)", p);
	return 0;
}

/* A user namespace that maps 0 to uid/gid (for the idmapped mounts): a
 * child born in it, its maps written from here, its namespace kept. */
static int idmap_userns(uid_t uid, gid_t gid, qp_error **err)
{
	char path[64], map[64];
	int fd = -1, e = 0;
	const char *const maps[] = { "uid_map", "gid_map" };
	unsigned ids[] = { (unsigned)uid, (unsigned)gid };
	pid_t pid = (pid_t)syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, NULL, NULL, NULL, NULL);

	if (pid < 0)
		return qp_fail(err, errno, "libvirt backend: a user namespace for QEMU's idmap");
	if (pid == 0) {
		for (;;)
			pause();
	}
	for (size_t i = 0; i < 2 && !e; i++) {
		snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, maps[i]);
		int n = snprintf(map, sizeof(map), "0 %u 1\n", ids[i]);
		_cleanup_close_ int m = open(path, O_WRONLY | O_CLOEXEC);
		if (m < 0 || write(m, map, (size_t)n) != n)
			e = errno ? errno : EIO;
	}
	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
	if (!e && (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		e = errno;
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	if (e)
		return qp_fail(err, e, "libvirt backend: map QEMU's ids %u:%u", ids[0], ids[1]);
	return fd;
}

/* src bound (with what is mounted below it) at target, idmapped by userns,
 * nosuid, nodev and read-only if ro */
static int bind_idmapped(const char *src, int dirfd, const char *target, int userns, bool ro, qp_error **err)
{
	_cleanup_close_ int tree = -1;
	struct mount_attr a = {
		.attr_set = MOUNT_ATTR_IDMAP | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (ro ? MOUNT_ATTR_RDONLY : 0),
		.userns_fd = (__u64)userns,
	};

	tree = (int)syscall(SYS_open_tree, AT_FDCWD, src, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
	if (tree < 0)
		return qp_fail(err, errno, "libvirt backend: bind \"%s\" for QEMU", src);
	if (syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &a, sizeof(a)) < 0)
		return qp_fail(err, errno,
			       "libvirt backend: an idmapped mount of \"%s\" for QEMU's user (its file system "
			       "must support idmapped mounts, Linux >= 5.12)", src);
	if (syscall(SYS_move_mount, tree, "", dirfd, target, MOVE_MOUNT_F_EMPTY_PATH) < 0)
		return qp_fail(err, errno, "libvirt backend: mount \"%s\" in QEMU's directory (%s)", src, target);
	return 0;
}

/* a copy of src, QEMU's and readable by it alone */
static int stage(struct vm_lv_dir *d, size_t i, const char *src, uid_t uid, gid_t gid, qp_error **err)
{
	if (!src)
		return 0;
	if (vm_stage_file(d->fd, ".", src, file_names[i], err) < 0)
		return qp_error_prefix(err, "libvirt backend: a copy for QEMU");
	if (fchownat(d->fd, file_names[i], uid, gid, AT_SYMLINK_NOFOLLOW) < 0 ||
	    fchmodat(d->fd, file_names[i], 0400, 0) < 0)
		return qp_fail(err, errno, "libvirt backend: chown %s/%s", d->path, file_names[i]);
	if (asprintf(&d->files[i], "%s/%s", d->path, file_names[i]) < 0) {
		d->files[i] = NULL;
		return qp_fail(err, ENOMEM, "libvirt backend");
	}
	return 0;
}

static int add_mount(struct vm_lv_dir *d, const char *src, bool ro, int userns, qp_error **err)
{
	const char *name = mount_names[d->nmounts];
	_cleanup_free_ char *target = NULL;

	if (asprintf(&target, "%s/%s", d->path, name) < 0)
		return qp_fail(err, ENOMEM, "libvirt backend");
	if (mkdirat(d->fd, name, 0700) < 0)
		return qp_fail(err, errno, "libvirt backend: mkdir %s", target);
	if (bind_idmapped(src, d->fd, name, userns, ro, err) < 0) {
		unlinkat(d->fd, name, AT_REMOVEDIR);
		return -1;
	}
	d->mounts[d->nmounts++] = steal_ptr(&target);
	return 0;
}

int vm_lv_dir_open(const struct vm_qemu_opts *o, const char *id, uid_t uid, gid_t gid, struct vm_lv_dir **out,
		   qp_error **err)
{
	char base[PATH_MAX], initrd[PATH_MAX];
	_cleanup_close_ int userns = -1;
	struct vm_lv_dir *d;

	*out = NULL;
	if (rundir(base, sizeof(base), err) < 0)
		return -1;
	if (!(d = calloc(1, sizeof(*d))))
		return qp_fail(err, ENOMEM, "libvirt backend");
	d->fd = -1;
	if ((size_t)snprintf(d->path, sizeof(d->path), "%s/%s.XXXXXX", base, id) >= sizeof(d->path) ||
	    (size_t)snprintf(initrd, sizeof(initrd), "%s/%s", o->statedir, o->initrd ? o->initrd : QP_VM_INITRD) >=
		    sizeof(initrd)) {
		free(d);
		return qp_fail(err, ENAMETOOLONG, "libvirt backend: the pod's directory for QEMU");
	}
	if (!mkdtemp(d->path)) {
		int e = errno;
		free(d);
		return qp_fail(err, e, "libvirt backend: mkdir %s", base);
	}
	*out = d;
	/* mkdtemp made it 0700: root's still, passable by QEMU's group only */
	if ((d->fd = open(d->path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
	    fchownat(d->fd, "", 0, gid, AT_EMPTY_PATH) < 0 || chmod(d->path, 0710) < 0)
		return qp_fail(err, errno, "libvirt backend: give %s to QEMU's group %u", d->path, (unsigned)gid);
	if (stage(d, 0, o->kernel, uid, gid, err) < 0 || stage(d, 1, o->firmware, uid, gid, err) < 0 ||
	    stage(d, 2, initrd, uid, gid, err) < 0)
		return -1;
	if (!o->rootfs && !o->nshares)
		return 0;
	if ((userns = idmap_userns(uid, gid, err)) < 0)
		return -1;
	if (o->rootfs && add_mount(d, o->rootfs, o->rootfs_ro, userns, err) < 0)
		return -1;
	d->share0 = d->nmounts;
	for (size_t i = 0; i < o->nshares && i < QP_PROTO_MAX_MOUNTS; i++)
		if (add_mount(d, o->shares[i].path, o->shares[i].ro, userns, err) < 0)
			return -1;
	return 0;
}

const char *vm_lv_dir_file(const struct vm_lv_dir *d, enum vm_lv_file f, const char *own)
{
	return d && d->files[f] ? d->files[f] : own;
}

const char *vm_lv_dir_rootfs(const struct vm_lv_dir *d, const char *own)
{
	return d && d->share0 ? d->mounts[0] : own;
}

const char *vm_lv_dir_share(const struct vm_lv_dir *d, size_t i, const char *own)
{
	return d && d->share0 + i < d->nmounts ? d->mounts[d->share0 + i] : own;
}

void vm_lv_dir_close(struct vm_lv_dir *d)
{
	if (!d)
		return;
	/* detached, not unmounted: a running QEMU's shares stay its own */
	for (size_t i = 0; i < d->nmounts; i++)
		if (umount2(d->mounts[i], MNT_DETACH | UMOUNT_NOFOLLOW) < 0)
			qp_warn("libvirt backend: umount %s: %s", d->mounts[i], strerror(errno));
	if (d->fd >= 0) {
		for (size_t i = 0; i < d->nmounts; i++)
			unlinkat(d->fd, mount_names[i], AT_REMOVEDIR);
		for (size_t i = 0; i < LV_FILES; i++)
			unlinkat(d->fd, file_names[i], 0);
		close(d->fd);
	}
	for (size_t i = 0; i < d->nmounts; i++)
		free(d->mounts[i]);
	for (size_t i = 0; i < LV_FILES; i++)
		free(d->files[i]);
	if (rmdir(d->path) < 0)
		qp_warn("libvirt backend: rmdir %s: %s", d->path, strerror(errno));
	free(d);
}
