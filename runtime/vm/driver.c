/* runtime/vm/driver.c — the QEMU microVM pod driver (struct pod_driver):
 * boot a microVM whose /init is guest-init, talk to it over the virtio-serial
 * control channel (guest-init/protocol.h), and relay the workload's output
 * and exit status.  First cut: only the process that created the pod holds
 * the channel, so start/wait must happen in that process (`qpod run`). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guest-init/channel.h"
#include "pod.h"
#include "util/cleanup.h"
#include "util/log.h"
#include "vm/vm.h"

#define CONNECT_TIMEOUT_MS 5000
#define HELLO_TIMEOUT_TCG_MS 30000
#define HELLO_TIMEOUT_KVM_MS 10000
#define SEND_TIMEOUT_MS 5000
#define QEMU_EXIT_TIMEOUT_MS 5000
#define DEFAULT_MEM_MIB 256
#define MIN_MEM_MIB 32
#define MAX_MEM_MIB (1024ULL * 1024)

/* The channel of the one VM pod this process created (qpod handles one pod
 * per process); its fd is also pod->wait_fd. */
static struct qp_chan *vm_chan;

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void chan_close(struct pod *pod)
{
	if (vm_chan) {
		qp_chan_free(vm_chan);
		vm_chan = NULL;
	}
	if (pod->wait_fd >= 0) {
		close(pod->wait_fd);
		pod->wait_fd = -1;
	}
}

/* Kill (if needed) and reap QEMU, waiting at most timeout_ms before SIGKILL. */
static void qemu_stop(pid_t pid, int timeout_ms)
{
	long long deadline = now_ms() + timeout_ms;
	int killed = timeout_ms == 0;

	if (pid <= 0)
		return;
	if (killed)
		kill(pid, SIGKILL);
	for (;;) {
		pid_t r = waitpid(pid, NULL, WNOHANG);
		if (r == pid || (r < 0 && errno == ECHILD))
			return;
		if (!killed && now_ms() >= deadline) {
			kill(pid, SIGKILL);
			killed = 1;
			deadline = now_ms() + 2000;
		} else if (killed && now_ms() >= deadline) {
			return;
		}
		usleep(2000);
	}
}

/* Add the end of qemu.log to an error: QEMU says there why it stopped. */
static int with_qemu_log(struct pod *pod, qp_error **err)
{
	char tail[256];

	vm_qemu_log_tail(pod->dirfd, tail, sizeof(tail));
	if (tail[0] && err && *err)
		qp_error_prefix(err, "qemu: %s; then", tail);
	return -1;
}

static int chan_connect(struct pod *pod, pid_t qemu, qp_error **err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	long long deadline = now_ms() + CONNECT_TIMEOUT_MS;
	int fd;

	/* through the dir fd: the state dir's own path may not fit sun_path */
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/%s", pod->dirfd, QP_VM_CHAN_SOCK);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return qp_fail(err, errno, "socket");
	for (;;) {
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			return fd;
		if (errno != ENOENT && errno != ECONNREFUSED && errno != EINTR) {
			int e = errno;
			close(fd);
			return qp_fail(err, e, "connect to the VM channel");
		}
		if (waitpid(qemu, NULL, WNOHANG) == qemu) {
			close(fd);
			qp_error_set(err, QP_E_GENERIC, 0, "qemu exited before it opened the VM channel");
			return with_qemu_log(pod, err);
		}
		if (now_ms() >= deadline) {
			close(fd);
			return qp_error_set(err, QP_E_TIMEOUT, 0,
					    "qemu did not open the VM channel within %d s",
					    CONNECT_TIMEOUT_MS / 1000);
		}
		usleep(5000);
	}
}

static unsigned long long mem_mib(const struct pod_spec *spec)
{
	const struct qp_resources *r = &spec->resources;
	unsigned long long m;

	if (!r->has_memory_limit || r->memory_limit <= 0)
		return DEFAULT_MEM_MIB;
	m = ((unsigned long long)r->memory_limit + (1 << 20) - 1) >> 20;
	return m < MIN_MEM_MIB ? MIN_MEM_MIB : m > MAX_MEM_MIB ? MAX_MEM_MIB : m;
}

