/* runtime/host/cgroup/cgroup.h — a container pod's cgroup, on cgroup v2
 * (unified) and on v1 / hybrid hosts, behind one ops table.
 *
 * The mode is taken from the filesystem at the hierarchy root
 * (/sys/fs/cgroup, or $QPOD_CGROUP_ROOT for tests): cgroup2 means v2, anything
 * else (tmpfs with v1 controllers, with or without an empty unified tree at
 * .../unified) means v1.  Hybrid hosts are supported through their v1
 * controllers; crun refuses them, qpod does not.
 *
 * A cgroup path is relative to the hierarchy root whether written "qpod/ID"
 * or as an OCI cgroupsPath "/a/b" (the same convention as state->cgroup).
 * ".", "..", empty components and control characters are refused, so a path
 * never leaves the root; each component is opened with O_NOFOLLOW.
 *
 * Callers use only the qp_cgroup_* functions; the backend interface at the end
 * is for cgroup*.c and freeze.c.
 */
#ifndef QPOD_CGROUP_H
#define QPOD_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "spec/spec.h"
#include "stats.h"
#include "util/error.h"

enum qp_cgroup_mode { QP_CGROUP_V1, QP_CGROUP_V2 };

struct qp_cgroup; /* opaque; remembers root, path and mode */

#define QP_CGROUP_DEFAULT_ROOT "/sys/fs/cgroup"
#define QP_CGROUP_PATH_MAX 1024   /* bytes, after cleaning */
#define QP_CGROUP_MAX_DEPTH 32    /* nesting below the root, ours and the pod's */
#define QP_CGROUP_MAX_PIDS (1u << 22)

/* statfs(root): CGROUP2_SUPER_MAGIC -> V2, else V1 (hybrid or legacy). */
enum qp_cgroup_mode qp_cgroup_detect(void);
/* The hierarchy root in use: $QPOD_CGROUP_ROOT or /sys/fs/cgroup. */
const char *qp_cgroup_root(void);

/* Create PATH in every hierarchy that is needed (v1: memory, cpu, cpuacct,
 * pids, cpuset, devices, freezer, blkio, whichever are mounted; v2: the
 * memory, cpu, pids and cpuset controllers are enabled on the way down where
 * available), then apply RES (may be NULL).  The leaf must not exist yet
 * (QP_E_EXISTS); a limit whose controller is missing is an error that says
 * so.  On failure nothing of the leaf is left behind. */
int qp_cgroup_create(const char *path, const struct qp_resources *res, struct qp_cgroup **out,
		     qp_error **err);
/* Re-open an existing pod cgroup from its saved path; QP_E_NOTFOUND if it
 * exists in no hierarchy. */
int qp_cgroup_open(const char *path, struct qp_cgroup **out, qp_error **err);
/* A process moves itself in (no caller moves another one): the files it writes "0" to, opened
 * beforehand (close-on-exec) by a caller allowed to write them.  The kernel
 * checks the opener's credentials, so a pod's child that is already in a
 * user namespace can still use them.  v1: each hierarchy's "tasks" file;
 * "0" written there by a single-threaded process moves it without the
 * kernel's global threadgroup lock, whose first writer waits for an RCU
 * grace period (15 ms on this kind of host; a pid written to cgroup.procs
 * pays it).  v2: cgroup.procs, where the lock is paid; the pod's child
 * avoids it by being cloned straight into the cgroup (dir_fd). */
#define QP_CGROUP_ENTRY_MAX 16
struct qp_cgroup_entry {
	size_t n;
	int fd[QP_CGROUP_ENTRY_MAX];
	const char *name[QP_CGROUP_ENTRY_MAX]; /* v1 hierarchy or "unified", for errors */
	int dir_fd; /* v2: the leaf, for clone3's CLONE_INTO_CGROUP (no lock at all); v1: -1 */
};
#define QP_CGROUP_ENTRY_INIT { .n = 0, .dir_fd = -1 }
int qp_cgroup_entry_open(struct qp_cgroup *cg, struct qp_cgroup_entry *e, qp_error **err);
/* Move the calling process in; it must be single-threaded.  (A child made
 * with CLONE_INTO_CGROUP and dir_fd is in already.) */
