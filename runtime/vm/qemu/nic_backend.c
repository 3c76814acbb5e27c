/* runtime/vm/qemu/nic_backend.c — which virtio-net backend a VM pod's NIC
 * runs on: the kernel's vhost-net (QEMU vhost=on with the vhostfd qpod
 * opens) when KVM runs the guest and /dev/vhost-net opens, else QEMU's own
 * virtio-net in userspace; the choice and its reason are the pod's
 * (`qpod state`'s "nic"). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "vm/qemu/qemu.h"

bool vm_nic_backend(bool kvm, int vhost_errno, char *text, size_t size)
{
	if (!kvm) {
		/* vhost-net's rings are the guest's memory, served by the host
		 * kernel: under an emulator QEMU's own device is the one that runs */
		snprintf(text, size, "userspace: TCG");
		return false;
	}
	if (vhost_errno == 0) {
		snprintf(text, size, "vhost-net");
		return true;
	}
	if (vhost_errno == ENOENT || vhost_errno == ENODEV || vhost_errno == ENXIO)
		snprintf(text, size, "userspace: no " VM_VHOST_NET);
	else
		snprintf(text, size, "userspace: " VM_VHOST_NET ": %s", strerror(vhost_errno));
	return false;
}

int vm_nic_vhost_open(bool kvm, char *text, size_t size)
{
	int fd = -1, e = 0;

	if (kvm && (fd = open(VM_VHOST_NET, O_RDWR | O_CLOEXEC)) < 0)
		e = errno;
	if (fd >= 0 && fd < 3) {
		/* never 0..2: QEMU's stdio would take its number */
		int high = fcntl(fd, F_DUPFD_CLOEXEC, 3);
		e = high < 0 ? errno : 0;
		close(fd);
		fd = high;
	}
	vm_nic_backend(kvm, fd >= 0 ? 0 : e ? e : EBADF, text, size);
	return fd;
}
