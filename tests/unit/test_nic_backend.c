/* tests/unit/test_nic_backend.c — the backend of a VM pod's NIC
 * (runtime/vm/qemu/nic_backend.c): vhost-net only when KVM runs the guest
 * and /dev/vhost-net opened; else QEMU's userspace virtio-net, with the
 * reason `qpod state` shows. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "vm/qemu/qemu.h"

static void check(bool kvm, int e, bool want_vhost, const char *want_text)
{
	char text[VM_NIC_BACKEND_MAX];

	assert_int_equal(vm_nic_backend(kvm, e, text, sizeof(text)), want_vhost);
	assert_string_equal(text, want_text);
}

/* KVM and a /dev/vhost-net that opened: the kernel's vhost-net */
static void kvm_with_vhost(void **state)
{
	(void)state;
	check(true, 0, true, "vhost-net");
}

/* TCG: userspace, whatever /dev/vhost-net would do */
static void tcg(void **state)
{
	(void)state;
	check(false, 0, false, "userspace: TCG");
	check(false, ENOENT, false, "userspace: TCG");
}

/* KVM without the device (no module, a container without the node) */
static void kvm_without_device(void **state)
{
	(void)state;
	check(true, ENOENT, false, "userspace: no /dev/vhost-net");
	check(true, ENODEV, false, "userspace: no /dev/vhost-net");
}

/* KVM, the device refused: the reason is the kernel's */
static void kvm_device_refused(void **state)
{
	(void)state;
	check(true, EACCES, false, "userspace: /dev/vhost-net: Permission denied");
	check(true, EMFILE, false, "userspace: /dev/vhost-net: Too many open files");
}

/* the opener under TCG opens nothing and says why */
static void open_under_tcg(void **state)
{
	char text[VM_NIC_BACKEND_MAX] = "x";

	(void)state;
	assert_int_equal(vm_nic_vhost_open(false, text, sizeof(text)), -1);
	assert_string_equal(text, "userspace: TCG");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(kvm_with_vhost),
		cmocka_unit_test(tcg),
		cmocka_unit_test(kvm_without_device),
		cmocka_unit_test(kvm_device_refused),
		cmocka_unit_test(open_under_tcg),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
