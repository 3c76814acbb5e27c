/* runtime/hooks.c — the OCI hook runner (see hooks.h).
 *
 * The state goes into a pipe before the hook is forked (the pipe is sized to
 * hold it), so a hook that never reads its stdin can neither block qpod nor
 * raise SIGPIPE in it.  The wait is a poll on a pidfd and the two output
 * pipes, bounded by the hook's timeout; once the hook has exited, what its
 * pipes hold is read without waiting for EOF, since a background child of the
 * hook may keep them open.  This file runs in qpod and in the container child
 * (createContainer, startContainer), so it needs nothing but fork and exec.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest-init/tinyinit.h"
#include "hooks.h"
#include "pod.h"
#include "util/cleanup.h"
#include "util/log.h"
#include "util/clock.h"

#define OUT_KEEP 4096   /* bytes of a hook's stdout / stderr kept */
#define OUT_SHOWN 200   /* of which an error message shows */
#define PIPE_DEFAULT 65536
#define POLL_FALLBACK_MS 20 /* no pidfd: how often to look for the exit */
#define FD_FLOOR 10     /* the hook's fds are moved here before the dup2s */

extern char **environ;

struct capture {
	int fd;
	size_t len;
	char buf[OUT_KEEP];
};

/* Read what is there (at most `rounds` reads); the fd closes at EOF. */
static void drain(struct capture *c, int rounds)
{
	char tmp[4096];

	while (c->fd >= 0 && rounds-- > 0) {
		ssize_t n = read(c->fd, tmp, sizeof(tmp));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			close(c->fd);
			c->fd = -1;
			return;
		}
		size_t keep = (size_t)n < OUT_KEEP - c->len ? (size_t)n : OUT_KEEP - c->len;
		memcpy(c->buf + c->len, tmp, keep);
		c->len += keep;
	}
}

/* A one-line, printable excerpt of a capture for an error message. */
static const char *excerpt(const struct capture *c, char *out, size_t size)
{
	size_t n = 0, len = c->len;

	while (len && strchr(" \t\r\n", c->buf[len - 1]))
		len--;
	for (size_t i = 0; i < len && n + 4 < size && i < OUT_SHOWN; i++) {
		unsigned char ch = (unsigned char)c->buf[i];
		out[n++] = strchr("\t\r\n", ch) ? ' ' : (ch < 0x20 || ch >= 0x7f || ch == '"') ? '?' : ch;
	}
	if (len > OUT_SHOWN)
		n += (size_t)snprintf(out + n, size - n, "...");
	out[n] = '\0';
	return out;
}

/* " (stdout: \"...\", stderr: \"...\")" for what the hook wrote, or "". */
static const char *describe_output(const struct capture *out, const struct capture *errc, char *buf,
				   size_t size)
{
	const struct {
		const char *name;
		const struct capture *c;
	} parts[] = { { "stdout", out }, { "stderr", errc } };
	char shown[OUT_SHOWN + 8];
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < QP_ARRAY_SIZE(parts); i++) {
		if (!*excerpt(parts[i].c, shown, sizeof(shown)) || n >= size)
			continue;
		n += (size_t)snprintf(buf + n, size - n, "%s%s: \"%s\"", n ? ", " : " (", parts[i].name,
				      shown);
	}
	if (n && n < size)
		snprintf(buf + n, size - n, ")");
	return buf;
}

/* The state JSON in a pipe, its read end returned: the hook's stdin. */
static int state_pipe(const char *json, size_t len, qp_error **err)
{
	_cleanup_close_ int w = -1;
	int p[2];

	if (pipe2(p, O_CLOEXEC) < 0)
		return qp_fail(err, errno, "pipe for the hook's stdin");
	w = p[1];
	if ((len > PIPE_DEFAULT && fcntl(w, F_SETPIPE_SZ, (int)(len < INT_MAX ? len : INT_MAX)) < 0) ||
	    fcntl(w, F_SETFL, O_NONBLOCK) < 0) {
		int e = errno;
		close(p[0]);
		return qp_fail(err, e, "a pipe for the %zu-byte state", len);
	}
	for (size_t off = 0; off < len;) {
		ssize_t n = write(w, json + off, len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int e = n < 0 ? errno : EIO;
			close(p[0]);
			return qp_fail(err, e, "write the state to the hook's stdin");
		}
		off += (size_t)n;
	}
	return p[0];
}

