/* runtime/container/cgroup_mount.c — the pod's /sys/fs/cgroup: the pod's
 * own cgroup as the root of every hierarchy the host has, the way runc
 * shows it, so a workload reads its own limits (memory.limit_in_bytes on
 * v1, memory.max on v2) and sees no other tenant's cgroup names.
 *
 *   pure v2 host:       cgroup2 on the target
 *   v1 / hybrid host:   a tmpfs on the target, then one directory per host
 *                       hierarchy (memory, "cpu,cpuacct", systemd, unified)
 *                       with that hierarchy mounted, and the host's
 *                       symlinks (cpu -> cpu,cpuacct) copied
 *
 * In a new cgroup namespace (the default spec has one) the kernel makes the
 * pod's cgroup the root of each fresh mount.  Without one, the pod's cgroup
 * directory of each hierarchy is bind-mounted instead (the path is the
 * host's, from /proc/self/cgroup).  Runs before pivot_root, in the pod's
 * mount namespace, where the host's /sys/fs/cgroup is still visible. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "container/mounts.h"
#include "util/cleanup.h"
#include "util/safepath.h"

#define HOST_CGROUP "/sys/fs/cgroup"
#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

/* The super options of a v1 hierarchy minus rw/ro: "memory",
 * "cpu,cpuacct", "xattr,name=systemd"... */
static void v1_options(const char *super, char *out, size_t size)
{
	_cleanup_free_ char *copy = strdup(super);
	char *save = NULL;
	size_t len = 0;

	out[0] = '\0';
	if (!copy)
		return;
	for (char *o = strtok_r(copy, ",", &save); o; o = strtok_r(NULL, ",", &save)) {
		if (!strcmp(o, "rw") || !strcmp(o, "ro"))
			continue;
		len += (size_t)snprintf(out + len, len < size ? size - len : 0, "%s%s", len ? "," : "", o);
	}
	if (len >= size)
		out[0] = '\0';
}

/* The pod's cgroup path in the hierarchy whose options are `opts` (from
 * /proc/self/cgroup: "N:memory:/path", "N:name=systemd:/path", "0::/path"). */
static int own_path(const char *opts, bool v2, char *out, size_t size)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/cgroup", "re");
	char line[4096];

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		*c2 = '\0';
		line[strcspn(c2 + 1, "\n") + (size_t)(c2 + 1 - line)] = '\0';
		const char *ctrls = c1 + 1;
		bool match = v2 ? *ctrls == '\0' : *ctrls && strstr(opts, ctrls) != NULL;
		if (match && (size_t)snprintf(out, size, "%s", c2 + 1) < size)
			return 0;
	}
	return -1;
}

/* The mount point, (re)opened: "name" below dirfd, or (in_root) a path
 * resolved inside the rootfs.  A mount covers the inode an earlier fd
 * names, so each step after a mount needs a fresh one. */
static int open_point(int dirfd, const char *name, bool in_root, qp_error **err)
{
	int fd = in_root ? qp_open_in_root(dirfd, name, QP_PATH_EXISTING, 0, err)
			 : openat(dirfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0 && !in_root)
		qp_fail(err, errno, "open cgroup \"%s\"", name);
	return fd;
}

static int mount_hierarchy(int dirfd, const char *name, bool in_root, const char *host_dir, bool v2,
			   const char *opts, unsigned long fl, bool cgroupns, qp_error **err)
{
	char own[4096], src[8192], dst[64];
	_cleanup_close_ int fd = open_point(dirfd, name, in_root, err);

	if (fd < 0)
		return -1;
	qp_fd_path(fd, dst, sizeof(dst));
	if (cgroupns) {
		if (mount("cgroup", dst, v2 ? "cgroup2" : "cgroup", fl, v2 ? NULL : opts) == 0)
			return 0;
		if (errno != EPERM)
			return qp_fail(err, errno, "mount cgroup %s", opts && *opts ? opts : "v2");
		/* e.g. v1 in a user namespace: fall through to the bind mount */
	}
	if (own_path(opts, v2, own, sizeof(own)) < 0)
		return qp_error_set(err, QP_E_GENERIC, 0, "cgroup %s: pod's path not found",
				    opts && *opts ? opts : "v2");
	snprintf(src, sizeof(src), "%s%s", host_dir, own);
	if (mount(src, dst, NULL, MS_BIND, NULL) < 0)
		return qp_fail(err, errno, "bind cgroup \"%s\"", src);
	close(fd);
	if ((fd = open_point(dirfd, name, in_root, err)) < 0)
		return -1;
	if (mount(NULL, qp_fd_path(fd, dst, sizeof(dst)), NULL, MS_REMOUNT | MS_BIND | fl, NULL) < 0)
		return qp_fail(err, errno, "remount cgroup \"%s\"", src);
	return 0;
}

