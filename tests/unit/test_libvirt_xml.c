/* tests/unit/test_libvirt_xml.c — the libvirt backend's domain XML
 * (runtime/vm/libvirt/libvirt_xml.c): the guest the direct backend would run
 * (microvm, firmware, kernel, initrd, cmdline, memory, vCPUs, accel), the
 * tap as an ethernet interface on virtio-mmio, the channel and 9p shares
 * as libvirt's own <channel> and <filesystem> elements on virtio-mmio (the
 * paths a non-root QEMU gets in their place: libvirt_dir.c's), XML
 * escaping of names and paths; refused: control characters, template/clone options,
 * another machine. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "vm/libvirt/libvirt.h"
#include "vm/qemu/qemu.h"

#define UUID "0f8fad5b-d9cb-469f-a165-70867728950e"

static struct vm_qemu_opts base(void)
{
	static const unsigned char mac[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };
	return (struct vm_qemu_opts){ .machine = VM_MACHINE_MICROVM, .statedir = "/run/q/p1",
				      .kernel = "/k/vmlinux", .firmware = "/usr/share/qemu/qboot.rom",
				      .rootfs = "/r/a,b", .cmdline = "console=ttyS0 quiet",
				      .vcpus = 2, .mem_mib = 300, .tap_fd = -1, .mac = mac };
}

static void has(const char *xml, const char *want)
{
	if (!strstr(xml, want))
		fail_msg("XML lacks \"%s\":\n%s", want, xml);
}

static void test_guest(void **state)
{
	(void)state;
	struct vm_qemu_opts o = base();
	qp_error *e = NULL;
	char *xml = vm_lv_domain_xml(&o, "pod-1", UUID, "qp0123456789", "/run/q/p1/ch.sock", NULL, &e);

	assert_non_null(xml);
	has(xml, "<domain type='qemu'");
	has(xml, "<name>pod-1</name>");
	has(xml, "<uuid>" UUID "</uuid>");
	has(xml, "<memory unit='MiB'>300</memory>");
	has(xml, "<vcpu>2</vcpu>");
	has(xml, "machine='microvm'");
	has(xml, "<loader type='rom'>/usr/share/qemu/qboot.rom</loader>");
	has(xml, "<kernel>/k/vmlinux</kernel>");
	has(xml, "<initrd>/run/q/p1/initrd.cpio</initrd>");
	has(xml, "<cmdline>console=ttyS0 quiet</cmdline>");
	has(xml, "<tb-cache unit='MiB'>32</tb-cache>");
	has(xml, "<memballoon model='none'/>");
	has(xml, "<controller type='usb' model='none'/>");
	has(xml, "<target dev='qp0123456789' managed='no'/>");
	has(xml, "<mac address='52:54:00:12:34:56'/>");
	has(xml, "<address type='virtio-mmio'/>");
	has(xml, "<controller type='virtio-serial' index='0' ports='2'>\n      <address type='virtio-mmio'/>");
	has(xml, "<channel type='unix'>\n      <source mode='bind' path='/run/q/p1/ch.sock'/>\n"
		 "      <target type='virtio' name='qpod.0'/>");
	/* libvirt escapes QEMU's ',' itself */
	has(xml, "<filesystem type='mount' accessmode='squash'>\n      <source dir='/r/a,b'/>\n"
		 "      <target dir='rootfs'/>\n      <address type='virtio-mmio'/>");
	assert_null(strstr(xml, "<readonly/>"));
	assert_null(strstr(xml, "virtio-9p-device"));
	assert_null(strstr(xml, "chardev"));
	has(xml, "<qemu:arg value='acpi=off'/>");
	has(xml, "<qemu:arg value='-no-reboot'/>");
	has(xml, "<qemu:arg value='secret,id=qpod-monitor,data=");
	free(xml);

	/* kvm; no tap: no interface */
	o.kvm = true;
	assert_non_null(xml = vm_lv_domain_xml(&o, "p", UUID, "", "/s", NULL, &e));
	has(xml, "<domain type='kvm'");
	has(xml, "<cpu mode='host-passthrough'/>");
	assert_null(strstr(xml, "<interface"));
	assert_null(strstr(xml, "tb-cache"));
	free(xml);
}

static void test_escaping(void **state)
{
	(void)state;
	struct vm_qemu_opts o = base();
	qp_error *e = NULL;
	char *xml;

	o.rootfs = "/r/<it's&\">";
	assert_non_null(xml = vm_lv_domain_xml(&o, "a&b", UUID, "", "/s", NULL, &e));
	has(xml, "<name>a&amp;b</name>");
	has(xml, "<source dir='/r/&lt;it&#39;s&amp;&quot;&gt;'/>");
	free(xml);
}

static void test_shares(void **state)
{
	(void)state;
	struct vm_qemu_opts o = base();
	const struct vm_share sh[2] = { { "m0", "/srv/data", true }, { "m1", "/run/q/p1/files/0", false } };
	qp_error *e = NULL;
	char *xml;

	o.rootfs_ro = true;
	o.shares = sh;
	o.nshares = 2;
	assert_non_null(xml = vm_lv_domain_xml(&o, "p", UUID, "", "/s", NULL, &e));
	has(xml, "<source dir='/r/a,b'/>\n      <target dir='rootfs'/>\n      <readonly/>\n");
	has(xml, "<source dir='/srv/data'/>\n      <target dir='m0'/>\n      <readonly/>\n");
	has(xml, "<source dir='/run/q/p1/files/0'/>\n      <target dir='m1'/>\n      <address");
	free(xml);
	o.shares = (const struct vm_share[]){ { "m0", "/srv/a\tb", false } };
	o.nshares = 1;
	assert_null(vm_lv_domain_xml(&o, "p", UUID, "", "/s", NULL, &e));
	assert_non_null(strstr(e->msg, "control character"));
	qp_error_free(&e);
}

static void test_refused(void **state)
{
	(void)state;
	struct vm_qemu_opts o = base();
	qp_error *e = NULL;

	o.rootfs = "/r/a\nb";
	assert_null(vm_lv_domain_xml(&o, "p", UUID, "", "/s", NULL, &e));
	assert_non_null(e);
	assert_non_null(strstr(e->msg, "control character"));
	qp_error_free(&e);
	o = base();
	o.mem_path = "/t/mem";
	assert_null(vm_lv_domain_xml(&o, "p", UUID, "", "/s", NULL, &e));
	assert_non_null(strstr(e->msg, "cold-booted microvm"));
	qp_error_free(&e);
	o = base();
	o.machine = VM_MACHINE_PC;
	assert_null(vm_lv_domain_xml(&o, "p", UUID, "", "/s", NULL, &e));
	qp_error_free(&e);
}

static void test_uri(void **state)
{
	(void)state;
	unsetenv("QPOD_LIBVIRT_URI");
	assert_string_equal(vm_lv_uri(NULL), "qemu:///system");
	setenv("QPOD_LIBVIRT_URI", "qemu+unix:///system?socket=/x", 1);
	assert_string_equal(vm_lv_uri(NULL), "qemu+unix:///system?socket=/x");
	assert_string_equal(vm_lv_uri("test:///default"), "test:///default");
	unsetenv("QPOD_LIBVIRT_URI");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_guest),
		cmocka_unit_test(test_escaping),
		cmocka_unit_test(test_shares),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_uri),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
