/* runtime/host/caps.c — capabilities (libcap), the uid/gid switch and
 * no_new_privs for a container workload.  See caps.h for the call order.
 *
 * Security reasoning in brief: the bounding set is cut first, while we still
 * hold CAP_SETPCAP; PR_SET_KEEPCAPS keeps the permitted set across the switch
 * to a non-root uid so that step (3) can choose exactly what the workload
 * keeps; KEEPCAPS is turned off again so that a later setuid() by the
 * workload behaves normally.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <grp.h>
#include <stdint.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "host/caps.h"
#include "util/cleanup.h"

#ifndef PR_CAP_AMBIENT
#define PR_CAP_AMBIENT 47
#define PR_CAP_AMBIENT_RAISE 2
#define PR_CAP_AMBIENT_CLEAR_ALL 4
#endif

/* Indexed by capability number, as in <linux/capability.h>. */
static const char *const cap_names[] = {
	"CAP_CHOWN",              /* 0 */
	"CAP_DAC_OVERRIDE",
	"CAP_DAC_READ_SEARCH",
	"CAP_FOWNER",
	"CAP_FSETID",
	"CAP_KILL",               /* 5 */
	"CAP_SETGID",
	"CAP_SETUID",
	"CAP_SETPCAP",
	"CAP_LINUX_IMMUTABLE",
	"CAP_NET_BIND_SERVICE",   /* 10 */
	"CAP_NET_BROADCAST",
	"CAP_NET_ADMIN",
	"CAP_NET_RAW",
	"CAP_IPC_LOCK",
	"CAP_IPC_OWNER",          /* 15 */
	"CAP_SYS_MODULE",
	"CAP_SYS_RAWIO",
	"CAP_SYS_CHROOT",
	"CAP_SYS_PTRACE",
	"CAP_SYS_PACCT",          /* 20 */
	"CAP_SYS_ADMIN",
	"CAP_SYS_BOOT",
	"CAP_SYS_NICE",
	"CAP_SYS_RESOURCE",
	"CAP_SYS_TIME",           /* 25 */
	"CAP_SYS_TTY_CONFIG",
	"CAP_MKNOD",
	"CAP_LEASE",
	"CAP_AUDIT_WRITE",
	"CAP_AUDIT_CONTROL",      /* 30 */
	"CAP_SETFCAP",
	"CAP_MAC_OVERRIDE",
	"CAP_MAC_ADMIN",
	"CAP_SYSLOG",
	"CAP_WAKE_ALARM",         /* 35 */
	"CAP_BLOCK_SUSPEND",
	"CAP_AUDIT_READ",
	"CAP_PERFMON",
	"CAP_BPF",
	"CAP_CHECKPOINT_RESTORE", /* 40 */
};

#define QP_CAP_NAME_MAX 64

int qp_cap_from_name(const char *name)
{
	if (!name || strnlen(name, QP_CAP_NAME_MAX) >= QP_CAP_NAME_MAX)
		return -1;
	for (size_t i = 0; i < QP_ARRAY_SIZE(cap_names); i++)
		if (strcmp(name, cap_names[i]) == 0)
			return (int)i;
	return -1;
}

const char *qp_cap_name(int cap)
{
	if (cap < 0 || (size_t)cap >= QP_ARRAY_SIZE(cap_names))
		return NULL;
	return cap_names[cap];
}

/* Probe the bounding set: PR_CAPBSET_READ fails with EINVAL past the last
 * capability the kernel knows.  Works before /proc is mounted. */
int qp_cap_last_cap(void)
{
	static int last = -1;
	int c;

	if (last >= 0)
		return last;
	for (c = 0; c < 64; c++)
		if (prctl(PR_CAPBSET_READ, (unsigned long)c, 0, 0, 0) < 0)
			break;
	last = c - 1;
	return last;
}

/* Names of one set -> bit mask.  path is the JSON path for messages. */
static int set_mask(char *const *names, const char *path, uint64_t *out, qp_error **err)
{
	int last = qp_cap_last_cap();
	uint64_t mask = 0;
	size_t i;

	for (i = 0; names && names[i]; i++) {
		int c;

		if (i >= QP_SPEC_MAX_ITEMS)
			return qp_error_set(err, QP_E_INVALID, 0, "%s: more than %u entries", path,
					    QP_SPEC_MAX_ITEMS);
		c = qp_cap_from_name(names[i]);
		if (c < 0)
			return qp_error_set(err, QP_E_INVALID, 0, "%s: unknown capability \"%.*s\"", path,
					    QP_CAP_NAME_MAX, names[i]);
		if (c > last)
			return qp_error_set(err, QP_E_INVALID, 0,
					    "%s: capability \"%s\" is not supported by the running kernel "
					    "(last capability is %d)",
					    path, names[i], last);
		mask |= UINT64_C(1) << c;
	}
	*out = mask;
	return 0;
}

