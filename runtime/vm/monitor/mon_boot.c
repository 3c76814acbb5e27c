/* runtime/vm/monitor/mon_boot.c — the monitor's boot of the pod's VM: state dir,
 * network (tap), initrd, QEMU, the guest channel, HELLO and ctl.sock; then
 * RUN, the pod's process, sent to guest-init. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/if_tun.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "host/cgroup/cgroup.h"
#include "pod.h"
#include "util/cleanup.h"
#include "util/io.h"
#include "util/log.h"
#include "util/safepath.h"
#include "vm/libvirt/libvirt.h"
#include "vm/member/member.h"
#include "vm/monitor/monitor.h"
#include "vm/qemu/qemu.h"
#include "vm/snapshot/clone.h"
#include "vm/snapshot/snapshot.h"
#include "vm/snapshot/spare.h"

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
		if (mon_qemu_gone(m)) {
			close(fd);
			mon_qemu_reason(m);
			qp_error_set(err, QP_E_GENERIC, 0, "qemu exited before it opened the VM channel: %s",
				     m->reason);
			mon_fwmark_error(m, err);
			return -1;
		}
		if (qp_now_ms() >= deadline) {
			close(fd);
			return qp_error_set(err, QP_E_TIMEOUT, 0,
					    "qemu did not open the VM channel within %d s",
					    CONNECT_TIMEOUT_MS / 1000);
		}
		mon_fwmark_wait(m, -1, 2);
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

/* The accel's bound, or $ENV (tests of the timeout paths). */
static int guest_timeout_ms(bool kvm, const char *env)
{
	const char *t = getenv(env);

	if (t && atoi(t) > 0)
		return atoi(t);
	return kvm ? HELLO_TIMEOUT_KVM_MS : HELLO_TIMEOUT_TCG_MS;
}

int vm_hello_timeout_ms(bool kvm)
{
	return guest_timeout_ms(kvm, "QPOD_VM_HELLO_TIMEOUT_MS");
}

int mon_start_timeout_ms(const struct vm_mon *m)
{
	return guest_timeout_ms(m->kvm, "QPOD_VM_START_TIMEOUT_MS");
}

unsigned long long vm_spec_mem_mib(const struct pod_spec *spec)
{
	const struct qp_resources *r = &spec->resources;
	unsigned long long v;

	if (!r->has_memory_limit || r->memory_limit <= 0)
		return DEFAULT_MEM_MIB;
	v = ((unsigned long long)r->memory_limit + (1 << 20) - 1) >> 20;
	return v < MIN_MEM_MIB ? MIN_MEM_MIB : v > MAX_MEM_MIB ? MAX_MEM_MIB : v;
}

unsigned vm_spec_vcpus(const struct pod_spec *spec)
{
	return spec->opts.vcpus > 0 ? (unsigned)spec->opts.vcpus : 1;
}

