/* runtime/vm/qemu/qemu_ns.c — mounts in a running QEMU's mount namespace
 * (its jail's, host/jail.h): a pod's rootfs bound on a spare's share, a
 * container's rootfs and binds on the pod share (vm/member/), and their
 * removal.  Nothing is mounted on the host: the mounts live and die with
 * QEMU's namespace, which only QEMU is in. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/mount.h>

#include "util/cleanup.h"
#include "vm/vm.h"

/* fn(arg) in a child that entered QEMU's mount namespace (setns needs a
 * single-threaded process); its errno back, 0 when it worked. */
static int in_qemu_ns(pid_t qemu, int (*fn)(const void *arg), const void *arg)
{
	char ns[64];
	_cleanup_close_ int nsfd = -1;
	int status;
	pid_t pid;

	snprintf(ns, sizeof(ns), "/proc/%d/ns/mnt", (int)qemu);
	if ((nsfd = open(ns, O_RDONLY | O_CLOEXEC)) < 0)
		return errno;
	if ((pid = fork()) < 0)
		return errno;
	if (pid == 0) {
		if (setns(nsfd, CLONE_NEWNS) < 0)
			_exit(errno & 0xff);
		_exit(fn(arg) < 0 ? (errno ? errno & 0xff : EIO) : 0);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return errno;
	return WIFEXITED(status) ? WEXITSTATUS(status) : EIO;
}

struct move {
	int tree;
	const char *target;
};

static int move_tree(const void *arg)
{
	const struct move *m = arg;

	return (int)syscall(SYS_move_mount, m->tree, "", AT_FDCWD, m->target, MOVE_MOUNT_F_EMPTY_PATH);
}

int vm_qemu_ns_bind(pid_t qemu, const char *src, const char *target, bool ro, qp_error **err)
{
	_cleanup_close_ int tree = -1;
	int e;

	/* a copy of src's mount tree, detached, taken here on the host */
	tree = (int)syscall(SYS_open_tree, AT_FDCWD, src, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
	if (tree < 0)
		return qp_fail(err, errno, "bind \"%s\": open_tree", src);
	/* nosuid, nodev as a cold pod's share in its jail (host/jail.c) */
	struct mount_attr a = { .attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (ro ? MOUNT_ATTR_RDONLY : 0) };
	if (syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &a, sizeof(a)) < 0)
		return qp_fail(err, errno, "bind \"%s\"%s", src, ro ? " read-only" : "");
	/* ...attached in QEMU's mount namespace, where the share is at its
	 * host path */
	struct move m = { tree, target };
	if ((e = in_qemu_ns(qemu, move_tree, &m)))
		return qp_fail(err, e, "bind \"%s\" on %s in QEMU's mount namespace", src, target);
	return 0;
}

static int detach(const void *arg)
{
	return umount2(arg, MNT_DETACH | UMOUNT_NOFOLLOW);
}

int vm_qemu_ns_unbind(pid_t qemu, const char *target, qp_error **err)
{
	int e = in_qemu_ns(qemu, detach, target);

	/* EINVAL: nothing mounted there (a create that failed before) */
	if (e && e != EINVAL && e != ENOENT)
		return qp_fail(err, e, "unmount %s in QEMU's mount namespace", target);
	return 0;
}
