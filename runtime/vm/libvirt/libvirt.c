/* runtime/vm/libvirt/libvirt.c — the libvirt backend's connection and domain: the
 * transient domain's start (virDomainCreateXML, autodestroy: it ends when
 * the monitor's connection does), its QEMU process, its end (destroy) and
 * why it ended (libvirt's lifecycle events, read by an event-loop thread
 * of libvirt's default implementation), pause and resume.  The rest of the
 * pod is the monitor's, as with the direct backend (libvirt.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>


#include "state.h"
#include "util/cleanup.h"
#include "util/clock.h"
#include "util/log.h"
#include "vm/libvirt/libvirt.h"
#include "vm/libvirt/libvirt_dl.h"
#include "vm/qemu/qemu.h"

struct vm_lv {
	virConnectPtr conn;
	virDomainPtr dom;
	int cb_id;
	char uuid[QP_LIBVIRT_UUID_LEN + 1];
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stopped;       /* a STOPPED (or CRASHED) event came */
	int event, detail;  /* its type and detail */
	bool destroying;    /* qpod destroyed it */
};

const char *vm_lv_uri(const char *opt)
{
	const char *env = getenv("QPOD_LIBVIRT_URI");

	if (opt && *opt)
		return opt;
	return env && *env ? env : QP_LIBVIRT_URI_DEFAULT;
}

/* libvirt's errors go to ours, not to its default handler's stderr */
static void quiet_errors(void *ctx, virErrorPtr e)
{
	(void)ctx;
	(void)e;
}

/* libvirt's last error, after "libvirt: WHAT: " */
static int lv_fail(qp_error **err, const char *what, const char *arg)
{
	const char *m = virt.GetLastErrorMessage();

	qp_error_set(err, QP_E_GENERIC, 0, "%s", m && *m ? m : "unknown libvirt error");
	return qp_error_prefix(err, "libvirt: %s%s%s", what, arg ? " " : "", arg ? arg : "");
}

/* libvirt's default event loop, in a thread of its own, once per process
 * (registered before the first connection, as libvirt requires) */
static int loop_err;

static void *event_loop(void *arg)
{
	(void)arg;
	for (;;)
		if (virt.EventRunDefaultImpl() < 0)
			usleep(10000);
	return NULL;
}

static void loop_start(void)
{
	pthread_t t;
	pthread_attr_t a;

	virt.SetErrorFunc(NULL, quiet_errors);
	if (virt.Initialize() < 0 || virt.EventRegisterDefaultImpl() < 0) {
		loop_err = -1;
		return;
	}
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	loop_err = pthread_create(&t, &a, event_loop, NULL) ? -1 : 0;
	pthread_attr_destroy(&a);
}

static int lifecycle(virConnectPtr conn, virDomainPtr dom, int event, int detail, void *opaque)
{
	struct vm_lv *lv = opaque;
	char uuid[VIR_UUID_STRING_BUFLEN];

	(void)conn;
	qp_debug("libvirt: domain %s: lifecycle event %d detail %d", virt.DomainGetName(dom), event, detail);
	if (event != VIR_DOMAIN_EVENT_STOPPED && event != VIR_DOMAIN_EVENT_CRASHED)
		return 0;
	if (virt.DomainGetUUIDString(dom, uuid) < 0 || strcmp(uuid, lv->uuid))
		return 0;
	pthread_mutex_lock(&lv->lock);
	if (!lv->stopped) {
		lv->stopped = true;
		lv->event = event;
		lv->detail = detail;
	}
	pthread_cond_broadcast(&lv->cond);
	pthread_mutex_unlock(&lv->lock);
	return 0;
}

static int make_uuid(char out[QP_LIBVIRT_UUID_LEN + 1], qp_error **err)
{
	unsigned char b[16];

	if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b))
		return qp_fail(err, errno, "getrandom");
	b[6] = (unsigned char)((b[6] & 0x0f) | 0x40); /* version 4 */
	b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
	snprintf(out, QP_LIBVIRT_UUID_LEN + 1,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2],
		 b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
	return 0;
}

/* The uid and gid the daemon runs QEMU as (its qemu.conf user and group):
 * the DAC security model's base label of the domain type in its
 * capabilities, "+UID:+GID".  No DAC model: QEMU runs as the daemon, root. */
static int qemu_ids(virConnectPtr conn, bool kvm, uid_t *uid, gid_t *gid, qp_error **err)
{
	_cleanup_free_ char *caps = virt.ConnectGetCapabilities(conn);
	const char *dac, *label, *end;
	char want[64];
	unsigned u, g;

	*uid = 0;
	*gid = 0;
	if (!caps)
		return lv_fail(err, "read the daemon's capabilities", NULL);
	if (!(dac = strstr(caps, "<model>dac</model>")))
		return 0;
	end = strstr(dac, "</secmodel>");
	snprintf(want, sizeof(want), "<baselabel type='%s'>", kvm ? "kvm" : "qemu");
	if (!(label = strstr(dac, want)) || (end && label > end) ||
	    sscanf(label + strlen(want), "+%u:+%u<", &u, &g) != 2)
		return qp_error_set(err, QP_E_GENERIC, 0,
				    "libvirt: the daemon's capabilities name no uid:gid of QEMU (%s in its DAC model)",
				    want);
	*uid = (uid_t)u;
	*gid = (gid_t)g;
	return 0;
}

