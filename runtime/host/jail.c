/* runtime/host/jail.c — a host program in a jail (host/jail.h): its files
 * bound into a tmpfs root, pivot_root, rlimits, an unprivileged uid, cut
 * capabilities, no_new_privs.  QEMU's use of it: vm/qemu/jail_qemu.c;
 * docs/JAIL.md says what a guest that escapes QEMU reaches. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "host/jail.h"

/* the /dev nodes any program opens */
static const char *const dev_nodes[] = { "/dev/null", "/dev/zero", "/dev/urandom", "/dev/random" };
/* top-level names a merged-/usr system has as symlinks (replicated), an
 * older one as directories (bound read-only) */
static const char *const usr_links[QP_JAIL_USR_LINKS] = { "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32" };

/* errors go to the program's log (stderr here), one line, and it is not run */
int qp_jail_fail(const char *what, const char *path)
{
	dprintf(2, "qpod: jail: %s %s: %s\n", what, path ? path : "", strerror(errno));
	return -1;
}

int qp_jail_unshare(void)
{
	if (unshare(CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS) < 0)
		return qp_jail_fail("unshare the mount, network, IPC and UTS namespaces", NULL);
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return qp_jail_fail("make mounts private", NULL);
	return 0;
}

int qp_jail_add(struct qp_jail *j, const char *target, bool rw, bool optional)
{
	struct stat st;
	int fd;

	if (j->n >= j->max || j->n >= QP_JAIL_MAX_BINDS) {
		errno = E2BIG;
		return qp_jail_fail("too many files for", target);
	}
	fd = open(target, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return optional && errno == ENOENT ? 0 : qp_jail_fail("open", target);
	if (fstat(fd, &st) < 0)
		return qp_jail_fail("stat", target);
	j->b[j->n++] = (struct qp_jail_bind){ .target = target, .fd = fd, .dir = S_ISDIR(st.st_mode), .rw = rw,
					      .dev = S_ISCHR(st.st_mode) };
	return 0;
}

int qp_jail_add_created(struct qp_jail *j, const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);

	if (fd < 0)
		return qp_jail_fail("create", path);
	close(fd);
	return qp_jail_add(j, path, true, false);
}

/* bin as execvp will find it (PATH searched as it does): bound too, so a
 * program installed outside /usr is in the jail; its path into out */
static int resolve_bin(const char *bin, char *out, size_t size)
{
	const char *path = getenv("PATH");

	if (strchr(bin, '/')) {
		if (bin[0] != '/') {
			errno = EINVAL;
			return qp_jail_fail("a relative VMM path (QPOD_QEMU) has no place in the jail:", bin);
		}
		snprintf(out, size, "%s", bin);
		return 0;
	}
	for (const char *d = path ? path : "/usr/bin:/bin"; *d;) {
		size_t n = strcspn(d, ":");
		if (n > 0 && snprintf(out, size, "%.*s/%s", (int)n, d, bin) < (int)size && access(out, X_OK) == 0)
			return 0;
		d += n + (d[n] == ':');
	}
	errno = ENOENT;
	return qp_jail_fail("find the VMM", bin);
}