static int vm_create(struct pod *pod, qp_error **err)
{
	_cleanup_free_ char *kernel = NULL, *init = NULL;
	char statedir[PATH_MAX], link[64];
	struct vm_qemu_opts o = { .dirfd = pod->dirfd };
	struct qp_msg m;
	pid_t pid;
	int fd, timeout;
	ssize_t n;

	if (pod->spec->process.terminal)
		return qp_error_set(err, QP_E_INVALID, 0, "vm pods have no terminal support yet");
	if (!(kernel = vm_find_kernel(err)) || !(init = vm_find_guest_init(err)))
		return -1;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", pod->dirfd);
	n = readlink(link, statedir, sizeof(statedir) - 1);
	if (n <= 0 || (size_t)n >= sizeof(statedir) - 1)
		return qp_fail(err, n < 0 ? errno : ENAMETOOLONG, "state dir path");
	statedir[n] = '\0';
	if (vm_write_initrd(pod->dirfd, QP_VM_INITRD, init, err) < 0)
		return -1;

	o.statedir = statedir;
	o.kernel = kernel;
	o.rootfs = pod->rootfs;
	o.kvm = vm_kvm_usable();
	o.vcpus = pod->spec->opts.vcpus > 0 ? pod->spec->opts.vcpus : 1;
	o.mem_mib = mem_mib(pod->spec);
	o.die_with_parent = pod->io.foreground;
	free(pod->state->accel);
	if (!(pod->state->accel = strdup(o.kvm ? "kvm" : "tcg")))
		return qp_fail(err, ENOMEM, "create");
	unlinkat(pod->dirfd, QP_VM_CHAN_SOCK, 0);
	if ((pid = vm_spawn_qemu(&o, err)) < 0)
		return -1;
	pod->state->pid = pid;
	pod->state->pid_start = proc_start_time(pid);
	/* recorded at once: a qpod killed from here on leaves a findable VMM */
	if (state_save(pod->dirfd, pod->state, err) < 0)
		goto fail;
	if ((fd = chan_connect(pod, pid, err)) < 0)
		goto fail;
	pod->wait_fd = fd;
	if (!(vm_chan = qp_chan_new(fd))) {
		qp_fail(err, ENOMEM, "VM channel");
		goto fail;
	}
	timeout = o.kvm ? HELLO_TIMEOUT_KVM_MS : HELLO_TIMEOUT_TCG_MS;
	if (qp_chan_recv(vm_chan, &m, timeout, err) < 0) {
		if (*err && (*err)->code == QP_E_TIMEOUT)
			qp_error_set(err, QP_E_TIMEOUT, 0, "the VM did not say hello within %d s "
				     "(see %s/%s)", timeout / 1000, statedir, QP_VM_QEMU_LOG);
		else {
			qp_error_prefix(err, "wait for the VM's hello");
			qemu_stop(pid, 200); /* gives QEMU's last words time to reach the log */
			with_qemu_log(pod, err);
		}
		goto fail;
	}
	if (qp_msg_check_sender(&m, QP_SENDER_GUEST, err) < 0)
		goto fail;
	if (m.type != QP_MSG_HELLO) {
		qp_error_set(err, QP_E_GUEST, 0, "the VM sent %s instead of HELLO",
			     qp_msg_type_name(m.type));
		goto fail;
	}
	qp_debug("vm %s: hello after %.3f s of guest boot time (%s)", pod->id,
		 (double)m.u.hello.hello_ns / 1e9, pod->state->accel);
	return 0;
fail:
	chan_close(pod);
	qemu_stop(pid, 0);
	unlinkat(pod->dirfd, QP_VM_CHAN_SOCK, 0);
	return -1;
}

