/* runtime/vm/timeline.c — see timeline.h. */
#include <stdio.h>
#include <stdlib.h>

#include "state.h"
#include "vm/timeline.h"
#include "vm/vm.h"


int vm_tl_phases(const struct vm_timeline *t, struct qp_phase out[VM_MAX_PHASES])
{
	int n = 0;
	/* the guest kernel started guest_hello_ns before the host saw HELLO
	 * (the guest clock runs at host speed, KVM or TCG, to well under 1 ms
	 * over a boot) */
	long long kstart = t->hello && t->guest_hello_ns ? t->hello - (long long)t->guest_hello_ns : 0;

	if (t->prepared)
		out[n++] = (struct qp_phase){ "prepare", qp_ms_between(t->request, t->prepared) };
	if (t->network)
		out[n++] = (struct qp_phase){ "network", qp_ms_between(t->prepared, t->network) };
	if (t->taken) { /* a spare: its QEMU runs already */
		out[n++] = (struct qp_phase){ "take", qp_ms_between(t->network, t->taken) };
		if (t->hello)
			out[n++] = (struct qp_phase){ "resume", qp_ms_between(t->taken, t->hello) };
	}
	if (t->spawned)
		out[n++] = (struct qp_phase){ "vmm_spawn", qp_ms_between(t->network, t->spawned) };
	if (t->restored) { /* a clone: no firmware, no kernel boot */
		out[n++] = (struct qp_phase){ "restore", qp_ms_between(t->spawned, t->restored) };
		if (t->hello)
			out[n++] = (struct qp_phase){ "resume", qp_ms_between(t->restored, t->hello) };
	} else if (kstart && !t->taken) {
		if (t->fw_reset && t->fw_jump) { /* qpod's firmware: its markers */
			out[n++] = (struct qp_phase){ "vmm_init", qp_ms_between(t->spawned, t->fw_reset) };
			out[n++] = (struct qp_phase){ "firmware", qp_ms_between(t->fw_reset, t->fw_jump) };
			out[n++] = (struct qp_phase){ "kernel",
						      qp_ms_between(t->fw_jump, kstart + (long long)t->guest_init_ns) };
		} else {
			out[n++] = (struct qp_phase){ "vmm_firmware", qp_ms_between(t->spawned, kstart) };
			out[n++] = (struct qp_phase){ "kernel", (double)t->guest_init_ns / 1e6 };
		}
		out[n++] = (struct qp_phase){ "init", (double)(t->guest_hello_ns - t->guest_init_ns) / 1e6 };
	}
	if (t->started && t->run)
		out[n++] = (struct qp_phase){ "workload", qp_ms_between(t->run, t->started) };
	if (t->started)
		out[n++] = (struct qp_phase){ "start_total", qp_ms_between(t->request, t->started) };
	return n;
}

void vm_tl_save(int dirfd, const struct vm_timeline *t)
{
	struct qp_phase ph[VM_MAX_PHASES];
	int n = vm_tl_phases(t, ph);
	char *text = NULL;
	size_t len = 0;

	if (qp_timeline_json(ph, (size_t)n, &text, &len) == 0)
		state_write_file(dirfd, QP_TIMELINE_FILE, text, len, NULL);
	free(text);
}
