/* runtime/vm/monitor.c — the monitor of one microVM pod (see vm.h for the
 * process model): boots the VM, then serves the guest channel, the clients
 * of ctl.sock and forwarded signals until the VM is over, and stops it.
 *
 * Everything from the guest is hostile (channel.c bounds and checks every
 * frame; a bad one ends the pod with the reason).  Clients are other qpod
 * processes of users allowed into the state dir; they are still checked
 * (which messages, bounded frames) and a broken client only loses its own
 * connection. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
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

#include "util/io.h"
#include "pod.h"
#include "util/cleanup.h"
#include "util/log.h"
#include "vm/timeline.h"
#include "vm/vm.h"

#define CONNECT_TIMEOUT_MS 5000
#define HELLO_TIMEOUT_TCG_MS 30000
#define HELLO_TIMEOUT_KVM_MS 10000
#define MAX_CLIENTS 16
#define DEFAULT_MEM_MIB 256
#define MIN_MEM_MIB 16
#define MAX_MEM_MIB (1024ULL * 1024)

struct vm_client {
	struct qp_chan *ch;     /* NULL = free slot */
	uint32_t exec_id;       /* its exec in the guest, 0 = none */
	bool want_start, want_meminfo;
};

struct vm_mon {
	struct pod *pod;
	char statedir[PATH_MAX];
	struct vm_mounts mounts;   /* the spec's own mounts (mounts.c) */
	char uts_hostname[QP_PROTO_MAX_HOSTNAME + 1]; /* of a UTS namespace joined by path */
	pid_t qemu;
	int qemu_pidfd;
	bool kvm, qemu_reaped;
	int qemu_status;
	struct qp_chan *chan;
	int listen_fd;
	struct vm_client cl[MAX_CLIENTS];
	bool has_net;
	struct qp_net_config net;
	struct qp_net_lease lease;
	bool run_sent, started, exited, over, stopping;
	int exit_code;
	long long stop_deadline;
	long long start_deadline; /* RUN sent: STARTED (or an error) by then */
	uint32_t next_exec;
	qp_error *exec_err;     /* the workload could not be executed */
	char reason[256];       /* why the VM stopped, once known */
	struct vm_timeline tl;
	struct vm_qmp *qmp;     /* connected at the first pause */
	bool paused;
	/* a replace in progress (CTL_REPLACE) */
	bool replacing;
	struct vm_client *rep_client; /* NULL if it went away meanwhile */
	char **rep_argv;        /* NULL: the pod's process again */
	long long rep_request, rep_exit, rep_kill_at;
};

pid_t vm_mon_qemu_pid(const struct vm_mon *m)
{
	return m->qemu;
}

const char *vm_mon_accel(const struct vm_mon *m)
{
	return m->kvm ? "kvm" : "tcg";
}

int vm_mon_poll_fd(const struct vm_mon *m)
{
	return m->chan->fd;
}

static void set_reason(struct vm_mon *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_reason(struct vm_mon *m, const char *fmt, ...)
{
	va_list ap;

	if (m->reason[0])
		return; /* the first cause wins */
	va_start(ap, fmt);
	vsnprintf(m->reason, sizeof(m->reason), fmt, ap);
	va_end(ap);
}

/* Reap QEMU if it has exited; true once it is gone. */
static bool qemu_gone(struct vm_mon *m)
{
	if (m->qemu <= 0 || m->qemu_reaped)
		return true;
	if (waitpid(m->qemu, &m->qemu_status, WNOHANG) != m->qemu)
		return false;
	m->qemu_reaped = true;
	return true;
}

static void qemu_reason(struct vm_mon *m)
{
	int st = m->qemu_status;

	char tail[200];

	vm_qemu_log_tail(m->pod->dirfd, tail, sizeof(tail));
	/* QEMU's own last words, unless it was killed from outside */
	if (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)
		set_reason(m, "qemu killed by signal %d (%s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
	else if (WIFSIGNALED(st))
		set_reason(m, "qemu killed by signal %d (%s)%s%s", WTERMSIG(st), strsignal(WTERMSIG(st)),
			   tail[0] ? ": " : "", tail);
	else if (WIFEXITED(st) && WEXITSTATUS(st) != 0)
		set_reason(m, "qemu exited with status %d%s%s", WEXITSTATUS(st), tail[0] ? ": " : "",
			   tail);
	else
		set_reason(m, "the VM powered off");
}

/* SIGKILL QEMU and reap it (bounded: it is our child and cannot resist). */
static void qemu_kill(struct vm_mon *m)
{
	if (qemu_gone(m))
		return;
	kill(m->qemu, SIGKILL);
	if (waitpid(m->qemu, &m->qemu_status, 0) == m->qemu)
		m->qemu_reaped = true;
}

/* Wait up to timeout_ms for QEMU to exit by itself, then kill it. */
static void qemu_stop(struct vm_mon *m, int timeout_ms)
{
	long long deadline = qp_now_ms() + timeout_ms;

	while (!qemu_gone(m) && qp_now_ms() < deadline) {
		struct pollfd p = { .fd = m->qemu_pidfd, .events = POLLIN };
		poll(&p, m->qemu_pidfd >= 0 ? 1 : 0, 10);
	}
	qemu_kill(m);
}

/* Add the end of qemu.log to an error: QEMU says there why it stopped. */
static int with_qemu_log(struct vm_mon *m, qp_error **err)
{
	char tail[256];

	vm_qemu_log_tail(m->pod->dirfd, tail, sizeof(tail));
	if (tail[0] && err && *err)
		qp_error_prefix(err, "qemu: %s; then", tail);
	return -1;
}

/* ---- boot ---- */

static int chan_connect(struct vm_mon *m, qp_error **err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	long long deadline = qp_now_ms() + CONNECT_TIMEOUT_MS;
	int fd;

	/* through the dir fd: the state dir's own path may not fit sun_path */
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/%s", m->pod->dirfd,
		 QP_VM_CHAN_SOCK);
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
		if (qemu_gone(m)) {
			close(fd);
			qemu_reason(m);
			return qp_error_set(err, QP_E_GENERIC, 0, "qemu exited before it opened the VM channel: %s",
					    m->reason);
		}
		if (qp_now_ms() >= deadline) {
			close(fd);
			return qp_error_set(err, QP_E_TIMEOUT, 0,
					    "qemu did not open the VM channel within %d s",
					    CONNECT_TIMEOUT_MS / 1000);
		}
		usleep(2000);
	}
}

