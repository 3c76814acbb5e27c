/* runtime/vm/libvirt/libvirt_xml.c — the libvirt domain XML of a VM pod's guest,
 * from the struct vm_qemu_opts that the direct backend turns into QEMU's
 * command line: the same machine (microvm, no ACPI), firmware, kernel,
 * initrd, command line, memory, vCPUs and accel in libvirt's own elements;
 * the NIC as an <interface type='ethernet'> on the pod's tap; the guest
 * channel as a <channel> on a virtio-serial <controller>, the rootfs and
 * the spec's shares as 9p <filesystem>s, all on virtio-mmio, so that
 * libvirt makes, labels and owns them for whatever user its QEMU runs as;
 * what libvirt has no element for stays in qemu:commandline (docs/LIBVIRT.md
 * says why): microvm's acpi=off, -no-reboot, the monitor's identity. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "guest-init/protocol.h"
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

/* <tag attr='value'/> with value escaped */
static void empty_element(FILE *f, const char *indent, const char *tag, const char *attr, const char *value)
{
	fprintf(f, "%s<%s %s='", indent, tag, attr);
	qp_put_xml(f, value);
	fputs("'/>\n", f);
}

/* a 9p share: security_model=none ("squash"), as the direct backend's */
static void filesystem(FILE *f, const char *dir, const char *tag, bool ro)
{
	fputs("    <filesystem type='mount' accessmode='squash'>\n", f);
	empty_element(f, "      ", "source", "dir", dir);
	empty_element(f, "      ", "target", "dir", tag);
	fprintf(f, "%s      <address type='virtio-mmio'/>\n    </filesystem>\n", ro ? "      <readonly/>\n" : "");
}

/* the guest channel: a virtserialport named QP_PROTO_PORT_NAME, whose
 * socket libvirtd binds and hands QEMU open (so QEMU's user needs no
 * access to the state dir) */
static void channel(FILE *f, const char *chan_path)
{
	fputs("    <controller type='virtio-serial' index='0' ports='2'>\n"
	      "      <address type='virtio-mmio'/>\n    </controller>\n"
	      "    <channel type='unix'>\n", f);
	fputs("      <source mode='bind' path='", f);
	qp_put_xml(f, chan_path);
	fputs("'/>\n      <target type='virtio' name='" QP_PROTO_PORT_NAME "'/>\n    </channel>\n", f);
}

char *vm_lv_domain_xml(const struct vm_qemu_opts *o, const char *name, const char *uuid, const char *tap,
		       const char *chan_path, const struct vm_lv_dir *d, qp_error **err)
{
	char cmdline[VM_CMDLINE_MAX + 32], own_initrd[PATH_MAX];
	const char *kernel = vm_lv_dir_file(d, VM_LV_KERNEL, o->kernel);
	const char *firmware = vm_lv_dir_file(d, VM_LV_FIRMWARE, o->firmware);
	const char *initrd = vm_lv_dir_file(d, VM_LV_INITRD, own_initrd);
	const char *rootfs = vm_lv_dir_rootfs(d, o->rootfs);
	const char *texts[] = { name, uuid, tap, chan_path, kernel, firmware, rootfs, initrd };
	char *xml = NULL;
	size_t len = 0;
	FILE *f;

	if ((size_t)snprintf(own_initrd, sizeof(own_initrd), "%s/%s", o->statedir,
			     o->initrd ? o->initrd : QP_VM_INITRD) >= sizeof(own_initrd))
		return qp_fail(err, ENAMETOOLONG, "libvirt domain: the initrd's path"), NULL;
	/* qp_put_xml would turn a control character into '?': another path */
	for (size_t i = 0; i < QP_ARRAY_SIZE(texts) + o->nshares; i++) {
		const char *t = i < QP_ARRAY_SIZE(texts) ? texts[i] : o->shares[i - QP_ARRAY_SIZE(texts)].path;
		if (has_control(t))
			return qp_error_set(err, QP_E_INVALID, 0, "libvirt domain: \"%s\" holds a control character",
					    t), NULL;
	}
	if (o->machine != VM_MACHINE_MICROVM || o->mem_path || o->incoming || o->console)
		return qp_error_set(err, QP_E_INVALID, 0,
				    "libvirt domain: only a cold-booted microvm pod (no template, no console file)"),
		       NULL;
	vm_qemu_cmdline(o, cmdline, sizeof(cmdline));
	if (!(f = open_memstream(&xml, &len)))
		return qp_fail(err, errno, "libvirt domain XML"), NULL;
	fprintf(f, "<domain type='%s' xmlns:qemu='http://libvirt.org/schemas/domain/qemu/1.0'>\n",
		o->kvm ? "kvm" : "qemu");
	element(f, "  ", "name", name);
	element(f, "  ", "uuid", uuid);
	element(f, "  ", "title", "qpod vm pod");
	fprintf(f, "  <memory unit='MiB'>%llu</memory>\n  <vcpu>%d</vcpu>\n", o->mem_mib, o->vcpus);
	fputs("  <os>\n    <type arch='x86_64' machine='microvm'>hvm</type>\n", f);
	if (firmware) {
		fputs("    <loader type='rom'>", f);
		qp_put_xml(f, firmware);
		fputs("</loader>\n", f);
	}
	element(f, "    ", "kernel", kernel);
	element(f, "    ", "initrd", initrd);
	element(f, "    ", "cmdline", cmdline);
	fputs("  </os>\n", f);
	if (o->kvm)
		fputs("  <cpu mode='host-passthrough'/>\n", f);
	else /* as the direct backend's tb-size (qemu_cmd.c) */
		fprintf(f, "  <features>\n    <tcg><tb-cache unit='MiB'>%u</tb-cache></tcg>\n  </features>\n",
			vm_tcg_tb_mib());
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
	channel(f, chan_path);
	/* the share is as writable as the spec's root (root.readonly) */
	if (o->rootfs)
		filesystem(f, rootfs, VM_ROOTFS_TAG, o->rootfs_ro);
	for (size_t i = 0; i < o->nshares && i < QP_PROTO_MAX_MOUNTS; i++)
		filesystem(f, vm_lv_dir_share(d, i, o->shares[i].path), o->shares[i].tag, o->shares[i].ro);
	fputs("  </devices>\n  <qemu:commandline>\n", f);
	/* libvirt has no element for microvm's acpi=off (-machine options
	 * merge); -no-reboot: the guest's reboot ends QEMU as a shutdown, so
	 * libvirt tells it apart from a destroy */
	fputs("    <qemu:arg value='-machine'/>\n    <qemu:arg value='acpi=off'/>\n"
	      "    <qemu:arg value='-no-reboot'/>\n", f);
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
