/* runtime/vm/driver.c — the QEMU microVM pod driver (struct pod_driver).
 * A foreground `qpod run` is the pod's monitor itself; `qpod create` forks a
 * monitor that outlives it; every other command reaches the monitor through
 * ctl.sock (vm.h explains the model). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hooks.h"
#include "host/cgroup/cgroup.h"
#include "net/net.h"
#include "pod.h"
#include "spec/resources.h"
#include "util/cleanup.h"
#include "util/io.h"
#include "util/log.h"
#include "util/report.h"
#include "util/strv.h"
#include "vm/libvirt/libvirt.h"
#include "vm/qemu/qemu.h"
#include "vm/snapshot/snapshot.h"
#include "vm/timeline.h"
#include "vm/vm.h"

#define CREATE_TIMEOUT_MS 90000 /* the monitor's own hello timeout ends earlier */
#define CTL_TIMEOUT_MS 10000
#define START_TIMEOUT_MS 60000

/* The monitor in this process, if this process is one (qpod handles one
 * pod per process). */
static struct vm_mon *self_mon;

/* ---- the detached monitor ---- */

static __attribute__((noreturn)) void monitor_main(struct pod *pod, int wfd)
{
	struct vm_mon *m = NULL;
	qp_error *err = NULL;
	sigset_t none;
	int code, d, keep[2];

	/* its own session (a terminal's signals are not for it), no lock of
	 * the state dir (a new open file description), no inherited fds but
	 * stdio: the workload's output goes where the creator's went */
	setsid();
	/* The monitor holds the pod's UTS namespace with the pod's hostname:
	 * the guest has its own kernel, but a client that makes another
	 * container join "the pod's UTS namespace" by path (the CRI: the
	 * sandbox's) finds the hostname there (uts.c) */
	const struct qp_namespace *uts = &pod->spec->ns[QP_NS_UTS];
	if (uts->enabled && !uts->path && pod->spec->hostname &&
	    (unshare(CLONE_NEWUTS) < 0 ||
	     sethostname(pod->spec->hostname, strlen(pod->spec->hostname)) < 0) &&
	    geteuid() == 0) {
		qp_fail(&err, errno, "the pod's UTS namespace");
		qp_report_err(wfd, err, "");
		_exit(1);
	}
	struct qp_cgroup_entry entry = QP_CGROUP_ENTRY_INIT;
	if (vm_cgroup_entry_open(pod, &entry, &err) < 0 || qp_cgroup_entry_use(&entry, &err) < 0) {
		qp_report_err(wfd, err, "");
		_exit(1);
	}
	qp_cgroup_entry_close(&entry);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_IGN);
	d = openat(pod->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d < 0) {
		qp_fail(&err, errno, "reopen the state dir");
		qp_report_err(wfd, err, "");
		_exit(1);
	}
	close(pod->dirfd);
	pod->dirfd = d;
	pod->rootfd = -1;
	pod->sync_fd = pod->wait_fd = -1;
	keep[0] = d < wfd ? d : wfd;
	keep[1] = d < wfd ? wfd : d;
	qp_close_fds_except(keep, 2);
	if (chdir("/") < 0) {
		qp_fail(&err, errno, "chdir /");
		qp_report_err(wfd, err, "");
		_exit(1);
	}
	if (vm_mon_boot(pod, &m, &err) < 0) {
		qp_report_err(wfd, err, "boot failed");
		_exit(1);
	}
	/* the NIC's backend last: its text has spaces ("-": no NIC) */
	if (qp_report_ok(wfd, "%d %llu %s %s", (int)vm_mon_qemu_pid(m), (unsigned long long)pod->state->vmm_pid_start,
			 vm_mon_accel(m), pod->state->nic ? pod->state->nic : "-") < 0)
		_exit(1); /* the creator is gone: it will not record this pod */
	close(wfd);
	/* the monitor's exit status is the workload's: clients wait on it */
	if (vm_mon_serve(m, -1, &code, &err) < 0)
		code = 125; /* qpod's own failure status (cli.h) */
	qp_error_free(&err);
	vm_mon_free(m);
	_exit(code);
}