static int ctl_listen(struct vm_mon *m, qp_error **err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	if (fd < 0)
		return qp_fail(err, errno, "socket");
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/%s", m->pod->dirfd,
		 QP_VM_CTL_SOCK);
	unlinkat(m->pod->dirfd, QP_VM_CTL_SOCK, 0);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 16) < 0) {
		int e = errno;
		close(fd);
		return qp_fail(err, e, "listen on %s", QP_VM_CTL_SOCK);
	}
	return fd;
}

static unsigned long long mem_mib(const struct pod_spec *spec)
{
	const struct qp_resources *r = &spec->resources;
	unsigned long long v;

	if (!r->has_memory_limit || r->memory_limit <= 0)
		return DEFAULT_MEM_MIB;
	v = ((unsigned long long)r->memory_limit + (1 << 20) - 1) >> 20;
	return v < MIN_MEM_MIB ? MIN_MEM_MIB : v > MAX_MEM_MIB ? MAX_MEM_MIB : v;
}

static int state_dir_path(struct vm_mon *m, qp_error **err)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", m->pod->dirfd);
	n = readlink(link, m->statedir, sizeof(m->statedir) - 1);
	if (n <= 0 || (size_t)n >= sizeof(m->statedir) - 1)
		return qp_fail(err, n < 0 ? errno : ENAMETOOLONG, "state dir path");
	m->statedir[n] = '\0';
	return 0;
}

/* How long the guest may take to say hello, and to answer RUN with
 * STARTED: the accel's bound, or ENV (tests of the timeout paths). */
static int guest_timeout_ms(const struct vm_mon *m, const char *env)
{
	const char *t = getenv(env);

	if (t && atoi(t) > 0)
		return atoi(t);
	return m->kvm ? HELLO_TIMEOUT_KVM_MS : HELLO_TIMEOUT_TCG_MS;
}

static int wait_hello(struct vm_mon *m, qp_error **err)
{
	int timeout = guest_timeout_ms(m, "QPOD_VM_HELLO_TIMEOUT_MS");
	struct qp_msg msg;

	if (qp_chan_recv(m->chan, &msg, timeout, err) < 0) {
		if (*err && (*err)->code == QP_E_TIMEOUT) {
			qp_error_free(err);
			qp_error_set(err, QP_E_TIMEOUT, 0, "the VM did not say hello within %d ms",
				     timeout);
			return with_qemu_log(m, err);
		}
		qp_error_prefix(err, "wait for the VM's hello");
		/* did QEMU die (the usual cause of EOF)?  Its last words then
		 * reach the log */
		long long deadline = qp_now_ms() + 200;
		while (!qemu_gone(m) && qp_now_ms() < deadline)
			usleep(5000);
		if (m->qemu_reaped) {
			qemu_reason(m);
			return qp_error_prefix(err, "%s; then", m->reason);
		}
		return with_qemu_log(m, err);
	}
	if (qp_msg_check_sender(&msg, QP_SENDER_GUEST, err) < 0)
		return -1;
	if (msg.type != QP_MSG_HELLO)
		return qp_error_set(err, QP_E_GUEST, 0, "the VM sent %s instead of HELLO",
				    qp_msg_type_name(msg.type));
	m->tl.hello = qp_now_ns();
	m->tl.guest_init_ns = msg.u.hello.init_ns;
	m->tl.guest_hello_ns = msg.u.hello.hello_ns;
	return 0;
}

