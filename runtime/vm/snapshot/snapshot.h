/* runtime/vm/snapshot/snapshot.h — templates (a guest booted once, paused,
 * saved, cloned by pods) and spares (a template's clones started ahead of
 * the pods that take them): docs/TEMPLATES.md. */
#ifndef QPOD_VM_SNAPSHOT_H
#define QPOD_VM_SNAPSHOT_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

#include "vm/vm.h"

struct vm_qmp;

/* ---- snapshot/template.c: VM templates (booted once, cloned by pods) ---- */

/* What shapes a booted guest (a template's identity). */
struct vm_template_params {
	const char *kernel, *firmware, *init;
	bool kvm;
	int vcpus;
	unsigned long long mem_mib;
	bool nic;               /* a virtio-net device (the clone's tap replaces
				 * the template's; guest-init sets the MAC) */
	unsigned nshares;       /* 9p shares besides the rootfs (tags m0..) */
};
/* The MAC a template's NIC boots with (and a spare's QEMU is given). */
extern const unsigned char vm_template_mac[6];

struct vm_template {
	char key[17];           /* 16 hex digits */
	char dir[PATH_MAX + 24]; /* CACHE/templates/KEY */
	char mem[PATH_MAX + 32], state[PATH_MAX + 32];
};
/* The template for p: a complete one of exactly p, or (create) made now,
 * under its lock (one boot to HELLO, paused, saved).  QP_E_NOTFOUND
 * without create.  A failed making is remembered (KEY.failed, its reason,
 * for VM_TEMPLATE_RETRY_S): with skip_failed such a key fails at once.
 * *made (may be NULL): whether this call made it. */
#define VM_TEMPLATE_RETRY_S 600
/* The key of p's template (whether it exists or not). */
int vm_template_key(const struct vm_template_params *p, char key[17], qp_error **err);
int vm_template_get(const struct vm_template_params *p, bool create, bool skip_failed,
		    struct vm_template *out, bool *made, qp_error **err);
/* Save (incoming false: QMP migrate) or restore (migrate-incoming) the
 * device state through fd, RAM excluded (x-ignore-shared), and wait until
 * QEMU says completed. */
int vm_template_migrate(struct vm_qmp *q, int fd, bool incoming, qp_error **err);
/* Every template: its key, its meta line ("" if unreadable), its RAM
 * file's size (-1 if missing) and whether it is stale (its inputs as they
 * are now describe another template: a rebuilt kernel or guest-init, a new
 * QEMU, another command line; no pod clones it again). */
int vm_template_list(void (*each)(void *ctx, const char *key, const char *meta, long long mem_bytes, bool stale),
		     void *ctx, qp_error **err);
/* Remove the stale templates (under their locks; running clones keep
 * their memory), half-made ones of dead makers and old failure notes. */
int vm_template_prune(void (*each)(void *ctx, const char *key), void *ctx, qp_error **err);
int vm_template_remove(const char *key, qp_error **err);

/* ---- snapshot/spare.c, spare_pool.c, spare_take.c: spares, a template's clones started ahead
 * of the pods that take them (docs/TEMPLATES.md, "Spares") ---- */

#define QP_SPARES_DIR ".spares"        /* in the state root */
#define QP_SPARE_TAKE_SOCK "take.sock" /* in a spare's dir, while it is free */
#define QP_SPARE_TAKEN "taken"         /* in a spare's dir: the ID of the pod that took it */
#define VM_SPARES_MAX 64               /* fill's --count at most */

/* What a spare is made for (a pod with the same values and no shares of
 * its own takes it; one with a NIC only if the pod mirrors a network
 * namespace, mon_net.c). */
struct vm_spare_params {
	unsigned long long mem_mib;
	int vcpus;
	const char *firmware;   /* NULL: the default (qpod's) */
	enum qp_accel accel;
	bool nic;               /* a virtio-net device on an unattached tap, named
				 * vm_spare_tap_name() */
};
/* The tap of spare NAME ("s" + 12 hex): "qp" + NAME, 15 bytes; not a pod's
 * link name (gc's "qp" + 10 hex never matches it). */
void vm_spare_tap_name(const char *spare, char buf[16]);
struct vm_spare_info {
	char name[16], key[17], accel[8];
	char taken_by[QP_ID_MAX + 1]; /* "" while nobody took it */
	char firmware[PATH_MAX];      /* its path */
	unsigned long long mem_mib, holder_start;
	int vcpus;
	pid_t holder, qemu;
	bool holder_alive;      /* its holder (QEMU's parent) is there */
	bool ready;             /* booted, unique, warm */
	bool free;              /* ready and not taken: a pod may take it */
};
/* ROOT/.spares, checked private; -1 with *err untouched when it does not
 * exist and !make. */
int vm_spares_open(int rootfd, bool make, qp_error **err);
/* Each spare of the state root (fn gets the spares dir and what is known). */
int vm_spares_each(int rootfd, void (*fn)(void *ctx, int sd, const struct vm_spare_info *in), void *ctx,
		   qp_error **err);
/* Make spares of sp until COUNT are free (those of the same parameters but
 * another template key, stale, are stopped), each started and waited for
 * in turn.  KEEP: COUNT and sp are also the pool's target, which every
 * take then tops up (vm_spares_refill); ONCE: no target; REFILL: only
 * while the target is there.  made (may be NULL) hears of each.  Spares
 * need QEMU's jail (their rootfs is bound into its mount namespace). */
enum vm_fill { VM_FILL_KEEP, VM_FILL_ONCE, VM_FILL_REFILL };
int vm_spares_fill(int rootfd, const struct vm_spare_params *sp, int count, enum vm_fill mode,
		   void (*made)(void *ctx, const char *name), void *ctx, qp_error **err);
/* After a take: a detached, lower-priority fill to the pool's target. */
void vm_spares_refill(int rootfd);
/* Stop every spare no pod has taken (and forget the target); *n of them. */
int vm_spares_drain(int rootfd, int *n, qp_error **err);
/* Remove the dirs of spares whose holder is gone; *n of them. */
int vm_spares_gc(int rootfd, int *n, qp_error **err);

/* A spare, taken: its QEMU (moved into the pod's cgroup), the guest
 * channel, the holder's connection ("exit STATUS" when QEMU ends), its dir
 * (QEMU's sockets and log) in the spares dir sd, and its share's path. */
struct vm_spare_taken {
	pid_t qemu;
	unsigned long long qemu_start;
	bool kvm;
	int chan_fd, holder_fd, dirfd, sd;
	char name[16];
	char share[PATH_MAX];
};
/* Take a free spare of template KEY for pod POD_ID (cgroup NULL: none):
 * 1 with *out, 0 if there is none to take. */
int vm_spare_take(int rootfd, const char *key, const char *pod_id, const char *cgroup,
		  struct vm_spare_taken *out, qp_error **err);
void vm_spare_taken_close(struct vm_spare_taken *t);
/* Bind ROOTFS (read-only if ro) on SHARE/root in QEMU's mount namespace. */
int vm_spare_bind_rootfs(pid_t qemu, const char *share, const char *rootfs, bool ro, qp_error **err);

#endif
