/* runtime/vm/member/pod_share.c — the pod share of a vm pod that holds
 * containers (member.h): made at the sandbox's boot, a container's
 * directory in it filled at the container's create and emptied at its
 * delete.  The binds live in QEMU's mount namespace only (qemu/qemu_ns.c):
 * on the host the directories stay empty, so removing them can never
 * reach into a container's rootfs. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "state.h"
#include "util/cleanup.h"
#include "vm/member/member.h"

int vm_pod_share_add(struct vm_mounts *mm, int dirfd, const char *statedir, qp_error **err)
{
	struct vm_share *sh = &mm->shares[mm->nshares];
	struct qp_run_mount rm = { .kind = QP_RM_PODSHARE };
	char entry[256];

	if (mm->nshares >= QP_PROTO_MAX_MOUNTS || mm->n >= QP_PROTO_MAX_MOUNTS)
		return qp_error_set(err, QP_E_INVALID, 0, "a pod sandbox takes at most %d mounts of its own",
				    QP_PROTO_MAX_MOUNTS - 1);
	if (mkdirat(dirfd, VM_POD_SHARE_DIR, 0711) < 0 && errno != EEXIST)
		return qp_fail(err, errno, "mkdir the pod share");
	snprintf(sh->tag, sizeof(sh->tag), "m%zu", mm->nshares);
	/* QEMU writes below it (into a container's writable rootfs), never
	 * into it: its jail binds it read-only */
	sh->ro = false;
	sh->jail_ro = true;
	if (asprintf(&sh->path, "%s/" VM_POD_SHARE_DIR, statedir) < 0)
		return qp_fail(err, ENOMEM, "the pod share");
	snprintf(rm.tag, sizeof(rm.tag), "%s", sh->tag);
	snprintf(rm.dest, sizeof(rm.dest), QP_PROTO_POD_DEST);
	if (qp_run_mount_format(&rm, entry, sizeof(entry)) < 0 || !(mm->entries[mm->n] = strdup(entry))) {
		free(sh->path);
		sh->path = NULL;
		return qp_fail(err, ENOMEM, "the pod share");
	}
	mm->nshares++;
	mm->n++;
	return 0;
}

bool vm_pod_share_reserved(const char *id)
{
	static const char *const names[] = { QP_PROTO_SUBDIR, VM_POD_SELF, "dev", "proc", "sys", "tmp" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(id, names[i]))
			return true;
	return id[0] == '.';
}

/* The binds of plan (shares with a path) on SHARE/DIR/TAG in QEMU's
 * namespace; dirfd is SHARE/DIR. */
static int bind_all(pid_t qemu, const char *share, const char *dir, int dirfd, const struct vm_mounts *plan,
		    qp_error **err)
{
	char t[PATH_MAX];

	for (size_t i = 0; i < plan->nshares; i++) {
		const struct vm_share *sh = &plan->shares[i];
		if (!sh->path[0])
			continue; /* a copy, made in place */
		if (mkdirat(dirfd, sh->tag, 0755) < 0)
			return qp_fail(err, errno, "the pod share: mkdir %s", sh->tag);
		if ((size_t)snprintf(t, sizeof(t), "%s/%s/%s", share, dir, sh->tag) >= sizeof(t))
			return qp_fail(err, ENAMETOOLONG, "the pod share");
		if (vm_qemu_ns_bind(qemu, sh->path, t, sh->ro, err) < 0)
			return -1;
	}
	return 0;
}

