/* runtime/vm/snapshot/clone.h — what makes a clone of a VM template unique: the
 * CLONE message, and the check of the HELLO that answers it. */
#ifndef QPOD_VM_CLONE_H
#define QPOD_VM_CLONE_H

#include <stdint.h>

#include "guest-init/channel.h"

/* *m = a CLONE with the host's CLOCK_REALTIME and a fresh seed from
 * getrandom; *check = qp_seed_check of that seed, for vm_clone_hello_check. */
int vm_clone_msg(struct qp_msg *m, uint32_t *check, qp_error **err);

/* A guest's HELLO: with clone_check NULL (no CLONE was sent) its flags must
 * be 0; else it must say that the seed was added, the CRNG reseeded and
 * the clock set (QP_HELLO_F_CLONED), the seed being the one sent
 * (*clone_check).  -1 with QP_E_GUEST otherwise. */
int vm_clone_hello_check(const struct qp_msg *hello, const uint32_t *clone_check, qp_error **err);

#endif
