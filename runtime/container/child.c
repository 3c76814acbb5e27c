/* runtime/container/child.c — the container child, in order: wait for the
 * parent's GO, join/finish namespaces, build the filesystem, the create
 * hooks (child_hooks.c), pivot_root, hostname, sysctls, loopback, rlimits;
 * report READY; wait on exec.fifo for `start`; drop privileges, load
 * seccomp, the startContainer hooks; then exec the workload, which is
 * the pod's PID 1 as under runc (the pid clients wait on is the workload's),
 * or, with qpod.init=true / `run --init`, become a tiny init
 * (guest-init/tinyinit.c) that forks the workload, reaps zombies and
 * forwards signals.
 *
 * Security reasoning: the child stays non-dumpable until exec so nothing in
 * the pod can open its /proc/PID/{exe,fd,cwd} (CVE-2019-5736 class; qpod
 * also runs from a read-only view of its binary, see util/exe_guard.h); every fd but the
 * sync socket and the fifo is closed before the pod's filesystem exists, and
 * the cwd is resolved inside the root without magic links (CVE-2024-21626).
 */
#include <errno.h>
#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/common_interface_defs.h>
#endif
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/close_range.h>
#include <linux/keyctl.h>
#include <sys/syscall.h>

#include "host/caps.h"
#include "host/cgroup/cgroup.h"
#include "host/console.h"
#include "container/container.h"
#include "container/mounts.h"
#include "container/seccomp.h"
#include "container/sync.h"
#include "guest-init/tinyinit.h"
#include "util/cleanup.h"
#include "util/safepath.h"

/* The sync socket and the fifo sit right above the fds the caller asked
 * to preserve (--preserve-fds N: 3..3+N-1 reach the workload, as runc's). */
static int child_sync_fd = 3, child_fifo_fd = 4;
#define CHILD_SYNC_FD child_sync_fd
#define CHILD_FIFO_FD child_fifo_fd

static int join_namespaces(const struct pod_spec *spec, qp_error **err)
{
	static const int types[QP_NS_COUNT] = {
		[QP_NS_USER] = CLONE_NEWUSER, [QP_NS_PID] = CLONE_NEWPID,
		[QP_NS_NET] = CLONE_NEWNET,   [QP_NS_IPC] = CLONE_NEWIPC,
		[QP_NS_UTS] = CLONE_NEWUTS,   [QP_NS_MOUNT] = CLONE_NEWNS,
		[QP_NS_CGROUP] = CLONE_NEWCGROUP, [QP_NS_TIME] = CLONE_NEWTIME,
	};
	for (int i = 0; i < QP_NS_COUNT; i++) {
		const struct qp_namespace *ns = &spec->ns[i];
		/* pid and time: entered by the parent around the clone (driver.c) */
		if (!ns->enabled || !ns->path || i == QP_NS_PID || i == QP_NS_TIME)
			continue;
		_cleanup_close_ int fd = open(ns->path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return qp_fail(err, errno, "open namespace \"%s\"", ns->path);
		if (setns(fd, types[i]) < 0)
			return qp_fail(err, errno, "join %s namespace \"%s\"", qp_ns_name(i), ns->path);
	}
	return 0;
}

static int loopback_up(qp_error **err)
{
	struct ifreq ifr = { 0 };
	_cleanup_close_ int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (s < 0)
		return qp_fail(err, errno, "socket for lo");
	strcpy(ifr.ifr_name, "lo");
	if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
		return qp_fail(err, errno, "get lo flags");
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
		return qp_fail(err, errno, "bring lo up");
	return 0;
}

static int write_sysctls(const struct pod_spec *spec, qp_error **err)
{
	for (size_t i = 0; i < spec->n_sysctl; i++) {
		const char *k = spec->sysctl[i].key, *v = spec->sysctl[i].value;
		char path[512];
		if (strstr(k, "..") || strchr(k, '/') == k)
			return qp_error_set(err, QP_E_INVALID, 0, "sysctl \"%s\": invalid name", k);
		snprintf(path, sizeof(path), "/proc/sys/%s", k);
		for (char *p = path + 10; *p; p++)
			if (*p == '.')
				*p = '/';
		_cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0 || write(fd, v, strlen(v)) < 0)
			return qp_fail(err, errno, "sysctl %s=%s", k, v);
	}
	return 0;
}

static const char *env_path(char *const *env)
{
	for (size_t i = 0; env && env[i]; i++)
		if (!strncmp(env[i], "PATH=", 5))
			return env[i] + 5;
	return "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
}