int vm_mon_boot(struct pod *pod, struct vm_mon **out, qp_error **err)
{
	const struct pod_spec *spec = pod->spec;
	_cleanup_free_ char *kernel = NULL, *init = NULL, *firmware = NULL;
	struct vm_qemu_opts o = { .dirfd = pod->dirfd, .tap_fd = -1 };
	struct vm_mon *m = calloc(1, sizeof(*m));
	_cleanup_close_ int tap = -1;
	const char *ip = NULL;
	int fd;

	if (!m)
		return qp_fail(err, ENOMEM, "vm");
	m->pod = pod;
	m->qemu_pidfd = m->listen_fd = -1;
	m->tl.request = qp_request_ns ? qp_request_ns : qp_now_ns();
	if (spec->process.terminal) {
		qp_error_set(err, QP_E_INVALID, 0, "vm pods have no terminal support yet");
		goto fail;
	}
	if (vm_pick_accel(spec_annotation(spec, "qpod.vm.accel"), &m->kvm, err) < 0 ||
	    !(firmware = vm_find_firmware(spec_annotation(spec, "qpod.vm.firmware"), err)) ||
	    !(kernel = vm_find_kernel(err)) || !(init = vm_find_guest_init(err)) ||
	    state_dir_path(m, err) < 0 || vm_write_initrd(pod->dirfd, QP_VM_INITRD, init, err) < 0)
		goto fail;
	free(pod->state->accel);
	if (!(pod->state->accel = strdup(vm_mon_accel(m)))) {
		qp_fail(err, ENOMEM, "vm");
		goto fail;
	}
	m->tl.prepared = qp_now_ns();
	if (pod_net_config(pod, &m->net, &ip)) {
		m->net.tap_vnet_hdr = 1;
		if (qp_net_config_validate(&m->net, err) < 0 ||
		    qp_net_attach_tap(&m->net, pod->id, ip, &m->lease, &tap, err) < 0)
			goto fail;
		m->has_net = true;
		if (tap < 3) { /* QEMU's stdio would take its number */
			int t = fcntl(tap, F_DUPFD_CLOEXEC, 3);
			if (t < 0) {
				qp_fail(err, errno, "dup tap fd");
				goto fail;
			}
			close(tap);
			tap = t;
		}
	}
	m->tl.network = qp_now_ns();

	o.statedir = m->statedir;
	o.kernel = kernel;
	o.firmware = firmware;
	o.rootfs = pod->rootfs;
	o.rootfs_ro = spec->root_readonly;
	o.kvm = m->kvm;
	o.vcpus = spec->opts.vcpus > 0 ? spec->opts.vcpus : 1;
	o.mem_mib = mem_mib(spec);
	o.tap_fd = tap;
	o.mac = m->lease.mac;
	if (vm_mounts_plan(spec, pod->rootfs, pod->dirfd, m->statedir, &m->mounts, err) < 0)
		goto fail;
	if (!spec->hostname && spec->ns[QP_NS_UTS].enabled && spec->ns[QP_NS_UTS].path &&
	    vm_uts_hostname(spec->ns[QP_NS_UTS].path, m->uts_hostname, sizeof(m->uts_hostname), err) < 0)
		goto fail;
	o.shares = m->mounts.shares;
	o.nshares = m->mounts.nshares;
	unlinkat(pod->dirfd, QP_VM_CHAN_SOCK, 0);
	if ((m->qemu = vm_spawn_qemu(&o, err)) < 0)
		goto fail;
	m->tl.spawned = qp_now_ns();
	/* a foreground run's monitor stays where its caller is; QEMU goes in */
	if (vm_cgroup_enter(pod, m->qemu, err) < 0)
		goto fail;
	m->qemu_pidfd = (int)syscall(SYS_pidfd_open, m->qemu, 0);
	/* the pod's pid is the monitor (this process): the one whose exit
	 * status is the workload's, that a shim or conmon can wait on */
	pod->state->pid = getpid();
	pod->state->pid_start = proc_start_time(getpid());
	pod->state->vmm_pid = m->qemu;
	pod->state->vmm_pid_start = proc_start_time(m->qemu);
	/* the tap lives as long as QEMU's copy of the fd */
	close(tap);
	tap = -1;
	if ((fd = chan_connect(m, err)) < 0)
		goto fail;
	if (!(m->chan = qp_chan_new(fd))) {
		close(fd);
		qp_fail(err, ENOMEM, "VM channel");
		goto fail;
	}
	if (wait_hello(m, err) < 0 || (m->listen_fd = ctl_listen(m, err)) < 0)
		goto fail;
	qp_debug("vm %s: hello after %.3f s of guest boot time (%s)", pod->id,
		 (double)m->tl.guest_hello_ns / 1e9, vm_mon_accel(m));
	*out = m;
	return 0;
fail:
	/* the pod never ran: nobody will delete it, so its address goes now
	 * (the tap dies with QEMU, in vm_mon_free) */
	{
		struct qp_net_config net = m->net; /* its strings belong to the pod */
		bool had_net = m->has_net;
		vm_mon_free(m);
		if (had_net)
			qp_net_detach(&net, pod->id, NULL);
	}
	return -1;
}

/* ---- RUN and signals ---- */

struct vm_client;
static void client_reply(struct vm_client *c, int status, int errnum, const char *text);
static void client_reply_err(struct vm_client *c, qp_error *e);

