/* runtime/vm/libvirt/libvirt.h — the libvirt backend of VM pods (docs/LIBVIRT.md):
 * the pod's guest as a transient libvirt domain, named after the pod.
 *   libvirt_xml.c  the domain XML from the same struct vm_qemu_opts the
 *                  direct backend turns into QEMU's command line
 *   libvirt.c      the connection, the domain's start and end, why it ended
 *   libvirt_dir.c  what a QEMU that is not root opens while it starts
 *   libvirt_handoff.c  a static qpod's run/create of a libvirt pod goes to
 *                  qpod-libvirt (the same program linked dynamically)
 * The monitor stays the pod's supervisor (channel, ctl.sock, relay); only
 * QEMU's parent changes: libvirtd starts it, and stops it when the
 * monitor's connection closes (VIR_DOMAIN_START_AUTODESTROY), as the direct
 * backend's QEMU dies with its monitor (PDEATHSIG). */
#ifndef QPOD_VM_LIBVIRT_H
#define QPOD_VM_LIBVIRT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "vm/qemu/qemu.h"
#include "vm/vm.h"

#define QP_LIBVIRT_URI_DEFAULT "qemu:///system"
#define QP_LIBVIRT_UUID_LEN 36

struct vm_lv;

/* The URI a pod uses: its option, else $QPOD_LIBVIRT_URI, else the default. */
const char *vm_lv_uri(const char *opt);

/* ---- libvirt_handoff.c ---- */

/* the dynamically linked qpod shipped beside a static one (util/paths.h:
 * build/qpod-libvirt, PREFIX/lib/qpod/qpod-libvirt) */
#define QP_LV_HELPER "qpod-libvirt"
/* set for the helper's start only: QPOD_EXE_DIR is already qpod's (main.c) */
#define QP_LV_HANDOFF_ENV "QPOD_LIBVIRT_HANDOFF"
/* Is this binary linked statically (it cannot dlopen libvirt)? */
bool vm_lv_linked_static(void);
/* A libvirt pod's run or create, before it touches anything: 0 where this
 * qpod loads libvirt itself; else it execs QP_LV_HELPER with argv (qpod's
 * whole command line) and returns only with the reason it could not;
 * handed_off: this process is that helper already (a static one is an
 * error, never a loop). */
int vm_lv_handoff(char **argv, bool handed_off, qp_error **err);

/* ---- libvirt_dir.c ---- */

/* Where the pods' directories for a non-root QEMU go
 * ($QPOD_LIBVIRT_RUNDIR overrides it) */
#define QP_LV_RUNDIR_DEFAULT "/run/qpod-libvirt"
struct vm_lv_dir;
enum vm_lv_file { VM_LV_KERNEL, VM_LV_FIRMWARE, VM_LV_INITRD };
/* The pod's directory for a QEMU running as uid:gid (not root): copies of
 * o's kernel, firmware and initrd, and its rootfs and shares as idmapped
 * mounts (host id 0 shows as uid/gid).  *out is set as soon as there is
 * something to undo, also on failure (vm_lv_dir_close). */
int vm_lv_dir_open(const struct vm_qemu_opts *o, const char *id, uid_t uid, gid_t gid, struct vm_lv_dir **out,
		   qp_error **err);
/* What the domain XML names: d's path of a file, the rootfs, share i;
 * own when d is NULL (QEMU is root: the pod's own paths) */
const char *vm_lv_dir_file(const struct vm_lv_dir *d, enum vm_lv_file f, const char *own);
const char *vm_lv_dir_rootfs(const struct vm_lv_dir *d, const char *own);
const char *vm_lv_dir_share(const struct vm_lv_dir *d, size_t i, const char *own);
/* Detach its mounts, remove it (a started QEMU keeps what it opened). */
void vm_lv_dir_close(struct vm_lv_dir *d);

/* The domain XML of the pod's guest (malloc'ed): name (the pod's ID), uuid
 * (36 characters), o as for vm_spawn_qemu (o->tap_fd unused: tap names the
 * pod's tap device, "" for none), chan_path the absolute path of the
 * channel's socket (libvirt makes it, and passes it to QEMU open), d the
 * paths QEMU opens instead of o's (NULL: o's).  NULL with an error for
 * what it cannot express. */
char *vm_lv_domain_xml(const struct vm_qemu_opts *o, const char *name, const char *uuid, const char *tap,
		       const char *chan_path, const struct vm_lv_dir *d, qp_error **err);
/* The monitor's identity (its pid and start time) goes on QEMU's command
 * line as this object, so that a pod's monitor outside its cgroup (a
 * foreground run) is provably the one of this QEMU (driver.c). */
#define QP_LV_MONITOR_ARG "secret,id=qpod-monitor,data=%d-%llu"

/* Connect to uri, create the transient domain of o (see vm_lv_domain_xml)
 * and find its QEMU process on this host.  Returns QEMU's pid, *out the
 * handle; -1 with libvirt's error otherwise (nothing left behind). */
pid_t vm_lv_start(const struct vm_qemu_opts *o, const char *name, const char *uri, const char *tap,
		  struct vm_lv **out, qp_error **err);
/* The domain's uuid (the monitor records it in QP_VM_LV_UUID). */
#define QP_VM_LV_UUID "libvirt.uuid"
const char *vm_lv_uuid(const struct vm_lv *lv);
/* Is pid the QEMU of the domain with that uuid (its command line says so)?
 * monitor > 0: and was it started by the monitor monitor (QP_LV_MONITOR_ARG)? */
bool vm_lv_is_domain_qemu(pid_t pid, const char *uuid, pid_t monitor);
/* Destroy the domain (qpod's own stop: its reason is not an outside one). */
void vm_lv_destroy(struct vm_lv *lv);
/* Why the domain stopped, from libvirt's lifecycle event ("" if none came
 * within wait_ms). */
void vm_lv_stop_reason(struct vm_lv *lv, int wait_ms, char *buf, size_t size);
/* Suspend (pause) or resume the domain. */
int vm_lv_pause(struct vm_lv *lv, bool pause, qp_error **err);
/* Close the connection (the domain goes with it if it still runs). */
void vm_lv_free(struct vm_lv *lv);

#endif
