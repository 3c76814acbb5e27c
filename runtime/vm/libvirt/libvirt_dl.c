/* runtime/vm/libvirt/libvirt_dl.c — libvirt, loaded when a pod asks for it.
 *
 * Linked normally, libvirt.so pulls some fifty libraries (gnutls, xml2,
 * glib, ...) into every qpod process, and their loading and relocation cost
 * each `qpod run` of a container about 20 ms: more than runc's whole start.
 * So only the libvirt backend loads it (dlopen), the first time a pod asks
 * for it; the prototypes still come from libvirt's headers, so the table
 * cannot drift from the library's API. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#include "vm/libvirt/libvirt.h"
#include "vm/libvirt/libvirt_dl.h"

#define LIBVIRT_SONAME "libvirt.so.0"

struct vm_virt_api virt;

static char load_error[512];

static void load(void)
{
	void *h;
	struct {
		const char *name;
		void **slot;
	} syms[] = {
#define SYM(f) { "vir" #f, (void **)&virt.f }
		SYM(Initialize), SYM(SetErrorFunc), SYM(GetLastErrorMessage), SYM(EventRegisterDefaultImpl),
		SYM(EventRunDefaultImpl), SYM(ConnectOpen), SYM(ConnectClose), SYM(ConnectGetCapabilities), SYM(ConnectDomainEventRegisterAny),
		SYM(ConnectDomainEventDeregisterAny), SYM(DomainCreateXML), SYM(DomainDestroy), SYM(DomainFree),
		SYM(DomainGetName), SYM(DomainGetUUIDString), SYM(DomainSuspend), SYM(DomainResume),
		SYM(DomainLookupByUUIDString),
#undef SYM
	};

	if (vm_lv_linked_static()) { /* vm_lv_handoff() should have run first */
		snprintf(load_error, sizeof(load_error),
			 "this qpod is linked statically; its libvirt pods run through " QP_LV_HELPER);
		return;
	}
	if (!(h = dlopen(LIBVIRT_SONAME, RTLD_NOW | RTLD_LOCAL))) {
		snprintf(load_error, sizeof(load_error), "%s", dlerror());
		return;
	}
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++)
		if (!(*syms[i].slot = dlsym(h, syms[i].name))) {
			snprintf(load_error, sizeof(load_error), "%s: no %s", LIBVIRT_SONAME, syms[i].name);
			return;
		}
	virt.loaded = true;
}

int vm_virt_load(qp_error **err)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, load);
	if (virt.loaded)
		return 0;
	return qp_error_set(err, QP_E_NOTFOUND, 0,
			    "libvirt backend: cannot load libvirt (%s; install the libvirt0 package)", load_error);
}
