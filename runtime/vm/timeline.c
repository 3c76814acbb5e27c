/* runtime/vm/timeline.c — see timeline.h. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "state.h"
#include "util/json.h"
#include "vm/timeline.h"
#include "vm/vm.h"

long long qp_request_ns;

static double ms(long long a, long long b)
{
	return (double)(b - a) / 1e6;
}

int vm_tl_phases(const struct vm_timeline *t, struct vm_phase out[VM_MAX_PHASES])
{
	int n = 0;
	/* the guest kernel started guest_hello_ns before the host saw HELLO
	 * (the guest clock runs at host speed, KVM or TCG, to well under 1 ms
	 * over a boot) */
	long long kstart = t->hello && t->guest_hello_ns ? t->hello - (long long)t->guest_hello_ns : 0;

	if (t->prepared)
		out[n++] = (struct vm_phase){ "prepare", ms(t->request, t->prepared) };
	if (t->network)
		out[n++] = (struct vm_phase){ "network", ms(t->prepared, t->network) };
	if (t->spawned)
		out[n++] = (struct vm_phase){ "vmm_spawn", ms(t->network, t->spawned) };
	if (kstart) {
		out[n++] = (struct vm_phase){ "firmware", ms(t->spawned, kstart) };
		out[n++] = (struct vm_phase){ "kernel", (double)t->guest_init_ns / 1e6 };
		out[n++] = (struct vm_phase){ "init", (double)(t->guest_hello_ns - t->guest_init_ns) / 1e6 };
	}
	if (t->started && t->run)
		out[n++] = (struct vm_phase){ "workload", ms(t->run, t->started) };
	if (t->started)
		out[n++] = (struct vm_phase){ "start_total", ms(t->request, t->started) };
	return n;
}

void vm_tl_save(int dirfd, const struct vm_timeline *t)
{
	struct vm_phase ph[VM_MAX_PHASES];
	int n = vm_tl_phases(t, ph);
	yajl_gen g = qp_json_gen_new(false);
	char *text = NULL;
	size_t len = 0;

	if (!g)
		return;
	yajl_gen_map_open(g);
	for (int i = 0; i < n; i++) {
		char num[32];
		int len_ = snprintf(num, sizeof(num), "%.3f", ph[i].ms);
		qp_json_key(g, ph[i].name);
		yajl_gen_number(g, num, (size_t)len_);
	}
	yajl_gen_map_close(g);
	if (qp_json_gen_finish(g, &text, &len, NULL) == 0)
		state_write_file(dirfd, QP_TIMELINE_FILE, text, len, NULL);
	free(text);
}
