/* runtime/container/driver.c — the container pod driver (struct pod_driver):
 * clone the child into new namespaces, give it its uid maps and cgroup,
 * and drive it through created -> running -> stopped. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <linux/sched.h> /* clone3: struct clone_args, CLONE_INTO_CGROUP */
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "host/caps.h"
#include "host/cgroup/cgroup.h"
#include "spec/resources.h"
#include "host/console.h"
#include "container/container.h"
#include "container/mounts.h"
#include "container/seccomp.h"
#include "container/sync.h"
#include "hooks.h"
#include "net/net.h"
#include "pod.h"
#include "util/log.h"
#include "util/cleanup.h"
#include "util/timeline.h"

#define CHILD_STACK (256 * 1024)
#define SETUP_TIMEOUT_MS 30000

static int write_idmap(pid_t pid, const char *file, const struct qp_idmap *m, size_t n,
		       qp_error **err)
{
	char path[64], buf[4096];
	size_t len = 0;
	_cleanup_close_ int fd = -1;

	for (size_t i = 0; i < n && len < sizeof(buf); i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%u %u %u\n", m[i].container_id,
					m[i].host_id, m[i].size);
	if (len >= sizeof(buf))
		return qp_error_set(err, QP_E_INVALID, 0, "%s: too many mappings", file);
	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, buf, len) != (ssize_t)len)
		return qp_fail(err, errno, "write %s", file);
	return 0;
}

/* The host id that id 0 in the pod maps to (0 if unmapped: root stays root). */
static uint32_t host_id_of_root(const struct qp_idmap *m, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (m[i].container_id == 0 && m[i].size > 0)
			return m[i].host_id;
	return 0;
}

static bool wants_limits(const struct qp_resources *r)
{
	return r->n_unified || r->has_memory_limit || r->has_memory_swap || r->has_memory_reservation ||
	       r->has_memory_swappiness || r->memory_disable_oom_killer || r->has_cpu_shares || r->has_cpu_quota ||
	       r->has_cpu_period || r->cpuset_cpus || r->cpuset_mems || r->has_pids_limit ||
	       spec_resources_has_blkio(r);
}

/* The pod's child.  On cgroup v2, clone3 puts it straight into the pod
 * cgroup (CLONE_INTO_CGROUP: no cgroup.procs write, so no wait for the
 * kernel's global threadgroup lock), and the child goes on fork-like, on a
 * copy of this stack.  Otherwise (v1, or a kernel without clone3's cgroup,
 * before 5.7) clone() on the child's own stack, and the child moves itself
 * in through ctx->cg_entry. */
static pid_t clone_child(int flags, struct qp_child_ctx *ctx)
{
	const struct qp_cgroup_entry *e = ctx->cg_entry;

	if (e && e->dir_fd >= 0) {
		struct clone_args a = { .flags = (uint64_t)flags | CLONE_INTO_CGROUP,
					.exit_signal = SIGCHLD, .cgroup = (uint64_t)e->dir_fd };
		void *stack = ctx->stack;
		ctx->cg_entry = NULL; /* in already */
		ctx->stack = NULL;    /* still on this stack (for ASan) */
		long pid = syscall(SYS_clone3, &a, sizeof(a));
		if (pid == 0)
			_exit(qp_container_child(ctx));
		ctx->cg_entry = e;
		ctx->stack = stack;
		if (pid > 0) {
			qp_debug("pod process %ld cloned into its cgroup (CLONE_INTO_CGROUP)", pid);
			return (pid_t)pid;
		}
		qp_debug("clone3 into the cgroup: %s; clone() and cgroup.procs instead", strerror(errno));
		if (errno != ENOSYS && errno != E2BIG && errno != EINVAL && errno != EOPNOTSUPP)
			return -1;
	}
	return clone(qp_container_child, (char *)ctx->stack + ctx->stack_size, flags | SIGCHLD, ctx);
}

