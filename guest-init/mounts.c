/* guest-init/mounts.c — the guest's file systems: the early mounts (proc,
 * sys, dev), cgroup2 with its controllers, the workload's root (the 9p
 * share or a spare's subdirectory of it, pivot_root) and RUN's own mounts. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "guest-init/guest.h"

#define NEWROOT "/newroot"
#define SHARE "/.share" /* a spare's share, while its subdirectory is bound */
#define NINEP_OPTS "trans=virtio,version=9p2000.L,cache=mmap,msize=262144"

static void make_dir(const char *path)
{
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		die("mkdir \"%s\"", path);
}

void gi_mount_fs(const char *src, const char *dst, const char *type, unsigned long flags,
		     const char *data)
{
	make_dir(dst);
	/* EBUSY: the kernel mounted it already (devtmpfs.mount) */
	if (mount(src, dst, type, flags, data) < 0 && errno != EBUSY)
		die("mount %s on \"%s\"", type, dst);
}

void gi_mount_early(void)
{
	gi_mount_fs("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
	gi_mount_fs("sysfs", "/sys", "sysfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
	gi_mount_fs("devtmpfs", "/dev", "devtmpfs", MS_NOSUID, "mode=0755");
}

/* /sys/fs/cgroup: the guest is a pure cgroup v2 host (nothing mounts a v1
 * hierarchy), with every controller the kernel has enabled for the root's
 * children, so a container runtime in the pod can set limits at once
 * (runtime/vm/mounts.c counts /sys/fs/cgroup among the guest's own mounts).
 * A kernel without cgroups has no /sys/fs/cgroup: nothing to mount. */
void gi_mount_cgroup2(void)
{
	static const char dir[] = "/sys/fs/cgroup";
	char have[256], want[512] = "";
	size_t len = 0;
	int fd;

	if (access(dir, F_OK) < 0)
		return;
	if (mount("cgroup2", dir, "cgroup2", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		die("mount cgroup2 on \"%s\"", dir);
	gi_read_text("/sys/fs/cgroup/cgroup.controllers", have, sizeof(have));
	for (char *save = NULL, *w = strtok_r(have, " \n", &save); w; w = strtok_r(NULL, " \n", &save))
		len += (size_t)snprintf(want + len, sizeof(want) - len, "%s+%s", len ? " " : "", w);
	if (!len)
		return;
	if ((fd = open("/sys/fs/cgroup/cgroup.subtree_control", O_WRONLY | O_CLOEXEC)) < 0)
		die("open cgroup.subtree_control");
	if (write(fd, want, len) != (ssize_t)len)
		die("enable the cgroup controllers \"%s\"", want);
	close(fd);
}

int gi_pod_share_fd = -1;

/* A spare's share holds the pod's rootfs in its QP_PROTO_SUBDIR (bound
 * there when the pod took the spare): the share is mounted aside, that
 * directory bound on NEWROOT (read-only if ro: the share itself is mounted
 * writable, the host decides what may be written), and the share's mount
 * let go, unless it is the pod share too (keep): then guest-init keeps it
 * and a descriptor of it (gi_pod_share_fd). */
static void mount_share_subdir(const char *tag, unsigned long ro, bool keep)
{
	make_dir(SHARE);
	if (mount(tag, SHARE, "9p", keep ? MS_NOSUID | MS_NODEV : ro, NINEP_OPTS) < 0)
		die("mount 9p tag \"%s\" on " SHARE " (is the host sharing it?)", tag);
	make_dir(NEWROOT);
	if (mount(SHARE "/" QP_PROTO_SUBDIR, NEWROOT, NULL, MS_BIND, NULL) < 0)
		die("bind " SHARE "/" QP_PROTO_SUBDIR " on " NEWROOT);
	if (ro && mount(NULL, NEWROOT, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) < 0)
		die("remount " NEWROOT " read-only");
	if (keep) {
		if ((gi_pod_share_fd = open(SHARE, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
			die("open the pod share");
		return;
	}
	if (umount2(SHARE, MNT_DETACH) < 0)
		die("unmount " SHARE);
}


/* RUN's podshare entry: the pod share mounted in the initramfs, where the
 * workload's root will cover it; guest-init keeps a descriptor of it, so
 * the pod's containers take their roots from it (container.c) while no
 * process of the pod can reach it by a path. */
static bool pod_share_is_root(const struct qp_run *r, const struct qp_run_mount *m)
{
	return r->rootfs == QP_ROOTFS_9P_SUBDIR && !strcmp(m->tag, r->rootfs_tag);
}

/* RUN's podshare entry (NULL: none) into *m. */
static bool pod_share_entry(const struct qp_run *r, struct qp_run_mount *m)
{
	for (uint32_t i = 0; i < r->mountc; i++)
		if (qp_run_mount_parse(r->mounts[i], m) == 0 && m->kind == QP_RM_PODSHARE)
			return true;
	return false;
}

static void mount_pod_share(const struct qp_run *r)
{
	struct qp_run_mount m;

	/* a spare's share that is the pod share too: mount_share_subdir */
	if (!pod_share_entry(r, &m) || pod_share_is_root(r, &m))
		return;
	make_dir(QP_PROTO_POD_DEST);
	if (mount(m.tag, QP_PROTO_POD_DEST, "9p", MS_NOSUID | MS_NODEV, NINEP_OPTS) < 0)
		die("mount the pod share (9p tag \"%s\")", m.tag);
	gi_pod_share_fd = open(QP_PROTO_POD_DEST, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (gi_pod_share_fd < 0)
		die("open the pod share");
}

/* The workload's root: the 9p share (or its subdirectory), entered
 * switch_root style (the initramfs cannot be pivot_root'ed away), or the
 * initramfs itself. */
void gi_enter_rootfs(const struct qp_run *r)
{
	static const char *const moved[] = { "/dev", "/proc", "/sys" };

	mount_pod_share(r);

	if (r->rootfs == QP_ROOTFS_9P || r->rootfs == QP_ROOTFS_9P_SUBDIR) {
		unsigned long ro = r->flags & QP_RUN_F_ROOTFS_RO ? MS_RDONLY : 0;
		char dst[64];

		make_dir(NEWROOT);
		struct qp_run_mount ps;
		if (r->rootfs == QP_ROOTFS_9P_SUBDIR)
			mount_share_subdir(r->rootfs_tag, ro, pod_share_entry(r, &ps) && pod_share_is_root(r, &ps));
		else if (mount(r->rootfs_tag, NEWROOT, "9p", ro, NINEP_OPTS) < 0)
			die("mount 9p tag \"%s\" on " NEWROOT " (is the host sharing it?)",
			    r->rootfs_tag);
		for (size_t i = 0; i < sizeof(moved) / sizeof(moved[0]); i++) {
			snprintf(dst, sizeof(dst), NEWROOT "%s", moved[i]);
			make_dir(dst);
			if (mount(moved[i], dst, NULL, MS_MOVE, NULL) < 0)
				die("move mount \"%s\" to \"%s\"", moved[i], dst);
		}
		if (chdir(NEWROOT) < 0)
			die("chdir " NEWROOT);
		if (mount(".", "/", NULL, MS_MOVE, NULL) < 0)
			die("move mount " NEWROOT " to /");
		if (chroot(".") < 0)
			die("chroot " NEWROOT);
		if (chdir("/") < 0)
			die("chdir /");
	}
	gi_mount_fs("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777");
}

/* The pod's own mounts (RUN's mounts, the spec's binds and tmpfs), inside
 * the workload's root.  A file bind mounts its one-file share on a staging
 * directory, binds the file, then detaches the staging mount: the bind
 * keeps the share alive and nothing of it stays visible. */
static void make_dirs(const char *path)
{
	char p[1024];

	snprintf(p, sizeof(p), "%s", path);
	for (char *s = p + 1; *s; s++)
		if (*s == '/') {
			*s = '\0';
			if (mkdir(p, 0755) < 0 && errno != EEXIST)
				die("mkdir \"%s\"", p);
			*s = '/';
		}
	if (mkdir(p, 0755) < 0 && errno != EEXIST)
		die("mkdir \"%s\"", p);
}

void gi_apply_mounts(const struct qp_run *r)
{
	for (uint32_t i = 0; i < r->mountc; i++) {
		struct qp_run_mount m;
		unsigned long fl;
		if (qp_run_mount_parse(r->mounts[i], &m) < 0)
			gi_fatal(QP_PERR_PROTOCOL, 0, "mounts[%u] is malformed", i);
		fl = m.flags & (MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY);
		if (m.kind == QP_RM_PODSHARE) {
			continue; /* mounted aside (mount_pod_share) */
		} else if (m.kind == QP_RM_POD) {
			/* from the pod share (a spare's: the pod's own binds are
			 * there); the host made the mount point */
			int tree = gi_pod_share_tree(m.name);
			if (tree < 0 || gi_bind_tree(tree, m.dest, fl) < 0)
				die("bind \"%s\" of the pod share on \"%s\"", m.name, m.dest);
			close(tree);
		} else if (m.kind == QP_RM_TMPFS) {
			make_dirs(m.dest);
			if (mount("tmpfs", m.dest, "tmpfs", fl, m.data[0] ? m.data : NULL) < 0)
				die("mount tmpfs on \"%s\"", m.dest);
		} else if (m.kind == QP_RM_9P) {
			make_dirs(m.dest);
			if (mount(m.tag, m.dest, "9p", fl, NINEP_OPTS) < 0)
				die("mount 9p tag \"%s\" on \"%s\"", m.tag, m.dest);
		} else {
			static const char stage[] = "/dev/.qpod-stage";
			char src[sizeof(stage) + 256 + 1];
			char parent[1024];
			make_dir(stage);
			if (mount(m.tag, stage, "9p", MS_RDONLY, NINEP_OPTS) < 0)
				die("mount 9p tag \"%s\"", m.tag);
			snprintf(parent, sizeof(parent), "%s", m.dest);
			*strrchr(parent, '/') = '\0';
			if (parent[0])
				make_dirs(parent);
			int fd = open(m.dest, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
			if (fd < 0 && errno != EISDIR && errno != EACCES && errno != EROFS && errno != ETXTBSY)
				die("create \"%s\"", m.dest);
			if (fd >= 0)
				close(fd);
			snprintf(src, sizeof(src), "%s/%s", stage, m.name);
			if (mount(src, m.dest, NULL, MS_BIND, NULL) < 0)
				die("bind \"%s\" on \"%s\"", m.name, m.dest);
			if (fl && mount(NULL, m.dest, NULL, MS_REMOUNT | MS_BIND | fl, NULL) < 0)
				die("remount \"%s\"", m.dest);
			if (umount2(stage, MNT_DETACH) < 0)
				die("detach the staging mount");
			rmdir(stage);
		}
	}
}
