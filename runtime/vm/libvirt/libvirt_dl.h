/* runtime/vm/libvirt/libvirt_dl.h — the libvirt functions the libvirt backend
 * calls, through a table that libvirt_dl.c fills with dlopen: qpod is not
 * linked against libvirt (it would slow every qpod process's start). */
#ifndef QPOD_VM_LIBVIRT_DL_H
#define QPOD_VM_LIBVIRT_DL_H

#include <stdbool.h>

#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

#include "util/error.h"

struct vm_virt_api {
	bool loaded;
#define FN(f) __typeof__(vir##f) *f
	FN(Initialize);
	FN(SetErrorFunc);
	FN(GetLastErrorMessage);
	FN(EventRegisterDefaultImpl);
	FN(EventRunDefaultImpl);
	FN(ConnectOpen);
	FN(ConnectClose);
	FN(ConnectGetCapabilities);
	FN(ConnectDomainEventRegisterAny);
	FN(ConnectDomainEventDeregisterAny);
	FN(DomainCreateXML);
	FN(DomainDestroy);
	FN(DomainFree);
	FN(DomainGetName);
	FN(DomainGetUUIDString);
	FN(DomainSuspend);
	FN(DomainResume);
	FN(DomainLookupByUUIDString);
#undef FN
};
/* valid once vm_virt_load() succeeded */
extern struct vm_virt_api virt;

/* Load libvirt.so.0 (once per process); an error if it is not installed. */
int vm_virt_load(qp_error **err);

#endif