static int create_detached(struct pod *pod, qp_error **err)
{
	char buf[QP_REPORT_MAX], accel[8] = "";
	const char *rest;
	int fd, qpid = 0;
	unsigned long long start = 0;
	pid_t pid = qp_report_fork(&fd, "the VM monitor", err);

	if (pid < 0)
		return -1;
	if (pid == 0)
		monitor_main(pod, fd);
	int n = qp_report_read(fd, CREATE_TIMEOUT_MS, buf, sizeof(buf));
	close(fd);
	if (n < 0) {
		qp_error_set(err, QP_E_TIMEOUT, 0, "the VM monitor did not report within %d s",
			     CREATE_TIMEOUT_MS / 1000);
		kill(pid, SIGKILL);
	} else if (qp_report_parse(buf, &rest, "the VM monitor died without a report", err) == 0) {
		int at = 0;
		if (sscanf(rest, "%d %llu %7s %n", &qpid, &start, accel, &at) == 3 && qpid > 0 && at > 0) {
			size_t nic = strcspn(rest + at, "\n");
			pod->state->pid = pid;
			pod->state->pid_start = proc_start_time(pid);
			pod->state->vmm_pid = qpid;
			pod->state->vmm_pid_start = start;
			free(pod->state->accel);
			pod->state->accel = strdup(accel);
			free(pod->state->nic);
			pod->state->nic = nic && strncmp(rest + at, "-", nic) ? strndup(rest + at, nic) : NULL;
			return 0;
		}
		qp_error_set(err, QP_E_GENERIC, 0, "the VM monitor sent a malformed report");
		kill(pid, SIGKILL);
	}
	waitpid(pid, NULL, 0);
	return -1;
}

/* ---- the pod's cgroup ----
 * The monitor and QEMU live in a cgroup of the pod's own (cgroupsPath, or
 * qpod/ID), without limits: the guest's RAM is its limit, and a cgroup cap
 * on QEMU would only OOM-kill it.  A client that reads the pod's cgroup
 * from its pid (containerd's shim, for `ctr task metrics` and CRI stats)
 * then sees the VMM's usage, and delete takes what is left with it. */
static int cgroup_prepare(struct pod *pod, qp_error **err)
{
	struct qp_cgroup *cg = NULL;
	/* no limits, and no device rules: QEMU is a host process that opens
	 * /dev/kvm, vhost and tun (the guest's devices are the VM's own) */
	struct qp_resources none = { .skip_devices = true };

	if (qp_cgroup_create_for_pod(pod, &none, false, &cg, err) < 0)
		return -1;
	qp_cgroup_free(cg);
	return 0;
}

int vm_cgroup_entry_open(struct pod *pod, struct qp_cgroup_entry *e, qp_error **err)
{
	struct qp_cgroup *cg = NULL;
	int r = 0;

	e->n = 0;
	e->dir_fd = -1;
	if (!pod->state->cgroup)
		return 0;
	r = qp_cgroup_open(pod->state->cgroup, &cg, err);
	if (r == 0)
		r = qp_cgroup_entry_open(cg, e, err);
	qp_cgroup_free(cg);
	return r < 0 ? qp_error_prefix(err, "enter the pod's cgroup") : 0;
}

/* Once QEMU and the monitor are gone: kill what is left, remove it. */
static int cgroup_remove(struct pod *pod, qp_error **err)
{
	struct qp_cgroup *cg = NULL;
	int r = 0;

	if (!pod->state->cgroup || qp_cgroup_open(pod->state->cgroup, &cg, NULL) < 0)
		return 0;
	for (int i = 0; i < 200 && state_pid_alive(pod->state) && pod->state->pid != getpid(); i++)
		usleep(5000);
	qp_cgroup_signal_all(cg, SIGKILL, NULL);
	r = qp_cgroup_destroy(cg, err);
	qp_cgroup_free(cg);
	return r;
}

