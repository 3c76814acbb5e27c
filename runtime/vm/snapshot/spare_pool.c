/* runtime/vm/snapshot/spare_pool.c — the pool of spares (spare.c makes one):
 * `qpod spares fill` up to a count (and its target, which every take's
 * refill restores in the background), drain (stop the free ones), gc (the
 * dirs of spares whose holder is gone).  docs/TEMPLATES.md, "Spares". */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/clock.h"
#include "util/io.h"
#include "util/log.h"
#include "vm/qemu/qemu.h"
#include "vm/snapshot/snapshot.h"
#include "vm/snapshot/spare.h"

/* ---- fill, drain, gc, refill ---- */

struct count_ctx {
	const struct vm_spare_params *sp;
	char *key;              /* [17] */
	bool kvm;
	const char *firmware;   /* its path */
	int ready, stale;
	pid_t stale_pids[64];
	unsigned long long stale_starts[64];
};

static void count_one(void *ctx, int sd, const struct vm_spare_info *in)
{
	struct count_ctx *c = ctx;

	(void)sd;
	/* a spare of another shape is another pool's, not stale (one whose
	 * meta names no firmware is an older qpod's: of this shape) */
	if (!in->free || in->mem_mib != c->sp->mem_mib || in->vcpus != c->sp->vcpus ||
	    strcmp(in->accel, c->kvm ? "kvm" : "tcg") || (in->firmware[0] && strcmp(in->firmware, c->firmware)))
		return;
	if (!strcmp(in->key, c->key))
		c->ready++;
	else if (c->stale < 64) {
		c->stale_pids[c->stale] = in->holder;
		c->stale_starts[c->stale++] = in->holder_start;
	}
}

/* The key a spare of sp would have (the same inputs as a pod's), into
 * c->key and c->kvm, and its firmware's path (*firmware, the caller's). */
static int spare_key(const struct vm_spare_params *sp, struct count_ctx *c, char **firmware, qp_error **err)
{
	_cleanup_free_ char *kernel = NULL, *init = NULL;

	if (vm_pick_accel(sp->accel, &c->kvm, err) < 0 || !(*firmware = vm_find_firmware(sp->firmware, err)) ||
	    !(kernel = vm_find_kernel(err)) || !(init = vm_find_guest_init(err)))
		return -1;
	const struct vm_template_params p = { .kernel = kernel, .firmware = *firmware, .init = init,
					      .kvm = c->kvm, .vcpus = sp->vcpus, .mem_mib = sp->mem_mib,
					      .nic = sp->nic };
	return vm_template_key(&p, c->key, err);
}

/* SIGTERM to a holder: its pidfd, or -1 when that pid is no longer the
 * holder's (its start time tells; the pidfd then pins it for the signal) */
static int stop_holder(pid_t pid, unsigned long long start)
{
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);

	if (pidfd >= 0 && proc_start_time(pid) != start) {
		close(pidfd);
		return -1;
	}
	if (pidfd >= 0)
		syscall(SYS_pidfd_send_signal, pidfd, SIGTERM, NULL, 0);
	return pidfd;
}

static int lock_fills(int sd, qp_error **err)
{
	int lock = openat(sd, SPARE_LOCK, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);

	if (lock < 0 || flock(lock, LOCK_EX) < 0) {
		if (lock >= 0)
			close(lock);
		return qp_fail(err, errno, "lock %s/%s", QP_SPARES_DIR, SPARE_LOCK);
	}
	return lock;
}

