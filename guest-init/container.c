/* guest-init/container.c — the pod's containers, one VM per pod: an EXEC
 * with QP_RUN_F_CONTAINER runs a process in a root of its own taken from
 * the pod share (protocol.h), in a mount namespace, a cgroup and the
 * namespaces it asks for; QP_RUN_F_JOIN runs one more process inside such
 * a container.  The parent half (prepare, fork) runs in the relay thread;
 * the child half between fork and gi_exec_child, and it only makes system
 * calls (another thread of guest-init may hold a libc lock at the fork). */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "guest-init/guest.h"

#ifndef OPEN_TREE_CLONE
#define OPEN_TREE_CLONE 1
#endif
#ifndef OPEN_TREE_CLOEXEC
#define OPEN_TREE_CLOEXEC O_CLOEXEC
#endif
#ifndef MOVE_MOUNT_F_EMPTY_PATH
#define MOVE_MOUNT_F_EMPTY_PATH 0x00000004
#endif
#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif

#define CG_ROOT "/sys/fs/cgroup"
#define STAGE "/tmp/.qpod-root" /* in the child's own mount namespace only */

static const struct {
	const char *name;
	int flag;
} join_ns[] = { { "ipc", CLONE_NEWIPC }, { "uts", CLONE_NEWUTS }, { "net", CLONE_NEWNET },
		{ "cgroup", CLONE_NEWCGROUP }, { "mnt", CLONE_NEWNS } };
#define NJOIN (sizeof(join_ns) / sizeof(join_ns[0]))

void gi_ctr_init(struct gi_ctr *c)
{
	*c = (struct gi_ctr){ .cg = -1, .pidns = -1, .self_pidns = -1 };
	for (size_t i = 0; i < GI_CTR_TREES; i++)
		c->trees[i] = -1;
	for (size_t i = 0; i < GI_CTR_NS; i++)
		c->ns[i] = -1;
}

void gi_ctr_close(struct gi_ctr *c)
{
	for (size_t i = 0; i < GI_CTR_TREES; i++)
		gi_close_fd(&c->trees[i]);
	for (size_t i = 0; i < GI_CTR_NS; i++)
		gi_close_fd(&c->ns[i]);
	gi_close_fd(&c->cg);
	gi_close_fd(&c->pidns);
	gi_close_fd(&c->self_pidns);
}

