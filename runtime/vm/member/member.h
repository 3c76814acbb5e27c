/* runtime/vm/member/member.h — one VM per pod: the containers created into
 * a vm pod's VM after it (a CRI sandbox's containers, podman's pod, `qpod
 * run --pod`).  Each is a pod of qpod's own (state, ID, lifecycle) whose
 * workload runs in its pod's guest (protocol.h, EXEC with CONTAINER); its
 * pid is a host process, the keeper, that lives exactly as long as the
 * container and exits with its status (docs/DECISIONS.md, "One VM per
 * pod").
 *
 * The pod share: a directory of the sandbox's state dir, POD_SHARE_DIR,
 * shared with the guest (9p) and bound read-only into QEMU's jail (or, for
 * a sandbox that took a spare, the spare's share, which POD_SHARE_DIR
 * links to); each
 * container gets POD_SHARE_DIR/ID/ with root/ (its rootfs bound there in
 * QEMU's mount namespace), mN/ (its directory binds) and fN/NAME (copies
 * of its file binds). */
#ifndef QPOD_VM_MEMBER_H
#define QPOD_VM_MEMBER_H

#include "pod.h"
#include "vm/vm.h"

#define VM_POD_SHARE_DIR "ctrs"
#define VM_KEEPER_SOCK "keeper.sock"

/* ---- pod_share.c: the sandbox's side ---- */

/* A sandbox's boot: POD_SHARE_DIR made in its state dir, one more share in
 * mm and its podshare RUN entry. */
int vm_pod_share_add(struct vm_mounts *mm, int dirfd, const char *statedir, qp_error **err);
/* A sandbox that took a spare: the spare's own share (root/ bound there)
 * is the pod share; POD_SHARE_DIR in its state dir a symlink to it.  The
 * sandbox's own binds are planned into *mm (empty) in VM_POD_SELF of that
 * share, as a container's are, and bound in QEMU's namespace: a spare has
 * no 9p device for them. */
#define VM_POD_SELF "_pod"
int vm_pod_share_spare(struct vm_mounts *mm, const struct pod_spec *spec, const char *rootfs, int dirfd,
		       pid_t qemu, const char *share, qp_error **err);
/* A name the pod share uses itself (no container's ID may be one). */
bool vm_pod_share_reserved(const char *id);
/* The pod share of the sandbox whose state dir is dirfd (path statedir):
 * its host path into path[size], an fd of it; -1 when it has none. */
int vm_pod_share_open(int dirfd, const char *statedir, char *path, size_t size, qp_error **err);
/* The container id's directory in the sandbox's share (ctrfd), its binds bound in
 * QEMU's namespace (qemu), its file binds copied: plan->mounts as
 * vm_mounts_plan made it (rootfs: the container's, read-only if ro). */
int vm_pod_share_enter(pid_t qemu, const char *share, int ctrfd, const char *id, const char *rootfs,
		       bool ro, const struct vm_mounts *mounts, qp_error **err);
/* ...and all of it gone again, from the share dir sharefd (qemu 0: QEMU is
 * gone, and so are its mounts). */
void vm_pod_share_leave(pid_t qemu, const char *share, int sharefd, const char *id);

/* ---- member_plan.c: the container's spec -> its EXEC ---- */

struct vm_member_plan {
	struct qp_run run;        /* the CONTAINER fields (vm_exec_opts.ctr) */
	struct vm_mounts mounts;  /* its mounts (vm_mounts_plan, member form) */
	char *cgroup[QP_PROTO_MAX_CGROUP + 1];
	size_t ncg;
};
/* What the guest does for the container id of spec in the pod sandbox
 * (its monitor's pid, or podman's infra's (infra_pid, 0: none): the
 * namespaces a path may name); what it cannot do is refused by name.
 * ctrfd: the container's directory in the pod share. */
int vm_member_plan(const struct pod_spec *spec, const char *id, const char *rootfs, const struct pod *sandbox,
		   pid_t infra_pid, int ctrfd, struct vm_member_plan *p, qp_error **err);
void vm_member_plan_free(struct vm_member_plan *p);
/* The cgroup entries of r into p (vm_mib: the VM's RAM, a bound); full:
 * "max" for each limit r does not set (an update). */
int vm_member_limits(const struct qp_resources *r, unsigned long long vm_mib, unsigned vcpus, bool full,
		     struct vm_member_plan *p, qp_error **err);

/* ---- companion.c: podman's pods (its infra container is a container pod) ---- */

#define VM_COMPANION_SUFFIX ".vm"
int vm_companion_id(const char *infra, char *out, size_t size);
/* The running VM that holds the vm containers of podman's pod whose infra
 * container is infra (made at the first one); *out opened, shared lock. */
int vm_companion_open(struct pod *infra, struct pod **out, qp_error **err);
/* The infra container infra was deleted: its companion goes too. */
void vm_companion_delete(int rootfd, const char *root, const char *infra);

/* ---- member_keeper.c: the container's host process ---- */

struct vm_keeper {
	int rootfd;               /* the state root (the sandbox's dir is opened at start) */
	const char *sandbox;
	const struct qp_process *proc;
	const struct qp_run *ctr;
	int listen_fd;            /* VM_KEEPER_SOCK of the container's state dir */
	int tty;                  /* a terminal's slave (-1: none; with process.terminal,
				   * the keeper's own stdio is the terminal: run -t) */
};
/* The keeper, in its forked process: waits for "start", runs the container
 * in the guest and exits with its status (never returns). */
__attribute__((noreturn)) void vm_keeper_main(const struct vm_keeper *k);
/* A request to a container's keeper ("start", "kill N"), its answer. */
int vm_keeper_call(int dirfd, const char *req, int timeout_ms, qp_error **err);

#endif
