/* runtime/vm/snapshot/spare.c — spares: clones of a VM template started ahead of
 * the pods that will take them, kept unique and warm (Hyper's "VM
 * factory" cache, Kata's VM cache).  A pod that finds one skips QEMU's
 * start, the restore and the resume, and under TCG the translation of the
 * code its start runs (docs/TEMPLATES.md, "Spares").
 *
 * A spare lives in ROOT/.spares/NAME/ (ROOT: the state root of the qpod
 * that made it; only pods of that root take it):
 *   share/        the 9p share its QEMU exports as the rootfs: root/, where
 *                 the taking pod's rootfs is bound (in QEMU's mount
 *                 namespace), holding the warm-up's program until then
 *                 (root/.qpod-warm, guest-init's copy)
 *   ch.sock qmp.sock qemu.log   QEMU's, as in a pod's dir
 *   holder        the holder's pid and start time ("PID:START"), first
 *   meta          one line, written once the spare is ready: its template
 *                 key and parameters, the firmware's path last
 *   take.sock     the holder's; exists while the spare is free
 *   taken         the ID of the pod that took it
 * The holder is the process that made the spare: QEMU's parent (QEMU
 * dies with it), it waits for a taker on take.sock.  The taker (a pod's
 * monitor, spare_take.c) sends two lines, "take POD" and its cgroup's
 * path (empty: none), and gets "ok QEMU START ACCEL" with the guest
 * channel's fd; the holder moves QEMU into the pod's cgroup and to the
 * taker's nice value first, then lets go of everything but QEMU's exit,
 * which it reports ("exit STATUS") on that connection before it ends.  The
 * spare's dir is then the pod's monitor's to remove.  A request refused
 * before QEMU was touched (malformed, a cgroup that cannot be opened)
 * leaves the spare free for the next taker.
 *
 * A pool: `qpod spares fill --count N` keeps a target (ROOT/.spares/target),
 * and every take starts a replacement (refill) in the background
 * (spare_pool.c; this file is the spares' directory and their holders). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "host/cgroup/cgroup.h"
#include "pod.h"
#include "util/cleanup.h"
#include "util/fdpass.h"
#include "util/io.h"
#include "util/log.h"
#include "util/safepath.h"
#include "util/report.h"
#include "vm/monitor/monitor.h"
#include "vm/qemu/qemu.h"
#include "vm/snapshot/snapshot.h"
#include "vm/snapshot/spare.h"
#include "vm/vm.h"


/* ---- the .spares directory ---- */