int vm_spares_fill(int rootfd, const struct vm_spare_params *sp, int count, enum vm_fill mode,
		   void (*made)(void *ctx, const char *name), void *ctx, qp_error **err)
{
	char key[17], name[16];
	_cleanup_free_ char *firmware = NULL;
	struct count_ctx c = { .sp = sp, .key = key };
	_cleanup_close_ int sd = -1, lock = -1;
	bool jail;
	int pidfd;

	/* the target and meta files hold it as a line */
	if (sp->firmware && strchr(sp->firmware, '\n'))
		return qp_error_set(err, QP_E_INVALID, 0, "spares: a firmware path with a newline");
	if (vm_jail_wanted(&jail, err) < 0)
		return -1;
	if (!jail)
		return qp_error_set(err, QP_E_INVALID, 0,
				    "spares need QEMU's jail, which is off (QPOD_VM_JAIL=off, or qpod is not root): a "
				    "taking pod's rootfs is bound into the jail's mount namespace");
	if (spare_key(sp, &c, &firmware, err) < 0 || (sd = vm_spares_open(rootfd, true, err)) < 0)
		return -1;
	c.firmware = firmware;
	/* one filler at a time (two would both top the pool up), and none
	 * while a drain stops the spares */
	if ((lock = lock_fills(sd, err)) < 0)
		return -1;
	if (mode == VM_FILL_KEEP) {
		char target[128 + PATH_MAX];
		int n = snprintf(target, sizeof(target), "count=%d mem=%lluM vcpus=%d accel=%s nic=%d firmware=%s\n",
				 count, sp->mem_mib, sp->vcpus, qp_accel_name(sp->accel), sp->nic,
				 sp->firmware && *sp->firmware ? sp->firmware : "qpod");
		if ((size_t)n >= sizeof(target))
			return qp_error_set(err, QP_E_INVALID, 0, "spares: the firmware's path is too long");
		if (state_write_file(sd, SPARE_TARGET, target, (size_t)n, err) < 0)
			return -1;
	}
	if (vm_spares_each(rootfd, count_one, &c, err) < 0)
		return -1;
	/* spares of an older kernel, guest-init, QEMU...: no pod takes them */
	for (int i = 0; i < c.stale; i++)
		if ((pidfd = stop_holder(c.stale_pids[i], c.stale_starts[i])) >= 0)
			close(pidfd);
	for (int i = c.ready; i < count; i++) {
		/* a refill stops when the target is gone (a drain) */
		if (mode == VM_FILL_REFILL && faccessat(sd, SPARE_TARGET, F_OK, AT_SYMLINK_NOFOLLOW) < 0)
			break;
		if (vm_spare_start(rootfd, sp, name, sizeof(name), err) < 0)
			return -1;
		if (made)
			made(ctx, name);
	}
	return 0;
}

/* ROOT/.spares/target, as fill wrote it; false if there is none. */
static bool read_target(int sd, int *count, struct vm_spare_params *sp, char *fw, size_t fw_size)
{
	char *t = NULL, accel[8] = "";
	size_t len;
	bool ok;

	const char *f;
	int at = 0, nic = 0;

	if (state_read_file(sd, SPARE_TARGET, 128 + PATH_MAX, &t, &len, NULL) < 0)
		return false;
	/* the firmware last: a path, to the end of the line */
	ok = sscanf(t, "count=%d mem=%lluM vcpus=%d accel=%7s nic=%d firmware=%n", count, &sp->mem_mib, &sp->vcpus,
		    accel, &nic, &at) == 5 && at > 0 && *count > 0 && *count <= VM_SPARES_MAX && sp->vcpus > 0 &&
	     (nic == 0 || nic == 1) && qp_accel_parse(accel, &sp->accel) == 0;
	sp->nic = nic;
	f = t + at;
	ok = ok && strcspn(f, "\n") < fw_size;
	if (ok)
		snprintf(fw, fw_size, "%.*s", (int)strcspn(f, "\n"), f);
	free(t);
	sp->firmware = fw;
	return ok;
}