/* In the forked child: stdin, stdout, stderr and the exec-error pipe (fd
 * 3, close-on-exec) in place, nothing else open, default signals, a
 * process group of its own (so a timeout kills what the hook started). */
static __attribute__((noreturn)) void exec_hook(const struct qp_hook *h, char *const *env,
						int in, int out, int errfd, int report)
{
	int fds[4] = { in, out, errfd, report };
	char *argv0[] = { h->path, NULL };
	char *const *argv = h->args && h->args[0] ? h->args : argv0;
	int e;

	for (int i = 0; i < 4; i++)
		if ((fds[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, FD_FLOOR)) < 0)
			_exit(127);
	if (dup2(fds[0], 0) < 0 || dup2(fds[1], 1) < 0 || dup2(fds[2], 2) < 0 ||
	    dup3(fds[3], 3, O_CLOEXEC) < 0)
		_exit(127);
	syscall(SYS_close_range, 4, ~0U, 0);
	setpgid(0, 0);
	tinyinit_reset_signals();
	execve(h->path, argv, env);
	e = errno;
	if (write(3, &e, sizeof(e)) != sizeof(e))
		_exit(127);
	_exit(127);
}

/* Wait for the hook (pid) until timeout_s (0: for ever), collecting its
 * output.  Returns its wait status, or -1 if it timed out and was killed. */
static int wait_hook(pid_t pid, int timeout_s, struct capture *out, struct capture *errc)
{
	long long deadline = timeout_s ? qp_now_ns() + timeout_s * 1000000000LL : 0;
	_cleanup_close_ int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	int status;

	for (;;) {
		struct pollfd p[3] = { { .fd = pidfd, .events = POLLIN },
				       { .fd = out->fd, .events = POLLIN },
				       { .fd = errc->fd, .events = POLLIN } };
		long long left = deadline ? (deadline - qp_now_ns()) / 1000000 + 1 : -1;
		int ms = left < 0 ? -1 : left > INT_MAX ? INT_MAX : (int)left;

		if (pidfd < 0 && (ms < 0 || ms > POLL_FALLBACK_MS))
			ms = POLL_FALLBACK_MS;
		if (poll(p, 3, ms) < 0 && errno != EINTR)
			usleep(POLL_FALLBACK_MS * 1000);
		if (p[1].revents)
			drain(out, 16);
		if (p[2].revents)
			drain(errc, 16);
		if (waitpid(pid, &status, WNOHANG) == pid)
			break;
		if (deadline && qp_now_ns() >= deadline) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
				;
			return -1;
		}
	}
	/* what the hook wrote before it exited */
	drain(out, 64);
	drain(errc, 64);
	return status;
}