int qp_cgroup_entry_use(const struct qp_cgroup_entry *e, qp_error **err);
void qp_cgroup_entry_close(struct qp_cgroup_entry *e);
/* Move another process, all its threads, in: an entry of each
 * hierarchy's cgroup.procs (opening it touches no process), then PID
 * written to each.  For what was started before its pod existed (a
 * spare's QEMU, vm/snapshot/spare.c); it pays the lock that entries avoid. */
int qp_cgroup_entry_open_procs(struct qp_cgroup *cg, struct qp_cgroup_entry *e, qp_error **err);
int qp_cgroup_entry_move(const struct qp_cgroup_entry *e, pid_t pid, qp_error **err);
/* The caller leaves cg for each hierarchy's root cgroup, then cg goes where
 * it is empty, and QP_CGROUP_DEFAULT_PARENT above it too: for the
 * processes of a cgroup of qpod's own that is no pod's (qpod/spares), as
 * they end, so that the last one out leaves nothing behind.  Best effort. */
void qp_cgroup_leave(struct qp_cgroup *cg);
/* The processes in the cgroup and its descendants, sorted, no duplicates;
 * *pids is malloc'd (may be NULL when *n == 0). */
int qp_cgroup_pids(struct qp_cgroup *cg, pid_t **pids, size_t *n, qp_error **err);
/* Send SIG to every process.  v2: cgroup.kill for SIGKILL where it exists,
 * otherwise freeze, signal, thaw; v1: the same through the freezer, so a
 * process cannot fork away from the signal.  A frozen (paused) cgroup stays
 * frozen, except after SIGKILL: that is thawed so the kill lands (as runc). */
int qp_cgroup_signal_all(struct qp_cgroup *cg, int sig, qp_error **err);
/* Freeze (pause) or thaw (resume) every process, and wait until the kernel
 * says it is done (v1 freezer.state FROZEN/THAWED, v2 cgroup.events
 * "frozen 1/0"); a freeze that does not complete is undone and fails. */
int qp_cgroup_freeze(struct qp_cgroup *cg, bool frozen, qp_error **err);
/* Is the cgroup frozen (or freezing)?  false without a freezer. */
bool qp_cgroup_is_frozen(struct qp_cgroup *cg);
/* Apply RES to an existing cgroup with the writers create uses (only the
 * limits RES sets; the caller passes the pod's whole, merged, resources). */
int qp_cgroup_update(struct qp_cgroup *cg, const struct qp_resources *res, qp_error **err);
/* CPU, memory and pids figures in runc's terms (stats.h); st is zeroed
 * first, qp_stats_free releases it. */
int qp_cgroup_stats(struct qp_cgroup *cg, struct qp_stats *st, qp_error **err);
/* rmdir in every hierarchy, children first.  Processes still inside are
 * SIGKILLed and rmdir is retried for about a second.  Missing directories
 * are fine, so destroy is idempotent. */
int qp_cgroup_destroy(struct qp_cgroup *cg, qp_error **err);
/* Memory in use (v2 memory.current, v1 memory.usage_in_bytes). */
int qp_cgroup_memory_usage(struct qp_cgroup *cg, uint64_t *bytes, qp_error **err);
/* OOM kills seen (v2 memory.events oom_kill, v1 memory.oom_control oom_kill). */
int qp_cgroup_oom_kills(struct qp_cgroup *cg, uint64_t *n, qp_error **err);
/* The cleaned path, "a/b" (no leading slash). */
const char *qp_cgroup_path(const struct qp_cgroup *cg);
enum qp_cgroup_mode qp_cgroup_mode_of(const struct qp_cgroup *cg);
void qp_cgroup_free(struct qp_cgroup *cg);

/* ---- pure translations (exposed for unit tests) ---- */

