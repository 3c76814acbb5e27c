/* runtime/host/jail.c — a VM pod's QEMU in a jail, as Firecracker's jailer
 * runs its VMM (docs/JAIL.md says what a guest that escapes QEMU reaches).
 *
 * In QEMU's child, after fork and before exec (vm_jail_enter):
 *   1. a mount namespace of its own, everything private; an empty network
 *      namespace (the tap is an fd: no host socket, no abstract unix
 *      socket of the host is reachable), IPC and UTS namespaces;
 *   2. every file QEMU needs is opened O_PATH while the host's tree is
 *      still visible (kernel, firmware, initrd, console, RAM file, rootfs
 *      and the spec's shares, the VMM binary, /usr, a few /dev nodes); a tmpfs becomes
 *      the new root and each file is bind-mounted into it at its own
 *      absolute path (so QEMU's command line does not change), read-only,
 *      nosuid and nodev where it can be; pivot_root, the old root detached;
 *   3. rlimits; the uid/gid QP_JAIL_ID_BASE + QEMU's own pid (unique among
 *      live QEMUs, owning nothing on the host), no supplementary groups;
 *      the bounding set and the permitted, effective, inheritable and
 *      ambient sets cut to what the 9p server needs (JAIL_CAPS);
 *      PR_SET_NO_NEW_PRIVS;
 *   4. QEMU installs its own seccomp filter (vm_jail_sandbox_arg: -sandbox
 *      on with every optional group denied).
 * The sockets QEMU serves are made by qpod and passed in (qemu_cmd.c), and
 * every other fd is closed at exec: nothing of the host is reachable
 * through a descriptor.  QPOD_VM_JAIL=off turns the jail off (benchmarks,
 * debugging); a qpod that is not root has nothing to drop and runs QEMU
 * unjailed (as itself). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "host/caps.h"
#include "util/cleanup.h"
#include "vm/vm.h"

/* what QEMU's 9p server needs to serve a root-owned tree faithfully with
 * security_model=none as a uid that owns none of it: read and write any
 * file, set owners, modes and times on them.  No CAP_MKNOD (a guest cannot
 * make host device nodes in its share), no CAP_SETUID/SETGID. */
static char *jail_caps[] = { "CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH", "CAP_FOWNER",
			     "CAP_FSETID", NULL };

/* the /dev nodes QEMU opens (kvm only with KVM) */
static const char *const dev_nodes[] = { "/dev/null", "/dev/zero", "/dev/urandom", "/dev/random" };
/* top-level names a merged-/usr system has as symlinks (replicated), an
 * older one as directories (bound read-only) */
static const char *const usr_links[] = { "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32" };

#define JAIL_MAX_BINDS (24 + QP_PROTO_MAX_MOUNTS)

struct bind {
	const char *target;   /* absolute path in the jail */
	int fd;               /* O_PATH on the host's file */
	bool dir, rw, dev;    /* dev: a device node (no nodev) */
};

struct jail_plan {
	struct bind b[JAIL_MAX_BINDS];
	size_t n;
	char initrd[PATH_MAX], console[PATH_MAX], bin[PATH_MAX];
	char usr_link[sizeof(usr_links) / sizeof(usr_links[0])][PATH_MAX]; /* "" or the symlink's target */
};

int vm_jail_wanted(bool *on, qp_error **err)
{
	const char *v = getenv("QPOD_VM_JAIL");

	if (!v || !*v || !strcmp(v, "on") || !strcmp(v, "1"))
		*on = geteuid() == 0;
	else if (!strcmp(v, "off") || !strcmp(v, "0"))
		*on = false;
	else
		return qp_error_set(err, QP_E_INVALID, 0, "QPOD_VM_JAIL=%s: expected on or off", v);
	return 0;
}

const char *vm_jail_sandbox_arg(void)
{
	return "on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny";
}

/* errors go to QEMU's log (stderr here), one line, and QEMU is not run */
static int jail_fail(const char *what, const char *path)
{
	dprintf(2, "qpod: jail: %s %s: %s\n", what, path ? path : "", strerror(errno));
	return -1;
}

/* add target (opened here, O_PATH, following symlinks) to the plan;
 * missing optional files are left out */