static int wait_hello(struct vm_mon *m, qp_error **err)
{
	int timeout = vm_hello_timeout_ms(m->kvm);
	long long hello_by = qp_now_ms() + timeout;
	struct qp_msg msg;

	/* the firmware's markers meanwhile, until the guest speaks */
	mon_fwmark_wait(m, m->chan->fd, timeout);
	long long left = hello_by - qp_now_ms();
	if (qp_chan_recv(m->chan, &msg, left > 0 ? (int)left : 0, err) < 0) {
		if (mon_fwmark_error(m, err) < 0)
			return -1;
		if (*err && (*err)->code == QP_E_TIMEOUT) {
			qp_error_free(err);
			qp_error_set(err, QP_E_TIMEOUT, 0, "the VM did not say hello within %d ms",
				     timeout);
			return mon_with_qemu_log(m, err);
		}
		qp_error_prefix(err, "wait for the VM's hello");
		/* did QEMU die (the usual cause of EOF)?  Its last words then
		 * reach the log */
		long long deadline = qp_now_ms() + 200;
		while (!mon_qemu_gone(m) && qp_now_ms() < deadline)
			usleep(5000);
		if (m->qemu_reaped) {
			mon_qemu_reason(m);
			return qp_error_prefix(err, "%s; then", m->reason);
		}
		return mon_with_qemu_log(m, err);
	}
	if (qp_msg_check_sender(&msg, QP_SENDER_GUEST, err) < 0)
		return -1;
	if (msg.type != QP_MSG_HELLO)
		return qp_error_set(err, QP_E_GUEST, 0, "the VM sent %s instead of HELLO",
				    qp_msg_type_name(msg.type));
	if (vm_clone_hello_check(&msg, m->clone_sent ? &m->clone_check : NULL, err) < 0)
		return -1;
	if (m->clone_sent)
		qp_debug("vm %s: clone: the guest added the seed sent, reseeded its CRNG and set its clock",
			 m->pod->id);
	m->tl.hello = qp_now_ns();
	mon_fwmark_close(m);
	m->tl.guest_init_ns = msg.u.hello.init_ns;
	m->tl.guest_hello_ns = msg.u.hello.hello_ns;
	return 0;
}

/* Make a clone unique (CLONE: a seed from the host's getrandom and its
 * clock); the guest answers with HELLO, which wait_hello checks against it. */
static int send_clone(struct vm_mon *m, const char *key, qp_error **err)
{
	struct qp_msg clone;
	uint32_t check;

	if (vm_clone_msg(&clone, &check, err) < 0)
		return qp_error_prefix(err, "template %s: CLONE", key);
	int r = qp_chan_send(m->chan, &clone, QP_VM_SEND_TIMEOUT_MS, err);
	explicit_bzero(clone.u.clone.seed, sizeof(clone.u.clone.seed));
	if (r < 0)
		return qp_error_prefix(err, "template %s: CLONE", key);
	m->clone_sent = true;
	m->clone_check = check;
	return 0;
}

/* A clone: load the template's state into the QEMU just started (paused,
 * -incoming defer, its RAM the template's file mapped privately; the
 * channel is connected first, so the guest's port stays open), let it
 * run, and make it unique. */
