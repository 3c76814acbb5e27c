/* runtime/util/memfd_exec.h — run qpod from a sealed, anonymous copy of its
 * own binary before it enters any pod (the CVE-2019-5736 defence): a process
 * inside a pod that opens /proc/PID/exe of a qpod process gets the memfd,
 * which is sealed against writes, never the binary on the host's disk. */
#ifndef QPOD_MEMFD_EXEC_H
#define QPOD_MEMFD_EXEC_H

#include "util/error.h"

/* If not yet running from a sealed memfd, copy /proc/self/exe into one,
 * seal it and re-execute it with the same argv and environment.  Returns
 * only on error (or 0 when already sealed). */
int qp_memfd_reexec(char **argv, qp_error **err);
/* True if /proc/self/exe is a memfd with write seals. */
int qp_running_sealed(void);

#endif