static int vm_start(struct pod *pod, qp_error **err)
{
	const struct qp_process *p = &pod->spec->process;
	struct qp_msg m = { .type = QP_MSG_RUN };
	uint32_t argc = 0, envc = 0;

	if (!vm_chan)
		return qp_error_set(err, QP_E_STATE, 0,
				    "starting a vm pod from another qpod process is not supported yet");
	while (p->args && p->args[argc])
		argc++;
	while (p->env && p->env[envc])
		envc++;
	m.u.run = (struct qp_run){
		.flags = QP_RUN_F_ROOTFS_RO,
		.uid = p->uid,
		.gid = p->gid,
		.rootfs = QP_ROOTFS_9P,
		.rootfs_tag = "rootfs",
		.cwd = p->cwd ? p->cwd : "",
		.hostname = pod->spec->hostname ? pod->spec->hostname : "",
		.argc = argc,
		.envc = envc,
		.argv = (const char *const *)p->args,
		.env = (const char *const *)(p->env ? p->env : (char *[]){ NULL }),
	};
	if (qp_chan_send(vm_chan, &m, SEND_TIMEOUT_MS, err) < 0)
		return qp_error_prefix(err, "send RUN to the VM");
	return 0;
}

static enum qp_status vm_status(struct pod *pod)
{
	if (!state_pid_alive(pod->state))
		return QP_STATUS_STOPPED;
	return pod->state->status == QP_STATUS_RUNNING ? QP_STATUS_RUNNING : QP_STATUS_CREATED;
}

static int signal_qemu(struct pod *pod, int sig, qp_error **err)
{
	_cleanup_close_ int pidfd = (int)syscall(SYS_pidfd_open, pod->state->pid, 0);

	if (!state_pid_alive(pod->state))
		return qp_error_set(err, QP_E_STATE, 0, "pod \"%s\" is not running", pod->id);
	if (pidfd >= 0 && syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0) == 0)
		return 0;
	if (kill(pod->state->pid, sig) < 0)
		return qp_fail(err, errno, "signal qemu");
	return 0;
}

static int vm_kill(struct pod *pod, int sig, int all, qp_error **err)
{
	(void)all; /* the guest kernel holds every process of the pod */
	if (vm_chan && !vm_chan->broken && sig >= 1 && sig <= QP_PROTO_MAX_SIGNAL) {
		struct qp_msg m = { .type = QP_MSG_SIGNAL, .u.signal.signo = (uint32_t)sig };
		if (qp_chan_send(vm_chan, &m, SEND_TIMEOUT_MS, err) < 0)
			return qp_error_prefix(err, "send a signal to the VM");
		return 0;
	}
	/* no channel here: QEMU ends the VM on SIGTERM */
	return signal_qemu(pod, SIGTERM, err);
}

static int vm_destroy(struct pod *pod, qp_error **err)
{
	(void)err;
	chan_close(pod);
	if (state_pid_alive(pod->state)) {
		kill(pod->state->pid, SIGKILL);
		/* reap it if it is our child; else wait (bounded) until it is gone */
		for (int i = 0; i < 400 && state_pid_alive(pod->state); i++) {
			waitpid(pod->state->pid, NULL, WNOHANG);
			usleep(5000);
		}
	}
	if (pod->state->pid > 0)
		waitpid(pod->state->pid, NULL, WNOHANG);
	unlinkat(pod->dirfd, QP_VM_CHAN_SOCK, 0);
	unlinkat(pod->dirfd, QP_VM_INITRD, 0);
	return 0;
}

static int vm_wait_fd(struct pod *pod, qp_error **err)
{
	if (!vm_chan || pod->wait_fd < 0)
		return qp_error_set(err, QP_E_STATE, 0,
				    "waiting for a vm pod from another qpod process is not supported yet");
	return pod->wait_fd;
}

