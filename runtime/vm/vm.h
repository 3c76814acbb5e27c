/* runtime/vm/vm.h — internals of the QEMU microVM pod driver: the initramfs
 * writer (initrd.c), finding and starting QEMU (qemu.c) and the driver ops
 * (driver.c). */
#ifndef QPOD_VM_H
#define QPOD_VM_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "driver.h"
#include "util/error.h"

struct pod;

/* Files in the pod's state dir. */
#define QP_VM_INITRD "initrd.cpio"
#define QP_VM_CHAN_SOCK "ch.sock"
#define QP_VM_QEMU_LOG "qemu.log"


/* Write a cpio "newc" archive `name` (in dirfd) holding the directories
 * /dev /proc /sys /newroot /tmp, the node /dev/console (5,1) and /init = a
 * copy of the file at init_path (mode 0755).  The copy is bounded to 64 MiB. */
int vm_write_initrd(int dirfd, const char *name, const char *init_path, qp_error **err);

/* A host directory copied into the initramfs: src's contents go under dst
 * (relative, no "..", "" = the archive root; missing parents are added). */
struct vm_initrd_tree {
	const char *src, *dst;
};

/* vm_write_initrd plus the trees, written before /init and the fixed
 * entries (so those win): directories, regular files (each <= 64 MiB) and
 * symlinks as they are, links not followed, device nodes/fifos/sockets
 * skipped, at most 65536 entries, 32 levels and 1 GiB in all.  Owners are
 * root; modes are kept.  For a modular guest kernel: { modules dir,
 * GI_MODULES_DIR + 1 } (guest-init/modules.h); for a rootfs in the
 * initramfs: { rootfs, "" }. */
int vm_write_initrd_trees(int dirfd, const char *name, const char *init_path,
			  const struct vm_initrd_tree *trees, size_t ntrees, qp_error **err);

/* Where the guest kernel and guest init are: $QPOD_KERNEL or the kernel cache;
 * $QPOD_GUEST_INIT, $QPOD_EXE_DIR/guest-init/qpod-init or /usr/lib/qpod/qpod-init.
 * Return a malloc'ed path of a file that exists, or NULL with an error. */
char *vm_find_kernel(qp_error **err);
char *vm_find_guest_init(qp_error **err);

/* True if /dev/kvm opens read-write ($QPOD_ACCEL=tcg|kvm overrides). */
bool vm_kvm_usable(void);

struct vm_qemu_opts {
	const char *statedir;   /* absolute path of the pod's state dir */
	int dirfd;              /* the same, open */
	const char *kernel, *rootfs;
	bool kvm;
	int vcpus;
	unsigned long long mem_mib;
	bool die_with_parent;   /* PR_SET_PDEATHSIG(SIGKILL) in QEMU */
};

/* Fork and exec QEMU (stdin /dev/null, stdout/stderr appended to qemu.log
 * in the state dir, its own session, cwd = the state dir so the channel
 * socket path stays short).  Returns the pid, or -1. */
pid_t vm_spawn_qemu(const struct vm_qemu_opts *o, qp_error **err);

/* The last non-empty line of qemu.log (printable, bounded) into buf; "" if none. */
void vm_qemu_log_tail(int dirfd, char *buf, size_t size);

#endif
