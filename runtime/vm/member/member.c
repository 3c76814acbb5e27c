/* runtime/vm/member/member.c — the driver of a container inside a vm pod's
 * VM (member.h): create fills its directory of the pod share and forks its
 * keeper; start, kill and delete go through the keeper; exec joins the
 * container in the guest; stats and update are its cgroup's in the guest.
 * What the guest cannot do for one container alone (pause it) is refused
 * by name. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sys/stat.h>

#include "hooks.h"
#include "host/console.h"
#include "spec/resources.h"
#include "util/cleanup.h"
#include "util/log.h"
#include "util/safepath.h"
#include "vm/member/member.h"
#include "vm/qemu/qemu.h"

#define START_TIMEOUT_MS 60000
#define KILL_TIMEOUT_MS 10000

/* The pod the container goes into: a vm pod made to hold containers,
 * whose VM runs; or podman's infra container, whose companion VM then
 * holds the pod's vm containers (*infra_pid: the infra's pid). */
static int open_sandbox(struct pod *pod, struct pod **sb, pid_t *infra_pid, qp_error **err)
{
	const char *id = pod->spec->opts.in_pod;

	*infra_pid = 0;
	if (pod_open(pod->rootfd, pod->root, id, QP_LOCK_SHARED, sb, err) < 0)
		return qp_error_prefix(err, "the container's pod \"%s\"", id);
	if ((*sb)->state->mode == QP_MODE_CONTAINER && !(*sb)->state->sandbox) {
		struct pod *infra = *sb;
		*infra_pid = infra->state->pid;
		*sb = NULL;
		int r = vm_companion_open(infra, sb, err);
		pod_free(infra);
		if (r < 0)
			return -1;
	}
	if ((*sb)->state->mode != QP_MODE_VM || (*sb)->state->sandbox || !(*sb)->spec->opts.sandbox)
		return qp_error_set(err, QP_E_INVALID, 0, "pod \"%s\" does not hold containers (a vm pod made with "
				    "qpod.sandbox=true, or a CRI sandbox, does)", id);
	if (!state_vmm_alive((*sb)->state) || pod_status(*sb) == QP_STATUS_STOPPED)
		return qp_error_set(err, QP_E_STATE, 0, "pod \"%s\" is not running", (*sb)->id);
	/* the pod this container's state names: its VM's */
	free(pod->state->sandbox);
	if (!(pod->state->sandbox = strdup((*sb)->id)))
		return qp_fail(err, ENOMEM, "create");
	return 0;
}

static int listen_at(int dirfd, qp_error **err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return qp_fail(err, errno, "socket");
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/" VM_KEEPER_SOCK, dirfd);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 16) < 0) {
		int e = errno;
		close(fd);
		return qp_fail(err, e, "the container's keeper socket");
	}
	return fd;
}

static int fork_keeper(struct pod *pod, struct pod *sb, const struct vm_member_plan *plan, int tty, qp_error **err)
{
	_cleanup_close_ int lfd = listen_at(pod->dirfd, err);
	pid_t pid;

	if (lfd < 0)
		return -1;
	if ((pid = fork()) < 0)
		return qp_fail(err, errno, "fork the container's keeper");
	if (pid == 0) {
		struct vm_keeper k = { .rootfd = pod->rootfd, .sandbox = sb->id, .proc = &pod->spec->process,
				       .ctr = &plan->run, .listen_fd = lfd, .tty = tty };
		/* the state dirs' locks stay with create, not with the keeper */
		close(pod->dirfd);
		close(sb->dirfd);
		/* with a terminal the container's stdio is the pty: the keeper
		 * keeps none of create's (a client reads create's output to its
		 * end, as runc's does) */
		if (tty >= 0) {
			int null = open("/dev/null", O_RDWR | O_CLOEXEC);
			for (int fd = 0; null >= 0 && fd < 3; fd++)
				dup2(null, fd);
		}
		vm_keeper_main(&k);
	}
	pod->building = true;
	pod->state->pid = pid;
	pod->state->pid_start = proc_start_time(pid);
	if (pod->io.foreground)
		pod->wait_fd = (int)syscall(SYS_pidfd_open, pid, 0);
	return 0;
}

static int member_destroy(struct pod *pod, qp_error **err);

