/* runtime/vm/timeline.h — the phase timeline of a microVM pod start:
 * monotonic host timestamps at each boundary plus the guest's own boot-clock
 * readings, saved as timeline.json in the state dir for `qpod state`,
 * `qpod run --timeline` and `qpod bench`. */
#ifndef QPOD_VM_TIMELINE_H
#define QPOD_VM_TIMELINE_H

#include <stdint.h>

#include "util/error.h"
#include "util/timeline.h"

struct vm_timeline {
	/* host, CLOCK_MONOTONIC ns; 0 = not reached */
	long long request, prepared, network, spawned, hello, run, started, ended;
	long long restored;     /* a clone: its template's state loaded */
	long long taken;        /* a spare: taken from its holder (no spawn, no restore) */
	/* qpod's firmware's markers (qboot/qpod_abi.h) as the host saw them */
	long long fw_reset, fw_jump;
	/* guest CLOCK_BOOTTIME ns (0 = kernel start) */
	uint64_t guest_init_ns, guest_hello_ns, guest_exec_ns;
};

/* The phases in ms, as (name, value) pairs in order; n = how many are known.
 * prepare, network, vmm_spawn; with qpod's firmware (its markers)
 * vmm_init (QEMU spawned to the firmware's first instruction), firmware
 * (first instruction to the jump into the kernel), kernel (the jump to
 * init's start: the host's clock, the guest's for init's start); with
 * another firmware (no markers) vmm_firmware (QEMU spawned to the guest
 * kernel's clock starting: QEMU, the firmware and the kernel's earliest
 * code in one) and kernel (the guest's clock to init's start); then init
 * (init start to HELLO), workload (RUN to the workload exec'd), and
 * start_total (request to exec'd).  A clone of a template has restore
 * (QEMU spawned to its state loaded) and resume (to the clone's HELLO)
 * instead of the firmware, kernel and init phases; a spare (a clone
 * started ahead) has take (network ready to the spare in hand, QEMU moved
 * into the pod's cgroup) and resume (its rootfs bound, CLONE, to HELLO)
 * instead of vmm_spawn, restore and resume. */
#define VM_MAX_PHASES 10
int vm_tl_phases(const struct vm_timeline *t, struct qp_phase out[VM_MAX_PHASES]);

/* Write timeline.json (atomic); errors are ignored (it is a report). */
void vm_tl_save(int dirfd, const struct vm_timeline *t);

#endif
