/* runtime/util/exe_guard.h — run qpod from a copy of its own binary that no
 * pod can write before it enters any pod (the CVE-2019-5736 defence): a
 * process inside a pod that opens /proc/PID/exe of a qpod process gets that
 * view, never the writable binary on the host's disk.
 *
 * Two guards, the first that can be made (runc 1.2 has the same pair):
 *   overlay  qpod re-executes through a private, read-only overlayfs whose
 *            lower layer is its own directory (util/exe_overlay.c): nothing
 *            is copied and the binary's page cache is shared; a write
 *            through /proc/PID/exe fails with EROFS, and the mount is never
 *            attached anywhere, so it cannot be remounted writable;
 *   memfd    a sealed anonymous copy (util/memfd_exec.c), where no overlay
 *            can be made (a kernel without fsopen(2) or overlayfs, no
 *            CAP_SYS_ADMIN); writes fail with EPERM.
 * `qpod --debug` logs which one ran.  QPOD_EXE_GUARD=memfd in the
 * environment takes the memfd guard even where an overlay could be made
 * (for tests of the fallback; "auto", the default, tries the overlay first);
 * no value turns the guard off. */
#ifndef QPOD_EXE_GUARD_H
#define QPOD_EXE_GUARD_H

#include <fcntl.h>

#include "util/error.h"

/* the seals of the memfd guard: no write, no resize, no unsealing */
#define QP_EXE_SEALS (F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)

/* If /proc/self/exe is not yet guarded, re-execute qpod with the same argv
 * and environment through the first guard that can be made; exe is the
 * binary's real path (NULL: unknown, the memfd guard); spare_dir is an
 * existing directory not above or below the binary's (qpod's state root:
 * an older kernel's overlayfs needs a second lower layer by path).  Returns
 * 0 when already guarded, -1 with *err on failure; never returns otherwise. */
int qp_exe_guard_reexec(char **argv, const char *exe, const char *spare_dir, qp_error **err);
/* True if /proc/self/exe is a guarded view: a memfd with write seals, or a
 * file of a read-only overlayfs (looked at once per process). */
int qp_exe_guarded(void);

/* The guards themselves, each an O_CLOEXEC fd of the binary to execveat():
 * an O_PATH fd of exe (its real path) through a fresh read-only overlay,
 * and a sealed memfd copy of /proc/self/exe. */
int qp_exe_overlay_open(const char *exe, const char *spare_dir, qp_error **err);
int qp_exe_memfd_copy(qp_error **err);

#endif