/* Clean a user/OCI path into "a/b" (malloc'd *out). */
int qp_cgroup_clean_path(const char *path, char **out, qp_error **err);
/* cpu.shares -> cpu.weight as crun/runc convert; 0 means "not set". */
uint64_t qp_cgroup_shares_to_weight(uint64_t shares);
/* V as decimal, or UNLIMITED ("max" / "-1") when V < 0.  Returns buf. */
const char *qp_cgroup_limit_str(int64_t v, const char *unlimited, char *buf, size_t len);
/* v2 cpu.max: "QUOTA PERIOD" or "max PERIOD" (period defaults to 100000).
 * Returns 1 when there is something to write, 0 when neither is set. */
int qp_cgroup_cpu_max_str(const struct qp_resources *res, char *buf, size_t len);
/* v2 memory.swap.max from OCI memory.swap (memory + swap): swap - limit, or
 * -1 for "max".  Returns 1 when set, 0 when not requested, -1 if invalid. */
int qp_cgroup_swap_max(const struct qp_resources *res, int64_t *out, qp_error **err);
/* "0-3,5" style lists: digits, ',' and '-', bounded length. */
bool qp_cgroup_cpuset_valid(const char *s);

/* ---- backend interface: cgroup*.c and freeze.c only ---- */

/* A pod's leaf directory per controller, each an open fd (owned) or -1 when
 * the controller is not available there: v2 has one directory for all,
 * v1 one per mounted hierarchy.  The writers (cgroup_limits.c), the freezer
 * (freeze.c) and the stats reader (cgroup_stats.c) work on this, so each
 * setting has one writer for both modes. */
enum qp_cg_ctrl { QP_CG_MEMORY, QP_CG_CPU, QP_CG_CPUACCT, QP_CG_CPUSET, QP_CG_PIDS,
		  QP_CG_FREEZER, QP_CG_DEVICES, QP_CG_BLKIO, QP_CG_ANY, QP_CG_N };

struct qp_cg_leaves {
	enum qp_cgroup_mode mode;
	int fd[QP_CG_N];    /* QP_CG_ANY: a leaf holding the tasks (any controller) */
	char why[1200];     /* why a controller can be missing, for errors */
};

#define QP_CG_LEAVES_INIT { .fd = { -1, -1, -1, -1, -1, -1, -1, -1, -1 } }
void qp_cg_leaves_close(struct qp_cg_leaves *l);
#define _cleanup_leaves_ __attribute__((cleanup(qp_cg_leaves_close)))
/* v2: the leaves of one directory fd (dup'ed), by its cgroup.controllers */
int qp_cg_leaves_v2(int fd, struct qp_cg_leaves *l, qp_error **err);
/* 0 if controller C has a leaf, else an error naming WHAT needed it */
int qp_cg_need(const struct qp_cg_leaves *l, enum qp_cg_ctrl c, const char *what, qp_error **err);
/* Write the limits RES sets (cgroup_limits.c), device access included. */
int qp_cg_set_limits(const struct qp_cg_leaves *l, const struct qp_resources *res, qp_error **err);
/* Device access (cgroup_devices.c): deny all, RES's rules, the default
 * devices; v1 devices.allow/deny (only what changes), v2 an eBPF filter
 * (replacing the one attached before). */
int qp_cg_set_devices(const struct qp_cg_leaves *l, const struct qp_resources *res, qp_error **err);
/* linux.resources.blockIO (cgroup_blkio.c): v1 blkio (CFQ's or BFQ's
 * weight files, throttles), v2 io (io.bfq.weight or io.weight, io.max). */
int qp_cg_set_blkio(const struct qp_cg_leaves *l, const struct qp_resources *res, qp_error **err);

struct qp_cgroup_ops {
	int (*create)(struct qp_cgroup *cg, const struct qp_resources *res, qp_error **err);
	int (*exists)(struct qp_cgroup *cg, qp_error **err); /* 0 or -1 (QP_E_NOTFOUND) */
	/* whole: cgroup.procs everywhere (v1: else "tasks", for a process
	 * that moves itself) */
	int (*entry_open)(struct qp_cgroup *cg, struct qp_cgroup_entry *e, bool whole, qp_error **err);
	int (*pids)(struct qp_cgroup *cg, pid_t **pids, size_t *n, qp_error **err);
	/* open the leaves of the existing cgroup (fills every fd, -1 if absent) */
	int (*leaves)(struct qp_cgroup *cg, struct qp_cg_leaves *l, qp_error **err);
	int (*destroy)(struct qp_cgroup *cg, qp_error **err);
	/* each hierarchy's root, open (fds[..max]); how many, or -1 */
	int (*roots)(struct qp_cgroup *cg, int *fds, size_t max, qp_error **err);
	int (*memory_usage)(struct qp_cgroup *cg, uint64_t *bytes, qp_error **err);
	int (*oom_kills)(struct qp_cgroup *cg, uint64_t *n, qp_error **err);
};