int qp_find_executable(const char *cmd, char *const *env, char *buf, size_t len)
{
	struct stat st;
	int last = ENOENT;

	if (!cmd || !*cmd) {
		errno = ENOENT;
		return -1;
	}
	if (strchr(cmd, '/')) {
		if (stat(cmd, &st) < 0)
			return -1;
		if (!S_ISREG(st.st_mode) || access(cmd, X_OK) < 0) {
			errno = EACCES;
			return -1;
		}
		snprintf(buf, len, "%s", cmd);
		return 0;
	}
	const char *path = env_path(env);
	while (*path) {
		const char *end = strchr(path, ':');
		size_t dlen = end ? (size_t)(end - path) : strlen(path);
		if ((size_t)snprintf(buf, len, "%.*s/%s", (int)dlen, dlen ? path : ".", cmd) < len &&
		    stat(buf, &st) == 0) {
			if (S_ISREG(st.st_mode) && access(buf, X_OK) == 0)
				return 0;
			last = EACCES;
		}
		path = end ? end + 1 : path + dlen;
	}
	errno = last;
	return -1;
}

int qp_exec_lookup_error(const char *cmd, int e, qp_error **err)
{
	/* runc's words, which podman maps to 127 */
	if (e == ENOENT && strchr(cmd, '/'))
		qp_error_set(err, QP_E_EXEC, 0, "exec \"%s\": stat %s: no such file or directory", cmd, cmd);
	else if (e == ENOENT)
		qp_error_set(err, QP_E_EXEC, 0, "exec \"%s\": executable file not found in $PATH", cmd);
	else
		qp_error_set(err, QP_E_EXEC, e, "exec \"%s\"", cmd);
	if (err && *err)
		(*err)->errnum = e; /* 127 vs 126: see cli_exit_code() */
	return -1;
}

/* exec.fifo's write end once `start` opened it: kept (close-on-exec) to
 * tell a `start` that did not create us what went wrong after it (sync.h) */
static int fifo_wr = -1;

/* A failure after start, to both who may wait for it; whichever is gone
 * must not turn into SIGPIPE (we exit next anyway) */
static void report(uint32_t type, const qp_error *e)
{
	signal(SIGPIPE, SIG_IGN);
	if (fifo_wr >= 0)
		qp_sync_write(fifo_wr, type, e);
	qp_sync_send(CHILD_SYNC_FD, type, e);
}

struct workload {
	const struct pod_spec *spec;
	char exe[4096];
};

static void exec_workload(void *arg)
{
	struct workload *w = arg;
	qp_error e = { .code = QP_E_EXEC };

	if (w->spec->process.terminal)
		qp_console_make_controlling();
	execve(w->exe, w->spec->process.args, w->spec->process.env);
	e.errnum = errno;
	e.msg = (char[1200]){ 0 };
	snprintf(e.msg, 1200, "exec \"%s\": %s", w->spec->process.args[0], strerror(errno));
	report(QP_SYNC_EXEC_FAILED, &e);
	_exit(e.errnum == ENOENT ? 127 : 126);
}

static void after_spawn(pid_t pid, void *arg)
{
	(void)pid;
	(void)arg;
	/* the workload holds the (close-on-exec) sync socket and fifo now;
	 * PID 1 lets go of them, so the parent sees EOF exactly when the
	 * workload exec'd */
	close(CHILD_SYNC_FD);
	close(fifo_wr);
}

/* Wait until `qpod start` opens the fifo for reading. */
static int wait_for_start(qp_error **err)
{
	char path[64];

	qp_fd_path(CHILD_FIFO_FD, path, sizeof(path));
	fifo_wr = open(path, O_WRONLY | O_CLOEXEC);
	if (fifo_wr < 0)
		return qp_fail(err, errno, "open exec.fifo");
	if (write(fifo_wr, "0", 1) != 1)
		return qp_fail(err, errno, "write exec.fifo");
	close(CHILD_FIFO_FD);
	return 0;
}

