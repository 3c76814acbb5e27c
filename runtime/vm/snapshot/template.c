/* runtime/vm/snapshot/template.c — VM templates: a microVM booted once up to
 * guest-init's HELLO (before any rootfs is mounted), paused, and saved, so
 * that pods start as clones of it instead of booting a kernel.
 *
 * A template is a directory CACHE/templates/KEY/ holding
 *   mem    the guest's RAM (QEMU memory-backend-file, shared while saving;
 *          a clone maps it privately: copy-on-write, the file never changes)
 *   state  the device state (QMP migrate with x-ignore-shared: the RAM is
 *          not in it; tens of kB)
 *   meta   one line: everything that shapes the booted guest (kernel,
 *          firmware, guest-init and QEMU binaries by inode/size/mtime,
 *          memory, vCPUs, accel, the kernel command line, the protocol
 *          version, and the device set: whether there is a NIC and how
 *          many 9p shares besides the rootfs).  KEY is a hash of it; the whole line is compared on use,
 *          so a changed input or a colliding key is a miss, never a wrong
 *          guest.
 * It is made in a private .tmp-KEY-PID/ directory under KEY.lock (flock)
 * and renamed into place complete: concurrent creates wait for the first
 * and then use its template; a reader never sees a half-made one.  A
 * clone's QEMU keeps its mappings, so removing a template (qpod template
 * rm) does not disturb running pods.  What is and is not unique in a clone:
 * docs/TEMPLATES.md. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "guest-init/channel.h"
#include "net/net.h"
#include "util/cleanup.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/paths.h"
#include "vm/qemu/qemu.h"
#include "vm/snapshot/snapshot.h"
#include "vm/vm.h"

/* a template's NIC's MAC, which never sends (its clones set their own) */
const unsigned char vm_template_mac[6] = { 0x02, 0, 0, 0, 0, 0x01 };

#define TPL_SUBDIR "templates"
#define TPL_META_MAX 8192
#define TPL_STATE_MAX (64u << 20)
#define TPL_CONNECT_MS 5000
#define TPL_MIGRATE_MS 30000
#define TPL_LOCK_WAIT_MS 120000
static const char *const tpl_files[] = { "mem", "state", "meta", QP_VM_INITRD, QP_VM_CHAN_SOCK,
					 QP_VM_QMP_SOCK, QP_VM_QEMU_LOG, NULL };

/* the key's lock, waited for a bounded while (another qpod may be making
 * the template: one boot and a save) */
static int lock_key(int tdir, const char *name, qp_error **err)
{
	long long deadline = qp_now_ms() + TPL_LOCK_WAIT_MS;
	int fd = openat(tdir, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);

	if (fd < 0)
		return qp_fail(err, errno, "template: lock %s", name);
	while (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno != EWOULDBLOCK && errno != EINTR) {
			int e = errno;
			close(fd);
			return qp_fail(err, e, "template: lock %s", name);
		}
		if (qp_now_ms() > deadline) {
			close(fd);
			return qp_error_set(err, QP_E_TIMEOUT, 0, "template: %s held for over %d s by another qpod", name,
					    TPL_LOCK_WAIT_MS / 1000);
		}
		usleep(20000);
	}
	return fd;
}

static int templates_dir(char *buf, size_t size, bool make, qp_error **err)
{
	if ((size_t)snprintf(buf, size, "%s/%s", qp_cache_dir(), TPL_SUBDIR) >= size)
		return qp_error_set(err, QP_E_INVALID, 0, "template directory: path too long");
	if (make && (mkdir(qp_cache_dir(), 0755) < 0 && errno != EEXIST))
		return qp_fail(err, errno, "mkdir %s", qp_cache_dir());
	if (make && mkdir(buf, 0700) < 0 && errno != EEXIST)
		return qp_fail(err, errno, "mkdir %s", buf);
	return 0;
}

