/* runtime/host/cgroup/devices_bpf.h — cgroup v2 device access: the rules of
 * devrules.h compiled into a BPF_PROG_TYPE_CGROUP_DEVICE program (raw
 * instructions, the bpf(2) syscall, no libbpf), loaded and attached to the
 * pod's cgroup with BPF_F_ALLOW_MULTI.  The attachment keeps the program
 * alive (its fd is closed after attaching); installing again replaces what
 * was attached before: the new program is attached first, then the old ones
 * are detached, so there is no moment without a filter.
 *
 * The program (runc's and crun's shape, after systemd): the context's type
 * (low 16 bits of access_type), access (high 16 bits), major and minor go
 * into R2..R5; then one block per exception
 *     if type != T goto next; [if (access & A) != access goto next;]
 *     [if major != M goto next;] [if minor != N goto next;]
 *     return !default;
 * and last "return default".  An exception's access check is left out when
 * it is rwm, its major/minor checks when they are '*'.
 */
#ifndef QPOD_DEVICES_BPF_H
#define QPOD_DEVICES_BPF_H

#include <stddef.h>
#include <linux/bpf.h>

#include "host/cgroup/devrules.h"
#include "util/error.h"

#define QP_DEVBPF_PROLOGUE 6 /* instructions before the first block */

/* The program for ST; *out malloc'd. */
int qp_devbpf_build(const struct qp_dev_state *st, struct bpf_insn **out, size_t *n, qp_error **err);
/* BPF_PROG_LOAD as BPF_PROG_TYPE_CGROUP_DEVICE; returns the program's fd
 * (the verifier's first complaint in the error when it refuses). */
int qp_devbpf_load(const struct bpf_insn *insns, size_t n, qp_error **err);
/* Attach PROG_FD to the cgroup directory CGFD (BPF_F_ALLOW_MULTI), then
 * detach every device program that was attached there before. */
int qp_devbpf_install(int cgfd, int prog_fd, qp_error **err);
/* How many device programs are attached to CGFD (BPF_PROG_QUERY). */
int qp_devbpf_count(int cgfd, size_t *n, qp_error **err);

#endif