const char *vm_lv_uuid(const struct vm_lv *lv)
{
	return lv->uuid;
}

/* Does /proc/PID/cmdline hold "-uuid UUID" (libvirt passes the domain's),
 * and the argument monitor_arg if not NULL? */
static bool cmdline_has_uuid(const char *pid, const char *uuid, const char *monitor_arg)
{
	char path[300], buf[16384];
	_cleanup_close_ int fd = -1;
	ssize_t n;

	if (strlen(uuid) != QP_LIBVIRT_UUID_LEN)
		return false;
	snprintf(path, sizeof(path), "/proc/%s/cmdline", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0 || (n = read(fd, buf, sizeof(buf) - 1)) <= 0)
		return false;
	buf[n] = '\0';
	bool has_uuid = false, has_monitor = !monitor_arg;
	for (char *p = buf; p < buf + n; p += strlen(p) + 1) {
		if (!strcmp(p, "-uuid") && p + 6 < buf + n && !strcmp(p + 6, uuid))
			has_uuid = true;
		if (monitor_arg && !strcmp(p, monitor_arg))
			has_monitor = true;
	}
	return has_uuid && has_monitor;
}

bool vm_lv_is_domain_qemu(pid_t pid, const char *uuid, pid_t monitor)
{
	char p[24], arg[96];

	snprintf(p, sizeof(p), "%d", (int)pid);
	snprintf(arg, sizeof(arg), QP_LV_MONITOR_ARG, (int)monitor, proc_start_time(monitor));
	return pid > 0 && cmdline_has_uuid(p, uuid, monitor > 0 ? arg : NULL);
}

/* The domain's QEMU on this host: the process started with its UUID. */
static pid_t find_qemu(const char *uuid)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t pid = -1;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] >= '1' && e->d_name[0] <= '9' && cmdline_has_uuid(e->d_name, uuid, NULL)) {
			pid = (pid_t)atoi(e->d_name);
			break;
		}
	closedir(d);
	return pid;
}

void vm_lv_free(struct vm_lv *lv)
{
	if (!lv)
		return;
	if (lv->cb_id >= 0)
		virt.ConnectDomainEventDeregisterAny(lv->conn, lv->cb_id);
	/* QEMU's exit is not the domain's end: libvirtd removes the transient
	 * domain a little later (and its STOPPED event may not have come
	 * yet).  The pod is over: destroy the domain if it is still there (an
	 * error when it is stopping already: fine), then wait (at most 2 s)
	 * until libvirtd has removed it, so that when the pod is gone its
	 * domain is too and the name can be used again at once. */
	if (lv->dom)
		virt.DomainDestroy(lv->dom);
	for (int i = 0; lv->dom && lv->uuid[0] && i < 200; i++) {
		virDomainPtr d = virt.DomainLookupByUUIDString(lv->conn, lv->uuid);
		if (!d)
			break;
		virt.DomainFree(d);
		usleep(10000);
	}
	if (lv->dom)
		virt.DomainFree(lv->dom);
	if (lv->conn)
		virt.ConnectClose(lv->conn);
	pthread_mutex_destroy(&lv->lock);
	pthread_cond_destroy(&lv->cond);
	free(lv);
}