int qp_jail_add_system(struct qp_jail *j, const char *bin)
{
	if (qp_jail_add(j, "/usr", false, false) < 0 || qp_jail_add(j, "/etc/ld.so.cache", false, true) < 0 ||
	    resolve_bin(bin, j->bin, sizeof(j->bin)) < 0 || qp_jail_add(j, j->bin, false, false) < 0)
		return -1;
	for (size_t i = 0; i < QP_JAIL_USR_LINKS; i++) {
		struct stat st;
		if (lstat(usr_links[i], &st) < 0)
			continue;
		if (S_ISLNK(st.st_mode)) {
			ssize_t n = readlink(usr_links[i], j->usr_link[i], PATH_MAX - 1);
			if (n < 0)
				return qp_jail_fail("readlink", usr_links[i]);
			j->usr_link[i][n] = '\0';
		} else if (S_ISDIR(st.st_mode) && qp_jail_add(j, usr_links[i], false, false) < 0)
			return -1;
	}
	for (size_t i = 0; i < sizeof(dev_nodes) / sizeof(dev_nodes[0]); i++)
		if (qp_jail_add(j, dev_nodes[i], true, false) < 0)
			return -1;
	return 0;
}
/* mkdir -p of path's parent (under the new root, path absolute) */
static int mkparents(char *path)
{
	for (char *s = strchr(path + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		int r = mkdir(path, 0755);
		*s = '/';
		if (r < 0 && errno != EEXIST)
			return qp_jail_fail("mkdir", path);
	}
	return 0;
}

static int bind_one(const char *root, const struct qp_jail_bind *b)
{
	char dst[PATH_MAX * 2], src[64];
	unsigned long ro = b->rw ? 0 : MS_RDONLY, nodev = b->dev ? 0 : MS_NODEV;

	snprintf(dst, sizeof(dst), "%s%s", root, b->target);
	snprintf(src, sizeof(src), "/proc/self/fd/%d", b->fd);
	if (mkparents(dst) < 0)
		return -1;
	if (b->dir ? mkdir(dst, 0755) < 0 && errno != EEXIST
		   : mknod(dst, S_IFREG | 0600, 0) < 0 && errno != EEXIST)
		return qp_jail_fail("mountpoint", b->target);
	if (mount(src, dst, NULL, MS_BIND | MS_REC, NULL) < 0)
		return qp_jail_fail("bind", b->target);
	if (mount(NULL, dst, NULL, MS_BIND | MS_REMOUNT | MS_NOSUID | nodev | ro, NULL) < 0)
		return qp_jail_fail("remount", b->target);
	return 0;
}

/* binds in the order of their paths' lengths: a parent before what lies in it */
static int by_length(const void *a, const void *b)
{
	size_t la = strlen(((const struct qp_jail_bind *)a)->target), lb = strlen(((const struct qp_jail_bind *)b)->target);
	return (la > lb) - (la < lb);
}

int qp_jail_build_root(struct qp_jail *j, const char *root, const char *cwd)
{
	char path[PATH_MAX * 2];

	if (mount("qpod-jail", root, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  "mode=0755,size=64k,nr_inodes=512") < 0)
		return qp_jail_fail("mount tmpfs on", root);
	qsort(j->b, j->n, sizeof(j->b[0]), by_length);
	for (size_t i = 0; i < j->n; i++)
		if (bind_one(root, &j->b[i]) < 0)
			return -1;
	for (size_t i = 0; i < QP_JAIL_USR_LINKS; i++) {
		if (!j->usr_link[i][0])
			continue;
		snprintf(path, sizeof(path), "%s%s", root, usr_links[i]);
		if (symlink(j->usr_link[i], path) < 0)
			return qp_jail_fail("symlink", usr_links[i]);
	}
	/* QEMU's 9p server changes modes through /proc/self/fd: a procfs of
	 * only pid directories (no sysrq-trigger, no /proc/sys), of only the
	 * processes this uid may ptrace (itself) */
	snprintf(path, sizeof(path), "%s/proc", root);
	if (mkdir(path, 0555) < 0 ||
	    mount("proc", path, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "subset=pid,hidepid=invisible") < 0)
		return qp_jail_fail("mount a procfs on", "/proc");
	snprintf(path, sizeof(path), "%s%s", root, cwd);
	if (mkparents(path) < 0 || (mkdir(path, 0700) < 0 && errno != EEXIST))
		return qp_jail_fail("mkdir", cwd);
	if (chdir(root) < 0 || syscall(SYS_pivot_root, ".", ".") < 0)
		return qp_jail_fail("pivot_root into", root);
	if (umount2(".", MNT_DETACH) < 0)
		return qp_jail_fail("detach the host's root", NULL);
	if (mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		return qp_jail_fail("remount the jail's root read-only", NULL);
	if (chdir(cwd) < 0)
		return qp_jail_fail("chdir", cwd);
	for (size_t i = 0; i < j->n; i++)
		close(j->b[i].fd);
	return 0;
}

int qp_jail_drop_privileges(const struct qp_rlimit *lim, size_t nlim, char **caps)
{
	uint32_t id = QP_JAIL_ID_BASE + (uint32_t)getpid();
	struct qp_process proc = {
		.uid = id, .gid = id,
		.caps = { .present = true, .bounding = caps, .effective = caps,
			  .permitted = caps, .inheritable = caps, .ambient = caps },
	};
	qp_error *err = NULL;

	if (qp_rlimits_apply(lim, nlim, &err) < 0 ||
	    qp_process_drop_privileges(&proc, &err) < 0 || qp_no_new_privs(&err) < 0) {
		dprintf(2, "qpod: jail: %s\n", err && err->msg ? err->msg : "drop privileges");
		qp_error_free(&err);
		return -1;
	}
	return 0;
}