int vm_spares_open(int rootfd, bool make, qp_error **err)
{
	int fd;

	if (make && mkdirat(rootfd, QP_SPARES_DIR, 0700) < 0 && errno != EEXIST)
		return qp_fail(err, errno, "make the spares directory %s", QP_SPARES_DIR);
	fd = openat(rootfd, QP_SPARES_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && (make || errno != ENOENT))
		return qp_fail(err, errno, "open the spares directory %s", QP_SPARES_DIR);
	if (fd >= 0 && state_check_private(fd, QP_SPARES_DIR, err) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The meta line's fields (absent: zero / ""). */
static void parse_meta(const char *line, struct vm_spare_info *in)
{
	const char *p;

	if ((p = strstr(line, "key=")))
		sscanf(p, "key=%16s", in->key);
	if ((p = strstr(line, " mem=")))
		sscanf(p, " mem=%lluM", &in->mem_mib);
	if ((p = strstr(line, " vcpus=")))
		sscanf(p, " vcpus=%d", &in->vcpus);
	if ((p = strstr(line, " accel=")))
		sscanf(p, " accel=%7s", in->accel);
	if ((p = strstr(line, " qemu=")))
		sscanf(p, " qemu=%d", &in->qemu);
	/* last: a path, to the end of the line */
	if ((p = strstr(line, " fw=")))
		snprintf(in->firmware, sizeof(in->firmware), "%.*s", (int)strcspn(p + 4, "\n"), p + 4);
}

/* What is known of spare NAME in the spares dir sd. */
void vm_spare_read_info(int sd, const char *name, struct vm_spare_info *in)
{
	_cleanup_close_ int d = openat(sd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	char *meta = NULL;
	size_t len;

	memset(in, 0, sizeof(*in));
	snprintf(in->name, sizeof(in->name), "%s", name);
	if (d < 0)
		return;
	if (state_read_file(d, SPARE_HOLDER, 64, &meta, &len, NULL) == 0) {
		sscanf(meta, "%d:%llu", &in->holder, &in->holder_start);
		free(meta);
	}
	if (state_read_file(d, SPARE_META, 256 + PATH_MAX, &meta, &len, NULL) == 0) {
		parse_meta(meta, in);
		in->ready = true;
		free(meta);
	}
	char *taken = NULL;
	if (state_read_file(d, QP_SPARE_TAKEN, QP_ID_MAX + 1, &taken, &len, NULL) == 0) {
		snprintf(in->taken_by, sizeof(in->taken_by), "%.*s", (int)len, taken);
		free(taken);
	}
	in->holder_alive = in->holder > 0 && proc_start_time(in->holder) == in->holder_start;
	in->free = in->holder_alive && in->ready && !in->taken_by[0] &&
		   faccessat(d, QP_SPARE_TAKE_SOCK, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

void vm_spare_tap_name(const char *spare, char buf[16])
{
	snprintf(buf, 16, "qp%.13s", spare);
}

/* A spare's name: "s" and 12 random hex digits. */
static int valid_name(const char *name)
{
	if (name[0] != 's' || strlen(name) != 13)
		return 0;
	for (const char *c = name + 1; *c; c++)
		if (!strchr("0123456789abcdef", *c))
			return 0;
	return 1;
}

int vm_spares_each(int rootfd, void (*fn)(void *ctx, int sd, const struct vm_spare_info *in), void *ctx,
		   qp_error **err)
{
	_cleanup_close_ int sd = vm_spares_open(rootfd, false, err);
	DIR *dir;
	struct dirent *de;

	if (sd < 0)
		return *err ? -1 : 0;
	int dup_sd = dup(sd);
	if (dup_sd < 0 || !(dir = fdopendir(dup_sd))) {
		if (dup_sd >= 0)
			close(dup_sd);
		return qp_fail(err, errno, "read the spares directory");
	}
	while ((de = readdir(dir))) {
		struct vm_spare_info in;
		if (!valid_name(de->d_name))
			continue;
		vm_spare_read_info(sd, de->d_name, &in);
		fn(ctx, sd, &in);
	}
	closedir(dir);
	return 0;
}

/* ---- the holder ---- */

/* Spares live in a cgroup of their own, not their maker's: a refill is
 * forked by a pod's monitor, and that pod's cgroup is killed with the pod.
 * A taking pod moves the spare's QEMU into its cgroup.  Only as root (as
 * the jail); it goes with the last of its processes (vm_spares_exit). */
#define SPARES_CGROUP QP_CGROUP_DEFAULT_PARENT "/spares"

static int enter_once(qp_error **err)
{
	const struct qp_resources none = { .skip_devices = true }; /* QEMU opens /dev/kvm, tun */
	struct qp_cgroup_entry e = QP_CGROUP_ENTRY_INIT;
	struct qp_cgroup *cg = NULL;
	qp_error *made = NULL;
	int r;

	if (qp_cgroup_create(SPARES_CGROUP, &none, &cg, &made) < 0) {
		if (!made || made->code != QP_E_EXISTS) {
			*err = made;
			return -1;
		}
		qp_error_free(&made);
		if (qp_cgroup_open(SPARES_CGROUP, &cg, err) < 0)
			return -1;
	}
	r = qp_cgroup_entry_open(cg, &e, err);
	if (r == 0)
		r = qp_cgroup_entry_use(&e, err);
	qp_cgroup_entry_close(&e);
	qp_cgroup_free(cg);
	return r;
}

int vm_spares_enter_cgroup(qp_error **err)
{
	/* the last one out of it removes it (vm_spares_exit): one that does so
	 * between this make and enter makes it go again */
	for (int tries = 0;; tries++) {
		int r = enter_once(err);
		if (r == 0 || tries == 4 || !*err || ((*err)->errnum != ENOENT && (*err)->errnum != ENODEV))
			return r;
		qp_error_free(err);
	}
}

/* The end of a process of the spares' cgroup (a holder, a refill): out of
 * it first, and the last one out removes it, so that nothing named qpod
 * stays in the host's hierarchies once no spare is left. */
void vm_spares_exit(int status)
{
	struct qp_cgroup *cg = NULL;

	if (qp_cgroup_open(SPARES_CGROUP, &cg, NULL) == 0) {
		qp_cgroup_leave(cg);
		qp_cgroup_free(cg);
	}
	_exit(status);
}

/* A listening socket NAME in d (non-blocking accepts). */
static int listen_in(int d, const char *name, qp_error **err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/%s", d, name);
	if (fd < 0)
		return qp_fail(err, errno, "socket");
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 4) < 0) {
		int e = errno;
		close(fd);
		return qp_fail(err, e, "listen on %s", name);
	}
	return fd;
}

/* The spec of a spare's (never started) pod: a VM that must be a clone. */
static struct pod_spec *spare_spec(const struct vm_spare_params *sp, qp_error **err)
{
	struct pod_spec *s = spec_default();

	if (!s)
		return qp_fail(err, ENOMEM, "spare"), NULL;
	s->opts.mode = QP_MODE_VM;
	s->opts.boot = QP_BOOT_TEMPLATE;
	s->opts.vcpus = sp->vcpus;
	s->opts.accel = sp->accel;
	s->process.terminal = false;
	s->resources.has_memory_limit = true;
	s->resources.memory_limit = (int64_t)(sp->mem_mib << 20);
	if (sp->firmware && !(s->opts.firmware = strdup(sp->firmware))) {
		spec_free(s);
		return qp_fail(err, ENOMEM, "spare"), NULL;
	}
	return s;
}

struct holder {
	int sd, d;                 /* the spares dir, the spare's dir */
	char name[16];
	char share[PATH_MAX];      /* ROOT/.spares/NAME/share */
	struct pod pod;
	struct pod_state state;
	struct vm_mon *m;
	int listen_fd, sigfd;
};

static void holder_remove(struct holder *h)
{
	if (h->sd >= 0)
		state_remove_tree(h->sd, h->name);
}

/* Send WARM and wait for its HELLO (guest-init's warm_up). */
static int warm(struct vm_mon *m, qp_error **err)
{
	struct qp_msg msg = { .type = QP_MSG_WARM };

	msg.u.warm.tag = VM_ROOTFS_TAG;
	if (qp_chan_send(m->chan, &msg, QP_VM_SEND_TIMEOUT_MS, err) < 0 ||
	    qp_chan_recv(m->chan, &msg, WARM_TIMEOUT_MS, err) < 0)
		return qp_error_prefix(err, "warm-up");
	if (msg.type == QP_MSG_ERROR) {
		char shown[QP_SHOWN_MAX];
		return qp_error_set(err, QP_E_GUEST, msg.u.error.errnum, "warm-up: the guest says: %s",
				    qp_shown(msg.u.error.text, shown));
	}
	if (msg.type != QP_MSG_HELLO)
		return qp_error_set(err, QP_E_GUEST, 0, "warm-up: the guest sent %s, not HELLO",
				    qp_msg_type_name(msg.type));
	return 0;
}

/* Make the spare's dir and boot its clone, warm; 0 when ready. */
static int holder_boot(struct holder *h, int rootfd, const struct vm_spare_params *sp, qp_error **err)
{
	char root[PATH_MAX], init_dir[] = SPARE_SHARE "/" QP_PROTO_SUBDIR;
	_cleanup_free_ char *init = NULL;
	uint8_t rnd[6];

	if ((h->sd = vm_spares_open(rootfd, true, err)) < 0 ||
	    qp_fd_realpath(rootfd, root, sizeof(root), "the state root", err) < 0)
		return -1;
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		return qp_fail(err, errno, "getrandom");
	snprintf(h->name, sizeof(h->name), "s%02x%02x%02x%02x%02x%02x", rnd[0], rnd[1], rnd[2], rnd[3], rnd[4],
		 rnd[5]);
	if (mkdirat(h->sd, h->name, 0700) < 0)
		return qp_fail(err, errno, "make spare %s", h->name);
	if ((h->d = openat(h->sd, h->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return qp_fail(err, errno, "open spare %s", h->name);
	char holder[48];
	int n = snprintf(holder, sizeof(holder), "%d:%llu", (int)getpid(), proc_start_time(getpid()));
	if (state_write_file(h->d, SPARE_HOLDER, holder, (size_t)n, err) < 0)
		return -1;
	if ((size_t)snprintf(h->share, sizeof(h->share), "%s/%s/%s/%s", root, QP_SPARES_DIR, h->name,
			     SPARE_SHARE) >= sizeof(h->share))
		return qp_error_set(err, QP_E_INVALID, 0, "spare: the state root's path is too long");
	/* root/ as a pod's root is entered in the warm-up (its mount points) */
	static const char *const dirs[] = { SPARE_SHARE, SPARE_SHARE "/" QP_PROTO_SUBDIR,
					    SPARE_SHARE "/" QP_PROTO_SUBDIR "/dev", SPARE_SHARE "/" QP_PROTO_SUBDIR "/proc",
					    SPARE_SHARE "/" QP_PROTO_SUBDIR "/sys", SPARE_SHARE "/" QP_PROTO_SUBDIR "/tmp" };
	for (size_t i = 0; i < QP_ARRAY_SIZE(dirs); i++)
		if (mkdirat(h->d, dirs[i], 0755) < 0)
			return qp_fail(err, errno, "make spare %s's %s", h->name, dirs[i]);
	if (!(init = vm_find_guest_init(err)) || vm_stage_file(h->d, init_dir, init, QP_PROTO_WARM_PROG, err) < 0)
		return qp_error_prefix(err, "spare %s: the warm-up program", h->name);
	if (!(h->pod.spec = spare_spec(sp, err)))
		return -1;
	h->pod.id = h->name;
	h->pod.spare = true;
	h->pod.spare_nic = sp->nic;
	h->pod.rootfd = -1;
	h->pod.root = root;
	h->pod.dirfd = h->d;
	h->pod.rootfs = h->share;
	h->pod.state = &h->state;
	h->pod.sync_fd = h->pod.wait_fd = -1;
	/* a NIC's tap lives in a network namespace of the holder's own until
	 * a pod takes the spare and moves it into the pod's (mon_net.c):
	 * nothing is made in the host's */
	if (sp->nic && unshare(CLONE_NEWNET) < 0)
		return qp_fail(err, errno, "spare %s: a network namespace for its tap", h->name);
	if (vm_mon_boot(&h->pod, &h->m, err) < 0 || warm(h->m, err) < 0)
		return qp_error_prefix(err, "spare %s", h->name);
	/* the pod that takes it runs this QEMU, and says which backend its NIC has */
	if (h->state.nic && state_write_file(h->d, SPARE_NIC, h->state.nic, strlen(h->state.nic), err) < 0)
		return -1;
	/* its ctl.sock is for a pod's clients: a spare has none */
	mon_ctl_close(h->m);
	return 0;
}

static int write_meta(struct holder *h, const struct vm_spare_params *sp, const char *key, qp_error **err)
{
	char meta[256 + PATH_MAX];
	_cleanup_free_ char *fw = vm_find_firmware(sp->firmware, err);
	int n;

	if (!fw)
		return -1;
	n = snprintf(meta, sizeof(meta), "key=%s mem=%lluM vcpus=%d accel=%s qemu=%d fw=%s\n", key, sp->mem_mib,
		     sp->vcpus, vm_mon_accel(h->m), (int)vm_mon_qemu_pid(h->m), fw);
	if ((size_t)n >= sizeof(meta))
		return qp_error_set(err, QP_E_INVALID, 0, "spare: the firmware's path is too long");
	return state_write_file(h->d, SPARE_META, meta, (size_t)n, err);
}

static int lines_in(const char *buf, size_t len)
{
	int n = 0;

	for (const char *p = buf; (p = memchr(p, '\n', len - (size_t)(p - buf))); p++)
		n++;
	return n;
}

/* Read the taker's request: "take POD\nCGROUP\n" (CGROUP empty: none; a
 * path may hold any byte but a newline). */
static int read_request(int c, char pod[QP_ID_MAX + 1], char cg[QP_CGROUP_PATH_MAX + 1])
{
	char line[QP_ID_MAX + QP_CGROUP_PATH_MAX + 16], *nl, *end;
	size_t len = 0;
	long long deadline = qp_now_ms() + TAKE_READ_MS;

	while (len < sizeof(line) - 1 && lines_in(line, len) < 2) {
		struct pollfd p = { .fd = c, .events = POLLIN };
		long long left = deadline - qp_now_ms();
		if (left <= 0 || poll(&p, 1, (int)left) <= 0)
			return -1;
		ssize_t n = read(c, line + len, sizeof(line) - 1 - len);
		if (n <= 0)
			return -1;
		len += (size_t)n;
	}
	line[len] = '\0';
	if (strncmp(line, "take ", 5) || !(nl = strchr(line, '\n')) || !(end = strchr(nl + 1, '\n')) ||
	    end[1] || nl - (line + 5) > QP_ID_MAX || end - (nl + 1) > QP_CGROUP_PATH_MAX)
		return -1;
	snprintf(pod, QP_ID_MAX + 1, "%.*s", (int)(nl - (line + 5)), line + 5);
	snprintf(cg, QP_CGROUP_PATH_MAX + 1, "%.*s", (int)(end - (nl + 1)), nl + 1);
	return state_validate_id(pod, NULL) < 0 ? -1 : 0;
}

/* QEMU's threads at the taker's nice value, not the refill's (a refill
 * makes its spares behind the pods, at a lower priority). */
static void match_nice(pid_t qemu, int c)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	char dir[64];
	int prio;

	if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return;
	errno = 0;
	prio = getpriority(PRIO_PROCESS, (id_t)cred.pid);
	if (prio == -1 && errno)
		return;
	snprintf(dir, sizeof(dir), "/proc/%d/task", (int)qemu);
	DIR *d = opendir(dir);
	struct dirent *de;
	if (!d)
		return;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			setpriority(PRIO_PROCESS, (id_t)atoi(de->d_name), prio);
	closedir(d);
}

/* A taker: move QEMU into its cgroup, hand the channel over, then stay
 * QEMU's parent until it ends and say how it ended; never returns then.
 * Returns 0 when the request was refused before QEMU was touched: the
 * spare is free again (listening anew). */
static int hand_over(struct holder *h, int c)
{
	char pod[QP_ID_MAX + 1], cgpath[QP_CGROUP_PATH_MAX + 1], reply[128];
	pid_t qemu = vm_mon_qemu_pid(h->m);
	qp_error *err = NULL;
	int status = 0, chan = -1, pidfd = -1;

	/* no second taker: the socket goes first */
	unlinkat(h->d, QP_SPARE_TAKE_SOCK, 0);
	close(h->listen_fd);
	h->listen_fd = -1;
	if (read_request(c, pod, cgpath) < 0) {
		qp_error_set(&err, QP_E_INVALID, 0, "a malformed take request");
		goto refuse;
	}
	if (*cgpath) {
		/* what does not open leaves QEMU where it is: a refusal */
		struct qp_cgroup *cg = NULL;
		struct qp_cgroup_entry e = QP_CGROUP_ENTRY_INIT;
		int r = qp_cgroup_open(cgpath, &cg, &err);
		if (r == 0)
			r = qp_cgroup_entry_open_procs(cg, &e, &err);
		qp_cgroup_free(cg);
		if (r < 0) {
			qp_cgroup_entry_close(&e);
			goto refuse;
		}
		r = qp_cgroup_entry_move(&e, qemu, &err);
		qp_cgroup_entry_close(&e);
		if (r < 0)
			goto fail;
	}
	match_nice(qemu, c);
	if (state_write_file(h->d, QP_SPARE_TAKEN, pod, strlen(pod), &err) < 0)
		goto fail;
	chan = mon_release(h->m);
	h->m = NULL;
	snprintf(reply, sizeof(reply), "ok %d %llu %s\n", (int)qemu, proc_start_time(qemu), h->state.accel);
	if (chan < 0 || qp_send_with_fd(c, reply, strlen(reply), chan) != (ssize_t)strlen(reply)) {
		if (chan >= 0)
			close(chan);
		kill(qemu, SIGKILL);
		waitpid(qemu, NULL, 0);
		holder_remove(h);
		vm_spares_exit(1);
	}
	close(chan);
	/* QEMU is the pod's now; its end is all that is left to tell.  A
	 * pod's QEMU dies with its monitor (PDEATHSIG, for a pod that started
	 * it): this one is the holder's child, so the holder stands in: the
	 * monitor's end of the connection closing first (it was killed) takes
	 * QEMU along, and the spare's dir, which nobody else will remove. */
	pidfd = (int)syscall(SYS_pidfd_open, qemu, 0);
	for (;;) {
		struct pollfd p[2] = { { .fd = pidfd, .events = POLLIN }, { .fd = c, .events = POLLIN } };
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (p[0].revents)
			break;
		char byte;
		ssize_t n = p[1].revents ? recv(c, &byte, 1, MSG_DONTWAIT) : 1;
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
			kill(qemu, SIGKILL);
			waitpid(qemu, NULL, 0);
			holder_remove(h);
			vm_spares_exit(0);
		}
	}
	while (waitpid(qemu, &status, 0) < 0 && errno == EINTR)
		;
	dprintf(c, "exit %d\n", status);
	vm_spares_exit(0);
refuse:
	/* free again before the taker hears why (the next one waits in the
	 * backlog: this process is the only one that accepts) */
	qp_error *relisten = NULL;
	h->listen_fd = listen_in(h->d, QP_SPARE_TAKE_SOCK, &relisten);
	qp_report_err(c, err, "spare");
	close(c);
	qp_error_free(&err);
	qp_error_free(&relisten);
	if (h->listen_fd >= 0)
		return 0;
	vm_mon_free(h->m);
	holder_remove(h);
	vm_spares_exit(1);
fail:
	qp_report_err(c, err, "spare");
	vm_mon_free(h->m);
	holder_remove(h);
	vm_spares_exit(1);
}

/* A detached process's fds: stdio on /dev/null, nothing open but keep[0]
 * and keep[1] (updated: moved above 2 first, where a maker started with
 * its stdio closed may have had them). */
void vm_spare_detach_fds(int keep[2])
{
	for (int i = 0; i < 2; i++)
		if (keep[i] >= 0 && keep[i] <= 2)
			keep[i] = fcntl(keep[i], F_DUPFD_CLOEXEC, 3);
	/* not O_CLOEXEC: it may land on 0-2 itself (dup2 onto itself keeps
	 * the flag); above 2 it is closed below */
	int null = open("/dev/null", O_RDWR);
	if (null >= 0)
		dup2(null, 0), dup2(null, 1), dup2(null, 2);
	int a = keep[0] >= 0 ? keep[0] : keep[1], b = keep[1] >= 0 ? keep[1] : keep[0]; /* -1: none */
	int sorted[2] = { a < b ? a : b, a < b ? b : a };
	qp_close_fds_except(sorted, 2);
}

/* Wait for a taker; a signal (drain) or QEMU's end removes the spare. */
static __attribute__((noreturn)) void holder_wait(struct holder *h)
{
	for (;;) {
		struct pollfd p[3] = {
			{ .fd = h->listen_fd, .events = POLLIN },
			{ .fd = h->m->qemu_pidfd, .events = POLLIN },
			{ .fd = h->sigfd, .events = POLLIN },
		};
		if (poll(p, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[1].revents || p[2].revents)
			break; /* QEMU ended, or drain */
		if (p[0].revents) {
			int c = accept4(h->listen_fd, NULL, NULL, SOCK_CLOEXEC);
			if (c >= 0)
				hand_over(h, c);
		}
	}
	vm_mon_free(h->m);
	holder_remove(h);
	vm_spares_exit(0);
}

/* The holder, in a child of `spares fill` (or of a refill): its own
 * session, no stdio; report "ok NAME" once the spare is ready. */
static __attribute__((noreturn)) void holder_main(int rootfd, const struct vm_spare_params *sp, int wfd)
{
	struct holder h = { .sd = -1, .d = -1, .listen_fd = -1, .sigfd = -1 };
	qp_error *err = NULL;
	sigset_t set;
	int keep[2] = { rootfd, wfd };

	setsid();
	/* nothing of its maker's but the state root and the report pipe */
	vm_spare_detach_fds(keep);
	rootfd = keep[0];
	wfd = keep[1];
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	if ((h.sigfd = signalfd(-1, &set, SFD_CLOEXEC)) < 0 || vm_spares_enter_cgroup(&err) < 0 ||
	    holder_boot(&h, rootfd, sp, &err) < 0 ||
	    (h.listen_fd = listen_in(h.d, QP_SPARE_TAKE_SOCK, &err)) < 0 ||
	    write_meta(&h, sp, h.m->tpl_key, &err) < 0) {
		if (!err)
			qp_fail(&err, errno, "spare");
		qp_report_err(wfd, err, "spare");
		vm_mon_free(h.m);
		holder_remove(&h);
		vm_spares_exit(1);
	}
	qp_report_ok(wfd, "%s", h.name);
	close(wfd);
	holder_wait(&h);
}

/* Start one holder; wait (bounded) until its spare is ready. */
int vm_spare_start(int rootfd, const struct vm_spare_params *sp, char *name, size_t size, qp_error **err)
{
	char buf[QP_REPORT_MAX];
	const char *rest;
	int fd;
	pid_t pid = qp_report_fork(&fd, "a spare's holder", err);

	if (pid < 0)
		return -1;
	if (pid == 0) {
		/* a grandchild: the holder outlives its maker and is nobody's zombie */
		if (fork() != 0)
			_exit(0);
		holder_main(rootfd, sp, fd);
	}
	waitpid(pid, NULL, 0);
	int n = qp_report_read(fd, READY_TIMEOUT_MS, buf, sizeof(buf));
	close(fd);
	if (n < 0)
		return qp_error_set(err, QP_E_TIMEOUT, 0, "a spare was not ready within %d s",
				    READY_TIMEOUT_MS / 1000);
	if (qp_report_parse(buf, &rest, "a spare's holder died without a report", err) < 0)
		return -1;
	snprintf(name, size, "%s", rest);
	return 0;
}