static int restore_clone(struct vm_mon *m, const struct vm_template *t, qp_error **err)
{
	_cleanup_close_ int fd = open(t->state, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return qp_fail(err, errno, "template %s: open state", t->key);
	if (vm_qmp_connect(m->pod->dirfd, &m->qmp, err) < 0 || vm_template_migrate(m->qmp, fd, true, err) < 0 ||
	    vm_qmp_command(m->qmp, "{\"execute\":\"cont\"}", -1, NULL, 0, err) < 0)
		return mon_with_qemu_log(m, err);
	m->tl.restored = qp_now_ns();
	return send_clone(m, t->key, err);
}

/* What this pod's template is (pick_template and take_spare: a spare is a
 * clone of the same template). */
static struct vm_template_params template_params(const struct vm_qemu_opts *o, const char *init)
{
	return (struct vm_template_params){ .kernel = o->kernel, .firmware = o->firmware, .init = init,
					    .kvm = o->kvm, .vcpus = o->vcpus, .mem_mib = o->mem_mib,
					    .nic = o->tap_fd >= 0, .nshares = (unsigned)o->nshares };
}

/* The NIC's backend (m->nic) in the pod's state, for `qpod state`. */
static int mon_nic_state(struct vm_mon *m, qp_error **err)
{
	free(m->pod->state->nic);
	m->pod->state->nic = NULL;
	if (m->nic[0] && !(m->pod->state->nic = strdup(m->nic)))
		return qp_fail(err, ENOMEM, "vm");
	return 0;
}

/* A spare of this pod's template (spare.c), if the pod can take one (no
 * NIC, no shares of its own: a spare's devices are fixed; a pod that holds
 * containers has its binds in the spare's share instead, vm/member/; a NIC
 * only for a mirrored network namespace, whose wiring then moves to the
 * spare's tap) and there is a free one: 1 when it is this pod's VM, bound
 * to its rootfs and made unique again (CLONE; HELLO follows), 0 when there
 * is none. */
static int take_spare(struct vm_mon *m, const struct vm_qemu_opts *o, const char *init, qp_error **err)
{
	const struct pod_spec *spec = m->pod->spec;
	const struct vm_template_params p = template_params(o, init);
	struct vm_spare_taken t;
	qp_error *e = NULL;
	char key[17];

	if (m->pod->spare || spec->opts.boot == QP_BOOT_COLD || spec->opts.vm_backend != QP_VM_BACKEND_QEMU ||
	    (p.nic && !m->mirrored) || p.nshares)
		return 0;
	/* the state root: this pod's dir's parent (a detached monitor has no
	 * fd of it) */
	_cleanup_close_ int rootfd = openat(m->pod->dirfd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0 || vm_template_key(&p, key, &e) < 0) {
		qp_error_free(&e);
		return 0;
	}
	int r = vm_spare_take(rootfd, key, m->pod->id, m->pod->state->cgroup, &t, err);
	if (r <= 0)
		return r;
	m->tl.taken = qp_now_ns();
	m->qemu = t.qemu;
	m->qemu_foreign = m->spare = true;
	m->qemu_pidfd = (int)syscall(SYS_pidfd_open, t.qemu, 0);
	m->holder_fd = t.holder_fd;
	m->vmdir = t.dirfd;
	m->spares_fd = t.sd;
	snprintf(m->spare_name, sizeof(m->spare_name), "%s", t.name);
	memcpy(m->tpl_key, key, sizeof(key));
	m->chan = qp_chan_new(t.chan_fd);
	if (!m->chan)
		close(t.chan_fd);
	m->pod->state->pid = getpid();
	m->pod->state->pid_start = proc_start_time(getpid());
	m->pod->state->vmm_pid = t.qemu;
	m->pod->state->vmm_pid_start = t.qemu_start;
	if (!m->chan || m->qemu_pidfd < 0)
		return qp_fail(err, m->chan ? errno : ENOMEM, "spare %s", t.name);
	/* the next one, in the background, while this pod starts */
	vm_spares_refill(rootfd);
	if (p.nic) {
		_cleanup_free_ char *nic = NULL;
		size_t len;
		if (state_read_file(t.dirfd, SPARE_NIC, sizeof(m->nic) - 1, &nic, &len, NULL) == 0)
			snprintf(m->nic, sizeof(m->nic), "%s", nic);
		if (mon_nic_state(m, err) < 0)
			return -1;
	}
	if (vm_spare_bind_rootfs(t.qemu, t.share, o->rootfs, o->rootfs_ro, err) < 0 ||
	    (spec->opts.sandbox &&
	     vm_pod_share_spare(&m->mounts, spec, o->rootfs, m->pod->dirfd, t.qemu, t.share, err) < 0) ||
	    (p.nic && mon_net_adopt_spare(m, t.sd, t.name, err) < 0) || send_clone(m, key, err) < 0)
		return qp_error_prefix(err, "spare %s", t.name);
	return 1;
}

/* Whether this pod boots as a clone (1), cold (0), or cannot boot (-1:
 * --boot template and no template). */
static int pick_template(struct vm_mon *m, const struct vm_qemu_opts *o, const char *init,
			 struct vm_template *t, qp_error **err)
{
	enum qp_boot boot = m->pod->spec->opts.boot;
	/* the template's device set is the pod's: a NIC or not, as many
	 * shares (their tags m0.. are positional, their paths the clone's) */
	const struct vm_template_params p = template_params(o, init);
	qp_error *e = NULL;

	if (boot == QP_BOOT_COLD)
		return 0;
	/* a clone is QEMU started paused with -incoming and a shared RAM file,
	 * restored over QMP: the libvirt backend boots cold (docs/LIBVIRT.md) */
	if (m->pod->spec->opts.vm_backend == QP_VM_BACKEND_LIBVIRT) {
		if (boot == QP_BOOT_TEMPLATE)
			return qp_error_set(err, QP_E_INVALID, 0,
					    "--boot template: not supported with --vm-backend libvirt (its pods "
					    "boot cold); use --boot cold or auto");
		return 0;
	}
	/* auto: a template that cannot be made (a broken guest, a QEMU that
	 * cannot save) costs a cold boot, which then says what is wrong; the
	 * failure is remembered for a while (template.c) */
	if (vm_template_get(&p, true, boot == QP_BOOT_AUTO, t, NULL, &e) < 0) {
		if (boot == QP_BOOT_TEMPLATE) {
			*err = e;
			return -1;
		}
		qp_debug("vm %s: no template (%s): cold boot", m->pod->id, e && e->msg ? e->msg : "?");
		qp_error_free(&e);
		return 0;
	}
	memcpy(m->tpl_key, t->key, sizeof(m->tpl_key));
	return 1;
}

/* The libvirt backend's spawn: the tap goes to libvirt by name (it opens
 * it itself: the device is made persistent and our fd closed, since a tap
 * takes one fd), then the domain is created. */
static int mon_spawn_libvirt(struct vm_mon *m, const struct vm_qemu_opts *o, int *tap, qp_error **err)
{
	const char *bin = getenv("QPOD_QEMU");

	if (bin && *bin)
		return qp_error_set(err, QP_E_INVALID, 0,
				    "QPOD_QEMU is set: another VMM binary is not possible with --vm-backend "
				    "libvirt (libvirtd chooses its emulator)");
	if (*tap >= 0) {
		/* libvirt_xml.c's <driver name='qemu'/> */
		snprintf(m->nic, sizeof(m->nic), "userspace: the libvirt backend (driver qemu)");
		if (ioctl(*tap, TUNSETPERSIST, 1) < 0)
			return qp_fail(err, errno, "make tap %s persistent for libvirt", m->lease.ifname_host);
		close(*tap);
		*tap = -1;
	}
	m->qemu_foreign = true; /* libvirtd's child */
	m->qemu = vm_lv_start(o, m->pod->id, vm_lv_uri(m->pod->spec->opts.libvirt_uri),
			      m->has_net ? m->lease.ifname_host : "", &m->lv, err);
	if (m->qemu < 0)
		return -1;
	/* the proof that this QEMU, outside the pod's cgroup, is the pod's */
	return state_write_file(m->pod->dirfd, QP_VM_LV_UUID, vm_lv_uuid(m->lv), QP_LIBVIRT_UUID_LEN, err);
}

int vm_mon_boot(struct pod *pod, struct vm_mon **out, qp_error **err)
{
	const struct pod_spec *spec = pod->spec;
	_cleanup_free_ char *kernel = NULL, *init = NULL, *firmware = NULL;
	struct vm_qemu_opts o = { .machine = VM_MACHINE_MICROVM, .dirfd = pod->dirfd, .tap_fd = -1, .qmp = true };
	struct vm_mon *m = calloc(1, sizeof(*m));
	_cleanup_close_ int tap = -1;
	const char *ip = NULL;
	int fd;

	if (!m)
		return qp_fail(err, ENOMEM, "vm");
	m->pod = pod;
	m->qemu_pidfd = m->listen_fd = m->ready_fd = m->fw.fd = m->vmdir = m->holder_fd = m->spares_fd = -1;
	m->stdin_fd = -1;
	m->out[0].fd = m->out[1].fd = -1;
	m->tl.request = qp_request_ns ? qp_request_ns : qp_now_ns();
	if (spec->opts.libvirt_uri && spec->opts.vm_backend != QP_VM_BACKEND_LIBVIRT) {
		qp_error_set(err, QP_E_INVALID, 0, "--libvirt-uri (qpod.vm.libvirt.uri) needs --vm-backend libvirt");
		goto fail;
	}
	if (mon_tty_setup(m, err) < 0)
		goto fail;
	mon_out_open(m);
	if (vm_pick_accel(spec->opts.accel, &m->kvm, err) < 0 ||
	    !(firmware = vm_find_firmware(spec->opts.firmware, err)) ||
	    !(kernel = vm_find_kernel(err)) || !(init = vm_find_guest_init(err)) ||
	    qp_fd_realpath(pod->dirfd, m->statedir, sizeof(m->statedir), "the state dir", err) < 0)
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
	} else if (pod->spare && pod->spare_nic) {
		char name[16];
		vm_spare_tap_name(pod->id, name);
		if ((tap = qp_net_tap_unattached(name, err)) < 0)
			goto fail;
	} else if (mon_net_mirror(m, &tap, err) < 0) {
		goto fail;
	}
	m->tl.network = qp_now_ns();

	o.statedir = m->statedir;
	o.kernel = kernel;
	o.firmware = firmware;
	o.rootfs = pod->rootfs;
	o.rootfs_ro = spec->root_readonly;
	o.rootfs_jail_ro = pod->spare;
	o.kvm = m->kvm;
	o.vcpus = spec->opts.vcpus > 0 ? spec->opts.vcpus : 1;
	o.mem_mib = vm_spec_mem_mib(spec);
	o.tap_fd = tap;
	o.mac = m->mirrored ? m->mirror.mac : pod->spare ? vm_template_mac : m->lease.mac;
	/* a pod that holds containers plans its mounts once it knows where
	 * they go: a spare's share, or 9p devices of its own (below) */
	if (!spec->opts.sandbox && vm_mounts_plan(spec, pod->rootfs, pod->dirfd, m->statedir, NULL, &m->mounts, err) < 0)
		goto fail;
	if (spec->opts.sandbox && mon_sandbox_ok(spec, err) < 0)
		goto fail;
	if (!spec->hostname && spec->ns[QP_NS_UTS].enabled && spec->ns[QP_NS_UTS].path &&
	    vm_uts_hostname(spec->ns[QP_NS_UTS].path, m->uts_hostname, sizeof(m->uts_hostname), err) < 0)
		goto fail;
	o.shares = m->mounts.shares;
	o.nshares = m->mounts.nshares;
	struct vm_template tpl;
	int clone, took = take_spare(m, &o, init, err);
	if (took < 0)
		goto fail;
	if (took)
		goto hello;
	/* a pod that holds containers and took no spare: its binds are 9p
	 * devices, and its pod share one more (a spare's share serves as one:
	 * take_spare) */
	if (spec->opts.sandbox) {
		if (vm_mounts_plan(spec, pod->rootfs, pod->dirfd, m->statedir, NULL, &m->mounts, err) < 0 ||
		    vm_pod_share_add(&m->mounts, pod->dirfd, m->statedir, err) < 0)
			goto fail;
		o.nshares = m->mounts.nshares;
	}
	clone = pick_template(m, &o, init, &tpl, err);
	if (clone < 0)
		goto fail;
spawn:
	o.mem_path = clone ? tpl.mem : NULL;
	o.incoming = clone;
	/* a clone boots no kernel and so needs no initrd */
	if (!clone && vm_write_initrd(pod->dirfd, QP_VM_INITRD, init, err) < 0)
		goto fail;
	/* a cold boot of qpod's firmware marks its boundaries (a clone runs
	 * no firmware, and has its template's devices; libvirt's domain XML
	 * has no marker device) */
	o.fw_markers = false;
	if (!clone && spec->opts.vm_backend != QP_VM_BACKEND_LIBVIRT && vm_firmware_is_qpod(spec->opts.firmware) &&
	    mon_fwmark_open(m, &o, err) < 0)
		goto fail;
	unlinkat(pod->dirfd, QP_VM_CHAN_SOCK, 0);
	unlinkat(pod->dirfd, QP_VM_QMP_SOCK, 0);
	if (spec->opts.vm_backend == QP_VM_BACKEND_LIBVIRT) {
		if (mon_spawn_libvirt(m, &o, &tap, err) < 0)
			goto fail;
	} else {
		/* a foreground run's monitor stays where its caller is; QEMU
		 * goes in (libvirtd's QEMU stays in the cgroup libvirt gave it) */
		struct qp_cgroup_entry entry = QP_CGROUP_ENTRY_INIT;
		if (vm_cgroup_entry_open(pod, &entry, err) < 0) {
			if (o.fw_markers)
				close(o.fw_mark_fd);
			goto fail;
		}
		o.cg_entry = &entry;
		/* a vhost-net fd per QEMU: it becomes its owner */
		_cleanup_close_ int vhost = o.tap_fd >= 0 ? vm_nic_vhost_open(o.kvm, m->nic, sizeof(m->nic)) : -1;
		o.vhost_fd = vhost;
		m->qemu = vm_spawn_qemu(&o, err);
		o.vhost_fd = -1;
		qp_cgroup_entry_close(&entry);
		if (o.fw_markers)
			close(o.fw_mark_fd);
		if (m->qemu < 0)
			goto fail;
	}
	m->tl.spawned = qp_now_ns();
	m->qemu_pidfd = (int)syscall(SYS_pidfd_open, m->qemu, 0);
	/* the pod's pid is the monitor (this process): the one whose exit
	 * status is the workload's, that a shim or conmon can wait on */
	pod->state->pid = getpid();
	pod->state->pid_start = proc_start_time(getpid());
	pod->state->vmm_pid = m->qemu;
	pod->state->vmm_pid_start = proc_start_time(m->qemu);
	if (mon_nic_state(m, err) < 0 || (fd = chan_connect(m, err)) < 0)
		goto fail;
	if (!(m->chan = qp_chan_new(fd))) {
		close(fd);
		qp_fail(err, ENOMEM, "VM channel");
		goto fail;
	}
	if (clone && restore_clone(m, &tpl, err) < 0) {
		/* a template that does not restore (corrupted, another QEMU's)
		 * is of no use to anyone: it goes, the next pod makes it anew */
		vm_template_remove(tpl.key, NULL);
		if (pod->spec->opts.boot == QP_BOOT_TEMPLATE) {
			qp_error_prefix(err, "VM template %s did not restore (removed)", tpl.key);
			goto fail;
		}
		/* auto: it costs this pod a cold boot, nothing else */
		qp_warn("VM template %s did not restore (%s): removed; cold boot", tpl.key,
			*err && (*err)->msg ? (*err)->msg : "?");
		qp_error_free(err);
		mon_qemu_discard(m);
		m->tl.restored = 0;
		m->clone_sent = false;
		clone = 0;
		goto spawn;
	}
	/* the tap lives as long as QEMU's copy of the fd */
	close(tap);
	tap = -1;
hello:
	if (wait_hello(m, err) < 0 || (m->listen_fd = ctl_listen(m, err)) < 0 || mon_net_enter(m, err) < 0)
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
		vm_net_unwire(pod, NULL);
	}
	return -1;
}