/* ---- driver ops ---- */

static int vm_destroy(struct pod *pod, qp_error **err);

/* createContainer and startContainer hooks run in the container's
 * namespaces, which are the guest's: the host has none to run them in
 * (docs/DECISIONS.md "Hooks"). */
int vm_refuse_guest_hooks(const struct pod_spec *spec, qp_error **err)
{
	static const enum qp_hook_kind in_guest[] = { QP_HOOK_CREATE_CONTAINER,
						      QP_HOOK_START_CONTAINER };

	for (size_t i = 0; i < QP_ARRAY_SIZE(in_guest); i++)
		if (spec->n_hooks[in_guest[i]])
			return qp_error_set(err, QP_E_INVALID, 0,
					    "hooks.%s: not supported in vm pods (they would run inside "
					    "the guest)",
					    qp_hook_name(in_guest[i]));
	return 0;
}

/* The guest applies tmpfs mounts and binds of directories and files
 * (mounts.c); a mount it cannot apply (another type, an option it cannot
 * honour) is named in a warning.  Refusing those would refuse podman's and
 * the CRI's pods for a detail (docs/DECISIONS.md, "VM pods"). */
static void warn_unapplied_mounts(const struct pod_spec *spec)
{
	for (size_t i = 0; i < spec->n_mounts; i++) {
		const struct qp_mount *m = &spec->mounts[i];
		const char *why;
		char shown[QP_SHOWN_MAX], w[QP_SHOWN_MAX];
		if (!vm_mount_applied(m, &why))
			qp_warn("vm pod: the mount on \"%s\" is not applied inside the VM (%s)",
				qp_shown(m->destination, shown), qp_shown(why, w));
	}
}

static int vm_create(struct pod *pod, qp_error **err)
{
	if (pod->io.preserve_fds > 0)
		return qp_error_set(err, QP_E_INVALID, 0, "--preserve-fds is not supported for vm pods "
				    "(host fds cannot reach the guest)");
	for (int c = 0; c < QP_TIME_COUNT; c++)
		if (pod->spec->time_offsets[c].set)
			return qp_error_set(err, QP_E_INVALID, 0, "linux.timeOffsets: not supported for vm pods "
					    "(the guest's clocks are its own)");
	if (spec_resources_has_blkio(&pod->spec->resources))
		return qp_error_set(err, QP_E_INVALID, 0, "linux.resources.blockIO: not supported for vm pods (the "
				    "guest has no block device: its root and mounts are QEMU's 9p shares)");
	if (vm_refuse_guest_hooks(pod->spec, err) < 0 || cgroup_prepare(pod, err) < 0)
		return -1;
	pod->building = true;
	if (!pod->io.foreground) {
		if (create_detached(pod, err) < 0) {
			cgroup_remove(pod, NULL);
			return -1;
		}
	} else {
		if (vm_mon_boot(pod, &self_mon, err) < 0) {
			cgroup_remove(pod, NULL);
			return -1;
		}
		pod->wait_fd = -1; /* the monitor owns its fds */
	}
	/* the VM is booted and waits for its workload: what comes closest to
	 * "the namespaces exist, pivot_root has not happened" */
	if (pod_hooks_create_runtime(pod, pod->state->pid, err) < 0) {
		vm_destroy(pod, NULL);
		return -1;
	}
	warn_unapplied_mounts(pod->spec); /* once the pod exists: not before an error */
	return 0;
}

static int vm_start(struct pod *pod, qp_error **err)
{
	struct qp_msg req = { .type = QP_MSG_CTL_START };

	if (self_mon)
		return vm_mon_run(self_mon, err) < 0 ? -1 : vm_mon_wait_started(self_mon, err);
	return vm_ctl_call(pod->dirfd, &req, NULL, NULL, START_TIMEOUT_MS, err);
}

