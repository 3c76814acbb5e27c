/* tests/unit/test_vm_timeline.c — a microVM start's phases from its
 * timestamps (runtime/vm/timeline.c): with qpod's firmware markers
 * vmm_init, firmware and a host-measured kernel; without them (another
 * firmware) vmm_firmware and the guest's kernel clock; a clone's restore
 * and resume, no boot phases. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "vm/timeline.h"

#define MS 1000000LL

/* ms < 0: the phase must be absent */
struct want {
	const char *name;
	double ms;
};
#define ABSENT (-1.0)

static void check(const struct vm_timeline *t, const struct want *w, size_t nw)
{
	struct qp_phase ph[VM_MAX_PHASES];
	int n = vm_tl_phases(t, ph);

	assert_true(n > 0 && n <= VM_MAX_PHASES);
	for (size_t k = 0; k < nw; k++) {
		double got = ABSENT;
		for (int i = 0; i < n; i++)
			if (!strcmp(ph[i].name, w[k].name))
				got = ph[i].ms;
		if (w[k].ms == ABSENT) {
			if (got != ABSENT)
				fail_msg("phase %s: present (%.3f), expected absent", w[k].name, got);
		} else if (got == ABSENT || got < w[k].ms - 1e-9 || got > w[k].ms + 1e-9)
			fail_msg("phase %s: %.3f, expected %.3f", w[k].name, got, w[k].ms);
	}
}

/* a cold boot: spawned at 10 ms, HELLO at 500 ms after 400 ms of guest
 * clock, init started at 350 ms of it: the kernel's clock began at 100 ms */
static struct vm_timeline cold(void)
{
	return (struct vm_timeline){ .request = 1 * MS, .prepared = 5 * MS, .network = 6 * MS, .spawned = 10 * MS,
				     .hello = 500 * MS, .guest_init_ns = 350 * MS, .guest_hello_ns = 400 * MS,
				     .run = 501 * MS, .started = 520 * MS };
}

static void test_markers(void **state)
{
	struct vm_timeline t = cold();
	/* the jump (62) to init's start (100 + 350) is the kernel's */
	static const struct want w[] = { { "vmm_init", 50 }, { "firmware", 2 }, { "kernel", 388 }, { "init", 50 },
					 { "workload", 19 }, { "start_total", 519 }, { "vmm_firmware", ABSENT } };

	t.fw_reset = 60 * MS;
	t.fw_jump = 62 * MS;
	check(&t, w, sizeof(w) / sizeof(w[0]));
}

static void test_no_markers(void **state)
{
	struct vm_timeline t = cold();
	static const struct want w[] = { { "vmm_firmware", 90 }, { "kernel", 350 }, { "init", 50 },
					 { "vmm_init", ABSENT }, { "firmware", ABSENT } };

	/* a reset marker alone (the firmware failed before its jump, or
	 * another firmware wrote to the port) is no firmware phase */
	t.fw_reset = 60 * MS;
	check(&t, w, sizeof(w) / sizeof(w[0]));
}

static void test_clone(void **state)
{
	struct vm_timeline t = cold();
	static const struct want w[] = { { "restore", 190 }, { "resume", 300 }, { "firmware", ABSENT },
					 { "kernel", ABSENT }, { "vmm_init", ABSENT } };

	t.restored = 200 * MS;
	t.fw_reset = 60 * MS;
	t.fw_jump = 62 * MS;
	check(&t, w, sizeof(w) / sizeof(w[0]));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_markers),
		cmocka_unit_test(test_no_markers),
		cmocka_unit_test(test_clone),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