/* ---- RUN and signals ---- */


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

int mon_stdin_input(struct vm_mon *m, qp_error **err)
{
	static uint8_t buf[16384];
	struct qp_msg msg = { .type = QP_MSG_STDIN };
	size_t want = m->stdin_credit < sizeof(buf) ? m->stdin_credit : sizeof(buf);
	ssize_t n = read(m->stdin_fd, buf, want);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0)
		m->stdin_fd = -1; /* its end (or an error, its end too): an empty STDIN says so */
	else
		m->stdin_credit -= (uint32_t)n;
	msg.u.data.data = buf;
	msg.u.data.len = n > 0 ? (uint32_t)n : 0;
	if (qp_chan_send(m->chan, &msg, QP_VM_SEND_TIMEOUT_MS, err) < 0)
		return qp_error_prefix(err, "send STDIN to the VM");
	return 0;
}

/* A pod that holds containers (vm/member/) binds their roots into its
 * QEMU's mount namespace: QEMU's own backend and jail only. */
int mon_sandbox_ok(const struct pod_spec *spec, qp_error **err)
{
	bool jail;

	if (spec->opts.vm_backend == QP_VM_BACKEND_LIBVIRT)
		return qp_error_set(err, QP_E_INVALID, 0, "qpod.sandbox: a vm pod that holds containers needs the "
				    "qemu backend (libvirtd's QEMU is not in qpod's jail)");
	if (vm_jail_wanted(&jail, err) < 0)
		return -1;
	if (!jail)
		return qp_error_set(err, QP_E_INVALID, 0, "qpod.sandbox: a vm pod that holds containers needs "
				    "QEMU's jail (qpod as root, QPOD_VM_JAIL not off)");
	return 0;
}