static int plan_add(struct jail_plan *p, const char *target, bool rw, bool optional)
{
	struct stat st;
	int fd;

	if (p->n >= JAIL_MAX_BINDS) {
		errno = E2BIG;
		return jail_fail("too many files for", target);
	}
	fd = open(target, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return optional && errno == ENOENT ? 0 : jail_fail("open", target);
	if (fstat(fd, &st) < 0)
		return jail_fail("stat", target);
	p->b[p->n++] = (struct bind){ .target = target, .fd = fd, .dir = S_ISDIR(st.st_mode), .rw = rw,
				      .dev = S_ISCHR(st.st_mode) };
	return 0;
}

/* a file of the state dir QEMU writes (console, RAM file) exists before it
 * is bound */
static int touch(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);

	if (fd < 0)
		return jail_fail("create", path);
	close(fd);
	return 0;
}

/* bin as execvp will find it (PATH searched as it does): bound too, so a
 * QEMU installed outside /usr is in the jail; its path into out */
static int resolve_bin(const char *bin, char *out, size_t size)
{
	const char *path = getenv("PATH");

	if (strchr(bin, '/')) {
		if (bin[0] != '/') {
			errno = EINVAL;
			return jail_fail("a relative VMM path (QPOD_QEMU) has no place in the jail:", bin);
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
	return jail_fail("find the VMM", bin);
}

static int make_plan(const struct vm_qemu_opts *o, const char *bin, struct jail_plan *p)
{
	snprintf(p->initrd, sizeof(p->initrd), "%s/%s", o->statedir, o->initrd ? o->initrd : QP_VM_INITRD);
	if (plan_add(p, "/usr", false, false) < 0 || plan_add(p, "/etc/ld.so.cache", false, true) < 0 ||
	    (!o->incoming && (plan_add(p, o->kernel, false, false) < 0 || plan_add(p, p->initrd, false, false) < 0)) ||
	    (o->firmware && plan_add(p, o->firmware, false, false) < 0) ||
	    resolve_bin(bin, p->bin, sizeof(p->bin)) < 0 || plan_add(p, p->bin, false, false) < 0)
		return -1;
	for (size_t i = 0; i < sizeof(usr_links) / sizeof(usr_links[0]); i++) {
		struct stat st;
		if (lstat(usr_links[i], &st) < 0)
			continue;
		if (S_ISLNK(st.st_mode)) {
			ssize_t n = readlink(usr_links[i], p->usr_link[i], PATH_MAX - 1);
			if (n < 0)
				return jail_fail("readlink", usr_links[i]);
			p->usr_link[i][n] = '\0';
		} else if (S_ISDIR(st.st_mode) && plan_add(p, usr_links[i], false, false) < 0)
			return -1;
	}
	for (size_t i = 0; i < sizeof(dev_nodes) / sizeof(dev_nodes[0]); i++)
		if (plan_add(p, dev_nodes[i], true, false) < 0)
			return -1;
	if (o->kvm && plan_add(p, "/dev/kvm", true, false) < 0)
		return -1;
	if (o->console) {
		snprintf(p->console, sizeof(p->console), "%s/%s", o->statedir, o->console);
		if (touch(p->console) < 0 || plan_add(p, p->console, true, false) < 0)
			return -1;
	}
	if (o->mem_path && (touch(o->mem_path) < 0 || plan_add(p, o->mem_path, true, false) < 0))
		return -1;
	if (o->rootfs && plan_add(p, o->rootfs, !o->rootfs_ro && !o->rootfs_jail_ro, false) < 0)
		return -1;
	for (size_t i = 0; i < o->nshares && i < QP_PROTO_MAX_MOUNTS; i++)
		if (plan_add(p, o->shares[i].path, !o->shares[i].ro, false) < 0)
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
			return jail_fail("mkdir", path);
	}
	return 0;
}

static int bind_one(const char *root, const struct bind *b)
{
	char dst[PATH_MAX * 2], src[64];
	unsigned long ro = b->rw ? 0 : MS_RDONLY, nodev = b->dev ? 0 : MS_NODEV;

	snprintf(dst, sizeof(dst), "%s%s", root, b->target);
	snprintf(src, sizeof(src), "/proc/self/fd/%d", b->fd);
	if (mkparents(dst) < 0)
		return -1;
	if (b->dir ? mkdir(dst, 0755) < 0 && errno != EEXIST
		   : mknod(dst, S_IFREG | 0600, 0) < 0 && errno != EEXIST)
		return jail_fail("mountpoint", b->target);
	if (mount(src, dst, NULL, MS_BIND | MS_REC, NULL) < 0)
		return jail_fail("bind", b->target);
	if (mount(NULL, dst, NULL, MS_BIND | MS_REMOUNT | MS_NOSUID | nodev | ro, NULL) < 0)
		return jail_fail("remount", b->target);
	return 0;
}

/* binds in the order of their paths' lengths: a parent before what lies in it */
static int by_length(const void *a, const void *b)
{
	size_t la = strlen(((const struct bind *)a)->target), lb = strlen(((const struct bind *)b)->target);
	return (la > lb) - (la < lb);
}

static int build_root(const struct vm_qemu_opts *o, struct jail_plan *p)
{
	const char *root = o->statedir; /* the tmpfs covers it in this namespace only */
	char path[PATH_MAX * 2];

	if (mount("qpod-jail", root, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  "mode=0755,size=64k,nr_inodes=512") < 0)
		return jail_fail("mount tmpfs on", root);
	qsort(p->b, p->n, sizeof(p->b[0]), by_length);
	for (size_t i = 0; i < p->n; i++)
		if (bind_one(root, &p->b[i]) < 0)
			return -1;
	for (size_t i = 0; i < sizeof(usr_links) / sizeof(usr_links[0]); i++) {
		if (!p->usr_link[i][0])
			continue;
		snprintf(path, sizeof(path), "%s%s", root, usr_links[i]);
		if (symlink(p->usr_link[i], path) < 0)
			return jail_fail("symlink", usr_links[i]);
	}
	/* QEMU's 9p server changes modes through /proc/self/fd: a procfs of
	 * only pid directories (no sysrq-trigger, no /proc/sys), of only the
	 * processes this uid may ptrace (itself) */
	snprintf(path, sizeof(path), "%s/proc", root);
	if (mkdir(path, 0555) < 0 ||
	    mount("proc", path, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "subset=pid,hidepid=invisible") < 0)
		return jail_fail("mount a procfs on", "/proc");
	snprintf(path, sizeof(path), "%s%s", root, o->statedir);
	if (mkparents(path) < 0 || (mkdir(path, 0700) < 0 && errno != EEXIST))
		return jail_fail("mkdir", o->statedir);
	if (chdir(root) < 0 || syscall(SYS_pivot_root, ".", ".") < 0)
		return jail_fail("pivot_root into", root);
	if (umount2(".", MNT_DETACH) < 0)
		return jail_fail("detach the host's root", NULL);
	if (mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		return jail_fail("remount the jail's root read-only", NULL);
	/* QEMU's cwd stays the state dir's path (relative -serial file:) */
	if (chdir(o->statedir) < 0)
		return jail_fail("chdir", o->statedir);
	return 0;
}

static int drop_privileges(const struct vm_qemu_opts *o)
{
	uint32_t id = QP_JAIL_ID_BASE + (uint32_t)getpid();
	uint64_t fsize = ((uint64_t)o->mem_mib << 20) + (256ull << 20);
	struct qp_rlimit lim[] = {
		{ .resource = RLIMIT_CORE, .soft = 0, .hard = 0 },
		{ .resource = RLIMIT_NOFILE, .soft = 4096, .hard = 4096 },
		{ .resource = RLIMIT_NPROC, .soft = 1024, .hard = 1024 },
		{ .resource = RLIMIT_FSIZE, .soft = fsize, .hard = fsize },
	};
	struct qp_process proc = {
		.uid = id, .gid = id,
		.caps = { .present = true, .bounding = jail_caps, .effective = jail_caps,
			  .permitted = jail_caps, .inheritable = jail_caps, .ambient = jail_caps },
	};
	qp_error *err = NULL;

	if (qp_rlimits_apply(lim, sizeof(lim) / sizeof(lim[0]), &err) < 0 ||
	    qp_process_drop_privileges(&proc, &err) < 0 || qp_no_new_privs(&err) < 0) {
		dprintf(2, "qpod: jail: %s\n", err && err->msg ? err->msg : "drop privileges");
		qp_error_free(&err);
		return -1;
	}
	return 0;
}

int vm_jail_enter(const struct vm_qemu_opts *o, const char *bin)
{
	struct jail_plan p = { .n = 0 };

	/* the files are opened in the new namespace: a bind's source must be
	 * one of its own mounts */
	if (unshare(CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS) < 0)
		return jail_fail("unshare the mount, network, IPC and UTS namespaces", NULL);
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return jail_fail("make mounts private", NULL);
	if (make_plan(o, bin, &p) < 0 || build_root(o, &p) < 0)
		return -1;
	for (size_t i = 0; i < p.n; i++)
		close(p.b[i].fd);
	return drop_privileges(o);
}