static enum qp_status vm_status(struct pod *pod)
{
	if (!state_pid_alive(pod->state)) {
		if (!pod->state->stop_reason) {
			char *text = NULL;
			size_t len;
			if (state_read_file(pod->dirfd, QP_VM_STOPPED, 512, &text, &len, NULL) == 0) {
				text[strcspn(text, "\n")] = '\0';
				pod->state->stop_reason = text;
			} else if (pod->state->pid) {
				/* it ended without writing why: it was killed */
				pod->state->stop_reason = strdup("the pod's VM monitor died");
			}
		}
		return QP_STATUS_STOPPED;
	}
	if (faccessat(pod->dirfd, QP_VM_PAUSED, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
		return QP_STATUS_PAUSED; /* the monitor's mark, while QEMU is stopped */
	return pod->state->status == QP_STATUS_RUNNING ? QP_STATUS_RUNNING : QP_STATUS_CREATED;
}

/* SIGKILL QEMU (not our child) and wait until it is gone, bounded. */
static void kill_qemu(struct pod *pod, int wait_ms)
{
	_cleanup_close_ int pidfd = -1;

	if (!state_vmm_alive(pod->state))
		return;
	pidfd = (int)syscall(SYS_pidfd_open, pod->state->vmm_pid, 0);
	if (pidfd < 0)
		return;
	/* first let it go by itself (the monitor stops it), then force */
	struct pollfd p = { .fd = pidfd, .events = POLLIN };
	if (wait_ms > 0 && poll(&p, 1, wait_ms) == 1)
		return;
	syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
	poll(&p, 1, 2000);
}

static int vm_kill(struct pod *pod, int sig, int all, qp_error **err)
{
	struct qp_msg req = { .type = QP_MSG_SIGNAL };
	qp_error *e = NULL;

	(void)all; /* the guest kernel holds every process of the pod */
	if (self_mon)
		return vm_mon_signal(self_mon, sig, err);
	if (sig < 1 || sig > QP_PROTO_MAX_SIGNAL)
		return qp_error_set(err, QP_E_INVALID, 0, "signal %d out of range", sig);
	req.u.signal.signo = (uint32_t)sig;
	if (vm_ctl_call(pod->dirfd, &req, NULL, NULL, CTL_TIMEOUT_MS, &e) == 0)
		return 0;
	/* no monitor: only QEMU is left, and only SIGKILL is meaningful */
	if (e->code == QP_E_STATE && state_vmm_alive(pod->state) && sig == SIGKILL) {
		qp_error_free(&e);
		kill_qemu(pod, 0);
		return 0;
	}
	if (err)
		*err = e;
	else
		qp_error_free(&e); /* kill --all of a stopped pod: no error wanted */
	return -1;
}

static int vm_destroy(struct pod *pod, qp_error **err)
{
	struct qp_net_config net;

	if (self_mon) {
		vm_mon_free(self_mon);
		self_mon = NULL;
	} else if (state_vmm_alive(pod->state)) {
		struct qp_msg req = { .type = QP_MSG_SHUTDOWN };
		bool asked = vm_ctl_call(pod->dirfd, &req, NULL, NULL, CTL_TIMEOUT_MS, NULL) == 0;
		kill_qemu(pod, asked ? QP_VM_STOP_TIMEOUT_MS + 1000 : 0);
	}
	if (state_vmm_alive(pod->state))
		return qp_error_set(err, QP_E_GENERIC, 0, "qemu (pid %d) is still alive",
				    pod->state->vmm_pid);
	/* a detached monitor writes its last files after QEMU ends, then
	 * removes ctl.sock: wait for that (bounded) before the dir goes */
	for (int i = 0; i < 400 && state_pid_alive(pod->state) && pod->state->pid != getpid() &&
			faccessat(pod->dirfd, QP_VM_CTL_SOCK, F_OK, AT_SYMLINK_NOFOLLOW) == 0; i++)
		usleep(5000); /* (a dead monitor removes nothing: no wait) */
	if (pod_net_config(pod, &net, NULL) && qp_net_detach(&net, pod->id, err) < 0)
		return -1;
	if (vm_net_unwire(pod, err) < 0)
		return -1;
	unlinkat(pod->dirfd, QP_VM_CHAN_SOCK, 0);
	unlinkat(pod->dirfd, QP_VM_CTL_SOCK, 0);
	unlinkat(pod->dirfd, QP_VM_INITRD, 0);
	vm_mounts_unstage(pod->dirfd);
	return cgroup_remove(pod, err);
}

static int vm_wait_fd(struct pod *pod, qp_error **err)
{
	if (!self_mon)
		return qp_error_set(err, QP_E_STATE, 0, "only the process that created vm pod \"%s\" can wait for it",
				    pod->id);
	return vm_mon_poll_fd(self_mon);
}

/* The signals pod_wait forwards; they are blocked while it runs, so a
 * signalfd of ours sees them while the monitor serves. */
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

	if (!self_mon)
		return qp_error_set(err, QP_E_STATE, 0, "pod \"%s\" has no monitor in this process", pod->id);
	return vm_mon_serve(self_mon, sfd, code, err);
}

/* A detached exec (what containerd's shim and conmon ask for): a relay
 * process holds the exec's channel to the monitor, copies its output to
 * the stdio we were given and exits with its status; the pid file names
 * it, so a subreaper can wait on it like on runc's exec'd process. */
static int exec_detached(struct pod *pod, int ctl_dirfd, const struct vm_exec_opts *o,
			 const struct qp_process *proc, qp_error **err)
{
	char buf[QP_REPORT_MAX];
	const char *rest;
	int fd, st;
	pid_t pid = qp_report_fork(&fd, "the exec relay", err);

	if (pid < 0)
		return -1;
	if (pid == 0) {
		qp_error *e = NULL;
		int status = 0;
		struct vm_exec_opts mine = *o;
		signal(SIGPIPE, SIG_IGN);
		mine.started_fd = fd;
		if (vm_ctl_exec_opts(ctl_dirfd, proc, &mine, &status, &e) < 0) {
			qp_report_err(fd, e, "exec failed"); /* unread once started */
			_exit(e && e->code == QP_E_EXEC ? (e->errnum == ENOENT ? 127 : 126) : 125);
		}
		_exit(status);
	}
	int n = qp_report_read(fd, CTL_TIMEOUT_MS * 3, buf, sizeof(buf));
	close(fd);
	if (n < 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		return qp_error_set(err, QP_E_TIMEOUT, 0, "the exec did not start within %d s",
				    CTL_TIMEOUT_MS * 3 / 1000);
	}
	if (qp_report_parse(buf, &rest, "the exec relay died", err) < 0) {
		waitpid(pid, &st, 0);
		return -1;
	}
	if (pod->io.pid_file && pod_write_pid_file(pod->io.pid_file, pid, err) < 0)
		return -1;
	return 0;
}

int vm_exec_via(struct pod *pod, int ctl_dirfd, const struct qp_run *ctr, const struct qp_process *proc,
		int *status, qp_error **err)
{
	struct vm_exec_opts o = { .console = pod->io.console_socket, .tty = -1, .started_fd = -1,
				  .ctr = ctr, .extra_fd = -1 };

	if (!pod->io.foreground) {
		*status = 0;
		return exec_detached(pod, ctl_dirfd, &o, proc, err);
	}
	return vm_ctl_exec_opts(ctl_dirfd, proc, &o, status, err);
}

static int vm_exec(struct pod *pod, const struct qp_process *proc, int *status, qp_error **err)
{
	return vm_exec_via(pod, pod->dirfd, NULL, proc, status, err);
}

static int vm_pids(struct pod *pod, pid_t **pids, size_t *n, qp_error **err)
{
	/* the guest's processes have no host pids: report the VMM */
	*n = 0;
	*pids = NULL;
	if (!(*pids = calloc(2, sizeof(**pids))))
		return qp_fail(err, ENOMEM, "pids");
	if (state_pid_alive(pod->state))
		(*pids)[(*n)++] = pod->state->pid;
	if (state_vmm_alive(pod->state) && pod->state->vmm_pid != pod->state->pid)
		(*pids)[(*n)++] = pod->state->vmm_pid;
	return 0;
}

static int vm_freeze(struct pod *pod, bool pause, qp_error **err)
{
	struct qp_msg req = { .type = pause ? QP_MSG_CTL_PAUSE : QP_MSG_CTL_RESUME };

	if (self_mon)
		return vm_mon_pause(self_mon, pause, err);
	return vm_ctl_call(pod->dirfd, &req, NULL, NULL, CTL_TIMEOUT_MS, err);
}

static int vm_pause(struct pod *pod, qp_error **err)
{
	return vm_freeze(pod, true, err);
}

static int vm_resume(struct pod *pod, qp_error **err)
{
	return vm_freeze(pod, false, err);
}

/* The guest has no balloon and its vCPUs are fixed at boot; the pod's
 * cgroup carries no limits (see cgroup_prepare): nothing can change while
 * the VM runs.  An update that changes nothing is fine. */
static int vm_update(struct pod *pod, const struct qp_resources *res, qp_error **err)
{
	const char *changed = spec_resources_changed(&pod->spec->resources, res);

	if (!changed)
		return 0;
	if (!strncmp(changed, "memory.", 7))
		return qp_error_set(err, QP_E_INVALID, 0,
				    "%s of vm pod \"%s\" cannot change while the VM runs (its RAM is fixed at "
				    "boot: no memory balloon)",
				    changed, pod->id);
	return qp_error_set(err, QP_E_INVALID, 0,
			    "%s of vm pod \"%s\" cannot change while the VM runs (its vCPUs are fixed "
			    "at boot)",
			    changed, pod->id);
}

static int vm_accel(enum qp_accel want, const char **name, qp_error **err)
{
	bool kvm;

	if (vm_pick_accel(want, &kvm, err) < 0)
		return -1;
	*name = kvm ? "kvm" : "tcg";
	return 0;
}

#define REPLACE_TIMEOUT_MS 60000

/* warm replace: the monitor swaps the workload inside the running VM */
static int vm_replace(struct pod *pod, char **cmd, qp_error **err)
{
	struct qp_msg req = { .type = QP_MSG_CTL_REPLACE };
	_cleanup_free_ char *text = NULL;

	if (pod_status(pod) != QP_STATUS_RUNNING)
		return qp_error_set(err, QP_E_STATE, 0, "pod \"%s\" is not running", pod->id);
	req.u.replace.argv = (const char *const *)cmd;
	req.u.replace.argc = cmd ? (uint32_t)qp_strv_len(cmd) : 0;
	if (vm_ctl_call(pod->dirfd, &req, NULL, &text, REPLACE_TIMEOUT_MS, err) < 0)
		return -1;
	/* the monitor's timings, a JSON object: add id and mode */
	printf("{\"id\":\"%s\",\"mode\":\"warm\",%s\n", pod->id, text[0] == '{' ? text + 1 : "}");
	return 0;
}

/* the template pods of spec would clone: resolved as their boot resolves
 * kernel, firmware, guest-init, accel, memory and vCPUs */
static int vm_template_create(const struct pod_spec *spec, char key[17], bool *made, qp_error **err)
{
	_cleanup_free_ char *kernel = NULL, *firmware = NULL, *init = NULL;
	struct vm_template_params p = { .vcpus = (int)vm_spec_vcpus(spec),
					.mem_mib = vm_spec_mem_mib(spec) };
	struct vm_template t;

	if (vm_pick_accel(spec->opts.accel, &p.kvm, err) < 0 ||
	    !(firmware = vm_find_firmware(spec->opts.firmware, err)) || !(kernel = vm_find_kernel(err)) ||
	    !(init = vm_find_guest_init(err)))
		return -1;
	p.kernel = kernel;
	p.firmware = firmware;
	p.init = init;
	if (vm_template_get(&p, true, false, &t, made, err) < 0)
		return -1;
	memcpy(key, t.key, 17);
	return 0;
}

/* ---- spares (spare.c) ---- */

static int vm_spares_fill_spec(int rootfd, const struct pod_spec *spec, int count, bool keep,
			       void (*made)(void *ctx, const char *name), void *ctx, qp_error **err)
{
	const struct vm_spare_params sp = { .mem_mib = vm_spec_mem_mib(spec),
					    .vcpus = (int)vm_spec_vcpus(spec),
					    .firmware = spec->opts.firmware,
					    .accel = spec->opts.accel,
					    .nic = spec->opts.spare_nic };

	if (count < 1 || count > VM_SPARES_MAX)
		return qp_error_set(err, QP_E_INVALID, 0, "spares: a count of 1..%d, not %d", VM_SPARES_MAX, count);
	return vm_spares_fill(rootfd, &sp, count, keep ? VM_FILL_KEEP : VM_FILL_ONCE, made, ctx, err);
}

struct list_ctx {
	void (*each)(void *ctx, const struct qp_spare *s);
	void *ctx;
};

static void list_one(void *ctx, int sd, const struct vm_spare_info *in)
{
	struct list_ctx *c = ctx;
	const struct qp_spare s = { .name = in->name, .key = in->key, .accel = in->accel,
				    .status = in->taken_by[0] ? "taken" : in->free ? "free" : "making",
				    .taken_by = in->taken_by, .mem_mib = in->mem_mib, .vcpus = in->vcpus,
				    .holder = in->holder, .qemu = in->qemu };

	(void)sd;
	/* a dead holder's leftovers are gc's, not a spare */
	if (in->holder_alive)
		c->each(c->ctx, &s);
}

static int vm_spares_list(int rootfd, void (*each)(void *ctx, const struct qp_spare *s), void *ctx,
			  qp_error **err)
{
	struct list_ctx c = { each, ctx };

	return vm_spares_each(rootfd, list_one, &c, err);
}

/* The libvirt backend (docs/LIBVIRT.md): the QEMU is the pod's when the
 * domain's uuid the monitor recorded is on its command line; the pod's pid
 * (a foreground run's monitor, outside the cgroup and not QEMU's parent)
 * when that QEMU also names it, pid and start time, as its monitor. */
static bool vm_owns_pid(struct pod *pod, pid_t pid)
{
	_cleanup_free_ char *uuid = NULL;
	size_t len;

	if (state_read_file(pod->dirfd, QP_VM_LV_UUID, QP_LIBVIRT_UUID_LEN + 1, &uuid, &len, NULL) < 0)
		return false;
	return vm_lv_is_domain_qemu(pod->state->vmm_pid, uuid, pid == pod->state->vmm_pid ? 0 : pid);
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
	.pause = vm_pause,
	.resume = vm_resume,
	.update = vm_update,
	.stats = vm_stats,
	.mem = vm_pod_mem,
	.accel = vm_accel,
	.replace = vm_replace,
	.template_create = vm_template_create,
	.template_list = vm_template_list,
	.template_remove = vm_template_remove,
	.template_prune = vm_template_prune,
	.spares_fill = vm_spares_fill_spec,
	.spares_list = vm_spares_list,
	.spares_drain = vm_spares_drain,
	.spares_gc = vm_spares_gc,
	.owns_pid = vm_owns_pid,
};