/* RUN of the pod's process, with argv replaced if given (replace). */
int mon_send_run(struct vm_mon *m, char **argv, qp_error **err)
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
	r->flags = QP_RUN_F_WAIT_SHUTDOWN | (m->pod->spec->root_readonly ? QP_RUN_F_ROOTFS_RO : 0) |
		   (m->pod->spec->opts.sandbox_pause ? QP_RUN_F_PAUSE : 0);
	/* the first workload gets our stdin (as runc's process gets its
	 * caller's), unless it is /dev/null or closed; a replace's does not */
	if (!m->run_sent && qp_fd_relayable(0)) {
		r->flags |= QP_RUN_F_STDIN;
		m->stdin_fd = 0;
		m->stdin_credit = QP_PROTO_STDIN_WINDOW;
	}
	if (!m->run_sent)
		mon_tty_run(m, r);
	r->rootfs = m->spare ? QP_ROOTFS_9P_SUBDIR : QP_ROOTFS_9P;
	r->rootfs_tag = VM_ROOTFS_TAG;
	r->hostname = m->pod->spec->hostname ? m->pod->spec->hostname : m->uts_hostname;
	/* the pod's mounts: applied by the first RUN (a replace's are ignored) */
	r->mounts = (const char *const *)m->mounts.entries;
	r->mountc = (uint32_t)m->mounts.n;
	mon_net_run(m, r);
	if (qp_chan_send(m->chan, &msg, QP_VM_SEND_TIMEOUT_MS, err) < 0)
		return qp_error_prefix(err, "send RUN to the VM");
	return 0;
}

