/* runtime/util/fdpass.c — see fdpass.h. */
#include <string.h>
#include <sys/socket.h>

#include "util/fdpass.h"

ssize_t qp_send_with_fd(int sock, const void *buf, size_t len, int passfd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (passfd >= 0) {
		memset(&u, 0, sizeof(u));
		mh.msg_control = u.buf;
		mh.msg_controllen = sizeof(u.buf);
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &passfd, sizeof(int));
	}
	/* a peer that went away must not turn into SIGPIPE */
	return sendmsg(sock, &mh, MSG_NOSIGNAL);
}
