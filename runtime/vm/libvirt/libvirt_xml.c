/* runtime/vm/libvirt/libvirt_xml.c — the libvirt domain XML of a VM pod's guest,
 * from the struct vm_qemu_opts that the direct backend turns into QEMU's
 * command line: the same machine (microvm, no ACPI), firmware, kernel,
 * initrd, command line, memory, vCPUs and accel in libvirt's own elements;
 * the NIC as an <interface type='ethernet'> on the pod's tap; the guest
 * channel and the 9p shares, which libvirt 9.0 will not put on virtio-mmio,
 * as qemu:commandline arguments made by qemu_cmd.c's own device table
 * (docs/LIBVIRT.md says why), and the monitor's identity (this process). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report/report.h"
#include "state.h"
#include "util/cleanup.h"
#include "util/strv.h"
#include "vm/libvirt/libvirt.h"
#include "vm/qemu/qemu.h"

static bool has_control(const char *s)
{
	for (; s && *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return true;
	return false;
}

/* <tag>text</tag> with text escaped */
static void element(FILE *f, const char *indent, const char *tag, const char *text)
{
	fprintf(f, "%s<%s>", indent, tag);
	qp_put_xml(f, text);
	fprintf(f, "</%s>\n", tag);
}

static void qemu_args(FILE *f, char **argv)
{
	for (size_t i = 0; argv && argv[i]; i++) {
		fputs("    <qemu:arg value='", f);
		qp_put_xml(f, argv[i]);
		fputs("'/>\n", f);
	}
}

char *vm_lv_domain_xml(const struct vm_qemu_opts *o, const char *name, const char *uuid, const char *tap,
		       const char *chan_path, qp_error **err)
{
	const char *texts[] = { name, uuid, tap, chan_path, o->kernel, o->firmware, o->rootfs, o->statedir };
	char cmdline[VM_CMDLINE_MAX + 32];
	char **devs = NULL;
	char *xml = NULL;
	size_t len = 0;
	FILE *f;

	/* qp_put_xml would turn a control character into '?': another path */
	for (size_t i = 0; i < QP_ARRAY_SIZE(texts); i++)
		if (has_control(texts[i]))
			return qp_error_set(err, QP_E_INVALID, 0,
					    "libvirt domain: \"%s\" holds a control character", texts[i]), NULL;
	if (o->machine != VM_MACHINE_MICROVM || o->mem_path || o->incoming || o->console)
		return qp_error_set(err, QP_E_INVALID, 0,
				    "libvirt domain: only a cold-booted microvm pod (no template, no console file)"),
		       NULL;
	vm_qemu_cmdline(o, cmdline, sizeof(cmdline));
	if (vm_qemu_guest_devices(o, chan_path, &devs, err) < 0)
		return NULL;
	if (!(f = open_memstream(&xml, &len))) {
		qp_strv_free(devs);
		return qp_fail(err, errno, "libvirt domain XML"), NULL;
	}
	fprintf(f, "<domain type='%s' xmlns:qemu='http://libvirt.org/schemas/domain/qemu/1.0'>\n",
		o->kvm ? "kvm" : "qemu");
	element(f, "  ", "name", name);
	element(f, "  ", "uuid", uuid);
	element(f, "  ", "title", "qpod vm pod");
	fprintf(f, "  <memory unit='MiB'>%llu</memory>\n  <vcpu>%d</vcpu>\n", o->mem_mib, o->vcpus);
	fputs("  <os>\n    <type arch='x86_64' machine='microvm'>hvm</type>\n", f);
	if (o->firmware) {
		fputs("    <loader type='rom'>", f);
		qp_put_xml(f, o->firmware);
		fputs("</loader>\n", f);
	}
	element(f, "    ", "kernel", o->kernel);
	fprintf(f, "    <initrd>");
	qp_put_xml(f, o->statedir);
	fprintf(f, "/");
	qp_put_xml(f, o->initrd ? o->initrd : QP_VM_INITRD);
	fprintf(f, "</initrd>\n");
	element(f, "    ", "cmdline", cmdline);
	fputs("  </os>\n", f);
	if (o->kvm)
		fputs("  <cpu mode='host-passthrough'/>\n", f);
	else /* as the direct backend's tb-size=32 (qemu_cmd.c) */
		fputs("  <features>\n    <tcg><tb-cache unit='MiB'>32</tb-cache></tcg>\n  </features>\n", f);
	/* the guest ends the VM by rebooting (reboot=t, no ACPI): that is its end */
	fputs("  <on_poweroff>destroy</on_poweroff>\n  <on_reboot>destroy</on_reboot>\n"
	      "  <on_crash>destroy</on_crash>\n", f);
	fputs("  <devices>\n", f);
	/* without these two, libvirt wants a PCI bus that microvm lacks */
	fputs("    <controller type='usb' model='none'/>\n    <memballoon model='none'/>\n", f);
	if (tap && *tap) {
		fputs("    <interface type='ethernet'>\n      <target dev='", f);
		qp_put_xml(f, tap);
		fprintf(f, "' managed='no'/>\n      <mac address='%02x:%02x:%02x:%02x:%02x:%02x'/>\n", o->mac[0],
			o->mac[1], o->mac[2], o->mac[3], o->mac[4], o->mac[5]);
		/* userspace virtio-net, as the direct backend's vhost=off */
		fputs("      <model type='virtio'/>\n      <driver name='qemu'/>\n"
		      "      <address type='virtio-mmio'/>\n    </interface>\n", f);
	}
	fputs("  </devices>\n  <qemu:commandline>\n", f);
	/* libvirt has no element for microvm's acpi=off (-machine options
	 * merge); -no-reboot: the guest's reboot ends QEMU as a shutdown, so
	 * libvirt tells it apart from a destroy */
	fputs("    <qemu:arg value='-machine'/>\n    <qemu:arg value='acpi=off'/>\n"
	      "    <qemu:arg value='-no-reboot'/>\n", f);
	qemu_args(f, devs);
	qp_strv_free(devs);
	fputs("    <qemu:arg value='-object'/>\n    <qemu:arg value='", f);
	fprintf(f, QP_LV_MONITOR_ARG, (int)getpid(), proc_start_time(getpid()));
	fputs("'/>\n", f);
	fputs("  </qemu:commandline>\n</domain>\n", f);
	if (fclose(f) != 0 || !xml) {
		free(xml);
		return qp_fail(err, ENOMEM, "libvirt domain XML"), NULL;
	}
	return xml;
}
