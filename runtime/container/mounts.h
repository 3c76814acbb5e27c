/* runtime/container/mounts.h — the pod's filesystem view: rootfs, OCI
 * mounts, /dev, pivot_root, masked and read-only paths.  Runs in the
 * container child, inside its new mount namespace. */
#ifndef QPOD_MOUNTS_H
#define QPOD_MOUNTS_H

#include <stdbool.h>

#include "spec/spec.h"
#include "util/error.h"

/* Everything before pivot_root: propagation, rootfs bind, spec mounts,
 * /dev nodes.  in_userns: bind device nodes instead of mknod. */
int qp_mounts_prepare(const struct pod_spec *spec, const char *rootfs, bool in_userns,
		      qp_error **err);
/* pivot_root into the prepared rootfs and detach the old root; no_pivot
 * (runc's --no-pivot, for a rootfs on ramfs where pivot_root fails): move
 * the rootfs mount onto / and chroot instead. */
int qp_mounts_pivot(const struct pod_spec *spec, const char *rootfs, bool no_pivot, qp_error **err);

/* A pod without a mount namespace of its own (linux.namespaces has no
 * "mount", runc's behaviour) is built in the caller's, on a private bind
 * of its rootfs, and chroot()ed; qp_mounts_unbuild detaches that bind and
 * everything below it (delete, a failed create).  No-op for other pods. */
bool qp_mounts_own_ns(const struct pod_spec *spec);
void qp_mounts_unbuild(const struct pod_spec *spec, const char *rootfs);
/* After pivot_root: masked paths, read-only paths, read-only root,
 * rootfs propagation. */
int qp_mounts_finish(const struct pod_spec *spec, qp_error **err);

/* Translate OCI mount options into flags + data (exposed for unit tests). */
struct qp_mount_flags {
	unsigned long flags;      /* MS_* applied at mount time */
	unsigned long propagation;/* MS_SHARED/SLAVE/PRIVATE/UNBINDABLE (| MS_REC) */
	bool bind, rec;
	bool rro;                 /* recursive read-only, after the mount */
	bool copyup;              /* tmpcopyup: the covered dir's files into the tmpfs */
	char data[1024];          /* unknown options, comma-joined, for the fs */
};
/* The pod's /sys/fs/cgroup (cgroup_mount.c): its own cgroup as the root of
 * each host hierarchy, mounted on target ("/proc/self/fd/N" of dest, which
 * is dest resolved in rootfd).  flags: MS_RDONLY etc. from the mount's
 * options; cgroupns: the pod has a cgroup namespace of its own. */
int qp_mount_cgroup_view(int rootfd, const char *dest, const char *target, unsigned long flags,
			 bool cgroupns, qp_error **err);

/* The pod's /sys/fs/cgroup (cgroup_mount.c): its own cgroup as the root of
 * each host hierarchy, mounted on target ("/proc/self/fd/N" of dest, which
 * is dest resolved in rootfd).  flags: MS_RDONLY etc. from the mount's
 * options; cgroupns: the pod has a cgroup namespace of its own. */
int qp_mount_cgroup_view(int rootfd, const char *dest, const char *target, unsigned long flags,
			 bool cgroupns, qp_error **err);

/* tmpcopyup: copy the directory covered_fd (O_PATH, opened before the
 * mount) into the new mount at target (copyup.c). */
int qp_mount_copyup(int covered_fd, const char *target, const char *what, qp_error **err);

int qp_mount_parse_options(char *const *options, struct qp_mount_flags *out, qp_error **err);

#endif