struct cap_masks {
	uint64_t bounding, effective, inheritable, permitted, ambient;
};

static int caps_masks(const struct qp_caps *caps, struct cap_masks *m, qp_error **err)
{
	memset(m, 0, sizeof(*m));
	if (!caps->present)
		return 0;
	if (set_mask(caps->bounding, "process.capabilities.bounding", &m->bounding, err) < 0 ||
	    set_mask(caps->effective, "process.capabilities.effective", &m->effective, err) < 0 ||
	    set_mask(caps->inheritable, "process.capabilities.inheritable", &m->inheritable, err) < 0 ||
	    set_mask(caps->permitted, "process.capabilities.permitted", &m->permitted, err) < 0 ||
	    set_mask(caps->ambient, "process.capabilities.ambient", &m->ambient, err) < 0)
		return -1;
	return 0;
}

int qp_caps_validate(const struct qp_caps *caps, qp_error **err)
{
	struct cap_masks m;

	if (!caps)
		return 0;
	return caps_masks(caps, &m, err);
}

static void cap_freep(cap_t *c)
{
	int e = errno;
	if (*c)
		cap_free(*c);
	errno = e;
}
#define _cleanup_cap_ __attribute__((cleanup(cap_freep)))

/* Can this process hand capability c on?  It must be in our bounding set
 * and, for effective/permitted/ambient, in our permitted set: the pod's
 * process starts with our credentials and can only keep or drop. */
static bool cap_available(cap_t self, int c, bool need_permitted)
{
	cap_flag_value_t v = CAP_CLEAR;

	if (prctl(PR_CAPBSET_READ, (unsigned long)c, 0, 0, 0) != 1)
		return false;
	return !need_permitted || (cap_get_flag(self, (cap_value_t)c, CAP_PERMITTED, &v) == 0 && v == CAP_SET);
}

int qp_caps_check_host(const struct qp_caps *caps, bool new_userns, qp_error **err)
{
	static const struct {
		const char *path;
		size_t off;
		bool need_permitted;
	} sets[] = {
		{ "process.capabilities.effective", offsetof(struct cap_masks, effective), true },
		{ "process.capabilities.permitted", offsetof(struct cap_masks, permitted), true },
		{ "process.capabilities.inheritable", offsetof(struct cap_masks, inheritable), false },
		{ "process.capabilities.ambient", offsetof(struct cap_masks, ambient), true },
	};
	struct cap_masks m;
	_cleanup_cap_ cap_t self = NULL;

	/* a new user namespace starts with every capability of its own */
	if (!caps || !caps->present || new_userns)
		return 0;
	if (caps_masks(caps, &m, err) < 0)
		return -1;
	if (!(self = cap_get_proc()))
		return qp_fail(err, errno, "cap_get_proc");
	for (size_t i = 0; i < QP_ARRAY_SIZE(sets); i++) {
		uint64_t mask = *(const uint64_t *)((const char *)&m + sets[i].off);
		for (int c = 0; c < 64; c++)
			if ((mask & (UINT64_C(1) << c)) && !cap_available(self, c, sets[i].need_permitted))
				return qp_error_set(err, QP_E_INVALID, 0,
						    "%s: %s is not in this host's capability bounding set "
						    "(or qpod's permitted set), so the pod cannot have it",
						    sets[i].path, qp_cap_name(c));
	}
	return 0;
}

/* (1) cut the bounding set down to `keep` (needs CAP_SETPCAP). */
static int drop_bounding(uint64_t keep, qp_error **err)
{
	int last = qp_cap_last_cap();

	for (int c = 0; c <= last; c++) {
		int r;

		if (keep & (UINT64_C(1) << c))
			continue;
		r = prctl(PR_CAPBSET_READ, (unsigned long)c, 0, 0, 0);
		if (r < 0)
			return qp_fail(err, errno, "read bounding capability %s", qp_cap_name(c));
		if (r == 0)
			continue;
		if (prctl(PR_CAPBSET_DROP, (unsigned long)c, 0, 0, 0) < 0)
			return qp_fail(err, errno, "drop capability %s from the bounding set",
				       qp_cap_name(c));
	}
	return 0;
}

/* In a user namespace whose /proc/self/setgroups says "deny", setgroups()
 * always fails with EPERM; clearing the (already unmapped) groups is then
 * neither possible nor needed. */
