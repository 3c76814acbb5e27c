/* runtime/vm/snapshot/spare.h — what spare.c (the spares' directory and
 * their holders) shares with spare_pool.c (fill, drain, gc, refill). */
#ifndef QPOD_VM_SPARE_H
#define QPOD_VM_SPARE_H

#include <stddef.h>

#include "vm/snapshot/snapshot.h"
#include "vm/vm.h"

#define SPARE_META "meta"
#define SPARE_HOLDER "holder"
#define SPARE_TARGET "target"
#define SPARE_LOCK "lock"
#define SPARE_SHARE "share"
#define SPARE_NIC "nic" /* its NIC's backend (vm_nic_backend's text), when it has one */
#define WARM_TIMEOUT_MS 30000
#define TAKE_READ_MS 2000
#define READY_TIMEOUT_MS 120000 /* a first fill may make the template */
#define DRAIN_WAIT_MS 5000

/* What is known of spare NAME in the spares dir sd. */
void vm_spare_read_info(int sd, const char *name, struct vm_spare_info *in);
/* Into the spares' own cgroup (root only; a refill is forked by a pod's
 * monitor, whose cgroup dies with the pod). */
int vm_spares_enter_cgroup(qp_error **err);
/* The end of a process of the spares' cgroup (a holder, a refill): out of
 * it first; the last one out removes it. */
__attribute__((noreturn)) void vm_spares_exit(int status);
/* A detached process's fds: stdio on /dev/null, nothing open but keep[0]
 * and keep[1] (updated: moved above 2 first). */
void vm_spare_detach_fds(int keep[2]);
/* Start one spare (its holder, in the background) and wait until it is
 * ready or failed; its name into name. */
int vm_spare_start(int rootfd, const struct vm_spare_params *sp, char *name, size_t size, qp_error **err);

#endif