static int setup(struct qp_child_ctx *c, struct workload *w, int entered, qp_error **err)
{
	const struct pod_spec *spec = c->spec;
	struct qp_sync_msg m;

	if (qp_sync_recv(CHILD_SYNC_FD, &m, -1) != 1 || m.type != QP_SYNC_GO)
		return entered < 0 ? -1 : qp_fail(err, errno ? errno : EPROTO, "wait for the parent");
	if (entered < 0)
		return -1;
	/* Non-dumpable only now: until GO, an unprivileged parent must be
	 * able to write our /proc/PID/{uid_map,gid_map,setgroups}, which a
	 * non-dumpable process's /proc files forbid.  Nothing of the pod
	 * exists yet that could look at us before this point. */
	prctl(PR_SET_DUMPABLE, 0);
	if (c->new_userns && (setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0))
		return qp_fail(err, errno, "become root in the user namespace");
	if (join_namespaces(spec, err) < 0)
		return -1;
	/* we are in the pod cgroup: make it our cgroup root */
	if (spec->ns[QP_NS_CGROUP].enabled && !spec->ns[QP_NS_CGROUP].path &&
	    unshare(CLONE_NEWCGROUP) < 0)
		return qp_fail(err, errno, "create cgroup namespace");
	/* runc's default: the pod gets a session keyring of its own, so it
	 * cannot use the caller's keys (--no-new-keyring keeps the caller's) */
	if (!c->no_new_keyring && syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL) < 0 &&
	    errno != ENOSYS)
		return qp_fail(err, errno, "join a new session keyring");
	if (spec->process.has_oom_score_adj) {
		_cleanup_close_ int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
		if (fd < 0 || dprintf(fd, "%d", spec->process.oom_score_adj) < 0)
			return qp_fail(err, errno, "set oom_score_adj");
	}
	if (qp_mounts_prepare(spec, c->rootfs, c->new_userns, err) < 0 ||
	    qp_child_create_hooks(c, CHILD_SYNC_FD, err) < 0 ||
	    qp_mounts_pivot(spec, c->rootfs, c->no_pivot, err) < 0)
		return -1;
	if (spec->ns[QP_NS_UTS].enabled) {
		if (spec->hostname && sethostname(spec->hostname, strlen(spec->hostname)) < 0)
			return qp_fail(err, errno, "set hostname");
		if (spec->domainname && setdomainname(spec->domainname, strlen(spec->domainname)) < 0)
			return qp_fail(err, errno, "set domainname");
	}
	if (write_sysctls(spec, err) < 0)
		return -1;
	if (spec->ns[QP_NS_NET].enabled && !spec->ns[QP_NS_NET].path && loopback_up(err) < 0)
		return -1;
	if (qp_mounts_finish(spec, err) < 0)
		return -1;
	if (qp_rlimits_apply(spec->process.rlimits, spec->process.n_rlimits, err) < 0)
		return -1;
	/* cwd inside the root, without magic links: "/proc/self/fd/N" cannot
	 * lead out (and no host fd is open anyway) */
	_cleanup_close_ int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return qp_fail(err, errno, "open /");
	_cleanup_close_ int cwd = qp_open_in_root(root, spec->process.cwd, QP_PATH_MKDIR,
						  O_DIRECTORY, err);
	if (cwd < 0 || fchdir(cwd) < 0)
		return cwd < 0 ? qp_error_prefix(err, "cwd") : qp_fail(err, errno, "chdir to cwd");
	if (qp_find_executable(spec->process.args[0], spec->process.env, w->exe, sizeof(w->exe)) < 0)
		return qp_exec_lookup_error(spec->process.args[0], errno, err);
	if (spec->process.terminal) {
		int master;
		if (qp_console_setup(&master, err) < 0)
			return -1;
		int r = qp_sync_send_fd(CHILD_SYNC_FD, QP_SYNC_CONSOLE, master);
		close(master);
		if (r < 0)
			return qp_fail(err, errno, "send the console to qpod");
	}
	if (spec->process.has_umask)
		umask(spec->process.umask);
	return 0;
}

/* Until the workload is exec'd, a terminating signal (`qpod kill` of a
 * created pod, or right after start) ends the pod with 128+N, as it would
 * have ended the workload.  As PID 1 of a new pid namespace the child would
 * drop such a signal from the host unless it has a handler; execve resets
 * the handlers, so the workload itself starts with default dispositions. */
static void die_of_signal(int sig)
{
	_exit(128 + sig);
}