int gi_pod_share_tree(const char *path)
{
	return (int)syscall(SYS_open_tree, gi_pod_share_fd, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
}

static int write_at(int dirfd, const char *file, const char *value)
{
	int fd = openat(dirfd, file, O_WRONLY | O_CLOEXEC);
	ssize_t n;
	int e;

	if (fd < 0)
		return -1;
	n = write(fd, value, strlen(value));
	e = errno;
	close(fd);
	errno = e;
	return n == (ssize_t)strlen(value) ? 0 : -1;
}

/* Limits "FILE=VALUE" written to the cgroup cg, in order; -1 with errno
 * and why naming the one that failed. */
static int write_limits(int cg, const char *const *entries, uint32_t n, char *why, size_t size)
{
	for (uint32_t i = 0; i < n; i++) {
		char file[32];
		const char *eq = strchr(entries[i], '=');
		snprintf(file, sizeof(file), "%.*s", (int)(eq - entries[i]), entries[i]);
		/* a kernel without swap (no memory.swap.max) swaps nothing:
		 * any swap limit holds */
		if (!strcmp(file, "memory.swap.max") && faccessat(cg, file, F_OK, 0) < 0 && errno == ENOENT)
			continue;
		if (write_at(cg, file, eq + 1) < 0) {
			int e = errno;
			snprintf(why, size, "write %s %s", file, eq + 1);
			errno = e;
			return -1;
		}
	}
	return 0;
}

/* The container's cgroup, its limits written. */
static int make_cgroup(const struct qp_run *r, struct gi_ctr *c, char *why, size_t n)
{
	int root = open(CG_ROOT, O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (root < 0) {
		if (!r->cgroupc)
			return 0; /* a kernel without cgroups: nothing to limit */
		snprintf(why, n, "the guest has no cgroups for the limits");
		return -1;
	}
	if (mkdirat(root, r->rootfs_tag, 0755) < 0 ||
	    (c->cg = openat(root, r->rootfs_tag, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0) {
		int e = errno;
		snprintf(why, n, "make the container's cgroup");
		close(root);
		errno = e;
		return -1;
	}
	close(root);
	if (write_limits(c->cg, r->cgroup, r->cgroupc, why, n) < 0) {
		int e = errno;
		gi_ctr_end(r->rootfs_tag);
		errno = e;
		return -1;
	}
	return 0;
}

void gi_ctr_update(const struct qp_msg *req)
{
	struct qp_msg m = { .type = QP_MSG_CTR_UPDATED };
	char why[200] = "";
	int root = open(CG_ROOT, O_PATH | O_DIRECTORY | O_CLOEXEC);
	int cg = root < 0 ? -1 : openat(root, req->u.ctr_update.name, O_PATH | O_DIRECTORY | O_CLOEXEC);

	m.u.ctr_update.name = req->u.ctr_update.name;
	if (cg < 0) {
		m.u.ctr_update.errnum = ESRCH;
		snprintf(why, sizeof(why), "no such container is running");
	} else if (write_limits(cg, req->u.ctr_update.cgroup, req->u.ctr_update.cgroupc, why, sizeof(why)) < 0) {
		m.u.ctr_update.errnum = errno ? errno : EIO;
	}
	m.u.ctr_update.text = why;
	if (cg >= 0)
		close(cg);
	if (root >= 0)
		close(root);
	gi_send_or_die(&m);
}

int gi_ctr_prepare(const struct qp_run *r, pid_t join_pid, struct gi_ctr *c, char *why, size_t n)
{
	char path[320];

	if (r->flags & QP_RUN_F_JOIN) {
		/* the running container's namespaces and cgroup */
		for (size_t i = 0; i < NJOIN; i++) {
			snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)join_pid, join_ns[i].name);
			if ((c->ns[i] = open(path, O_RDONLY | O_CLOEXEC)) < 0)
				return snprintf(why, n, "open %s", path), -1;
		}
		snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)join_pid);
		if ((c->pidns = open(path, O_RDONLY | O_CLOEXEC)) < 0 ||
		    (c->self_pidns = open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC)) < 0)
			return snprintf(why, n, "open the PID namespaces"), -1;
		snprintf(path, sizeof(path), CG_ROOT "/%s", r->rootfs_tag);
		c->cg = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC); /* none: a kernel without cgroups */
		return 0;
	}
	if (gi_pod_share_fd < 0) {
		errno = ENOENT;
		return snprintf(why, n, "the pod has no share for containers"), -1;
	}
	snprintf(path, sizeof(path), "%s/root", r->rootfs_tag);
	if ((c->trees[0] = gi_pod_share_tree(path)) < 0)
		return snprintf(why, n, "the container's root in the pod share"), -1;
	for (uint32_t i = 0; i < r->mountc && i + 1 < GI_CTR_TREES; i++) {
		struct qp_run_mount m;
		if (qp_run_mount_parse(r->mounts[i], &m) < 0) {
			errno = EINVAL;
			return snprintf(why, n, "mounts[%u]", i), -1;
		}
		if (m.kind == QP_RM_POD && (c->trees[i + 1] = gi_pod_share_tree(m.name)) < 0)
			return snprintf(why, n, "the mount \"%s\" in the pod share", m.dest), -1;
	}
	if ((r->flags & QP_RUN_F_NEW_PID) && (c->self_pidns = open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC)) < 0)
		return snprintf(why, n, "open the PID namespace"), -1;
	return make_cgroup(r, c, why, n);
}

pid_t gi_ctr_fork(const struct qp_run *r, struct gi_ctr *c)
{
	pid_t pid;
	int e;

	/* the PID namespace a child is born in: this thread's, set around
	 * the fork and set back (both allowed with other threads running) */
	if ((r->flags & QP_RUN_F_JOIN) && setns(c->pidns, CLONE_NEWPID) < 0)
		return -1;
	if ((r->flags & QP_RUN_F_NEW_PID) && unshare(CLONE_NEWPID) < 0)
		return -1;
	pid = fork();
	if (pid == 0)
		return 0;
	e = errno;
	if (c->self_pidns >= 0 && setns(c->self_pidns, CLONE_NEWPID) < 0)
		gi_fatal(QP_PERR_SYSCALL, errno, "set the PID namespace back after a container's fork");
	errno = e;
	return pid;
}

