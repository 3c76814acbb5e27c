/* runtime/container/exec.c — `qpod exec` for container pods: join the pod's
 * namespaces and cgroup, then fork (so the pid namespace applies) and run
 * the process with the same privilege drop and seccomp as the workload. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/close_range.h>
#include <sys/syscall.h>

#include "host/caps.h"
#include "host/cgroup/cgroup.h"
#include "host/console.h"
#include "host/tty_relay.h"
#include "container/container.h"
#include "container/seccomp.h"
#include "container/sync.h"
#include "pod.h"
#include "util/cleanup.h"
#include "util/safepath.h"

static const struct {
	const char *file;
	int type;
} ns_order[] = {
	/* user first: it grants the rights to join the others */
	{ "user", CLONE_NEWUSER }, { "ipc", CLONE_NEWIPC }, { "uts", CLONE_NEWUTS },
	{ "net", CLONE_NEWNET },   { "pid", CLONE_NEWPID }, { "cgroup", CLONE_NEWCGROUP },
	{ "time", CLONE_NEWTIME },
	{ "mnt", CLONE_NEWNS },
};

/* Open the pod's namespace fds first (all from the same live pid), then
 * join the ones that differ from ours. */
static int join_pod(pid_t pid, qp_error **err)
{
	int fds[QP_ARRAY_SIZE(ns_order)];
	int r = 0;

	for (size_t i = 0; i < QP_ARRAY_SIZE(ns_order); i++) {
		char path[64], mine[64];
		struct stat a, b;
		snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)pid, ns_order[i].file);
		snprintf(mine, sizeof(mine), "/proc/self/ns/%s", ns_order[i].file);
		fds[i] = -1;
		if (stat(path, &a) == 0 && stat(mine, &b) == 0 && a.st_ino == b.st_ino)
			continue; /* shared with the host: nothing to join */
		fds[i] = open(path, O_RDONLY | O_CLOEXEC);
		if (fds[i] < 0 && errno != ENOENT) {
			r = qp_fail(err, errno, "open %s namespace of the pod", ns_order[i].file);
			break;
		}
	}
	for (size_t i = 0; r == 0 && i < QP_ARRAY_SIZE(ns_order); i++)
		if (fds[i] >= 0 && setns(fds[i], ns_order[i].type) < 0)
			r = qp_fail(err, errno, "join the pod's %s namespace", ns_order[i].file);
	/* a pod without a mount namespace of its own is chroot()ed in ours:
	 * its root is where the setns would have put us */
	if (r == 0 && fds[QP_ARRAY_SIZE(ns_order) - 1] < 0) {
		char root[64];
		snprintf(root, sizeof(root), "/proc/%d/root", (int)pid);
		if (chroot(root) < 0 || chdir("/") < 0)
			r = qp_fail(err, errno, "enter the pod's root");
	}
	for (size_t i = 0; i < QP_ARRAY_SIZE(ns_order); i++)
		if (fds[i] >= 0)
			close(fds[i]);
	return r;
}

static void exec_child(const struct pod_spec *spec, const struct qp_process *proc, int syncfd,
		       int console_sock)
{
	qp_error *err = NULL;
	char exe[4096];
	_cleanup_close_ int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	_cleanup_close_ int cwd = -1;

	if (root < 0) {
		qp_fail(&err, errno, "open /");
		goto fail;
	}
	cwd = qp_open_in_root(root, proc->cwd ? proc->cwd : "/", QP_PATH_EXISTING, O_DIRECTORY, &err);
	if (cwd < 0 || fchdir(cwd) < 0) {
		if (cwd >= 0)
			qp_fail(&err, errno, "chdir");
		goto fail;
	}
	if (console_sock >= 0) {
		/* the pty is made in the pod's devpts (we are in its mount
		 * namespace); its slave becomes stdio, the master goes out */
		int master, r;
		if (qp_console_setup(&master, &err) < 0)
			goto fail;
		r = qp_console_send_fd(console_sock, master, &err);
		close(master);
		if (r < 0)
			goto fail;
	}
	/* nothing of the caller's but stdio reaches the process */
	syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC);
	if (qp_find_executable(proc->args[0], proc->env, exe, sizeof(exe)) < 0) {
		qp_exec_lookup_error(proc->args[0], errno, &err);
		goto fail;
	}
	if (qp_rlimits_apply(proc->rlimits, proc->n_rlimits, &err) < 0 ||
	    qp_process_lockdown(proc, spec->seccomp, &err) < 0)
		goto fail;
	if (console_sock >= 0)
		qp_console_make_controlling();
	execve(exe, proc->args, proc->env);
	qp_error_set(&err, QP_E_EXEC, errno, "exec \"%s\"", proc->args[0]);