static bool setgroups_denied(void)
{
	char buf[16] = "";
	_cleanup_close_ int fd = open("/proc/self/setgroups", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	return n >= 4 && strncmp(buf, "deny", 4) == 0;
}

/* (2) groups, gid, uid — gid before uid, while we may still change it. */
static int switch_ids(const struct qp_process *p, qp_error **err)
{
	_Static_assert(sizeof(gid_t) == sizeof(uint32_t), "gid_t is 32 bits");

	if (p->n_additional_gids > QP_SPEC_MAX_ITEMS)
		return qp_error_set(err, QP_E_INVALID, 0, "process.user.additionalGids: more than %u entries",
				    QP_SPEC_MAX_ITEMS);
	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
		return qp_fail(err, errno, "prctl(PR_SET_KEEPCAPS, 1)");
	if (setgroups(p->n_additional_gids, (const gid_t *)p->additional_gids) < 0) {
		int e = errno;
		if (!(e == EPERM && p->n_additional_gids == 0 && setgroups_denied()))
			return qp_fail(err, e, "setgroups (%zu additional gids)", p->n_additional_gids);
	}
	if (setresgid(p->gid, p->gid, p->gid) < 0)
		return qp_fail(err, errno, "setresgid %u", p->gid);
	if (setresuid(p->uid, p->uid, p->uid) < 0)
		return qp_fail(err, errno, "setresuid %u", p->uid);
	return 0;
}

static int flag_from_mask(cap_t c, cap_flag_t flag, uint64_t mask)
{
	for (int i = 0; i < 64; i++) {
		cap_value_t v = i;
		if ((mask & (UINT64_C(1) << i)) && cap_set_flag(c, flag, 1, &v, CAP_SET) < 0)
			return -1;
	}
	return 0;
}

/* (3) effective/permitted/inheritable. */
static int set_proc_caps(const struct cap_masks *m, qp_error **err)
{
	_cleanup_cap_ cap_t c = cap_init();
	int i;

	if ((m->effective & ~m->permitted) != 0) {
		for (i = 0; !(m->effective & ~m->permitted & (UINT64_C(1) << i)); i++)
			;
		return qp_error_set(err, QP_E_INVALID, 0,
				    "process.capabilities.effective: \"%s\" is not in the permitted set",
				    qp_cap_name(i));
	}
	if (!c)
		return qp_fail(err, errno, "cap_init");
	if (flag_from_mask(c, CAP_EFFECTIVE, m->effective) < 0 ||
	    flag_from_mask(c, CAP_PERMITTED, m->permitted) < 0 ||
	    flag_from_mask(c, CAP_INHERITABLE, m->inheritable) < 0)
		return qp_fail(err, errno, "cap_set_flag");
	if (cap_set_proc(c) < 0)
		return qp_fail(err, errno,
			       "set capabilities (effective %#llx, permitted %#llx, inheritable %#llx)",
			       (unsigned long long)m->effective, (unsigned long long)m->permitted,
			       (unsigned long long)m->inheritable);
	return 0;
}

/* (4) ambient: needs each cap in both permitted and inheritable. */
static int set_ambient(uint64_t ambient, qp_error **err)
{
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0) {
		/* kernels before 4.3 have no ambient set: fine if none is asked for */
		if (errno == EINVAL && ambient == 0)
			return 0;
		return qp_fail(err, errno, "clear the ambient capabilities");
	}
	for (int c = 0; c < 64; c++) {
		if (!(ambient & (UINT64_C(1) << c)))
			continue;
		if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, (unsigned long)c, 0, 0) < 0)
			return qp_fail(err, errno, "raise ambient capability %s (it must be permitted and inheritable)",
				       qp_cap_name(c));
	}
	return 0;
}

int qp_process_drop_privileges(const struct qp_process *p, qp_error **err)
{
	const struct qp_caps *caps = &p->caps;
	_cleanup_cap_ cap_t kept = NULL;
	struct cap_masks m;

	if (caps_masks(caps, &m, err) < 0)
		return -1;

	if (caps->present) {
		if (drop_bounding(m.bounding, err) < 0)
			return -1;
	} else {
		/* keep what we have: the switch to a non-root uid clears the
		 * effective set, which is restored from this copy below */
		kept = cap_get_proc();
		if (!kept)
			return qp_fail(err, errno, "cap_get_proc");
	}

	if (switch_ids(p, err) < 0)
		return -1;

	if (caps->present) {
		if (set_proc_caps(&m, err) < 0 || set_ambient(m.ambient, err) < 0)
			return -1;
	} else if (cap_set_proc(kept) < 0) {
		return qp_fail(err, errno, "restore capabilities after the uid switch");
	}

	if (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0)
		return qp_fail(err, errno, "prctl(PR_SET_KEEPCAPS, 0)");
	return 0;
}

int qp_no_new_privs(qp_error **err)
{
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return qp_fail(err, errno, "prctl(PR_SET_NO_NEW_PRIVS)");
	return 0;
}