int vm_pod_share_spare(struct vm_mounts *mm, const struct pod_spec *spec, const char *rootfs, int dirfd,
		       pid_t qemu, const char *share, qp_error **err)
{
	struct qp_run_mount rm = { .kind = QP_RM_PODSHARE };
	struct vm_mounts plan;
	_cleanup_close_ int sfd = -1, selffd = -1;
	char entry[256];

	if (symlinkat(share, dirfd, VM_POD_SHARE_DIR) < 0)
		return qp_fail(err, errno, "the pod share");
	if ((sfd = open(share, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW)) < 0 ||
	    mkdirat(sfd, VM_POD_SELF, 0755) < 0 ||
	    (selffd = openat(sfd, VM_POD_SELF, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW)) < 0)
		return qp_fail(err, errno, "the pod share: %s", VM_POD_SELF);
	if (vm_mounts_plan(spec, rootfs, selffd, NULL, VM_POD_SELF, &plan, err) < 0)
		return -1;
	if (bind_all(qemu, share, VM_POD_SELF, selffd, &plan, err) < 0 || plan.n >= QP_PROTO_MAX_MOUNTS) {
		vm_mounts_free(&plan);
		return err && *err ? -1 : qp_error_set(err, QP_E_INVALID, 0, "too many mounts");
	}
	*mm = plan;
	/* the tag of the root: the guest keeps that share (protocol.h) */
	snprintf(rm.tag, sizeof(rm.tag), VM_ROOTFS_TAG);
	snprintf(rm.dest, sizeof(rm.dest), QP_PROTO_POD_DEST);
	if (qp_run_mount_format(&rm, entry, sizeof(entry)) < 0 || !(mm->entries[mm->n] = strdup(entry)))
		return qp_fail(err, ENOMEM, "the pod share");
	mm->n++;
	return 0;
}

int vm_pod_share_open(int dirfd, const char *statedir, char *path, size_t size, qp_error **err)
{
	char link[PATH_MAX];
	ssize_t n = readlinkat(dirfd, VM_POD_SHARE_DIR, link, sizeof(link) - 1);
	int fd;

	/* a spare's share (qpod wrote the link, in a private state dir), or
	 * the directory itself */
	if (n > 0 && (size_t)n < sizeof(link) - 1) {
		link[n] = '\0';
		if ((size_t)snprintf(path, size, "%s", link) >= size)
			return qp_fail(err, ENAMETOOLONG, "the pod share");
		fd = open(link, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	} else {
		if ((size_t)snprintf(path, size, "%s/" VM_POD_SHARE_DIR, statedir) >= size)
			return qp_fail(err, ENAMETOOLONG, "the pod share");
		fd = openat(dirfd, VM_POD_SHARE_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	}
	if (fd < 0)
		return qp_fail(err, errno, "the pod share");
	return fd;
}

static int target(char *buf, size_t size, const char *share, const char *id, const char *sub)
{
	return (size_t)snprintf(buf, size, "%s/%s/%s", share, id, sub) >= size ? -1 : 0;
}

int vm_pod_share_enter(pid_t qemu, const char *share, int ctrfd, const char *id, const char *rootfs,
		       bool ro, const struct vm_mounts *mounts, qp_error **err)
{
	char t[PATH_MAX];

	if (mkdirat(ctrfd, "root", 0755) < 0)
		return qp_fail(err, errno, "the container's directory in the pod share");
	if (target(t, sizeof(t), share, id, "root") < 0)
		return qp_fail(err, ENAMETOOLONG, "the pod share");
	if (vm_qemu_ns_bind(qemu, rootfs, t, ro, err) < 0)
		return qp_error_prefix(err, "the container's rootfs");
	return bind_all(qemu, share, id, ctrfd, mounts, err);
}

void vm_pod_share_leave(pid_t qemu, const char *share, int sharefd, const char *id)
{
	_cleanup_close_ int d = -1;
	char t[PATH_MAX];

	if (qemu > 0) {
		/* every directory of it: the root and the mN binds */
		_cleanup_closedir_ DIR *dir = NULL;
		int fd = openat(sharefd, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0 && !(dir = fdopendir(fd)))
			close(fd);
		for (struct dirent *de; dir && (de = readdir(dir));)
			if (de->d_type == DT_DIR && strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
			    target(t, sizeof(t), share, id, de->d_name) == 0)
				vm_qemu_ns_unbind(qemu, t, NULL);
	}
	state_remove_tree(sharefd, id);
}