void vm_run_from_process(const struct qp_process *p, struct qp_run *run)
{
	static const char *const no_env[] = { NULL };
	uint32_t argc = 0, envc = 0;

	while (p->args && p->args[argc])
		argc++;
	while (p->env && p->env[envc])
		envc++;
	*run = (struct qp_run){
		.uid = p->uid,
		.gid = p->gid,
		.cwd = p->cwd ? p->cwd : "",
		.argc = argc,
		.envc = envc,
		.argv = (const char *const *)p->args,
		.env = p->env ? (const char *const *)p->env : no_env,
	};
}

/* RUN of the pod's process, with argv replaced if given (replace). */
static int send_run(struct vm_mon *m, char **argv, qp_error **err)
{
	struct qp_msg msg = { .type = QP_MSG_RUN };
	struct qp_run *r = &msg.u.run;

	vm_run_from_process(&m->pod->spec->process, r);
	if (argv) {
		r->argv = (const char *const *)argv;
		for (r->argc = 0; argv[r->argc]; r->argc++)
			;
	}
	/* the guest stays after EXIT: the monitor then sends SHUTDOWN, or the
	 * next RUN of a replace */
	r->flags = QP_RUN_F_WAIT_SHUTDOWN | (m->pod->spec->root_readonly ? QP_RUN_F_ROOTFS_RO : 0);
	r->rootfs = QP_ROOTFS_9P;
	r->rootfs_tag = "rootfs";
	r->hostname = m->pod->spec->hostname ? m->pod->spec->hostname : m->uts_hostname;
	/* the pod's mounts: applied by the first RUN (a replace's are ignored) */
	r->mounts = (const char *const *)m->mounts.entries;
	r->mountc = (uint32_t)m->mounts.n;
	if (m->has_net) {
		memcpy(r->ip, &m->lease.addr, 4);
		r->prefix = (uint8_t)m->lease.prefix;
		memcpy(r->gateway, &m->lease.gateway, 4);
		memcpy(r->mac, m->lease.mac, 6);
	}
	if (qp_chan_send(m->chan, &msg, QP_VM_SEND_TIMEOUT_MS, err) < 0)
		return qp_error_prefix(err, "send RUN to the VM");
	return 0;
}

int vm_mon_run(struct vm_mon *m, qp_error **err)
{
	if (m->run_sent)
		return qp_error_set(err, QP_E_STATE, 0, "pod \"%s\" was started already", m->pod->id);
	if (send_run(m, NULL, err) < 0)
		return -1;
	m->run_sent = true;
	m->tl.run = qp_now_ns();
	m->start_deadline = qp_now_ms() + guest_timeout_ms(m, "QPOD_VM_START_TIMEOUT_MS");
	return 0;
}

static int guest_input(struct vm_mon *m, qp_error **err);

int vm_mon_wait_started(struct vm_mon *m, qp_error **err)
{
	while (!m->started && !m->exec_err && !m->exited && !m->chan->broken) {
		long long left = m->start_deadline - qp_now_ms();
		struct pollfd p = { .fd = m->chan->fd, .events = POLLIN };
		if (left <= 0)
			return qp_error_set(err, QP_E_TIMEOUT, 0,
					    "the VM did not start the workload within %d ms of RUN",
					    guest_timeout_ms(m, "QPOD_VM_START_TIMEOUT_MS"));
		int r = poll(&p, 1, (int)left);
		if (r < 0 && errno != EINTR)
			return qp_fail(err, errno, "poll the VM channel");
		/* a channel that fails is vm_mon_serve's to report, with the
		 * reason QEMU gives */
		if (r > 0 && guest_input(m, NULL) < 0)
			break;
	}
	return 0;
}

/* ---- replace: a new workload in the running VM ---- */

#define REPLACE_KILL_MS 5000 /* SIGTERM, then SIGKILL after this */

static void replace_free(struct vm_mon *m)
{
	if (m->rep_argv) {
		for (char **a = m->rep_argv; *a; a++)
			free(*a);
		free(m->rep_argv);
	}
	m->rep_argv = NULL;
	m->rep_client = NULL;
	m->replacing = false;
}

static int replace_begin(struct vm_mon *m, struct vm_client *c, const struct qp_msg *msg, qp_error **err)
{
	struct qp_msg sig = { .type = QP_MSG_SIGNAL, .u.signal.signo = SIGTERM };

	if (!m->started || m->exited || m->stopping || m->over)
		return qp_error_set(err, QP_E_STATE, 0, "pod \"%s\" is not running", m->pod->id);
	if (m->replacing)
		return qp_error_set(err, QP_E_STATE, 0, "a replace of pod \"%s\" is in progress", m->pod->id);
	if (m->paused)
		return qp_error_set(err, QP_E_STATE, 0, "pod \"%s\" is paused", m->pod->id);
	if (msg->u.replace.argc) {
		if (!(m->rep_argv = calloc(msg->u.replace.argc + 1, sizeof(char *))))
			return qp_fail(err, ENOMEM, "replace");
		for (uint32_t i = 0; i < msg->u.replace.argc; i++)
			if (!(m->rep_argv[i] = strdup(msg->u.replace.argv[i]))) {
				replace_free(m);
				return qp_fail(err, ENOMEM, "replace");
			}
	}
	m->rep_request = qp_now_ns();
	m->rep_kill_at = qp_now_ms() + REPLACE_KILL_MS;
	if (qp_chan_send(m->chan, &sig, QP_VM_SEND_TIMEOUT_MS, err) < 0) {
		replace_free(m);
		return qp_error_prefix(err, "send a signal to the VM");
	}
	m->rep_client = c;
	m->replacing = true;
	m->rep_exit = 0;
	return 0;
}

