/* runtime/state.h — the state directory: one folder per pod under the root
 * (default /run/qpod), holding state.json (what `qpod state` reports plus
 * what the driver needs to find its resources again), config.json (the spec
 * the pod was created from) and driver files (exec.fifo, sockets).
 *
 * Creation is atomic (mkdir): of two concurrent `create` of one ID exactly one
 * wins.  Operations on one pod serialise on flock() of its directory.
 */
#ifndef QPOD_STATE_H
#define QPOD_STATE_H

#include <stdbool.h>
#include <sys/types.h>
#include <yajl/yajl_gen.h>

#include "spec/spec.h"
#include "util/error.h"

#define QP_DEFAULT_ROOT "/run/qpod"
/* in a pod dir: the phases of its start in ms (written by its start) */
#define QP_TIMELINE_FILE "timeline.json"
/* in a pod dir: made first, at the atomic claim: the dir is qpod's own */
#define QP_POD_MARKER ".qpod-pod"
/* in the state root: a pod dir being claimed (state_claim) */
#define QP_CLAIM_PREFIX ".claim-"

enum qp_status {
	QP_STATUS_CREATING = 0,
	QP_STATUS_CREATED,
	QP_STATUS_RUNNING,
	QP_STATUS_STOPPED,
	QP_STATUS_PAUSED,      /* frozen (OCI pause); only from the live system */
};

struct pod_state {
	char *id;
	char *bundle;              /* absolute bundle dir (friendly form: NULL) */
	char *rootfs;              /* absolute rootfs path */
	enum qp_mode mode;
	enum qp_status status;     /* as last recorded; see state_live_status() */
	pid_t pid;                 /* the process whose exit is the pod's exit, as
				    * runc's pid: the workload (container; or its
				    * tiny init) or the pod's monitor (vm); 0 = none */
	unsigned long long pid_start; /* /proc/PID/stat starttime: detects PID reuse */
	pid_t vmm_pid;             /* vm: QEMU, the monitor's child; 0 = none */
	unsigned long long vmm_pid_start;
	char *created;             /* RFC 3339 */
	char *cgroup;              /* cgroup path relative to the hierarchy root */
	char *accel;               /* "kvm", "tcg" or NULL (containers) */
	char *nic;                 /* vm with a NIC: its backend and why
				    * (vm_nic_backend: "vhost-net",
				    * "userspace: TCG", ...); NULL: no NIC */
	char *stop_reason;         /* why it stopped, if known */
	char *owner;               /* "uid" of the creator, for list */
	char *sandbox;             /* a container inside a vm pod's VM: that pod's
				    * ID (vm/member/); NULL = a pod of its own */
	struct qp_kv *annotations; /* copied from the spec */
	size_t n_annotations;
};

/* Reject IDs that are empty, over QP_ID_MAX, ".", "..", or contain '/',
 * control characters or bytes outside printable ASCII [A-Za-z0-9_.+-:@]. */
int state_validate_id(const char *id, qp_error **err);

/* Refuse (QP_E_INVALID) an open file or dir not owned by the caller or
 * writable by group or others; WHAT names it in the error. */
int state_check_private(int fd, const char *what, qp_error **err);
/* Create (mkdir -p, 0700) and open the root directory, which must pass
 * state_check_private. Returns an fd. */
int state_root_open(const char *root, qp_error **err);
/* Atomically claim ID: returns the pod dir fd (locked), or -1 with
 * QP_E_EXISTS if the ID is in use. */
int state_claim(int rootfd, const char *id, qp_error **err);
/* How a pod dir is opened: changers (start, delete) lock it exclusive,
 * readers that act (ps, kill, exec) shared; `state` and `list` take no lock
 * at all (every state file is replaced atomically, so a reader never sees
 * half of one) and so never wait for a slow create or start. */
enum qp_lock { QP_LOCK_SHARED = 0, QP_LOCK_EXCLUSIVE = 1, QP_LOCK_NONE = 2 };
/* Open (and lock, as LOCK says) an existing pod dir; QP_E_NOTFOUND if
 * unknown.  A foreground `run` drops its lock while it waits. */
int state_open(int rootfd, const char *id, int lock, qp_error **err);
/* True if a qpod process holds the pod dir's lock (a create, start or
 * delete under way, or a reader for a moment); false if it is free. */
bool state_lock_busy(int dirfd);
/* (Re)lock an open pod dir; exclusive = false for a shared lock. */
int state_lock(int dirfd, const char *id, bool exclusive, qp_error **err);
/* Remove NAME in parent and everything in it (never into another file
 * system: EXDEV), e.g. a spare's dir (vm/snapshot/spare.c); -1 with errno. */
int state_remove_tree(int parent, const char *name);
/* Remove the pod dir and everything in it. */
/* A QP_CLAIM_PREFIX dir left by a qpod killed mid-claim (unlocked, with
 * qpod's mark): removed; true if it was. */
bool state_remove_stale_claim(int rootfd, const char *name);
int state_remove(int rootfd, const char *id, qp_error **err);

int state_save(int dirfd, const struct pod_state *st, qp_error **err);
/* "key": { annotations }: state.json's, and the OCI state's (oci_state.c) */
void qp_state_put_annotations(yajl_gen g, const char *key, const struct qp_kv *kv, size_t n);
int state_load(int dirfd, struct pod_state **out, qp_error **err);
/* The parser behind state_load: TEXT (NUL-terminated, LEN bytes) -> *out. */
int state_parse(const char *text, size_t len, struct pod_state **out, qp_error **err);
void state_free(struct pod_state *st);

/* Write / read a whole small file in the pod dir (atomic write: tmp+rename). */
int state_write_file(int dirfd, const char *name, const char *data, size_t len, qp_error **err);
int state_read_file(int dirfd, const char *name, size_t max, char **out, size_t *len, qp_error **err);

/* Sorted list of pod IDs (NULL-terminated, caller frees with qp_strv_free). */
int state_list(int rootfd, char ***ids, qp_error **err);

/* Process start time of PID (field 22 of /proc/PID/stat), 0 if gone. */
unsigned long long proc_start_time(pid_t pid);
/* True if PID is alive, not a zombie, and still the process we started. */
bool state_pid_alive(const struct pod_state *st);
/* The same for the VMM (vm pods). */
bool state_vmm_alive(const struct pod_state *st);

const char *qp_status_name(enum qp_status s);

#endif
