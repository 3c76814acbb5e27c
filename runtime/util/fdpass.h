/* runtime/util/fdpass.h — send a buffer with an optional fd (SCM_RIGHTS). */
#ifndef QPOD_FDPASS_H
#define QPOD_FDPASS_H

#include <sys/types.h>

/* passfd < 0: no fd. MSG_NOSIGNAL always. Returns sendmsg's result. */
ssize_t qp_send_with_fd(int sock, const void *buf, size_t len, int passfd);
/* One recvmsg (EINTR retried) into buf; an fd that came with it goes to
 * *passfd (close-on-exec; -1 if none), or is closed when passfd is NULL.
 * Returns recvmsg's result. */
ssize_t qp_recv_with_fd(int sock, void *buf, size_t size, int *passfd);

#endif