static int run_one(const struct qp_hook *h, enum qp_hook_kind kind, size_t index, const char *json,
		   size_t len, char *const *env_default, qp_error **err)
{
	static struct capture out, errc; /* 8 KiB: not on the container child's stack */
	char what[PATH_MAX + 64], how[64], shown[2 * OUT_SHOWN + 64];
	_cleanup_close_ int in = -1, report_r = -1;
	int po[2] = { -1, -1 }, pe[2] = { -1, -1 }, pr[2] = { -1, -1 }, status, exec_errno = 0;
	char *const *env = h->env ? h->env : env_default ? env_default : environ;
	pid_t pid;

	snprintf(what, sizeof(what), "%s hook #%zu \"%.*s\"", qp_hook_name(kind), index, PATH_MAX,
		 h->path);
	out = (struct capture){ .fd = -1 };
	errc = (struct capture){ .fd = -1 };
	if ((in = state_pipe(json, len, err)) < 0)
		return qp_error_prefix(err, "%s", what);
	if (pipe2(po, O_CLOEXEC) < 0 || pipe2(pe, O_CLOEXEC) < 0 || pipe2(pr, O_CLOEXEC) < 0) {
		qp_fail(err, errno, "%s: pipes", what);
		goto fail_pipes;
	}
	pid = fork();
	if (pid < 0) {
		qp_fail(err, errno, "%s: fork", what);
		goto fail_pipes;
	}
	if (pid == 0)
		exec_hook(h, env, in, po[1], pe[1], pr[1]);
	setpgid(pid, pid); /* also here: a timeout may come before the child runs */
	close(po[1]);
	close(pe[1]);
	close(pr[1]);
	report_r = pr[0];
	out.fd = po[0];
	errc.fd = pe[0];
	fcntl(out.fd, F_SETFL, O_NONBLOCK);
	fcntl(errc.fd, F_SETFL, O_NONBLOCK);

	status = wait_hook(pid, h->timeout, &out, &errc);
	if (out.fd >= 0)
		close(out.fd);
	if (errc.fd >= 0)
		close(errc.fd);
	if (status >= 0 && read(report_r, &exec_errno, sizeof(exec_errno)) == sizeof(exec_errno))
		return qp_error_set(err, QP_E_GENERIC, exec_errno, "%s: exec", what);
	if (status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		qp_debug("%s: ok%s", what, describe_output(&out, &errc, shown, sizeof(shown)));
		return 0;
	}
	if (status < 0)
		snprintf(how, sizeof(how), "did not finish within its timeout of %d s (killed)",
			 h->timeout);
	else if (WIFEXITED(status))
		snprintf(how, sizeof(how), "exit status %d", WEXITSTATUS(status));
	else
		snprintf(how, sizeof(how), "killed by signal %d (%s)", WTERMSIG(status),
			 strsignal(WTERMSIG(status)));
	return qp_error_set(err, QP_E_GENERIC, 0, "%s: %s%s", what, how,
			    describe_output(&out, &errc, shown, sizeof(shown)));

fail_pipes:
	for (int i = 0; i < 2; i++) {
		if (po[i] >= 0)
			close(po[i]);
		if (pe[i] >= 0)
			close(pe[i]);
		if (pr[i] >= 0)
			close(pr[i]);
	}
	return -1;
}

int qp_hooks_run(const struct pod_spec *spec, enum qp_hook_kind kind, const struct qp_oci_state *st,
		 char *const *env_default, qp_error **err)
{
	_cleanup_free_ char *json = NULL;
	size_t len;

	if (!spec->n_hooks[kind])
		return 0;
	if (qp_oci_state_json(st, &json, &len, err) < 0)
		return qp_error_prefix(err, "%s hooks", qp_hook_name(kind));
	for (size_t i = 0; i < spec->n_hooks[kind]; i++)
		if (run_one(&spec->hooks[kind][i], kind, i, json, len, env_default, err) < 0)
			return -1;
	return 0;
}

int qp_hooks_wait_ms(const struct pod_spec *spec, enum qp_hook_kind kind, int base_ms)
{
	long long ms = base_ms;

	for (size_t i = 0; i < spec->n_hooks[kind]; i++) {
		if (!spec->hooks[kind][i].timeout)
			return -1;
		ms += spec->hooks[kind][i].timeout * 1000LL;
	}
	return ms > INT_MAX ? -1 : (int)ms;
}

int pod_hooks_run(struct pod *pod, enum qp_hook_kind kind, enum qp_status status, pid_t pid,
		  qp_error **err)
{
	struct qp_oci_state st = pod_oci_state(pod, status, pid);

	if (!pod->spec->n_hooks[kind])
		return 0;
	/* A hook may ask qpod about its pod (`qpod state ID`; runc takes no
	 * lock at all): from here on the lock is shared.  That still keeps
	 * out every command that changes the pod (start, delete, pause,
	 * update take it exclusive) and gc (which skips a locked pod). */
	if (flock(pod->dirfd, LOCK_SH) < 0)
		return qp_fail(err, errno, "lock pod \"%s\"", pod->id);
	return qp_hooks_run(pod->spec, kind, &st, NULL, err);
}

int pod_hooks_create_runtime(struct pod *pod, pid_t pid, qp_error **err)
{
	if (pod_hooks_run(pod, QP_HOOK_PRESTART, QP_STATUS_CREATING, pid, err) < 0)
		return -1;
	return pod_hooks_run(pod, QP_HOOK_CREATE_RUNTIME, QP_STATUS_CREATING, pid, err);
}

void pod_hooks_warn(struct pod *pod, enum qp_hook_kind kind, enum qp_status status, pid_t pid)
{
	qp_error *err = NULL;

	if (pod_hooks_run(pod, kind, status, pid, &err) < 0)
		qp_warn("%s", err ? err->msg : qp_hook_name(kind));
	qp_error_free(&err);
}