int vm_mon_run(struct vm_mon *m, qp_error **err)
{
	if (m->run_sent)
		return qp_error_set(err, QP_E_STATE, 0, "pod \"%s\" was started already", m->pod->id);
	if (mon_send_run(m, NULL, err) < 0)
		return -1;
	m->run_sent = true;
	m->tl.run = qp_now_ns();
	m->start_deadline = qp_now_ms() + mon_start_timeout_ms(m);
	return 0;
}

int vm_mon_wait_started(struct vm_mon *m, qp_error **err)
{
	while (!m->started && !m->exec_err && !m->exited && !m->chan->broken) {
		long long left = m->start_deadline - qp_now_ms();
		struct pollfd p = { .fd = m->chan->fd, .events = POLLIN };
		if (left <= 0)
			return qp_error_set(err, QP_E_TIMEOUT, 0,
					    "the VM did not start the workload within %d ms of RUN",
					    mon_start_timeout_ms(m));
		int r = poll(&p, 1, (int)left);
		if (r < 0 && errno != EINTR)
			return qp_fail(err, errno, "poll the VM channel");
		/* a malformed answer (or the channel's end) fails the start:
		 * left to vm_mon_serve, it would wait on a dead channel */
		if (r > 0 && mon_guest_input(m, err) < 0) {
			mon_set_reason(m, "%s", err && *err ? (*err)->msg : "VM channel failed");
			return qp_error_prefix(err, "the VM failed before the workload started");
		}
	}
	return 0;
}
