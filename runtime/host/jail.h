/* runtime/host/jail.h — a host program in a jail, as Firecracker's jailer
 * runs its VMM: in the child after fork and before exec, new mount, network,
 * IPC and UTS namespaces; the files the program needs opened O_PATH while
 * the host's tree is visible, then bind-mounted into a tmpfs at their own
 * absolute paths (read-only, nosuid, nodev where they can be) that becomes
 * the root; then rlimits, a uid/gid that owns nothing on the host, cut
 * capability sets and no_new_privs.  Errors go to stderr (the program's
 * log), one line "qpod: jail: ...", and the caller does not exec.
 * What goes in is the caller's (vm/qemu/jail_qemu.c: QEMU's files). */
#ifndef QPOD_HOST_JAIL_H
#define QPOD_HOST_JAIL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "host/caps.h"

/* A jailed program's uid and gid: this + its own pid (pid_max is at most
 * 2^22), so no two live jailed programs share one and none is a host user's. */
#define QP_JAIL_ID_BASE 0x50000000u
#define QP_JAIL_MAX_BINDS 64
/* top-level names a merged-/usr system has as symlinks, an older one as
 * directories (jail.c) */
#define QP_JAIL_USR_LINKS 6

struct qp_jail_bind {
	const char *target;   /* absolute path in the jail */
	int fd;               /* O_PATH on the host's file */
	bool dir, rw, dev;    /* dev: a device node (no nodev) */
};

struct qp_jail {
	struct qp_jail_bind b[QP_JAIL_MAX_BINDS];
	size_t n;
	size_t max;           /* binds allowed (<= QP_JAIL_MAX_BINDS) */
	char bin[PATH_MAX];   /* the program, as execvp finds it */
	char usr_link[QP_JAIL_USR_LINKS][PATH_MAX]; /* "" or the symlink's target */
};

/* One line "qpod: jail: WHAT PATH: strerror(errno)" on stderr; -1. */
int qp_jail_fail(const char *what, const char *path);
/* New mount (all private), network, IPC and UTS namespaces: the files are
 * opened after this, so a bind's source is one of the new namespace's mounts. */
int qp_jail_unshare(void);
/* Add target (opened here, O_PATH, following symlinks); a missing optional
 * one is left out. */
int qp_jail_add(struct qp_jail *j, const char *target, bool rw, bool optional);
/* Create path (a file the program writes, e.g. a log) if missing, then add it rw. */
int qp_jail_add_created(struct qp_jail *j, const char *path);
/* What any dynamically linked host program needs: /usr, ld.so.cache, the
 * merged-/usr links (or old-style directories), /dev/null, zero, urandom,
 * random, and bin itself (PATH searched as execvp does; j->bin). */
int qp_jail_add_system(struct qp_jail *j, const char *bin);
/* Make the root: a tmpfs on root (covering it in this namespace only), the
 * binds, the /usr links, a procfs of pid directories only; pivot_root,
 * the host's root detached, the new root read-only; cwd = cwd (a path in
 * the jail, made if missing).  The binds' fds are closed. */
int qp_jail_build_root(struct qp_jail *j, const char *root, const char *cwd);
/* rlimits lim, uid/gid QP_JAIL_ID_BASE + own pid, no supplementary groups,
 * every capability set = caps (NULL-terminated names), no_new_privs. */
int qp_jail_drop_privileges(const struct qp_rlimit *lim, size_t nlim, char **caps);

#endif