/* "path:ino:size:mtime" of a file, or -1 */
static int file_id(const char *path, char *buf, size_t size)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return -1;
	snprintf(buf, size, "%s:%llu:%lld:%lld.%09ld", path, (unsigned long long)st.st_ino,
		 (long long)st.st_size, (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	return 0;
}

/* the QEMU binary that vm_spawn_qemu will run ($QPOD_QEMU or PATH) */
static int qemu_id(char *buf, size_t size)
{
	const char *bin = getenv("QPOD_QEMU");
	const char *path = getenv("PATH");
	char cand[PATH_MAX];

	if (!bin || !*bin)
		bin = QEMU_BIN;
	if (strchr(bin, '/'))
		return file_id(bin, buf, size);
	for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
		size_t n = strcspn(p, ":");
		if (n && (size_t)snprintf(cand, sizeof(cand), "%.*s/%s", (int)n, p, bin) < sizeof(cand) &&
		    access(cand, X_OK) == 0)
			return file_id(cand, buf, size);
		p += n + (p[n] == ':');
	}
	return -1;
}

/* the one-line description of what the template boots, and its key */
static int describe(const struct vm_template_params *p, char *desc, size_t size, char key[17],
		    qp_error **err)
{
	char kernel[PATH_MAX + 96], fw[PATH_MAX + 96], init[PATH_MAX + 96], qemu[PATH_MAX + 96];
	char cmdline[VM_CMDLINE_MAX];
	uint64_t h = 1469598103934665603ull; /* FNV-1a */

	if (file_id(p->kernel, kernel, sizeof(kernel)) < 0 || file_id(p->firmware, fw, sizeof(fw)) < 0 ||
	    file_id(p->init, init, sizeof(init)) < 0)
		return qp_fail(err, errno, "template: stat the kernel, firmware or guest-init");
	if (qemu_id(qemu, sizeof(qemu)) < 0)
		return qp_error_set(err, QP_E_NOTFOUND, 0, "template: %s not found", QEMU_BIN);
	vm_guest_cmdline(cmdline, sizeof(cmdline), p->kvm, p->vcpus, true);
	if ((size_t)snprintf(desc, size,
			     "proto=%d kernel=%s firmware=%s init=%s qemu=%s mem=%lluM vcpus=%d accel=%s nic=%d "
			     "shares=%u cmdline=%s",
			     QP_PROTO_VERSION, kernel, fw, init, qemu, p->mem_mib, p->vcpus,
			     p->kvm ? "kvm" : "tcg", p->nic, p->nshares, cmdline) >= size)
		return qp_error_set(err, QP_E_INVALID, 0, "template: description too long");
	for (const char *c = desc; *c; c++)
		h = (h ^ (unsigned char)*c) * 1099511628211ull;
	snprintf(key, 17, "%016llx", (unsigned long long)h);
	return 0;
}

int vm_template_key(const struct vm_template_params *p, char key[17], qp_error **err)
{
	char desc[TPL_META_MAX];

	return describe(p, desc, sizeof(desc), key, err);
}

/* Is dir/KEY a complete template of desc (meta equal, mem of the right
 * size, a state file)? */