/* v1/hybrid: tmpfs + one directory per hierarchy mounted below /sys/fs/cgroup. */
static int mount_v1_view(int rootfd, const char *dest, const char *target, unsigned long fl,
			 bool cgroupns, qp_error **err)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
	_cleanup_close_ int tfd = -1;
	char line[4096];

	if (!f)
		return qp_fail(err, errno, "read mountinfo");
	if (mount("tmpfs", target, "tmpfs", (fl & ~MS_RDONLY) | MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  "mode=755") < 0)
		return qp_fail(err, errno, "mount tmpfs for cgroup");
	/* target names the covered directory: reach the new tmpfs through
	 * the destination, resolved again inside the root */
	tfd = qp_open_in_root(rootfd, dest, QP_PATH_EXISTING, O_DIRECTORY, err);
	if (tfd < 0)
		return qp_error_prefix(err, "open the cgroup tmpfs");
	while (fgets(line, sizeof(line), f)) {
		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [TAGS...] - FSTYPE SOURCE SUPER */
		char mp[1024], fstype[64], super[1024], opts[1024];
		char *sep = strstr(line, " - ");
		if (!sep || sscanf(line, "%*s %*s %*s %*s %1023s", mp) != 1 ||
		    sscanf(sep + 3, "%63s %*s %1023s", fstype, super) != 2)
			continue;
		bool v2 = !strcmp(fstype, "cgroup2");
		if ((!v2 && strcmp(fstype, "cgroup")) || strncmp(mp, HOST_CGROUP "/", sizeof(HOST_CGROUP)) ||
		    strchr(mp + sizeof(HOST_CGROUP), '/'))
			continue;
		const char *name = mp + sizeof(HOST_CGROUP);
		v1_options(super, opts, sizeof(opts));
		if (mkdirat(tfd, name, 0755) < 0 && errno != EEXIST)
			return qp_fail(err, errno, "mkdir cgroup \"%s\"", name);
		if (mount_hierarchy(tfd, name, false, mp, v2, opts, fl, cgroupns, err) < 0)
			return qp_error_prefix(err, "cgroup \"%s\"", name);
	}
	/* the host's aliases: cpu -> cpu,cpuacct and the like */
	_cleanup_closedir_ DIR *d = opendir(HOST_CGROUP);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		char link[256];
		ssize_t n;
		if (de->d_type != DT_LNK ||
		    (n = readlinkat(dirfd(d), de->d_name, link, sizeof(link) - 1)) <= 0)
			continue;
		link[n] = '\0';
		if (strchr(link, '/'))
			continue; /* only sibling aliases */
		if (symlinkat(link, tfd, de->d_name) < 0 && errno != EEXIST)
			return qp_fail(err, errno, "symlink cgroup \"%s\"", de->d_name);
	}
	char troot[64];
	if ((fl & MS_RDONLY) &&
	    mount(NULL, qp_fd_path(tfd, troot, sizeof(troot)), NULL, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=755") < 0)
		return qp_fail(err, errno, "remount the cgroup tmpfs read-only");
	return 0;
}

int qp_mount_cgroup_view(int rootfd, const char *dest, const char *target, unsigned long flags,
			 bool cgroupns, qp_error **err)
{
	struct statfs sf;
	unsigned long fl = flags | MS_NOSUID | MS_NODEV | MS_NOEXEC;

	if (statfs(HOST_CGROUP, &sf) == 0 && sf.f_type == CGROUP2_SUPER_MAGIC)
		return mount_hierarchy(rootfd, dest, true, HOST_CGROUP, true, "", fl, cgroupns, err);
	return mount_v1_view(rootfd, dest, target, fl, cgroupns, err);
}