/* the parent of every default pod cgroup ("qpod/ID") */
#define QP_CGROUP_DEFAULT_PARENT "qpod"

/* The pod's own cgroup (cgroup_pod.c): pod->state->cgroup set to
 * linux.cgroupsPath or QP_CGROUP_DEFAULT_PARENT/ID and saved, then the
 * cgroup made with res.  Rootless without a delegated cgroup and !limits:
 * 0 with *out NULL and no cgroup in the state. */
struct pod;
int qp_cgroup_create_for_pod(struct pod *pod, const struct qp_resources *res, bool limits,
			     struct qp_cgroup **out, qp_error **err);

struct qp_cgroup {
	enum qp_cgroup_mode mode;
	const struct qp_cgroup_ops *ops;
	char *root;  /* hierarchy root directory */
	char *path;  /* cleaned, "a/b" */
};

extern const struct qp_cgroup_ops qp_cgroup_v1_ops;
extern const struct qp_cgroup_ops qp_cgroup_v2_ops;

/* ---- cgroup_files.c: what both backends share ---- */

/* Called for every component walked by qp_cg_mkpath, after it is open. */
typedef int (*qp_cg_hook)(int parentfd, int childfd, bool leaf, void *ud, qp_error **err);

/* Open a hierarchy root directory (O_DIRECTORY|O_CLOEXEC). */
int qp_cg_open_root(const char *dir, qp_error **err);
/* Walk PATH below rootfd, creating what is missing; the leaf must be new
 * (EEXIST -> QP_E_EXISTS).  Returns the leaf's directory fd. */
int qp_cg_mkpath(int rootfd, const char *path, qp_cg_hook hook, void *ud, qp_error **err);
/* Open existing PATH below rootfd; -1 with errno ENOENT if missing. */
int qp_cg_openpath(int rootfd, const char *path, qp_error **err);
/* Remove PATH below rootfd, children first, killing what is left (~1 s). */
int qp_cg_remove(int rootfd, const char *path, qp_error **err);
/* qpod's own parent ("qpod/ID" -> "qpod") removed once empty (a spec's
 * cgroupsPath parents are left alone). */
void qp_cg_remove_default_parent(int rootfd, const char *path);
bool qp_cg_has_file(int dirfd, const char *name);
/* Write VALUE to FILE in dirfd: `write "256M" to memory.max: Invalid argument`. */
int qp_cg_write(int dirfd, const char *file, const char *value, qp_error **err);
/* Read FILE (at most len-1 bytes), NUL-terminated, trailing newline cut. */
int qp_cg_read(int dirfd, const char *file, char *buf, size_t len, qp_error **err);
int qp_cg_read_u64(int dirfd, const char *file, uint64_t *v, qp_error **err);
/* The value of "KEY N" in a flat keyed file (memory.events, oom_control). */
int qp_cg_read_key(int dirfd, const char *file, const char *key, uint64_t *v, qp_error **err);
/* Is NAME a word of the space-separated list S (cgroup.controllers)? */
bool qp_cg_word_in(const char *s, const char *name);
/* Processes of dirfd's cgroup.procs and its sub-cgroups, sorted, unique. */
int qp_cg_collect_pids(int dirfd, pid_t **pids, size_t *n, qp_error **err);
/* kill(SIG) every pid of the list; ESRCH is not an error. */
int qp_cg_kill_list(const pid_t *pids, size_t n, int sig, qp_error **err);
/* Poll every 10 ms, up to timeout_ms, until FILE holds WANT (KEY == NULL)
 * or has the line "KEY WANT". */
bool qp_cg_wait_for(int dirfd, const char *file, const char *key, const char *want,
		    int timeout_ms);

#endif