static void handle_signals_until_exec(void)
{
	static const int harmless[] = { SIGCHLD, SIGCONT, SIGURG, SIGWINCH, SIGKILL, SIGSTOP,
					SIGTSTP, SIGTTIN, SIGTTOU };
	struct sigaction sa = { .sa_handler = die_of_signal };
	sigset_t none;

	sigfillset(&sa.sa_mask);
	for (int s = 1; s < SIGRTMIN; s++) {
		bool skip = false;
		for (size_t i = 0; i < sizeof(harmless) / sizeof(harmless[0]); i++)
			skip |= harmless[i] == s;
		if (!skip)
			sigaction(s, &sa, NULL);
	}
	for (int s = SIGRTMIN; s <= SIGRTMAX; s++)
		sigaction(s, &sa, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

/* Hide qpod's host command line: /proc/PID/cmdline of the pod's process
 * (and of an init pod's PID 1 inside) reads "qpod-init", not the host path
 * of qpod and its arguments.  The
 * argument area (arg_start..arg_end, /proc/self/stat fields 48-49) is ours
 * after clone; its last byte non-NUL makes the kernel stop at the first
 * NUL (the setproctitle convention). */
static void set_init_cmdline(void)
{
	char buf[2048], *p;
	unsigned long start = 0, end = 0;
	FILE *f = fopen("/proc/self/stat", "re");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

	if (f)
		fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (!p)
		return;
	/* after ") ": field 3 onwards; arg_start is field 48 */
	p += 2;
	for (int field = 3; field < 48 && p; field++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	if (!p || sscanf(p, "%lu %lu", &start, &end) != 2 || end <= start + 10)
		return;
	memset((void *)start, 0, end - start);
	strcpy((char *)start, "qpod-init");
	((char *)end)[-1] = ' ';
}

int qp_container_child(void *arg)
{
	struct qp_child_ctx *c = arg;
	static struct workload w;
	qp_error *err = NULL;
	int code;

#ifdef __SANITIZE_ADDRESS__
	/* ASan still believes this process runs on the parent's stack; tell
	 * it the clone's (a "fiber switch" already done), or each noreturn
	 * call warns that it cannot clean a 32 GB "stack" (sanitized build) */
	void *fake = NULL;
	if (c->stack) { /* NULL: a fork-like clone3, on the parent's stack */
		__sanitizer_start_switch_fiber(&fake, c->stack, c->stack_size);
		__sanitizer_finish_switch_fiber(fake, NULL, NULL);
	}
#endif
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* into the pod cgroup first (its cgroup namespace is made from it);
	 * an error is reported after GO, like every setup error */
	int entered = c->cg_entry ? qp_cgroup_entry_use(c->cg_entry, &err) : 0;
	handle_signals_until_exec();
	/* until the workload's exec, the host's ps shows "qpod-init" (like
	 * "runc init"), never qpod's command line with host paths */
	set_init_cmdline();
	/* keep stdio, the preserved fds (without close-on-exec: they are for
	 * the workload), the sync socket and the fifo; close the rest */
	child_sync_fd = 3 + c->preserve_fds;
	child_fifo_fd = 4 + c->preserve_fds;
	int hi_sync = fcntl(c->sync_fd, F_DUPFD_CLOEXEC, child_fifo_fd + 1);
	int hi_fifo = fcntl(c->fifo_fd, F_DUPFD_CLOEXEC, child_fifo_fd + 1);
	if (hi_sync < 0 || hi_fifo < 0 || dup3(hi_sync, CHILD_SYNC_FD, O_CLOEXEC) < 0 ||
	    dup3(hi_fifo, CHILD_FIFO_FD, O_CLOEXEC) < 0)
		_exit(125);
	syscall(SYS_close_range, CHILD_FIFO_FD + 1, ~0U, 0);
	for (int fd = 3; fd < 3 + c->preserve_fds; fd++)
		if (fcntl(fd, F_SETFD, 0) < 0)
			_exit(125); /* a preserved fd that is not open */
	w.spec = c->spec;

	if (setup(c, &w, entered, &err) < 0)
		goto fail;
	/* `qpod create` exits after READY; we must outlive it */
	prctl(PR_SET_PDEATHSIG, 0);
	if (qp_sync_send(CHILD_SYNC_FD, QP_SYNC_READY, NULL) < 0)
		_exit(125);
	if (wait_for_start(&err) < 0)
		goto fail;
	if (qp_process_lockdown(&c->spec->process, c->spec->seccomp, &err) < 0 ||
	    qp_child_start_hooks(c, &err) < 0)
		goto fail;
	if (!c->spec->opts.init) {
		exec_workload(&w); /* PID 1 is the workload */
		_exit(127);
	}
	prctl(PR_SET_NAME, "qpod-init");
	code = tinyinit_run(exec_workload, &w, &(struct tinyinit_hooks){ .on_spawn = after_spawn });
	if (code < 0) {
		qp_fail(&err, errno, "fork the workload");
		goto fail;
	}
	_exit(code);
fail:
	report(QP_SYNC_ERROR, err);
	_exit(125);
}