/* An unprivileged writer of gid_map must first give up setgroups(2). */
static int deny_setgroups_if_unprivileged(pid_t pid, qp_error **err)
{
	char path[64];
	_cleanup_close_ int fd = -1;

	if (geteuid() == 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/setgroups", (int)pid);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, "deny", 4) != 4)
		return qp_fail(err, errno, "write setgroups");
	return 0;
}

static int clone_flags(const struct pod_spec *spec, qp_error **err)
{
	static const int flag[QP_NS_COUNT] = {
		[QP_NS_USER] = CLONE_NEWUSER, [QP_NS_PID] = CLONE_NEWPID,
		[QP_NS_NET] = CLONE_NEWNET,   [QP_NS_IPC] = CLONE_NEWIPC,
		[QP_NS_UTS] = CLONE_NEWUTS,   [QP_NS_MOUNT] = CLONE_NEWNS,
	};
	int flags = 0;

	for (int i = 0; i < QP_NS_COUNT; i++)
		if (spec->ns[i].enabled && !spec->ns[i].path)
			flags |= flag[i]; /* cgroup: unshared by the child, after joining the cgroup */
	if (spec->opts.net && !strcmp(spec->opts.net, "bridge") && !(flags & CLONE_NEWNET))
		return qp_error_set(err, QP_E_INVALID, 0,
				    "qpod.net=bridge needs a new network namespace (linux.namespaces)");
	/* without a mount namespace (runc's behaviour) the rootfs is built in
	 * ours, on a private bind of the rootfs that delete detaches
	 * (qp_mounts_unbuild): mounts.c, qp_mounts_prepare */
	return flags;
}

/* Namespaces the clone cannot create or join itself, entered "for
 * children" around it: the parent goes in, clones, and comes back.
 *   pid, by path (CRI's shareProcessNamespace: the sandbox's): setns only
 *     changes where our next child is born;
 *   time, new: unshare(CLONE_NEWTIME) also only affects our children, and
 *     the offsets (linux.timeOffsets) must be written before one enters;
 *   time, by path: setns moves us too, until we come back.
 * back[] holds our own namespaces to return to (-1: none entered). */
static int enter_for_clone(const struct pod_spec *spec, enum qp_ns ns, int *back, qp_error **err)
{
	const bool is_time = ns == QP_NS_TIME;
	const char *path = spec->ns[ns].path, *kind = is_time ? "time" : "pid";
	const int type = is_time ? CLONE_NEWTIME : CLONE_NEWPID;
	_cleanup_close_ int fd = -1;
	char own[48];

	*back = -1;
	if (!spec->ns[ns].enabled || (!path && !is_time))
		return 0;
	if (path && (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return qp_fail(err, errno, "open %s namespace \"%s\"", kind, path);
	snprintf(own, sizeof(own), "/proc/self/ns/%s_for_children", kind);
	if ((*back = open(own, O_RDONLY | O_CLOEXEC)) < 0)
		return qp_fail(err, errno == ENOENT && is_time ? ENOSYS : errno,
			       "open our %s namespace (time namespaces need Linux 5.6)", kind);
	if (path ? setns(fd, type) < 0 : unshare(type) < 0) {
		int e = errno;
		close(*back);
		*back = -1;
		return path ? qp_fail(err, e, "join %s namespace \"%s\"", kind, path)
			    : qp_fail(err, e, "create a time namespace");
	}
	if (is_time && !path) {
		/* clock ids, as the kernel reads them: CLOCK_MONOTONIC 1, CLOCK_BOOTTIME 7 */
		static const int clock_id[QP_TIME_COUNT] = { [QP_TIME_MONOTONIC] = CLOCK_MONOTONIC,
							     [QP_TIME_BOOTTIME] = CLOCK_BOOTTIME };
		char text[128];
		size_t len = 0;
		for (int c = 0; c < QP_TIME_COUNT; c++)
			if (spec->time_offsets[c].set)
				len += (size_t)snprintf(text + len, sizeof(text) - len, "%d %lld %u\n", clock_id[c],
							(long long)spec->time_offsets[c].secs,
							spec->time_offsets[c].nanosecs);
		_cleanup_close_ int ofd = len ? open("/proc/self/timens_offsets", O_WRONLY | O_CLOEXEC) : -1;
		if (len && (ofd < 0 || write(ofd, text, len) != (ssize_t)len)) {
			int e = errno;
			if (setns(*back, type) < 0)
				qp_warn("cannot return to our time namespace: %s", strerror(errno));
			close(*back);
			*back = -1;
			return qp_fail(err, e, "linux.timeOffsets: write timens_offsets");
		}
	}
	return 0;
}

static void leave_for_clone(int *back, enum qp_ns ns)
{
	if (*back >= 0) {
		if (setns(*back, ns == QP_NS_TIME ? CLONE_NEWTIME : CLONE_NEWPID) < 0)
			qp_warn("cannot return to our %s namespace: %s", qp_ns_name(ns), strerror(errno));
		close(*back);
		*back = -1;
	}
}

static int make_fifo(struct pod *pod, qp_error **err)
{
	int fd;

	if (mkfifoat(pod->dirfd, QP_EXEC_FIFO, 0600) < 0)
		return qp_fail(err, errno, "create exec.fifo");
	fd = openat(pod->dirfd, QP_EXEC_FIFO, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return qp_fail(err, errno, "open exec.fifo");
	return fd;
}

/* The child's namespaces and mounts exist, pivot_root is next: prestart,
 * then createRuntime, here in the runtime namespace (runc's procHooks). */
static int run_create_hooks(struct pod *pod, pid_t pid, int sync_fd, qp_error **err)
{
	if (pod_hooks_create_runtime(pod, pid, err) < 0)
		return -1;
	if (qp_sync_send(sync_fd, QP_SYNC_HOOKS_DONE, NULL) < 0)
		return qp_fail(err, errno, "signal the pod process");
	return 0;
}

static int ct_create(struct pod *pod, qp_error **err)
{
	const struct pod_spec *spec = pod->spec;
	struct qp_child_ctx ctx = { .spec = spec, .id = pod->id, .rootfs = pod->rootfs,
				    .bundle = pod->bundle ? pod->bundle : pod->rootfs,
				    .preserve_fds = pod->io.preserve_fds, .no_pivot = pod->io.no_pivot,
				    .no_new_keyring = pod->io.no_new_keyring };
	/* the child runs the createContainer hooks before it reports */
	int setup_ms = qp_hooks_wait_ms(spec, QP_HOOK_CREATE_CONTAINER, SETUP_TIMEOUT_MS);
	struct qp_cgroup *cg = NULL;
	struct qp_cgroup_entry entry = QP_CGROUP_ENTRY_INIT;
	_cleanup_close_ int fifo = -1;
	int sv[2] = { -1, -1 };
	void *stack = MAP_FAILED;
	pid_t pid = -1;
	struct qp_sync_msg m;
	int flags, r;
	struct qp_net_config net;
	const char *ip = NULL;
	bool attached = false;

	if (spec->process.terminal && !pod->io.console_socket && !pod->io.tty_stdin)
		return qp_error_set(err, QP_E_INVALID, 0,
				    "process.terminal is true but no --console-socket was given");
	if (qp_caps_validate(&spec->process.caps, err) < 0 ||
	    qp_rlimits_validate(spec->process.rlimits, spec->process.n_rlimits, err) < 0 ||
	    qp_seccomp_validate(spec->seccomp, err) < 0)
		return -1;
	if ((flags = clone_flags(spec, err)) < 0)
		return -1;
	if (pod_net_config(pod, &net, &ip) && qp_net_config_validate(&net, err) < 0)
		return -1;
	ctx.new_userns = flags & CLONE_NEWUSER;
	if (qp_process_check_host(spec, ctx.new_userns, err) < 0)
		return -1;

	if ((fifo = make_fifo(pod, err)) < 0)
		return -1;
	/* in a user namespace the pod's root is another host uid: it must
	 * still be able to open the fifo that `start` releases */
	if (ctx.new_userns &&
	    fchownat(pod->dirfd, QP_EXEC_FIFO, host_id_of_root(spec->uid_mappings, spec->n_uid_mappings),
		     host_id_of_root(spec->gid_mappings, spec->n_gid_mappings), 0) < 0) {
		qp_fail(err, errno, "chown exec.fifo");
		unlinkat(pod->dirfd, QP_EXEC_FIFO, 0);
		return -1;
	}
	if (qp_cgroup_create_for_pod(pod, &spec->resources, wants_limits(&spec->resources), &cg, err) < 0) {
		unlinkat(pod->dirfd, QP_EXEC_FIFO, 0);
		return -1;
	}
	/* the child moves itself in, before it waits for GO */
	if (cg && qp_cgroup_entry_open(cg, &entry, err) < 0)
		goto fail;
	ctx.cg_entry = cg ? &entry : NULL;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		qp_fail(err, errno, "socketpair");
		goto fail;
	}
	stack = mmap(NULL, CHILD_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK,
		     -1, 0);
	if (stack == MAP_FAILED) {
		qp_fail(err, errno, "allocate the child stack");
		goto fail;
	}
	ctx.sync_fd = sv[1];
	ctx.fifo_fd = fifo;
	int pidns_back, timens_back = -1;
	if (enter_for_clone(spec, QP_NS_PID, &pidns_back, err) < 0)
		goto fail;
	if (enter_for_clone(spec, QP_NS_TIME, &timens_back, err) < 0) {
		leave_for_clone(&pidns_back, QP_NS_PID);
		goto fail;
	}
	ctx.stack = stack;
	ctx.stack_size = CHILD_STACK;
	pid = clone_child(flags, &ctx);
	int clone_errno = errno;
	leave_for_clone(&timens_back, QP_NS_TIME);
	leave_for_clone(&pidns_back, QP_NS_PID);
	if (pid < 0) {
		qp_fail(err, clone_errno, "clone the pod process");
		goto fail;
	}
	pod->building = true;
	close(sv[1]);
	sv[1] = -1;
	qp_cgroup_entry_close(&entry);

	if (ctx.new_userns &&
	    (deny_setgroups_if_unprivileged(pid, err) < 0 ||
	     write_idmap(pid, "gid_map", spec->gid_mappings, spec->n_gid_mappings, err) < 0 ||
	     write_idmap(pid, "uid_map", spec->uid_mappings, spec->n_uid_mappings, err) < 0))
		goto fail;
	if (pod_net_config(pod, &net, &ip)) {
		struct qp_net_lease lease;
		if (qp_net_attach_veth(&net, pod->id, pid, ip, &lease, err) < 0)
			goto fail;
		attached = true;
	}
	if (qp_sync_send(sv[0], QP_SYNC_GO, NULL) < 0) {
		qp_fail(err, errno, "signal the pod process");
		goto fail;
	}
	for (;;) {
		int console = -1;
		r = qp_sync_recv_fd(sv[0], &m, setup_ms, &console);
		if (r <= 0 || (m.type != QP_SYNC_CONSOLE && m.type != QP_SYNC_HOOKS))
			break;
		if (m.type == QP_SYNC_HOOKS) {
			if (run_create_hooks(pod, pid, sv[0], err) < 0)
				goto fail;
			continue;
		}
		if (console < 0)
			r = qp_error_set(err, QP_E_GENERIC, 0, "no console fd received");
		else if (!pod->io.console_socket) /* run -t: the relay takes it */
			r = qp_tty_relay_start(&pod->tty, steal_fd(&console), err);
		else
			r = qp_console_send(pod->io.console_socket, console, err);
		if (console >= 0)
			close(console);
		if (r < 0)
			goto fail;
	}
	if (r <= 0) {
		if (r == 0)
			qp_error_set(err, QP_E_GENERIC, 0, "the pod process died during setup");
		else
			qp_fail(err, errno, "wait for the pod process");
		goto fail;
	}
	if (m.type == QP_SYNC_ERROR) {
		qp_error_set(err, m.code ? m.code : QP_E_GENERIC, 0, "%s", m.msg);
		if (*err)
			(*err)->errnum = m.errnum;
		goto fail;
	}
	munmap(stack, CHILD_STACK);
	pod->state->pid = pid;
	pod->state->pid_start = proc_start_time(pid);
	pod->sync_fd = sv[0];
	qp_cgroup_free(cg);
	return 0;

fail:
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	if (attached)
		qp_net_detach(&net, pod->id, NULL);
	if (cg) {
		qp_cgroup_destroy(cg, NULL);
		qp_cgroup_free(cg);
	}
	qp_cgroup_entry_close(&entry);
	qp_mounts_unbuild(spec, pod->rootfs);
	if (stack != MAP_FAILED)
		munmap(stack, CHILD_STACK);
	if (sv[0] >= 0)
		close(sv[0]);
	if (sv[1] >= 0)
		close(sv[1]);
	unlinkat(pod->dirfd, QP_EXEC_FIFO, 0);
	return -1;
}

/* timeline.json of a start by this process (create and start in one
 * `qpod run`): prepare, namespaces (create), workload (start); errors are
 * ignored, it is a report */
static void save_timeline(struct pod *pod)
{
	long long t = qp_now_ns();
	_cleanup_free_ char *text = NULL;
	size_t len;

	if (!pod->t_created || !qp_request_ns)
		return;
	const struct qp_phase ph[] = {
		{ "prepare", qp_ms_between(qp_request_ns, pod->t_create) },
		{ "namespaces", qp_ms_between(pod->t_create, pod->t_created) },
		{ "workload", qp_ms_between(pod->t_created, t) },
		{ "start_total", qp_ms_between(qp_request_ns, t) },
	};
	if (qp_timeline_json(ph, 4, &text, &len) == 0)
		state_write_file(pod->dirfd, QP_TIMELINE_FILE, text, len, NULL);
}

static int ct_start(struct pod *pod, qp_error **err)
{
	_cleanup_close_ int fd = -1;
	struct pollfd p;
	char c;

	fd = openat(pod->dirfd, QP_EXEC_FIFO, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return qp_fail(err, errno, "open exec.fifo");
	p = (struct pollfd){ .fd = fd, .events = POLLIN };
	if (poll(&p, 1, SETUP_TIMEOUT_MS) <= 0 || read(fd, &c, 1) != 1)
		return qp_error_set(err, QP_E_STATE, 0, "the pod process is gone");
	unlinkat(pod->dirfd, QP_EXEC_FIFO, 0);

	/* learn whether the workload exec'd: from the sync socket if we
	 * created the pod, else from the fifo the child still holds (sync.h);
	 * the startContainer hooks run in between */
	struct qp_sync_msg m;
	int wait_ms = qp_hooks_wait_ms(pod->spec, QP_HOOK_START_CONTAINER, SETUP_TIMEOUT_MS);
	int r = pod->sync_fd >= 0 ? qp_sync_recv(pod->sync_fd, &m, wait_ms)
				  : qp_sync_read(fd, &m, wait_ms);
	if (pod->sync_fd >= 0)
		close(pod->sync_fd);
	pod->sync_fd = -1;
	if (r < 0)
		return qp_fail(err, errno, "wait for the workload to start");
	if (r > 0 && (m.type == QP_SYNC_ERROR || m.type == QP_SYNC_EXEC_FAILED)) {
		qp_error_set(err, m.code ? m.code : QP_E_GENERIC, 0, "%s", m.msg);
		if (*err)
			(*err)->errnum = m.errnum;
		return -1;
	}
	save_timeline(pod);
	return 0;
}

static enum qp_status ct_status(struct pod *pod)
{
	if (!state_pid_alive(pod->state))
		return QP_STATUS_STOPPED;
	if (qp_container_frozen(pod))
		return QP_STATUS_PAUSED;
	if (faccessat(pod->dirfd, QP_EXEC_FIFO, F_OK, 0) == 0)
		return QP_STATUS_CREATED;
	return QP_STATUS_RUNNING;
}

static int open_cgroup(struct pod *pod, struct qp_cgroup **cg, qp_error **err)
{
	if (!pod->state->cgroup)
		return qp_error_set(err, QP_E_STATE, 0, "pod has no cgroup");
	return qp_cgroup_open(pod->state->cgroup, cg, err);
}

static int ct_kill(struct pod *pod, int sig, int all, qp_error **err)
{
	if (all) {
		struct qp_cgroup *cg = NULL;
		int r = open_cgroup(pod, &cg, err);
		if (r == 0)
			r = qp_cgroup_signal_all(cg, sig, err);
		qp_cgroup_free(cg);
		return r;
	}
	if (!state_pid_alive(pod->state))
		return qp_error_set(err, QP_E_STATE, 0, "pod \"%s\" is not running", pod->id);
	_cleanup_close_ int pidfd = (int)syscall(SYS_pidfd_open, pod->state->pid, 0);
	if (faccessat(pod->dirfd, QP_EXEC_FIFO, F_OK, 0) != 0)
		qp_signal_grace(pod->state->pid, sig); /* started: the workload itself */
	/* pidfd: the signal reaches exactly the process we checked, never a
	 * recycled PID */
	if (pidfd >= 0 && state_pid_alive(pod->state)) {
		if (syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0) < 0)
			return qp_fail(err, errno, "send signal %d", sig);
		return 0;
	}
	if (kill(pod->state->pid, sig) < 0)
		return qp_fail(err, errno, "send signal %d", sig);
	return 0;
}

static int ct_destroy(struct pod *pod, qp_error **err)
{
	struct qp_cgroup *cg = NULL;
	int r = 0;

	if (state_pid_alive(pod->state))
		kill(pod->state->pid, SIGKILL);
	if (pod->state->cgroup && qp_cgroup_open(pod->state->cgroup, &cg, NULL) == 0) {
		pid_t *pids = NULL;
		size_t n = 0;
		/* freezing and signalling an empty cgroup is wasted time on the
		 * `run --rm` path; destroy still kills what a race let in */
		if (qp_cgroup_pids(cg, &pids, &n, NULL) < 0 || n > 0)
			qp_cgroup_signal_all(cg, SIGKILL, NULL);
		free(pids);
		r = qp_cgroup_destroy(cg, err);
		qp_cgroup_free(cg);
	}
	/* wait (bounded) until the init is gone, so nothing outlives delete */
	for (int i = 0; i < 200 && state_pid_alive(pod->state); i++) {
		waitpid(pod->state->pid, NULL, WNOHANG);
		usleep(5000);
	}
	qp_mounts_unbuild(pod->spec, pod->rootfs);
	struct qp_net_config net;
	if (pod_net_config(pod, &net, NULL) && qp_net_detach(&net, pod->id, r < 0 ? NULL : err) < 0)
		r = -1;
	return r;
}

static int ct_wait_fd(struct pod *pod, qp_error **err)
{
	if (pod->wait_fd < 0) {
		pod->wait_fd = (int)syscall(SYS_pidfd_open, pod->state->pid, 0);
		if (pod->wait_fd < 0)
			return qp_fail(err, errno, "pidfd_open");
	}
	return pod->wait_fd;
}

static int ct_reap(struct pod *pod, int *code, qp_error **err)
{
	int status;

	if (waitpid(pod->state->pid, &status, 0) < 0)
		return qp_fail(err, errno, "wait for the pod");
	*code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	return 0;
}

static int ct_pids(struct pod *pod, pid_t **pids, size_t *n, qp_error **err)
{
	struct qp_cgroup *cg = NULL;
	int r = open_cgroup(pod, &cg, err);

	if (r == 0)
		r = qp_cgroup_pids(cg, pids, n, err);
	qp_cgroup_free(cg);
	return r;
}

int qp_container_exec(struct pod *pod, const struct qp_process *proc, int *status, qp_error **err);

static int ct_accel(enum qp_accel want, const char **name, qp_error **err)
{
	*name = "none"; /* the host's CPU, no VMM */
	return 0;
}

const struct pod_driver qp_container_driver = {
	.name = "container",
	.create = ct_create,
	.start = ct_start,
	.status = ct_status,
	.kill = ct_kill,
	.destroy = ct_destroy,
	.wait_fd = ct_wait_fd,
	.reap = ct_reap,
	.exec = qp_container_exec,
	.pids = ct_pids,
	.pause = qp_container_pause,
	.resume = qp_container_resume,
	.update = qp_container_update,
	.stats = qp_container_stats,
	.mem = qp_container_mem,
	.accel = ct_accel,
	.replace = NULL, /* cold: delete, create */
	.features = qp_container_features,
};