/* ---- the child ---- */

static int make_dirs(const char *path)
{
	char p[1100];

	snprintf(p, sizeof(p), "%s", path);
	for (char *s = p + 1; *s; s++)
		if (*s == '/') {
			*s = '\0';
			if (mkdir(p, 0755) < 0 && errno != EEXIST && errno != EROFS)
				return -1;
			*s = '/';
		}
	return mkdir(p, 0755) < 0 && errno != EEXIST && errno != EROFS ? -1 : 0;
}

static int lo_up(void)
{
	struct ifreq ifr = { .ifr_name = "lo" };
	int sk = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), r = -1;

	if (sk < 0)
		return -1;
	if (ioctl(sk, SIOCGIFFLAGS, &ifr) == 0) {
		ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
		r = ioctl(sk, SIOCSIFFLAGS, &ifr);
	}
	close(sk);
	return r;
}

int gi_bind_tree(int tree, const char *dst, unsigned long flags)
{
	if (syscall(SYS_move_mount, tree, "", AT_FDCWD, dst, MOVE_MOUNT_F_EMPTY_PATH) < 0)
		return -1;
	if (flags && mount(NULL, dst, NULL, MS_REMOUNT | MS_BIND | flags, NULL) < 0)
		return -1;
	return 0;
}

/* /proc, /sys (its cgroup2 in it), /dev as the pod's, then the spec's own. */
static int system_mounts(const struct qp_run *r)
{
	const unsigned long nse = MS_NOSUID | MS_NODEV | MS_NOEXEC;

	if (mount("proc", STAGE "/proc", "proc", nse, NULL) < 0 ||
	    mount("sysfs", STAGE "/sys", "sysfs", nse, NULL) < 0)
		return -1;
	if (access(CG_ROOT, F_OK) == 0 && mount("cgroup2", STAGE CG_ROOT, "cgroup2", nse, NULL) < 0)
		return -1;
	if (mount("/dev", STAGE "/dev", NULL, MS_BIND | MS_REC, NULL) < 0)
		return -1;
	if ((r->flags & QP_RUN_F_NEW_IPC) && access(STAGE "/dev/shm", F_OK) == 0 &&
	    mount("shm", STAGE "/dev/shm", "tmpfs", nse, "mode=1777") < 0)
		return -1;
	return 0;
}

static int own_mounts(const struct qp_run *r, struct gi_ctr *c)
{
	char dst[sizeof(STAGE) + 1024];

	for (uint32_t i = 0; i < r->mountc; i++) {
		struct qp_run_mount m;
		unsigned long fl;
		if (qp_run_mount_parse(r->mounts[i], &m) < 0)
			return errno = EINVAL, -1;
		fl = m.flags & (MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY);
		snprintf(dst, sizeof(dst), STAGE "%s", m.dest);
		if (m.kind == QP_RM_TMPFS) {
			if (make_dirs(dst) < 0 || mount("tmpfs", dst, "tmpfs", fl, m.data[0] ? m.data : NULL) < 0)
				return -1;
		} else if (gi_bind_tree(c->trees[i + 1], dst, fl) < 0) {
			return -1; /* the host made the mount point */
		}
	}
	return 0;
}