void vm_spares_refill(int rootfd)
{
	_cleanup_close_ int sd = vm_spares_open(rootfd, false, NULL);
	struct vm_spare_params sp = { 0 };
	char fw[PATH_MAX];
	int count;

	if (sd < 0 || !read_target(sd, &count, &sp, fw, sizeof(fw)))
		return;
	pid_t pid = fork();
	if (pid != 0) {
		if (pid > 0)
			waitpid(pid, NULL, 0);
		return;
	}
	/* a detached grandchild, behind the pods at a lower priority: the pod
	 * that took the spare is starting on the same CPUs */
	if (fork() != 0)
		_exit(0);
	setsid();
	setpriority(PRIO_PROCESS, 0, 10);
	/* nothing of the pod's (its channel, its ctl.sock) stays open here */
	int keep[2] = { rootfd, -1 };
	vm_spare_detach_fds(keep);
	rootfd = keep[0];
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	qp_error *err = NULL;
	/* nor in its cgroup, which dies with the pod (the holder enters the
	 * spares' too, for a fill started anywhere) */
	if (vm_spares_enter_cgroup(&err) < 0) {
		qp_debug("refill: %s", err && err->msg ? err->msg : "?");
		_exit(1);
	}
	vm_spares_exit(vm_spares_fill(rootfd, &sp, count, VM_FILL_REFILL, NULL, NULL, &err) < 0 ? 1 : 0);
}

/* a spare no pod has taken (free, or being made) */
static bool untaken(const struct vm_spare_info *in)
{
	return in->holder_alive && !in->taken_by[0];
}

struct drain_ctx {
	int n;
	int pidfds[VM_SPARES_MAX * 2];
	char names[VM_SPARES_MAX * 2][16];
};

/* SIGTERM to the holder of an untaken spare: it stops its QEMU, removes
 * its dir and ends; its pidfd says when */
static void drain_one(void *ctx, int sd, const struct vm_spare_info *in)
{
	struct drain_ctx *c = ctx;
	int pidfd;

	(void)sd;
	if (!untaken(in) || c->n >= (int)QP_ARRAY_SIZE(c->pidfds))
		return;
	if ((pidfd = stop_holder(in->holder, in->holder_start)) < 0)
		return;
	snprintf(c->names[c->n], sizeof(c->names[0]), "%s", in->name);
	c->pidfds[c->n++] = pidfd;
}

int vm_spares_drain(int rootfd, int *n, qp_error **err)
{
	_cleanup_close_ int sd = vm_spares_open(rootfd, false, err);
	_cleanup_close_ int lock = -1;
	struct drain_ctx c = { 0 };
	int r = 0;

	*n = 0;
	if (sd < 0)
		return *err ? -1 : 0;
	/* no more refills: the pool's target goes first; then a fill under
	 * way is waited for, so that no spare it makes outlives the drain */
	unlinkat(sd, SPARE_TARGET, 0);
	if ((lock = lock_fills(sd, err)) < 0 || vm_spares_each(rootfd, drain_one, &c, err) < 0)
		return -1;
	long long deadline = qp_now_ms() + DRAIN_WAIT_MS;
	for (int i = 0; i < c.n; i++) {
		struct pollfd p = { .fd = c.pidfds[i], .events = POLLIN };
		long long left = deadline - qp_now_ms();
		struct vm_spare_info in;
		bool gone = poll(&p, 1, left > 0 ? (int)left : 0) == 1;
		close(c.pidfds[i]);
		if (gone)
			continue;
		/* a holder handing its spare over (taken between the look and
		 * the signal) ignores the signal: that spare is a pod's */
		vm_spare_read_info(sd, c.names[i], &in);
		if (in.taken_by[0])
			(*n)--;
		else if (r == 0)
			r = qp_error_set(err, QP_E_TIMEOUT, 0, "spares still there %d s after they were told to go",
					 DRAIN_WAIT_MS / 1000);
	}
	*n += c.n;
	return r;
}

static void gc_one(void *ctx, int sd, const struct vm_spare_info *in)
{
	int *n = ctx;

	/* a holder that is gone took its QEMU with it: only the dir is left
	 * (a taken spare's holder lives until its QEMU ends; a spare whose
	 * holder file is not written yet is seconds old, and left alone) */
	if (in->holder_alive || !in->holder)
		return;
	if (state_remove_tree(sd, in->name) == 0)
		(*n)++;
}

int vm_spares_gc(int rootfd, int *n, qp_error **err)
{
	*n = 0;
	return vm_spares_each(rootfd, gc_one, n, err);
}