/* The old workload's EXIT arrived during a replace: start the new one. */
static void replace_exit(struct vm_mon *m)
{
	qp_error *e = NULL;

	m->rep_exit = qp_now_ns();
	m->started = false;
	if (send_run(m, m->rep_argv, &e) < 0) {
		client_reply_err(m->rep_client, e);
		qp_error_free(&e);
		replace_free(m);
		m->exited = true; /* nothing runs: the pod ends */
		set_reason(m, "replace failed");
	}
}

/* STARTED (or the exec error) of the new workload: answer the client. */
static void replace_done(struct vm_mon *m, qp_error *e)
{
	char text[256];
	long long t = qp_now_ns();

	if (e)
		client_reply_err(m->rep_client, e);
	else {
		snprintf(text, sizeof(text),
			 "{\"replace_ms\":%.3f,\"stop_ms\":%.3f,\"gap_ms\":%.3f}",
			 (double)(t - m->rep_request) / 1e6, (double)(m->rep_exit - m->rep_request) / 1e6,
			 (double)(t - m->rep_exit) / 1e6);
		client_reply(m->rep_client, 0, 0, text);
	}
	replace_free(m);
}

int vm_mon_pause(struct vm_mon *m, bool pause, qp_error **err)
{
	if (m->over || m->stopping)
		return qp_error_set(err, QP_E_STATE, 0, "pod \"%s\" is stopped", m->pod->id);
	if (pause == m->paused)
		return qp_error_set(err, QP_E_STATE, 0, "pod \"%s\" is %s", m->pod->id,
				    pause ? "paused already" : "not paused");
	if (!m->qmp && vm_qmp_connect(m->pod->dirfd, &m->qmp, err) < 0)
		return -1;
	if (vm_qmp_execute(m->qmp, pause ? "stop" : "cont", err) < 0)
		return qp_error_prefix(err, "%s the VM", pause ? "pause" : "resume");
	m->paused = pause;
	if (pause)
		return state_write_file(m->pod->dirfd, QP_VM_PAUSED, "1\n", 2, err);
	unlinkat(m->pod->dirfd, QP_VM_PAUSED, 0);
	return 0;
}

static void begin_stop(struct vm_mon *m)
{
	struct qp_msg msg = { .type = QP_MSG_SHUTDOWN };

	if (m->stopping)
		return;
	/* a paused guest would not see SHUTDOWN: let it run again first */
	if (m->paused)
		vm_mon_pause(m, false, NULL);
	m->stopping = true;
	m->stop_deadline = qp_now_ms() + QP_VM_STOP_TIMEOUT_MS;
	/* no channel yet (QEMU never opened it): nothing to tell the guest */
	if (m->chan && !m->chan->broken)
		qp_chan_send(m->chan, &msg, 100, NULL);
}

int vm_mon_signal(struct vm_mon *m, int sig, qp_error **err)
{
	struct qp_msg msg = { .type = QP_MSG_SIGNAL };

	if (m->over || m->exited)
		return qp_error_set(err, QP_E_STATE, 0, "pod \"%s\" is stopped", m->pod->id);
	if (!m->run_sent) {
		/* created, nothing runs yet: the signal ends the pod (OCI kill of
		 * a created container) unless it is one that would not kill */
		if (sig == SIGCHLD || sig == SIGCONT || sig == SIGURG || sig == SIGWINCH || sig == 0)
			return 0;
		set_reason(m, "killed by signal %d before start", sig);
		begin_stop(m);
		return 0;
	}
	if (sig < 1 || sig > QP_PROTO_MAX_SIGNAL)
		return qp_error_set(err, QP_E_INVALID, 0, "signal %d out of range", sig);
	msg.u.signal.signo = (uint32_t)sig;
	if (qp_chan_send(m->chan, &msg, QP_VM_SEND_TIMEOUT_MS, err) < 0)
		return qp_error_prefix(err, "send a signal to the VM");
	return 0;
}

/* ---- clients ---- */

static void client_close(struct vm_client *c)
{
	if (!c || !c->ch)
		return;
	close(c->ch->fd);
	qp_chan_free(c->ch);
	*c = (struct vm_client){ 0 };
}

static void client_send(struct vm_client *c, const struct qp_msg *msg)
{
	if (!c)
		return;
	/* a client that does not read within the deadline loses its link */
	if (c->ch && qp_chan_send(c->ch, msg, 1000, NULL) < 0)
		client_close(c);
}