static int member_create(struct pod *pod, qp_error **err)
{
	_cleanup_close_ int sharefd = -1, ctrfd = -1, master = -1, slave = -1;
	struct vm_member_plan plan = { 0 };
	struct pod *sb = NULL;
	char statedir[PATH_MAX], share[PATH_MAX];
	pid_t infra = 0;
	bool jail;
	int r = -1;

	if (strlen(pod->id) > QP_PROTO_MAX_TAG)
		return qp_error_set(err, QP_E_INVALID, 0, "a container inside a vm pod has an ID of at most %d bytes",
				    QP_PROTO_MAX_TAG);
	if (vm_pod_share_reserved(pod->id))
		return qp_error_set(err, QP_E_INVALID, 0, "\"%s\" is a name the pod's share uses itself: not an ID for "
				    "a container inside a vm pod", pod->id);
	if (pod->io.preserve_fds > 0)
		return qp_error_set(err, QP_E_INVALID, 0, "--preserve-fds is not supported for vm pods "
				    "(host fds cannot reach the guest)");
	if (vm_refuse_guest_hooks(pod->spec, err) < 0 || vm_jail_wanted(&jail, err) < 0)
		return -1;
	if (!jail)
		return qp_error_set(err, QP_E_INVALID, 0, "a container inside a vm pod needs QEMU's jail (qpod as "
				    "root, QPOD_VM_JAIL not off): its rootfs is bound in QEMU's namespace only");
	if (pod->spec->process.terminal && !pod->io.console_socket && !pod->io.tty_stdin)
		return qp_error_set(err, QP_E_INVALID, 0, "process.terminal needs --console-socket");
	if (open_sandbox(pod, &sb, &infra, err) < 0 || qp_fd_realpath(sb->dirfd, statedir, sizeof(statedir), "the pod's state dir", err) < 0)
		goto out;
	free(pod->state->accel);
	if (!(pod->state->accel = strdup(sb->state->accel ? sb->state->accel : "none"))) {
		qp_fail(err, ENOMEM, "create");
		goto out;
	}
	if ((sharefd = vm_pod_share_open(sb->dirfd, statedir, share, sizeof(share), err)) < 0) {
		qp_error_prefix(err, "pod \"%s\"", sb->id);
		goto out;
	}
	vm_pod_share_leave(sb->state->vmm_pid, share, sharefd, pod->id); /* a crashed create's */
	if (mkdirat(sharefd, pod->id, 0755) < 0 ||
	    (ctrfd = openat(sharefd, pod->id, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW)) < 0) {
		qp_fail(err, errno, "the container's directory in the pod share");
		goto out;
	}
	if (vm_member_plan(pod->spec, pod->id, pod->rootfs, sb, infra, ctrfd, &plan, err) < 0 ||
	    vm_pod_share_enter(sb->state->vmm_pid, share, ctrfd, pod->id, pod->rootfs, pod->spec->root_readonly,
			       &plan.mounts, err) < 0)
		goto leave;
	/* a terminal: its master to the console socket now, as runc's; or
	 * (`qpod run -t`) qpod's own terminal, which the keeper inherits */
	if (pod->spec->process.terminal && pod->io.console_socket &&
	    (qp_console_pair(&master, &slave, err) < 0 || qp_console_send(pod->io.console_socket, master, err) < 0))
		goto leave;
	if (fork_keeper(pod, sb, &plan, slave, err) < 0)
		goto leave;
	if (pod_hooks_create_runtime(pod, pod->state->pid, err) < 0) {
		member_destroy(pod, NULL);
		goto out;
	}
	r = 0;
	goto out;
leave:
	vm_pod_share_leave(sb->state->vmm_pid, share, sharefd, pod->id);
out:
	vm_member_plan_free(&plan);
	if (sb)
		pod_free(sb);
	return r;
}

static int member_start(struct pod *pod, qp_error **err)
{
	return vm_keeper_call(pod->dirfd, "start", START_TIMEOUT_MS, err);
}

static enum qp_status member_status(struct pod *pod)
{
	if (!state_pid_alive(pod->state))
		return QP_STATUS_STOPPED;
	return pod->state->status == QP_STATUS_RUNNING ? QP_STATUS_RUNNING : QP_STATUS_CREATED;
}