fail:
	qp_sync_send(syncfd, QP_SYNC_EXEC_FAILED, err);
	_exit(err && err->code == QP_E_EXEC ? (err->errnum == ENOENT ? 127 : 126) : 125);
}

int qp_container_exec(struct pod *pod, const struct qp_process *proc, int *status, qp_error **err)
{
	struct qp_cgroup *cg = NULL;
	/* -t without a console socket: the master comes back on own[0] and
	 * is relayed to our terminal (exec -t of a person at one) */
	_cleanup_close_ int own0 = -1, own1 = -1;
	int sv[2];
	pid_t child;
	int st, r;
	struct qp_sync_msg m;

	if (pod->drv->status(pod) != QP_STATUS_RUNNING)
		return qp_error_set(err, QP_E_STATE, 0, "pod \"%s\" is not running", pod->id);
	if (proc->terminal && !pod->io.console_socket) {
		int own[2];
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, own) < 0)
			return qp_fail(err, errno, "socketpair");
		own0 = own[0];
		own1 = own[1];
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return qp_fail(err, errno, "socketpair");
	child = fork();
	if (child < 0) {
		close(sv[0]);
		close(sv[1]);
		return qp_fail(err, errno, "fork");
	}
	if (child == 0) {
		qp_error *e = NULL;
		close(sv[0]);
		prctl(PR_SET_DUMPABLE, 0);
		if (pod->io.foreground)
			prctl(PR_SET_PDEATHSIG, SIGKILL);
		int console = own1;
		/* the console socket is a host path: connect before entering the pod */
		if (proc->terminal && pod->io.console_socket &&
		    (console = qp_console_connect(pod->io.console_socket, &e)) < 0) {
			qp_sync_send(sv[1], QP_SYNC_EXEC_FAILED, e);
			_exit(125);
		}
		/* single-threaded: moves itself in without the global lock */
		struct qp_cgroup_entry entry = QP_CGROUP_ENTRY_INIT;
		if ((pod->state->cgroup && qp_cgroup_open(pod->state->cgroup, &cg, &e) == 0 &&
		     (qp_cgroup_entry_open(cg, &entry, &e) < 0 || qp_cgroup_entry_use(&entry, &e) < 0)) ||
		    join_pod(pod->state->pid, &e) < 0) {
			qp_sync_send(sv[1], QP_SYNC_EXEC_FAILED, e);
			_exit(125);
		}
		qp_cgroup_entry_close(&entry);
		/* the pid namespace applies to children: fork once more */
		pid_t inner = fork();
		if (inner < 0)
			_exit(125);
		if (inner == 0)
			exec_child(pod->spec, proc, sv[1], console);
		if (console >= 0)
			close(console);
		/* its host pid (fork answers in our own, the host's, namespace) */
		qp_error pidmsg = { .code = (int)inner };
		qp_sync_send(sv[1], QP_SYNC_READY, &pidmsg);
		close(sv[1]);
		if (!pod->io.foreground)
			_exit(0); /* detached: the pod's init adopts and reaps it */
		/* relay the inner child's status */
		if (waitpid(inner, &st, 0) < 0)
			_exit(125);
		if (WIFSIGNALED(st))
			_exit(128 + WTERMSIG(st));
		_exit(WEXITSTATUS(st));
	}
	close(sv[1]);
	if (own1 >= 0)
		close(steal_fd(&own1));
	pid_t inner = 0;
	/* READY (the pid), then EOF once it exec'd, or EXEC_FAILED */
	while ((r = qp_sync_recv(sv[0], &m, -1)) > 0 && m.type == QP_SYNC_READY)
		inner = m.code;
	close(sv[0]);
	if (r > 0 && m.type == QP_SYNC_EXEC_FAILED) {
		waitpid(child, &st, 0);
		qp_error_set(err, m.code ? m.code : QP_E_GENERIC, 0, "%s", m.msg);
		if (*err)
			(*err)->errnum = m.errnum;
		return -1;
	}
	if (!pod->io.foreground) {
		waitpid(child, &st, 0);
		if (inner <= 0)
			return qp_error_set(err, QP_E_GENERIC, 0, "exec: the process did not start");
		if (pod->io.pid_file && pod_write_pid_file(pod->io.pid_file, inner, err) < 0)
			return -1;
		*status = 0;
		return 0;
	}
	/* running: the pod's lock is not held for the exec's life, or a
	 * delete --force would wait for its end (the exec dies with the pod) */
	flock(pod->dirfd, LOCK_UN);
	if (own0 >= 0 && qp_tty_relay_own(&pod->tty, own0, child, err) < 0) {
		kill(child, SIGKILL);
		waitpid(child, &st, 0);
		return -1;
	}
	if (waitpid(child, &st, 0) < 0)
		return qp_fail(err, errno, "wait for exec");
	*status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	return 0;
}
