/* runtime/util/io.h — small fd helpers shared across the runtime. */
#ifndef QPOD_IO_H
#define QPOD_IO_H

#include <stdbool.h>
#include <stddef.h>

/* write() all len bytes, retrying after EINTR and short writes.  Returns 0,
 * or -1 with errno set. */
int qp_write_all(int fd, const void *buf, size_t len);
/* The same on a socket, with MSG_NOSIGNAL: a peer that went away is EPIPE,
 * not a SIGPIPE that kills the caller (QEMU's QMP, which a restore that
 * fails closes at any moment, in a foreground qpod run's own process). */
int qp_send_all(int sock, const void *buf, size_t len);

/* read() fd to its end into a malloc'ed, NUL-terminated *out (*len bytes,
 * len may be NULL).  Returns 0, or -1 with errno set: EFBIG when there is
 * more than max bytes. */
int qp_read_all(int fd, size_t max, char **out, size_t *len);

/* Is fd open and not /dev/null (input worth relaying to a process)? */
bool qp_fd_relayable(int fd);

/* Close every fd from 3 up except those in keep (ascending, >= 3). */
void qp_close_fds_except(const int *keep, size_t n);

#endif