static int member_kill(struct pod *pod, int sig, int all, qp_error **err)
{
	char req[32];
	qp_error *e = NULL;

	(void)all; /* the container's own processes: its init takes them (its PID namespace or cgroup) */
	if (sig < 1 || sig > QP_PROTO_MAX_SIGNAL)
		return qp_error_set(err, QP_E_INVALID, 0, "signal %d out of range", sig);
	snprintf(req, sizeof(req), "kill %d", sig);
	if (vm_keeper_call(pod->dirfd, req, KILL_TIMEOUT_MS, &e) == 0)
		return 0;
	/* a keeper that does not answer: SIGKILL ends it, and its container
	 * with it (the monitor sees its connection end) */
	if (sig == SIGKILL && state_pid_alive(pod->state) && kill(pod->state->pid, SIGKILL) == 0) {
		qp_error_free(&e);
		return 0;
	}
	if (err)
		*err = e;
	else
		qp_error_free(&e);
	return -1;
}

/* The keeper gone (SIGKILL, its exit awaited), then the container's
 * directory of the pod share, if the pod is still there. */
static int member_destroy(struct pod *pod, qp_error **err)
{
	_cleanup_close_ int sbfd = -1, sharefd = -1, pidfd = -1;
	struct pod_state *sst = NULL;
	char statedir[PATH_MAX], share[PATH_MAX];

	if (state_pid_alive(pod->state) && pod->state->pid != getpid()) {
		pidfd = (int)syscall(SYS_pidfd_open, pod->state->pid, 0);
		kill(pod->state->pid, SIGKILL);
		struct pollfd p = { .fd = pidfd, .events = POLLIN };
		if (pidfd >= 0)
			poll(&p, 1, 5000);
		if (pod->creator || pod->io.foreground)
			waitpid(pod->state->pid, NULL, WNOHANG);
	}
	if (state_pid_alive(pod->state))
		return qp_error_set(err, QP_E_GENERIC, 0, "the container's keeper (pid %d) is still alive",
				    (int)pod->state->pid);
	unlinkat(pod->dirfd, VM_KEEPER_SOCK, 0);
	sbfd = openat(pod->rootfd, pod->state->sandbox, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (sbfd < 0 || qp_fd_realpath(sbfd, statedir, sizeof(statedir), "the pod's state dir", NULL) < 0 ||
	    (sharefd = vm_pod_share_open(sbfd, statedir, share, sizeof(share), NULL)) < 0)
		return 0; /* the pod went first, and its share with it */
	pid_t qemu = state_load(sbfd, &sst, NULL) == 0 && state_vmm_alive(sst) ? sst->vmm_pid : 0;
	state_free(sst);
	vm_pod_share_leave(qemu, share, sharefd, pod->id);
	return 0;
}

static int member_wait_fd(struct pod *pod, qp_error **err)
{
	if (pod->wait_fd < 0)
		return qp_error_set(err, QP_E_STATE, 0, "only the process that created container \"%s\" can wait "
				    "for it", pod->id);
	return pod->wait_fd;
}

static int member_reap(struct pod *pod, int *code, qp_error **err)
{
	int st;

	while (waitpid(pod->state->pid, &st, 0) < 0)
		if (errno != EINTR)
			return qp_fail(err, errno, "wait for the container's keeper");
	*code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	return 0;
}

/* An exec joins the container in the guest (its namespaces and cgroup). */
static int member_exec(struct pod *pod, const struct qp_process *proc, int *status, qp_error **err)
{
	_cleanup_close_ int sbfd = openat(pod->rootfd, pod->state->sandbox, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	struct qp_run join = { .flags = QP_RUN_F_JOIN, .rootfs = QP_ROOTFS_9P_SUBDIR, .rootfs_tag = pod->id };

	if (sbfd < 0)
		return qp_fail(err, errno, "the container's pod \"%s\"", pod->state->sandbox);
	return vm_exec_via(pod, sbfd, &join, proc, status, err);
}

static int member_pids(struct pod *pod, pid_t **pids, size_t *n, qp_error **err)
{
	*n = 0;
	if (!(*pids = calloc(1, sizeof(**pids))))
		return qp_fail(err, ENOMEM, "pids");
	if (state_pid_alive(pod->state))
		(*pids)[(*n)++] = pod->state->pid;
	return 0;
}

static int member_pause(struct pod *pod, qp_error **err)
{
	return qp_error_set(err, QP_E_INVALID, 0, "container \"%s\" runs inside vm pod \"%s\": pause the pod, "
			    "not one of its containers", pod->id, pod->state->sandbox);
}

/* New limits, written in the container's cgroup in the guest; what the
 * guest cannot apply is refused by name (vm_member_limits), as at create. */
static int member_update(struct pod *pod, const struct qp_resources *res, qp_error **err)
{
	struct vm_member_plan p = { 0 };
	struct qp_msg req = { .type = QP_MSG_CTR_UPDATE };
	struct pod *sb = NULL;
	int r = -1;

	if (!spec_resources_changed(&pod->spec->resources, res))
		return 0;
	if (member_status(pod) != QP_STATUS_RUNNING)
		return qp_error_set(err, QP_E_STATE, 0, "container \"%s\" inside vm pod \"%s\" takes new limits once "
				    "it runs (its cgroup in the guest is made at start)", pod->id, pod->state->sandbox);
	if (pod_open(pod->rootfd, pod->root, pod->state->sandbox, QP_LOCK_SHARED, &sb, err) < 0)
		return qp_error_prefix(err, "the container's pod \"%s\"", pod->state->sandbox);
	if (vm_member_limits(res, vm_spec_mem_mib(sb->spec), vm_spec_vcpus(sb->spec), true, &p, err) < 0)
		goto out;
	req.u.ctr_update.name = pod->id;
	req.u.ctr_update.cgroup = (const char *const *)p.cgroup;
	req.u.ctr_update.cgroupc = (uint32_t)p.ncg;
	r = vm_ctl_call(sb->dirfd, &req, NULL, NULL, KILL_TIMEOUT_MS, err);
	if (r < 0)
		qp_error_prefix(err, "the container's limits in the guest");
out:
	vm_member_plan_free(&p);
	pod_free(sb);
	return r;
}

/* The container's cgroup in the guest, through the pod's monitor. */
static int member_stats(struct pod *pod, struct qp_stats *st, qp_error **err)
{
	_cleanup_close_ int sbfd = openat(pod->rootfd, pod->state->sandbox, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	struct qp_msg req = { .type = QP_MSG_CTR_STATS_REQ }, m;
	const uint64_t us = 1000;

	memset(st, 0, sizeof(*st));
	if (member_status(pod) != QP_STATUS_RUNNING)
		return qp_error_set(err, QP_E_STATE, 0, "container \"%s\" is not running", pod->id);
	if (sbfd < 0)
		return qp_fail(err, errno, "the container's pod \"%s\"", pod->state->sandbox);
	req.u.ctr_stats.name = pod->id;
	if (vm_ctl_call(sbfd, &req, &m, NULL, KILL_TIMEOUT_MS, err) < 0)
		return qp_error_prefix(err, "the container's usage in the guest");
	if (!m.u.ctr_stats.found)
		return qp_error_set(err, QP_E_STATE, 0, "container \"%s\" is not running in the guest", pod->id);
	st->has_cpu = true;
	st->cpu_total = m.u.ctr_stats.cpu_usec * us;
	st->cpu_user = m.u.ctr_stats.cpu_user_usec * us;
	st->cpu_kernel = m.u.ctr_stats.cpu_system_usec * us;
	st->has_memory = st->usage.has = true;
	st->usage.usage = m.u.ctr_stats.memory;
	st->usage.limit = m.u.ctr_stats.memory_max ? m.u.ctr_stats.memory_max : UINT64_MAX;
	st->has_pids = true;
	st->pids_current = m.u.ctr_stats.pids;
	st->pids_limit = m.u.ctr_stats.pids_max;
	st->has_oom_kills = true;
	st->oom_kills = m.u.ctr_stats.oom_kills;
	return 0;
}

/* Its memory is its cgroup's in the pod's guest (the VM's own figures
 * are the pod's: qpod stats of the pod). */
static int member_mem(struct pod *pod, struct qp_pod_mem *m, qp_error **err)
{
	struct qp_stats st;

	if (member_stats(pod, &st, err) < 0)
		return -1;
	m->cgroup_usage = (long long)(st.usage.usage / 1024);
	qp_stats_free(&st);
	return 0;
}

static int member_accel(enum qp_accel want, const char **name, qp_error **err)
{
	return qp_vm_driver.accel(want, name, err);
}

const struct pod_driver qp_vm_member_driver = {
	.name = "vm",
	.create = member_create,
	.start = member_start,
	.status = member_status,
	.kill = member_kill,
	.destroy = member_destroy,
	.wait_fd = member_wait_fd,
	.reap = member_reap,
	.exec = member_exec,
	.pids = member_pids,
	.pause = member_pause,
	.resume = member_pause,
	.update = member_update,
	.stats = member_stats,
	.mem = member_mem,
	.accel = member_accel,
};