static int enter_root(const struct qp_run *r, struct gi_ctr *c)
{
	int ns = CLONE_NEWNS;

	if (c->cg >= 0 && write_at(c->cg, "cgroup.procs", "0") < 0)
		return -1;
	ns |= r->flags & QP_RUN_F_NEW_IPC ? CLONE_NEWIPC : 0;
	ns |= r->flags & QP_RUN_F_NEW_UTS ? CLONE_NEWUTS : 0;
	ns |= r->flags & QP_RUN_F_NEW_NET ? CLONE_NEWNET : 0;
	ns |= r->flags & QP_RUN_F_NEW_CGROUP ? CLONE_NEWCGROUP : 0;
	if (unshare(ns) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return -1;
	/* a stage of its own for the new root: the pod's /tmp is covered in
	 * this namespace only */
	if (mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0700") < 0 ||
	    mkdir(STAGE, 0700) < 0 || gi_bind_tree(c->trees[0], STAGE, 0) < 0)
		return -1;
	if (system_mounts(r) < 0 || own_mounts(r, c) < 0)
		return -1;
	if ((r->flags & QP_RUN_F_ROOTFS_RO) &&
	    mount(NULL, STAGE, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) < 0)
		return -1;
	if (chdir(STAGE) < 0 || syscall(SYS_pivot_root, ".", ".") < 0 || umount2(".", MNT_DETACH) < 0 ||
	    chdir("/") < 0)
		return -1;
	if ((r->flags & QP_RUN_F_NEW_UTS) && r->hostname && r->hostname[0] &&
	    sethostname(r->hostname, strlen(r->hostname)) < 0)
		return -1;
	if ((r->flags & QP_RUN_F_NEW_NET) && lo_up() < 0)
		return -1;
	return 0;
}

static int join(struct gi_ctr *c)
{
	if (c->cg >= 0 && write_at(c->cg, "cgroup.procs", "0") < 0)
		return -1;
	for (size_t i = 0; i < NJOIN; i++)
		if (setns(c->ns[i], join_ns[i].flag) < 0)
			return -1;
	return chdir("/");
}

int gi_ctr_enter(const struct qp_run *r, struct gi_ctr *c)
{
	return r->flags & QP_RUN_F_JOIN ? join(c) : enter_root(r, c);
}

void gi_ctr_end(const char *name)
{
	int root = open(CG_ROOT, O_PATH | O_DIRECTORY | O_CLOEXEC), cg;

	if (root < 0)
		return;
	/* what the container left (a daemon it forked) goes with it */
	if ((cg = openat(root, name, O_PATH | O_DIRECTORY | O_CLOEXEC)) >= 0) {
		write_at(cg, "cgroup.kill", "1");
		close(cg);
	}
	for (int i = 0; i < 200 && unlinkat(root, name, AT_REMOVEDIR) < 0 && errno == EBUSY; i++)
		usleep(5000);
	close(root);
}

/* A u64 of a cgroup file: its whole text ("max": 0), or the value after
 * key in a "key value" file; 0 if absent. */
static uint64_t cg_u64(int cg, const char *file, const char *key)
{
	char buf[1024], *p = buf;
	int fd = openat(cg, file, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	if (key) {
		size_t k = strlen(key);
		for (p = buf; p && (strncmp(p, key, k) || p[k] != ' '); p = strchr(p, '\n'), p = p ? p + 1 : NULL)
			;
		if (!p)
			return 0;
		p += k + 1;
	}
	return strncmp(p, "max", 3) ? strtoull(p, NULL, 10) : 0;
}

void gi_ctr_stats(const struct qp_msg *req)
{
	struct qp_msg m = { .type = QP_MSG_CTR_STATS };
	int root = open(CG_ROOT, O_PATH | O_DIRECTORY | O_CLOEXEC);
	int cg = root < 0 ? -1 : openat(root, req->u.ctr_stats.name, O_PATH | O_DIRECTORY | O_CLOEXEC);

	m.u.ctr_stats.name = req->u.ctr_stats.name;
	if (cg >= 0) {
		m.u.ctr_stats.found = 1;
		m.u.ctr_stats.cpu_usec = cg_u64(cg, "cpu.stat", "usage_usec");
		m.u.ctr_stats.cpu_user_usec = cg_u64(cg, "cpu.stat", "user_usec");
		m.u.ctr_stats.cpu_system_usec = cg_u64(cg, "cpu.stat", "system_usec");
		m.u.ctr_stats.memory = cg_u64(cg, "memory.current", NULL);
		m.u.ctr_stats.memory_max = cg_u64(cg, "memory.max", NULL);
		m.u.ctr_stats.pids = cg_u64(cg, "pids.current", NULL);
		m.u.ctr_stats.pids_max = cg_u64(cg, "pids.max", NULL);
		m.u.ctr_stats.oom_kills = cg_u64(cg, "memory.events", "oom_kill");
		close(cg);
	}
	if (root >= 0)
		close(root);
	gi_send_or_die(&m);
}
