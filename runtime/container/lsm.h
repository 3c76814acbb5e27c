/* runtime/container/lsm.h — Linux security modules for a container's process:
 * process.apparmorProfile, process.selinuxLabel and linux.mountLabel, as runc
 * applies them.  On a host where the module is not enabled they are refused
 * at create (runc would apply them or fail), never accepted and ignored.
 *
 *   AppArmor is enabled when /sys/module/apparmor/parameters/enabled says Y;
 *   the profile is set for the next exec by writing "exec PROFILE" to
 *   /proc/self/attr/apparmor/exec (or /proc/self/attr/exec on old kernels).
 *   SELinux is enabled when selinuxfs is at /sys/fs/selinux; the process
 *   label is written to /proc/self/attr/exec, the mount label becomes the
 *   context="..." option of the pod's own (non-bind) mounts.
 *
 * An empty label means none, as runc reads it.  The *_at variants take a directory that stands for "/" (unit tests use a
 * fake tree); qpod passes "".
 */
#ifndef QPOD_LSM_H
#define QPOD_LSM_H

#include <stddef.h>

#include "spec/spec.h"
#include "util/error.h"

/* At create: refuse what the host cannot apply (QP_E_INVALID). */
int qp_lsm_check(const struct pod_spec *spec, qp_error **err);
int qp_lsm_check_at(const char *root, const struct pod_spec *spec, qp_error **err);
/* In the pod's process, before no_new_privs and the exec. */
int qp_lsm_apply(const struct qp_process *p, qp_error **err);
int qp_lsm_apply_at(const char *root, const struct qp_process *p, qp_error **err);
/* Append context="LABEL" to comma-separated mount data (len bytes in all);
 * nothing when label is NULL. */
int qp_lsm_mount_data(const char *label, char *data, size_t len, qp_error **err);

#endif