static void client_reply(struct vm_client *c, int status, int errnum, const char *text)
{
	struct qp_msg msg = { .type = QP_MSG_CTL_REPLY };
	char buf[QP_PROTO_MAX_TEXT + 1];

	snprintf(buf, sizeof(buf), "%s", text ? text : "");
	msg.u.reply.status = status;
	msg.u.reply.errnum = errnum;
	msg.u.reply.text = buf;
	client_send(c, &msg);
}

static void client_reply_err(struct vm_client *c, qp_error *e)
{
	client_reply(c, e ? e->code : QP_E_GENERIC, e ? e->errnum : 0, e && e->msg ? e->msg : "failed");
}

static void client_accept(struct vm_mon *m)
{
	int fd = accept4(m->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

	if (fd < 0)
		return;
	for (int i = 0; i < MAX_CLIENTS; i++) {
		if (!m->cl[i].ch) {
			if (!(m->cl[i].ch = qp_chan_new(fd)))
				break;
			return;
		}
	}
	close(fd); /* full: the client sees EOF */
}

static void client_request(struct vm_mon *m, struct vm_client *c, struct qp_msg *msg)
{
	qp_error *e = NULL;

	switch (msg->type) {
	case QP_MSG_CTL_START:
		if (m->over || m->stopping)
			qp_error_set(&e, QP_E_STATE, 0, "pod \"%s\" is stopped", m->pod->id);
		else if (vm_mon_run(m, &e) == 0) {
			c->want_start = true; /* answered on STARTED or the exec error */
			return;
		}
		break;
	case QP_MSG_SIGNAL:
		vm_mon_signal(m, (int)msg->u.signal.signo, &e);
		break;
	case QP_MSG_CTL_PAUSE:
	case QP_MSG_CTL_RESUME:
		vm_mon_pause(m, msg->type == QP_MSG_CTL_PAUSE, &e);
		break;
	case QP_MSG_SHUTDOWN:
		set_reason(m, "stopped on request");
		begin_stop(m);
		break;
	case QP_MSG_CTL_REPLACE:
		if (replace_begin(m, c, msg, &e) == 0)
			return; /* answered when the new workload runs */
		break;
	case QP_MSG_MEMINFO_REQ:
		if (m->paused) {
			qp_error_set(&e, QP_E_STATE, 0, "pod \"%s\" is paused: its guest cannot answer",
				     m->pod->id);
			break;
		}
		if (!c->want_meminfo && qp_chan_send(m->chan, msg, QP_VM_SEND_TIMEOUT_MS, &e) == 0)
			c->want_meminfo = true;
		if (!e)
			return;
		break;
	case QP_MSG_EXEC:
		if (!m->started || m->exited || m->stopping)
			qp_error_set(&e, QP_E_STATE, 0, "pod \"%s\" is not running", m->pod->id);
		else if (m->paused) /* as runc: no exec into a paused pod */
			qp_error_set(&e, QP_E_STATE, 0, "pod \"%s\" is paused", m->pod->id);
		else if (c->exec_id)
			qp_error_set(&e, QP_E_STATE, 0, "one exec per connection");
		else {
			msg->u.run.id = ++m->next_exec ? m->next_exec : ++m->next_exec;
			if (qp_chan_send(m->chan, msg, QP_VM_SEND_TIMEOUT_MS, &e) == 0) {
				c->exec_id = msg->u.run.id;
				return;
			}
		}
		break;
	default:
		qp_error_set(&e, QP_E_INVALID, 0, "%s is not a request", qp_msg_type_name(msg->type));
		break;
	}
	if (e)
		client_reply_err(c, e);
	else
		client_reply(c, 0, 0, "");
	qp_error_free(&e);
}

static void client_input(struct vm_mon *m, struct vm_client *c)
{
	struct qp_msg msg;
	qp_error *e = NULL;
	int k;

	if (qp_chan_fill(c->ch, &e) < 0) {
		qp_error_free(&e);
		if (m->rep_client == c)
			m->rep_client = NULL;
		client_close(c);
		return;
	}
	while (c->ch && (k = qp_chan_next(c->ch, &msg, &e)) != 0) {
		if (k < 0 || qp_msg_check_sender(&msg, QP_SENDER_HOST | QP_SENDER_CTL, &e) < 0) {
			client_reply_err(c, e);
			qp_error_free(&e);
			client_close(c);
			return;
		}
		client_request(m, c, &msg);
	}
}

static struct vm_client *exec_client(struct vm_mon *m, uint32_t id)
{
	for (int i = 0; i < MAX_CLIENTS; i++)
		if (m->cl[i].ch && m->cl[i].exec_id == id)
			return &m->cl[i];
	return NULL;
}

/* ---- guest messages ---- */

/* A bounded printable copy of guest text. */
static void clean_text(const char *s, char *out, size_t size)
{
	size_t i = 0;
	for (; s && s[i] && i + 1 < size; i++)
		out[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
	out[i] = '\0';
}

static void answer_start(struct vm_mon *m, qp_error *e)
{
	for (int i = 0; i < MAX_CLIENTS; i++) {
		struct vm_client *c = &m->cl[i];
		if (c->ch && c->want_start) {
			c->want_start = false;
			if (e)
				client_reply_err(c, e);
			else
				client_reply(c, 0, 0, "");
		}
	}
}

/* One message from the guest; -1 ends the pod with *err. */
static int guest_message(struct vm_mon *m, const struct qp_msg *msg, qp_error **err)
{
	struct vm_client *c;
	char text[512];

	switch (msg->type) {
	case QP_MSG_STDOUT:
	case QP_MSG_STDERR:
		/* a closed stdout of ours must not stop the relay */
		qp_write_all(msg->type == QP_MSG_STDOUT ? 1 : 2, msg->u.data.data, msg->u.data.len);
		return 0;
	case QP_MSG_STARTED:
		m->started = true;
		if (m->replacing) {
			replace_done(m, NULL);
			return 0;
		}
		m->tl.started = qp_now_ns();
		m->tl.guest_exec_ns = msg->u.started.exec_ns;
		/* now, for `qpod state`; with create + start, the request is
		 * create's, so start_total includes the wait for start */
		vm_tl_save(m->pod->dirfd, &m->tl);
		answer_start(m, NULL);
		return 0;
	case QP_MSG_EXIT:
		if (m->replacing) {
			replace_exit(m);
			return 0;
		}
		m->exited = true;
		m->exit_code = msg->u.exit.code;
		set_reason(m, "exited with status %d", msg->u.exit.code);
		return 0;
	case QP_MSG_ERROR:
		clean_text(msg->u.error.text, text, sizeof(text));
		if (msg->u.error.code == QP_PERR_EXEC) {
			/* EXIT 127 follows; the error gives qpod's exit code */
			qp_error_free(&m->exec_err);
			qp_error_set(&m->exec_err, QP_E_EXEC, 0, "%s", text);
			if (m->exec_err)
				m->exec_err->errnum = msg->u.error.errnum;
			if (m->replacing)
				replace_done(m, m->exec_err);
			else
				answer_start(m, m->exec_err);
			return 0;
		}
		if (msg->u.error.code == QP_PERR_STATE) {
			qp_debug("vm %s: guest: %s", m->pod->id, text);
			return 0;
		}
		return qp_error_set(err, QP_E_GUEST, msg->u.error.errnum, "the VM failed: %s", text);
	case QP_MSG_MEMINFO:
		for (int i = 0; i < MAX_CLIENTS; i++)
			if (m->cl[i].ch && m->cl[i].want_meminfo) {
				m->cl[i].want_meminfo = false;
				client_send(&m->cl[i], msg);
			}
		return 0;
	case QP_MSG_EXEC_STARTED:
		if ((c = exec_client(m, msg->u.exec_started.id)))
			client_send(c, msg);
		return 0;
	case QP_MSG_EXEC_OUT:
		if ((c = exec_client(m, msg->u.exec_out.id)))
			client_send(c, msg);
		return 0;
	case QP_MSG_EXEC_EXIT:
		if ((c = exec_client(m, msg->u.exec_exit.id))) {
			client_send(c, msg);
			c->exec_id = 0;
		}
		return 0;
	default: /* a late HELLO: harmless */
		return 0;
	}
}

static int guest_input(struct vm_mon *m, qp_error **err)
{
	struct qp_msg msg;
	int k;

	if (qp_chan_fill(m->chan, err) < 0)
		return -1;
	while ((k = qp_chan_next(m->chan, &msg, err)) != 0) {
		if (k < 0 || qp_msg_check_sender(&msg, QP_SENDER_GUEST, err) < 0)
			return qp_error_prefix(err, "VM channel");
		if (guest_message(m, &msg, err) < 0)
			return -1;
	}
	return 0;
}

/* ---- the loop ---- */

static void write_stopped(struct vm_mon *m)
{
	char line[300];
	int n = snprintf(line, sizeof(line), "%s\n", m->reason[0] ? m->reason : "stopped");

	state_write_file(m->pod->dirfd, QP_VM_STOPPED, line, (size_t)n, NULL);
}

int vm_mon_serve(struct vm_mon *m, int sigfd, int *code, qp_error **err)
{
	qp_error *fail = NULL;

	*code = 0;
	while (!m->over) {
		struct pollfd p[4 + MAX_CLIENTS];
		int timeout = -1;

		if (m->exited)
			begin_stop(m); /* SHUTDOWN: the guest waits for it after EXIT */
		if (m->replacing && !m->rep_exit) {
			long long left = m->rep_kill_at - qp_now_ms();
			if (left <= 0) {
				vm_mon_signal(m, SIGKILL, NULL);
				m->rep_kill_at = qp_now_ms() + 3600 * 1000LL;
			} else
				timeout = (int)left;
		}
		/* a guest that never answers RUN: a bounded, stated wait */
		if (m->run_sent && !m->started && !m->exited && !m->stopping && !m->exec_err) {
			long long left = m->start_deadline - qp_now_ms();
			if (left <= 0) {
				/* kept as the workload's failure: it is what the
				 * pod ends with, whatever the channel says next */
				qp_error_set(&m->exec_err, QP_E_TIMEOUT, 0,
					     "the VM did not start the workload within %d ms of RUN",
					     guest_timeout_ms(m, "QPOD_VM_START_TIMEOUT_MS"));
				set_reason(m, "%s", m->exec_err ? m->exec_err->msg : "start timeout");
				answer_start(m, m->exec_err);
				begin_stop(m);
			} else
				timeout = (int)left;
		}
		if (m->stopping) {
			long long left = m->stop_deadline - qp_now_ms();
			if (left <= 0) {
				qemu_kill(m);
				set_reason(m, "qemu killed after a %d ms stop timeout", QP_VM_STOP_TIMEOUT_MS);
			}
			timeout = left > 0 ? (int)left : 0;
		}
		p[0] = (struct pollfd){ .fd = m->chan->broken ? -1 : m->chan->fd, .events = POLLIN };
		p[1] = (struct pollfd){ .fd = m->qemu_pidfd, .events = POLLIN };
		p[2] = (struct pollfd){ .fd = m->listen_fd, .events = POLLIN };
		p[3] = (struct pollfd){ .fd = sigfd, .events = POLLIN };
		for (int i = 0; i < MAX_CLIENTS; i++)
			p[4 + i] = (struct pollfd){ .fd = m->cl[i].ch ? m->cl[i].ch->fd : -1,
						    .events = POLLIN };
		if (m->qemu_pidfd < 0 && timeout < 0)
			timeout = 50; /* no pidfd: poll for QEMU's end */
		if (poll(p, QP_ARRAY_SIZE(p), timeout) < 0) {
			if (errno == EINTR)
				continue;
			qp_fail(&fail, errno, "poll");
			break;
		}
		if (p[3].revents & POLLIN) {
			struct signalfd_siginfo si;
			while (read(sigfd, &si, sizeof(si)) == sizeof(si))
				vm_mon_signal(m, (int)si.ssi_signo, NULL);
		}
		if (p[0].revents && guest_input(m, &fail) < 0) {
			/* EOF without EXIT: QEMU died or the guest broke down */
			if (!m->exited) {
				qemu_stop(m, 200);
				if (m->qemu_reaped)
					qemu_reason(m);
				set_reason(m, "%s", fail ? fail->msg : "VM channel failed");
				qp_error_prefix(&fail, "the VM ended without an exit status");
			} else {
				qp_error_free(&fail);
			}
			begin_stop(m);
		}
		if (p[2].revents)
			client_accept(m);
		for (int i = 0; i < MAX_CLIENTS; i++)
			if (p[4 + i].fd >= 0 && p[4 + i].revents)
				client_input(m, &m->cl[i]);
		if (qemu_gone(m)) {
			qemu_reason(m);
			/* the channel may still hold the last output and EXIT */
			if (!m->chan->broken)
				while (guest_input(m, NULL) == 0 && !m->exited) {
					struct pollfd q = { .fd = m->chan->fd, .events = POLLIN };
					if (poll(&q, 1, 50) <= 0)
						break;
				}
			if (!m->exited && !fail && !m->exec_err)
				qp_error_set(&fail, QP_E_GENERIC, 0, "the VM ended without an exit status: %s",
					     m->reason);
			m->over = true;
		}
	}
	m->tl.ended = qp_now_ns();
	write_stopped(m);
	vm_tl_save(m->pod->dirfd, &m->tl);
	/* clients still waiting learn the end */
	for (int i = 0; i < MAX_CLIENTS; i++) {
		struct vm_client *c = &m->cl[i];
		if (c->ch && (c->want_start || c->exec_id || c->want_meminfo || c == m->rep_client)) {
			qp_error *e = NULL;
			qp_error_set(&e, QP_E_STATE, 0, "the pod stopped: %s", m->reason);
			client_reply_err(c, e);
			qp_error_free(&e);
		}
		client_close(c);
	}
	replace_free(m);
	if (m->exec_err) {
		qp_error_free(&fail);
		*err = m->exec_err;
		m->exec_err = NULL;
		return -1;
	}
	if (fail) {
		*err = fail;
		return -1;
	}
	*code = m->exit_code < 0 || m->exit_code > 255 ? 255 : m->exit_code;
	return 0;
}

void vm_mon_free(struct vm_mon *m)
{
	if (!m)
		return;
	if (m->qemu > 0 && !qemu_gone(m)) {
		begin_stop(m);
		qemu_stop(m, m->chan ? 1000 : 0);
	}
	for (int i = 0; i < MAX_CLIENTS; i++)
		client_close(&m->cl[i]);
	if (m->chan) {
		close(m->chan->fd);
		qp_chan_free(m->chan);
	}
	if (m->listen_fd >= 0)
		close(m->listen_fd);
	if (m->qemu_pidfd >= 0)
		close(m->qemu_pidfd);
	vm_qmp_free(m->qmp);
	vm_mounts_free(&m->mounts);
	unlinkat(m->pod->dirfd, QP_VM_CHAN_SOCK, 0);
	unlinkat(m->pod->dirfd, QP_VM_CTL_SOCK, 0);
	unlinkat(m->pod->dirfd, QP_VM_QMP_SOCK, 0);
	unlinkat(m->pod->dirfd, QP_VM_PAUSED, 0);
	qp_error_free(&m->exec_err);
	free(m);
}