static bool valid(int tdir, const char *key, const char *desc, unsigned long long mem_mib)
{
	_cleanup_close_ int d = openat(tdir, key, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_close_ int mf = d < 0 ? -1 : openat(d, "meta", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	char meta[TPL_META_MAX];
	struct stat st;
	ssize_t n;

	if (mf < 0 || (n = read(mf, meta, sizeof(meta) - 1)) <= 0)
		return false;
	meta[n] = '\0';
	meta[strcspn(meta, "\n")] = '\0';
	if (strcmp(meta, desc))
		return false;
	if (fstatat(d, "mem", &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode) ||
	    (unsigned long long)st.st_size != mem_mib << 20)
		return false;
	return fstatat(d, "state", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
	       st.st_size <= (off_t)TPL_STATE_MAX;
}

/* The empty directories a template's shares point at while it is made:
 * root, m0 .. m(QP_PROTO_MAX_MOUNTS-1). */
static void share_dir_name(unsigned i, char *buf, size_t size)
{
	if (i == 0)
		snprintf(buf, size, "root");
	else
		snprintf(buf, size, "m%u", i - 1);
}

static void remove_share_dirs(int d)
{
	char name[16];

	for (unsigned i = 0; i <= QP_PROTO_MAX_MOUNTS; i++) {
		share_dir_name(i, name, sizeof(name));
		unlinkat(d, name, AT_REMOVEDIR);
	}
}

/* Remove a template directory (only the files a template has). */
static void remove_dir(int tdir, const char *name)
{
	_cleanup_close_ int d = openat(tdir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (d >= 0) {
		for (size_t i = 0; tpl_files[i]; i++)
			unlinkat(d, tpl_files[i], 0);
		remove_share_dirs(d);
	}
	unlinkat(tdir, name, AT_REMOVEDIR);
}

static int connect_chan(int dirfd, pid_t qemu, qp_error **err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	long long deadline = qp_now_ms() + TPL_CONNECT_MS;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/%s", dirfd, QP_VM_CHAN_SOCK);
	if (fd < 0)
		return qp_fail(err, errno, "socket");
	while (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		if ((errno != ENOENT && errno != ECONNREFUSED && errno != EINTR) || qp_now_ms() > deadline ||
		    waitpid(qemu, NULL, WNOHANG) == qemu) {
			int e = errno;
			close(fd);
			return qp_fail(err, e, "template: connect to the VM channel");
		}
		usleep(2000);
	}
	return fd;
}

/* migrate (or migrate-incoming) through fd, under getfd name "tpl", until
 * query-migrate says completed */
int vm_template_migrate(struct vm_qmp *q, int fd, bool incoming, qp_error **err)
{
	char status[32];
	long long deadline = qp_now_ms() + TPL_MIGRATE_MS;

	if (vm_qmp_command(q,
			   "{\"execute\":\"migrate-set-capabilities\",\"arguments\":{\"capabilities\":"
			   "[{\"capability\":\"x-ignore-shared\",\"state\":true}]}}",
			   -1, NULL, 0, err) < 0 ||
	    vm_qmp_command(q, "{\"execute\":\"getfd\",\"arguments\":{\"fdname\":\"tpl\"}}", fd, NULL, 0, err) < 0 ||
	    vm_qmp_command(q,
			   incoming ? "{\"execute\":\"migrate-incoming\",\"arguments\":{\"uri\":\"fd:tpl\"}}"
				    : "{\"execute\":\"migrate\",\"arguments\":{\"uri\":\"fd:tpl\"}}",
			   -1, NULL, 0, err) < 0)
		return qp_error_prefix(err, "template: %s", incoming ? "restore" : "save");
	for (;;) {
		if (vm_qmp_command(q, "{\"execute\":\"query-migrate\"}", -1, status, sizeof(status), err) < 0)
			return qp_error_prefix(err, "template");
		if (!strcmp(status, "completed"))
			return 0;
		if (!strcmp(status, "failed") || !strcmp(status, "cancelled"))
			return qp_error_set(err, QP_E_GENERIC, 0, "template: the %s %s (see qemu.log)",
					    incoming ? "restore" : "save", status);
		if (qp_now_ms() > deadline)
			return qp_error_set(err, QP_E_TIMEOUT, 0, "template: the %s took over %d s",
					    incoming ? "restore" : "save", TPL_MIGRATE_MS / 1000);
		usleep(1000);
	}
}

/* Boot the template's VM in tmp/ (dirfd d), wait for HELLO, pause, save. */
static int make_in(int d, const char *tmp, const struct vm_template_params *p, const char *desc,
		   qp_error **err)
{
	/* the MAC the guest boots with; each clone's guest-init sets its own */
	const unsigned char *template_mac = vm_template_mac;
	char mem[PATH_MAX + 80], root[PATH_MAX + 80];
	struct vm_share shares[QP_PROTO_MAX_MOUNTS];
	char share_paths[QP_PROTO_MAX_MOUNTS][PATH_MAX + 80];
	struct vm_qemu_opts o = {
		.machine = VM_MACHINE_MICROVM, .statedir = tmp, .dirfd = d, .kernel = p->kernel,
		.firmware = p->firmware, .rootfs = root, .rootfs_ro = true, .qmp = true, .kvm = p->kvm,
		.vcpus = p->vcpus, .mem_mib = p->mem_mib, .tap_fd = -1, .mem_path = mem, .mem_shared = true,
		.shares = shares, .nshares = p->nshares, .mac = template_mac, .template_boot = true,
	};
	struct vm_qmp *q = NULL;
	struct qp_chan *ch = NULL;
	struct qp_msg msg;
	_cleanup_close_ int sfd = -1, mf = -1, meta = -1, fd = -1, tap = -1;
	pid_t qemu = -1;
	int r = -1;

	if (p->nshares > QP_PROTO_MAX_MOUNTS)
		return qp_error_set(err, QP_E_INVALID, 0, "template: at most %d shares", QP_PROTO_MAX_MOUNTS);
	snprintf(mem, sizeof(mem), "%s/mem", tmp);
	snprintf(root, sizeof(root), "%s/root", tmp);
	/* the shares exist (the device set must match the clones'), empty;
	 * their tags are the ones vm_mounts_plan gives a pod's (m0, m1 ...) */
	for (unsigned i = 0; i <= p->nshares; i++) {
		char name[16];
		share_dir_name(i, name, sizeof(name));
		if (mkdirat(d, name, 0500) < 0)
			return qp_fail(err, errno, "template: mkdir %s", name);
		if (i == 0)
			continue;
		if ((size_t)snprintf(share_paths[i - 1], sizeof(share_paths[i - 1]), "%s/%s", tmp, name) >=
		    sizeof(share_paths[i - 1]))
			return qp_error_set(err, QP_E_INVALID, 0, "template: path too long");
		shares[i - 1] = (struct vm_share){ .path = share_paths[i - 1], .ro = true };
		snprintf(shares[i - 1].tag, sizeof(shares[i - 1].tag), "%s", name);
	}
	/* the NIC's backend: a tap attached to nothing and down (no packet
	 * goes anywhere), of the kind (vnet_hdr) the clones' taps are, so the
	 * features the guest negotiated hold for them */
	if (p->nic && (o.tap_fd = tap = qp_net_tap_unattached(NULL, err)) < 0)
		return qp_error_prefix(err, "template: NIC");
	if (vm_write_initrd(d, QP_VM_INITRD, p->init, err) < 0 || (qemu = vm_spawn_qemu(&o, err)) < 0)
		goto out;
	if ((fd = connect_chan(d, qemu, err)) < 0)
		goto out;
	if (!(ch = qp_chan_new(fd))) {
		qp_fail(err, ENOMEM, "template: channel");
		goto out;
	}
	if (qp_chan_recv(ch, &msg, vm_hello_timeout_ms(p->kvm), err) < 0 ||
	    qp_msg_check_sender(&msg, QP_SENDER_GUEST, err) < 0) {
		qp_error_prefix(err, "template: wait for the VM's hello");
		goto out;
	}
	if (msg.type != QP_MSG_HELLO) {
		qp_error_set(err, QP_E_GUEST, 0, "template: the VM sent %s instead of HELLO",
			     qp_msg_type_name(msg.type));
		goto out;
	}
	sfd = openat(d, "state", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (sfd < 0) {
		qp_fail(err, errno, "template: create state");
		goto out;
	}
	if (vm_qmp_connect(d, &q, err) < 0 || vm_qmp_command(q, "{\"execute\":\"stop\"}", -1, NULL, 0, err) < 0 ||
	    vm_template_migrate(q, sfd, false, err) < 0)
		goto out;
	/* on disk before it is used (a crash must not leave a torn template) */
	mf = openat(d, "mem", O_RDONLY | O_CLOEXEC);
	if (fsync(sfd) < 0 || mf < 0 || fsync(mf) < 0) {
		qp_fail(err, errno, "template: sync (disk full?)");
		goto out;
	}
	meta = openat(d, "meta", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (meta < 0 || dprintf(meta, "%s\n", desc) < 0 || fsync(meta) < 0) {
		qp_fail(err, errno, "template: write meta");
		goto out;
	}
	r = 0;
out:
	vm_qmp_free(q);
	qp_chan_free(ch);
	int status = 0;
	bool died = false;
	if (qemu > 0) {
		/* a failure may be QEMU's death: give it a moment to be reaped as such */
		for (int i = 0; r < 0 && i < 40 && !died; i++) {
			died = waitpid(qemu, &status, WNOHANG) == qemu;
			if (!died)
				usleep(5000);
		}
		if (!died) {
			kill(qemu, SIGKILL);
			waitpid(qemu, NULL, 0);
		}
	}
	if (r < 0) {
		char tail[256];
		vm_qemu_log_tail(d, tail, sizeof(tail));
		if (tail[0])
			qp_error_prefix(err, "qemu: %s", tail);
		/* SIGBUS: a page of the shared RAM file could not be allocated */
		if (died && WIFSIGNALED(status))
			qp_error_prefix(err, "template: qemu killed by signal %d%s", WTERMSIG(status),
					WTERMSIG(status) == SIGBUS
						? " (the template's RAM file could not grow: is the cache's file system full?)"
						: "");
	}
	/* what only the making needed */
	unlinkat(d, QP_VM_INITRD, 0);
	unlinkat(d, QP_VM_CHAN_SOCK, 0);
	unlinkat(d, QP_VM_QMP_SOCK, 0);
	return r;
}

static int prune(void (*each)(void *ctx, const char *key), void *ctx, const char *keep, qp_error **err);

/* KEY.failed: why the last making of KEY failed, if that was recently */
static bool failed_recently(int tdir, const char *key, char *why, size_t size)
{
	char name[64];
	struct stat st;
	_cleanup_close_ int fd = -1;
	ssize_t n;

	snprintf(name, sizeof(name), "%s.failed", key);
	fd = openat(tdir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || st.st_mtime + VM_TEMPLATE_RETRY_S < time(NULL))
		return false;
	n = read(fd, why, size - 1);
	why[n > 0 ? n : 0] = '\0';
	return true;
}

static void remember_failure(int tdir, const char *key, const qp_error *e)
{
	char name[64], tmp[72];
	int fd;

	snprintf(name, sizeof(name), "%s.failed", key);
	snprintf(tmp, sizeof(tmp), ".%s.%d", name, (int)getpid());
	fd = openat(tdir, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	dprintf(fd, "%s", e && e->msg ? e->msg : "failed");
	close(fd);
	if (renameat(tdir, tmp, tdir, name) < 0)
		unlinkat(tdir, tmp, 0);
}

int vm_template_get(const struct vm_template_params *p, bool create, bool skip_failed,
		    struct vm_template *out, bool *made, qp_error **err)
{
	char desc[TPL_META_MAX], dir[PATH_MAX], lockname[64], tmp[PATH_MAX + 72], tmpname[64];
	_cleanup_close_ int tdir = -1, lock = -1;
	int r = -1;

	if (made)
		*made = false;
	if (describe(p, desc, sizeof(desc), out->key, err) < 0 || templates_dir(dir, sizeof(dir), create, err) < 0)
		return -1;
	snprintf(out->dir, sizeof(out->dir), "%s/%s", dir, out->key);
	snprintf(out->mem, sizeof(out->mem), "%s/mem", out->dir);
	snprintf(out->state, sizeof(out->state), "%s/state", out->dir);
	tdir = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (tdir >= 0 && valid(tdir, out->key, desc, p->mem_mib))
		return 0;
	if (!create)
		return qp_error_set(err, QP_E_NOTFOUND, 0, "no template %s", out->key);
	if (tdir < 0)
		return qp_fail(err, errno, "open %s", dir);
	char why[512];
	if (skip_failed && failed_recently(tdir, out->key, why, sizeof(why)))
		return qp_error_set(err, QP_E_GENERIC, 0, "template %s failed recently: %s", out->key, why);
	snprintf(lockname, sizeof(lockname), "%s.lock", out->key);
	if ((lock = lock_key(tdir, lockname, err)) < 0)
		return -1;
	if (valid(tdir, out->key, desc, p->mem_mib)) /* made while we waited */
		return 0;
	/* the maker we waited for failed: do not fail again, as slowly */
	if (skip_failed && failed_recently(tdir, out->key, why, sizeof(why)))
		return qp_error_set(err, QP_E_GENERIC, 0, "template %s failed recently: %s", out->key, why);
	remove_dir(tdir, out->key); /* stale or of other inputs */
	snprintf(tmpname, sizeof(tmpname), ".tmp-%s-%d", out->key, (int)getpid());
	snprintf(tmp, sizeof(tmp), "%s/%s", dir, tmpname);
	if (mkdirat(tdir, tmpname, 0700) < 0)
		return qp_fail(err, errno, "template: mkdir %s", tmp);
	qp_log(QP_LOG_INFO, "making VM template %s (%llu MiB, %d vCPU, %s): one boot, then every pod clones it",
		out->key, p->mem_mib, p->vcpus, p->kvm ? "kvm" : "tcg");
	{
		_cleanup_close_ int d = openat(tdir, tmpname, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (d < 0)
			qp_fail(err, errno, "open %s", tmp);
		else if (make_in(d, tmp, p, desc, err) == 0) {
			unlinkat(d, QP_VM_QEMU_LOG, 0);
			remove_share_dirs(d);
			r = 0;
		}
	}
	if (r == 0 && renameat(tdir, tmpname, tdir, out->key) < 0)
		r = qp_fail(err, errno, "template: rename into place");
	if (r < 0) {
		remove_dir(tdir, tmpname);
		remember_failure(tdir, out->key, err ? *err : NULL);
	} else {
		if (made)
			*made = true;
		char name[64];
		snprintf(name, sizeof(name), "%s.failed", out->key);
		unlinkat(tdir, name, 0);
	}
	/* a new template often replaces one whose inputs changed (a rebuilt
	 * kernel, an upgraded QEMU): those are of no use any more */
	if (r == 0)
		prune(NULL, NULL, out->key, NULL);
	return r;
}

/* The value of NAME= in a meta line (the fields in describe()'s order;
 * cmdline, the last, runs to the end), at most size-1 bytes; false if
 * missing. */
static bool meta_field(const char *meta, const char *name, const char *next, char *out, size_t size)
{
	char key[32], nkey[32];
	const char *v, *end;

	snprintf(key, sizeof(key), " %s=", name);
	snprintf(nkey, sizeof(nkey), " %s=", next ? next : "");
	if (!(v = strstr(meta, key)))
		return false;
	v += strlen(key);
	end = next ? strstr(v, nkey) : v + strlen(v);
	if (!end || (size_t)(end - v) >= size)
		return false;
	memcpy(out, v, (size_t)(end - v));
	out[end - v] = '\0';
	return true;
}

/* Can a pod still ask for this template?  Not when its protocol is
 * another guest-init's, or one of its input files (kernel, firmware,
 * guest-init, QEMU) changed or is gone: the key of every pod now holds the
 * new file's identity.  (A template of another memory size, command line
 * or QEMU on PATH is someone else's current one, and stays.) */
static bool current(const char *meta)
{
	static const char *const files[][2] = {
		{ "kernel", "firmware" }, { "firmware", "init" }, { "init", "qemu" }, { "qemu", "mem" }
	};
	char line[TPL_META_MAX + 2], id[PATH_MAX + 96], now[PATH_MAX + 96], proto[16];

	/* " " first: meta_field looks for " NAME=" */
	snprintf(line, sizeof(line), " %s", meta);
	snprintf(now, sizeof(now), "%d", QP_PROTO_VERSION);
	if (!meta_field(line, "proto", "kernel", proto, sizeof(proto)) || strcmp(proto, now))
		return false;
	for (size_t i = 0; i < QP_ARRAY_SIZE(files); i++) {
		if (!meta_field(line, files[i][0], files[i][1], id, sizeof(id)))
			return false;
		char path[PATH_MAX + 96];
		snprintf(path, sizeof(path), "%s", id);
		for (int k = 0; k < 3; k++) { /* "path:ino:size:mtime" */
			char *c = strrchr(path, ':');
			if (c)
				*c = '\0';
		}
		if (file_id(path, now, sizeof(now)) < 0 || strcmp(now, id))
			return false;
	}
	return true;
}

/* calls each(key, d) for every template directory */
static int each_template(int tdir, void (*fn)(void *ctx, int tdir, const char *key, int d, const char *meta),
			 void *ctx, qp_error **err)
{
	DIR *dp = fdopendir(dup(tdir));
	struct dirent *de;

	if (!dp)
		return qp_fail(err, errno, "read the templates");
	rewinddir(dp); /* the dup shares its offset with tdir */
	while ((de = readdir(dp))) {
		char meta[TPL_META_MAX] = "";
		if (de->d_name[0] == '.' || strchr(de->d_name, '.') || strlen(de->d_name) != 16)
			continue;
		_cleanup_close_ int d = openat(tdir, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		_cleanup_close_ int mf = d < 0 ? -1 : openat(d, "meta", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		ssize_t n = mf < 0 ? -1 : read(mf, meta, sizeof(meta) - 1);
		meta[n > 0 ? n : 0] = '\0';
		meta[strcspn(meta, "\n")] = '\0';
		fn(ctx, tdir, de->d_name, d, meta);
	}
	closedir(dp);
	return 0;
}

static int open_templates(int *tdir, qp_error **err)
{
	char dir[PATH_MAX];

	*tdir = -1;
	if (templates_dir(dir, sizeof(dir), false, err) < 0)
		return -1;
	if ((*tdir = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return errno == ENOENT ? 0 : qp_fail(err, errno, "open %s", dir);
	return 0;
}

struct list_ctx {
	void (*each)(void *ctx, const char *key, const char *meta, long long mem_bytes, bool stale);
	void *ctx;
};

static void list_one(void *ctx, int tdir, const char *key, int d, const char *meta)
{
	struct list_ctx *l = ctx;
	struct stat st;

	(void)tdir;
	l->each(l->ctx, key, meta, d >= 0 && fstatat(d, "mem", &st, AT_SYMLINK_NOFOLLOW) == 0 ? (long long)st.st_size : -1,
		!current(meta));
}

int vm_template_list(void (*each)(void *ctx, const char *key, const char *meta, long long mem_bytes, bool stale),
		     void *ctx, qp_error **err)
{
	_cleanup_close_ int tdir = -1;
	struct list_ctx l = { each, ctx };

	if (open_templates(&tdir, err) < 0)
		return -1;
	return tdir < 0 ? 0 : each_template(tdir, list_one, &l, err);
}

struct prune_ctx {
	void (*each)(void *ctx, const char *key);
	void *ctx;
	const char *keep; /* the key just made */
};

static void prune_one(void *ctx, int tdir, const char *key, int d, const char *meta)
{
	struct prune_ctx *pc = ctx;
	char lockname[64];
	int lock;

	(void)d;
	if ((pc->keep && !strcmp(key, pc->keep)) || current(meta))
		return;
	snprintf(lockname, sizeof(lockname), "%s.lock", key);
	/* not waited for: a key being made or removed is someone's business */
	lock = openat(tdir, lockname, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (lock < 0 || flock(lock, LOCK_EX | LOCK_NB) < 0) {
		if (lock >= 0)
			close(lock);
		return;
	}
	remove_dir(tdir, key);
	snprintf(lockname, sizeof(lockname), "%s.failed", key);
	unlinkat(tdir, lockname, 0);
	snprintf(lockname, sizeof(lockname), "%s.lock", key);
	unlinkat(tdir, lockname, 0);
	close(lock);
	if (pc->each)
		pc->each(pc->ctx, key);
}

/* what is not a template: half-made ones of makers that died (.tmp-KEY-PID
 * of a dead PID), failure notes past their time, locks of no template */
static void prune_debris(int tdir)
{
	DIR *dp = fdopendir(dup(tdir));
	struct dirent *de;
	struct stat st;

	if (!dp)
		return;
	rewinddir(dp); /* the dup shares its offset with tdir */
	while ((de = readdir(dp))) {
		const char *n = de->d_name;
		char key[17];
		int pid;
		if (sscanf(n, ".tmp-%16[0-9a-f]-%d", key, &pid) == 2) {
			if (pid > 0 && kill(pid, 0) < 0 && errno == ESRCH)
				remove_dir(tdir, n);
		} else if (strlen(n) == 16 + 7 && !strcmp(n + 16, ".failed")) {
			if (fstatat(tdir, n, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_mtime + VM_TEMPLATE_RETRY_S < time(NULL))
				unlinkat(tdir, n, 0);
		} else if (strlen(n) == 16 + 5 && !strcmp(n + 16, ".lock")) {
			snprintf(key, sizeof(key), "%.16s", n);
			if (fstatat(tdir, key, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT) {
				int fd = openat(tdir, n, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
				/* unlinked only while held: a maker waiting at it keeps its own */
				if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0 &&
				    fstatat(tdir, key, &st, AT_SYMLINK_NOFOLLOW) < 0)
					unlinkat(tdir, n, 0);
				if (fd >= 0)
					close(fd);
			}
		}
	}
	closedir(dp);
}

static int prune(void (*each)(void *ctx, const char *key), void *ctx, const char *keep, qp_error **err)
{
	_cleanup_close_ int tdir = -1;
	struct prune_ctx pc = { each, ctx, keep };

	if (open_templates(&tdir, err) < 0)
		return -1;
	if (tdir < 0)
		return 0;
	if (each_template(tdir, prune_one, &pc, err) < 0)
		return -1;
	prune_debris(tdir);
	return 0;
}

int vm_template_prune(void (*each)(void *ctx, const char *key), void *ctx, qp_error **err)
{
	return prune(each, ctx, NULL, err);
}

int vm_template_remove(const char *key, qp_error **err)
{
	char dir[PATH_MAX], lockname[64];
	_cleanup_close_ int tdir = -1, lock = -1;
	struct stat st;

	if (strlen(key) != 16 || strspn(key, "0123456789abcdef") != 16)
		return qp_error_set(err, QP_E_INVALID, 0, "\"%.32s\" is not a template key (qpod template list)", key);
	if (templates_dir(dir, sizeof(dir), false, err) < 0)
		return -1;
	if ((tdir = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 ||
	    fstatat(tdir, key, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return qp_error_set(err, QP_E_NOTFOUND, 0, "no template %s", key);
	snprintf(lockname, sizeof(lockname), "%s.lock", key);
	if ((lock = lock_key(tdir, lockname, err)) < 0)
		return -1;
	remove_dir(tdir, key);
	snprintf(lockname, sizeof(lockname), "%s.failed", key);
	unlinkat(tdir, lockname, 0);
	snprintf(lockname, sizeof(lockname), "%s.lock", key);
	unlinkat(tdir, lockname, 0);
	return 0;
}
