/* runtime/vm/qemu/jail_qemu.c — a VM pod's QEMU in the host's jail
 * (host/jail.h; docs/JAIL.md says what a guest that escapes QEMU reaches).
 *
 * In QEMU's child, after fork and before exec (vm_jail_enter):
 *   1. a mount namespace of its own, everything private; an empty network
 *      namespace (the tap is an fd: no host socket, no abstract unix
 *      socket of the host is reachable), IPC and UTS namespaces;
 *   2. every file QEMU needs is opened O_PATH while the host's tree is
 *      still visible (kernel, firmware, initrd, console, RAM file, rootfs
 *      and the spec's shares, the VMM binary, /usr, a few /dev nodes); a tmpfs becomes
 *      the new root and each file is bind-mounted into it at its own
 *      absolute path (so QEMU's command line does not change), read-only,
 *      nosuid and nodev where it can be; pivot_root, the old root detached;
 *   3. rlimits; the uid/gid QP_JAIL_ID_BASE + QEMU's own pid (unique among
 *      live QEMUs, owning nothing on the host), no supplementary groups;
 *      the bounding set and the permitted, effective, inheritable and
 *      ambient sets cut to what the 9p server needs (JAIL_CAPS);
 *      PR_SET_NO_NEW_PRIVS;
 *   4. QEMU installs its own seccomp filter (vm_jail_sandbox_arg: -sandbox
 *      on with every optional group denied).
 * The sockets QEMU serves are made by qpod and passed in (qemu_cmd.c), and
 * every other fd is closed at exec: nothing of the host is reachable
 * through a descriptor.  QPOD_VM_JAIL=off turns the jail off (benchmarks,
 * debugging); a qpod that is not root has nothing to drop and runs QEMU
 * unjailed (as itself). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "host/jail.h"
#include "vm/qemu/qemu.h"
#include "vm/vm.h"

/* what QEMU's 9p server needs to serve a root-owned tree faithfully with
 * security_model=none as a uid that owns none of it: read and write any
 * file, set owners, modes and times on them.  No CAP_MKNOD (a guest cannot
 * make host device nodes in its share), no CAP_SETUID/SETGID. */
static char *jail_caps[] = { "CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH", "CAP_FOWNER",
			     "CAP_FSETID", NULL };

/* the system's files, QEMU's own (kernel, initrd, firmware, console, RAM)
 * and the guest's shares */
#define JAIL_MAX_BINDS (24 + QP_PROTO_MAX_MOUNTS)
_Static_assert(JAIL_MAX_BINDS <= QP_JAIL_MAX_BINDS, "the host's jail holds QEMU's binds");

int vm_jail_wanted(bool *on, qp_error **err)
{
	const char *v = getenv("QPOD_VM_JAIL");

	if (!v || !*v || !strcmp(v, "on") || !strcmp(v, "1"))
		*on = geteuid() == 0;
	else if (!strcmp(v, "off") || !strcmp(v, "0"))
		*on = false;
	else
		return qp_error_set(err, QP_E_INVALID, 0, "QPOD_VM_JAIL=%s: expected on or off", v);
	return 0;
}

const char *vm_jail_sandbox_arg(void)
{
	return "on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny";
}

/* the state dir's files QEMU opens: the binds point at these paths */
struct qemu_paths {
	char initrd[PATH_MAX], console[PATH_MAX];
};

static int add_qemu_files(struct qp_jail *j, const struct vm_qemu_opts *o, struct qemu_paths *q)
{
	char *initrd = q->initrd, *console = q->console;

	snprintf(initrd, sizeof(q->initrd), "%s/%s", o->statedir, o->initrd ? o->initrd : QP_VM_INITRD);
	if ((!o->incoming && (qp_jail_add(j, o->kernel, false, false) < 0 || qp_jail_add(j, initrd, false, false) < 0)) ||
	    (o->firmware && qp_jail_add(j, o->firmware, false, false) < 0))
		return -1;
	if (o->kvm && qp_jail_add(j, "/dev/kvm", true, false) < 0)
		return -1;
	if (o->console) {
		snprintf(console, sizeof(q->console), "%s/%s", o->statedir, o->console);
		if (qp_jail_add_created(j, console) < 0)
			return -1;
	}
	if (o->mem_path && qp_jail_add_created(j, o->mem_path) < 0)
		return -1;
	if (o->rootfs && qp_jail_add(j, o->rootfs, !o->rootfs_ro && !o->rootfs_jail_ro, false) < 0)
		return -1;
	for (size_t i = 0; i < o->nshares && i < QP_PROTO_MAX_MOUNTS; i++)
		if (qp_jail_add(j, o->shares[i].path, !o->shares[i].ro && !o->shares[i].jail_ro, false) < 0)
			return -1;
	return 0;
}

int vm_jail_enter(const struct vm_qemu_opts *o, const char *bin)
{
	struct qp_jail j = { .max = JAIL_MAX_BINDS };
	struct qemu_paths q;
	uint64_t fsize = ((uint64_t)o->mem_mib << 20) + (256ull << 20);
	struct qp_rlimit lim[] = {
		{ .resource = RLIMIT_CORE, .soft = 0, .hard = 0 },
		{ .resource = RLIMIT_NOFILE, .soft = 4096, .hard = 4096 },
		{ .resource = RLIMIT_NPROC, .soft = 1024, .hard = 1024 },
		{ .resource = RLIMIT_FSIZE, .soft = fsize, .hard = fsize },
	};

	/* the statedir is the jail's root (the tmpfs covers it in this
	 * namespace only) and QEMU's cwd (relative -serial file:) */
	if (qp_jail_unshare() < 0 || qp_jail_add_system(&j, bin) < 0 || add_qemu_files(&j, o, &q) < 0 ||
	    qp_jail_build_root(&j, o->statedir, o->statedir) < 0)
		return -1;
	return qp_jail_drop_privileges(lim, sizeof(lim) / sizeof(lim[0]), jail_caps);
}