static int write_all(int fd, const uint8_t *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* A bounded printable copy of guest text. */
static void clean_text(const char *s, char *out, size_t size)
{
	size_t i = 0;
	for (; s && s[i] && i + 1 < size; i++)
		out[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
	out[i] = '\0';
}

/* The signals pod_wait forwards; they are blocked while it runs, so a
 * signalfd of ours sees them while reap relays output. */
static int forward_signalfd(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH };
	sigset_t set, cur;

	sigemptyset(&set);
	sigprocmask(SIG_BLOCK, NULL, &cur);
	for (size_t i = 0; i < QP_ARRAY_SIZE(sigs); i++)
		if (sigismember(&cur, sigs[i]))
			sigaddset(&set, sigs[i]);
	return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

static int vm_reap(struct pod *pod, int *code, qp_error **err)
{
	_cleanup_close_ int sfd = forward_signalfd();
	qp_error *guest_err = NULL;
	bool done = false;
	int r = 0;

	if (!vm_chan)
		return qp_error_set(err, QP_E_STATE, 0, "no VM channel in this process");
	while (!done) {
		struct pollfd p[2] = { { .fd = vm_chan->fd, .events = POLLIN },
				       { .fd = sfd, .events = POLLIN } };
		struct qp_msg m;
		int k;

		if (poll(p, sfd >= 0 ? 2 : 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			r = qp_fail(err, errno, "poll");
			break;
		}
		if (sfd >= 0 && (p[1].revents & POLLIN)) {
			struct signalfd_siginfo si;
			while (read(sfd, &si, sizeof(si)) == sizeof(si))
				vm_kill(pod, (int)si.ssi_signo, 0, NULL);
		}
		if (!p[0].revents)
			continue;
		if (qp_chan_fill(vm_chan, err) < 0) {
			qp_error_prefix(err, "the VM ended without an exit status");
			r = with_qemu_log(pod, err);
			break;
		}
		while (!done && (k = qp_chan_next(vm_chan, &m, err)) != 0) {
			if (k < 0 || qp_msg_check_sender(&m, QP_SENDER_GUEST, err) < 0) {
				r = qp_error_prefix(err, "VM channel");
				done = true;
				break;
			}
			switch (m.type) {
			case QP_MSG_STDOUT:
			case QP_MSG_STDERR:
				/* a closed stdout of ours must not stop the relay */
				write_all(m.type == QP_MSG_STDOUT ? 1 : 2, m.u.data.data, m.u.data.len);
				break;
			case QP_MSG_EXIT:
				*code = m.u.exit.code < 0 || m.u.exit.code > 255 ? 255 : m.u.exit.code;
				done = true;
				break;
			case QP_MSG_ERROR: {
				char text[512];
				clean_text(m.u.error.text, text, sizeof(text));
				if (m.u.error.code == QP_PERR_EXEC) {
					/* EXIT 127 follows; the error gives qpod's exit code */
					qp_error_free(&guest_err);
					qp_error_set(&guest_err, QP_E_EXEC, 0, "%s", text);
					if (guest_err)
						guest_err->errnum = m.u.error.errnum;
				} else if (m.u.error.code == QP_PERR_STATE) {
					qp_debug("vm %s: guest: %s", pod->id, text);
				} else {
					r = qp_error_set(err, QP_E_GUEST, 0, "the VM failed: %s", text);
					done = true;
				}
				break;
			}
			default: /* STARTED, MEMINFO, a late HELLO: nothing to do here */
				break;
			}
		}
	}
	if (guest_err) {
		if (r == 0) {
			*err = guest_err;
			guest_err = NULL;
			r = -1;
		}
		qp_error_free(&guest_err);
	}
	if (!vm_chan->broken) {
		struct qp_msg m = { .type = QP_MSG_SHUTDOWN };
		qp_chan_send(vm_chan, &m, 100, NULL);
	}
	chan_close(pod);
	/* the guest reboots after EXIT, and -no-reboot turns that into an exit */
	qemu_stop(pod->state->pid, QEMU_EXIT_TIMEOUT_MS);
	return r;
}

static int vm_exec(struct pod *pod, const struct qp_process *proc, int *status, qp_error **err)
{
	(void)pod, (void)proc, (void)status;
	return qp_error_set(err, QP_E_INVALID, 0, "exec is not supported for vm pods yet");
}

static int vm_pids(struct pod *pod, pid_t **pids, size_t *n, qp_error **err)
{
	/* the guest's processes have no host pids: report the VMM */
	*n = 0;
	*pids = NULL;
	if (!state_pid_alive(pod->state))
		return 0;
	if (!(*pids = malloc(sizeof(**pids))))
		return qp_fail(err, ENOMEM, "pids");
	(*pids)[0] = pod->state->pid;
	*n = 1;
	return 0;
}

const struct pod_driver qp_vm_driver = {
	.name = "vm",
	.create = vm_create,
	.start = vm_start,
	.status = vm_status,
	.kill = vm_kill,
	.destroy = vm_destroy,
	.wait_fd = vm_wait_fd,
	.reap = vm_reap,
	.exec = vm_exec,
	.pids = vm_pids,
};