pid_t vm_lv_start(const struct vm_qemu_opts *o, const char *name, const char *uri, const char *tap,
		  struct vm_lv **out, qp_error **err)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	char chan[PATH_MAX + 16];
	_cleanup_free_ char *xml = NULL;
	struct vm_lv_dir *dir = NULL;
	struct vm_lv *lv;
	uid_t uid;
	gid_t gid;
	pid_t pid;

	/* libvirtd binds the socket (absolute path), and sun_path holds 108
	 * bytes */
	if ((size_t)snprintf(chan, sizeof(chan), "%s/%s", o->statedir, QP_VM_CHAN_SOCK) >= 108)
		return qp_error_set(err, QP_E_INVALID, 0,
				    "libvirt backend: the channel socket \"%s\" is longer than a unix socket "
				    "path may be (107 bytes): use a shorter --root", chan);
	if (vm_virt_load(err) < 0)
		return -1;
	pthread_once(&once, loop_start);
	if (loop_err < 0)
		return lv_fail(err, "start its event loop", NULL);
	if (!(lv = calloc(1, sizeof(*lv))))
		return qp_fail(err, ENOMEM, "libvirt");
	lv->cb_id = -1;
	pthread_mutex_init(&lv->lock, NULL);
	pthread_cond_init(&lv->cond, NULL);
	if (make_uuid(lv->uuid, err) < 0)
		goto fail;
	if (!(lv->conn = virt.ConnectOpen(uri))) {
		const char *m = virt.GetLastErrorMessage();
		qp_error_set(err, QP_E_GENERIC, 0,
			     "libvirt: connect to %s: %s (is libvirtd running there? Debian's comes with "
			     "libvirt-daemon-system: libvirtd -d, or choose another with --libvirt-uri)",
			     uri, m && *m ? m : "unknown libvirt error");
		goto fail;
	}
	/* a QEMU that is not root gets what it opens in a directory of its
	 * own while it starts (libvirt_dir.c) */
	if (qemu_ids(lv->conn, o->kvm, &uid, &gid, err) < 0 ||
	    (uid != 0 && vm_lv_dir_open(o, name, uid, gid, &dir, err) < 0) ||
	    !(xml = vm_lv_domain_xml(o, name, lv->uuid, tap, chan, dir, err)))
		goto fail;
	qp_debug("libvirt domain %s (QEMU as %u:%u):\n%s", name, (unsigned)uid, (unsigned)gid, xml);
	lv->cb_id = virt.ConnectDomainEventRegisterAny(lv->conn, NULL, VIR_DOMAIN_EVENT_ID_LIFECYCLE,
						     VIR_DOMAIN_EVENT_CALLBACK(lifecycle), lv, NULL);
	if (lv->cb_id < 0) {
		lv_fail(err, "watch the domain's lifecycle", NULL);
		goto fail;
	}
	lv->dom = virt.DomainCreateXML(lv->conn, xml, VIR_DOMAIN_START_AUTODESTROY);
	vm_lv_dir_close(dir); /* QEMU has what it needs open, or has failed */
	dir = NULL;
	if (!lv->dom) {
		char who[320];
		snprintf(who, sizeof(who), "%s (QEMU as uid %u, gid %u)", name, (unsigned)uid, (unsigned)gid);
		lv_fail(err, "create domain", who);
		goto fail;
	}
	if ((pid = find_qemu(lv->uuid)) <= 0) {
		qp_error_set(err, QP_E_GENERIC, 0,
			     "libvirt: domain \"%s\" runs, but no QEMU process of this host has its uuid %s "
			     "(a remote libvirt URI is not supported)",
			     name, lv->uuid);
		vm_lv_destroy(lv);
		goto fail;
	}
	*out = lv;
	return pid;
fail:
	vm_lv_dir_close(dir);
	vm_lv_free(lv);
	return -1;
}

void vm_lv_destroy(struct vm_lv *lv)
{
	if (!lv || !lv->dom)
		return;
	pthread_mutex_lock(&lv->lock);
	lv->destroying = !lv->stopped;
	pthread_mutex_unlock(&lv->lock);
	virt.DomainDestroy(lv->dom); /* fails if it is gone already: fine */
}

static const char *stopped_detail(int d)
{
	switch (d) {
	case VIR_DOMAIN_EVENT_STOPPED_DESTROYED: return "destroyed";
	case VIR_DOMAIN_EVENT_STOPPED_CRASHED: return "crashed";
	case VIR_DOMAIN_EVENT_STOPPED_MIGRATED: return "migrated away";
	case VIR_DOMAIN_EVENT_STOPPED_SAVED: return "saved";
	case VIR_DOMAIN_EVENT_STOPPED_FAILED: return "failed (the hypervisor)";
	case VIR_DOMAIN_EVENT_STOPPED_FROM_SNAPSHOT: return "stopped (a snapshot was loaded)";
	}
	return "stopped";
}

void vm_lv_stop_reason(struct vm_lv *lv, int wait_ms, char *buf, size_t size)
{
	struct timespec until;

	buf[0] = '\0';
	if (!lv)
		return;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += wait_ms / 1000;
	until.tv_nsec += (long)(wait_ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&lv->lock);
	while (!lv->stopped && pthread_cond_timedwait(&lv->cond, &lv->lock, &until) == 0)
		;
	if (lv->destroying)
		snprintf(buf, size, "the libvirt domain was destroyed by qpod");
	else if (lv->stopped && lv->event == VIR_DOMAIN_EVENT_CRASHED)
		snprintf(buf, size, "the libvirt domain crashed (the guest panicked)");
	else if (lv->stopped && lv->detail == VIR_DOMAIN_EVENT_STOPPED_SHUTDOWN)
		snprintf(buf, size, "the VM powered off"); /* the guest's own end (-no-reboot) */
	else if (lv->stopped)
		snprintf(buf, size, "the libvirt domain was %s outside qpod", stopped_detail(lv->detail));
	pthread_mutex_unlock(&lv->lock);
}

int vm_lv_pause(struct vm_lv *lv, bool pause, qp_error **err)
{
	if ((pause ? virt.DomainSuspend(lv->dom) : virt.DomainResume(lv->dom)) < 0)
		return lv_fail(err, pause ? "suspend the domain" : "resume the domain", NULL);
	return 0;
}
