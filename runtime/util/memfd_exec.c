/* runtime/util/memfd_exec.c — the fallback guard of exe_guard.h: a sealed
 * anonymous copy of qpod's binary. */
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/exe_guard.h"

int qp_exe_memfd_copy(qp_error **err)
{
	_cleanup_close_ int src = -1, mfd = -1;
	struct stat st;
	off_t off = 0;

	src = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (src < 0 || fstat(src, &st) < 0)
		return qp_fail(err, errno, "open /proc/self/exe");
	mfd = memfd_create("qpod", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (mfd < 0)
		return qp_fail(err, errno, "memfd_create");
	while (off < st.st_size) {
		ssize_t n = sendfile(mfd, src, NULL, (size_t)(st.st_size - off));
		if (n <= 0)
			return qp_fail(err, n < 0 ? errno : EIO, "copy qpod into a memfd");
		off += n;
	}
	if (fcntl(mfd, F_ADD_SEALS, QP_EXE_SEALS) < 0)
		return qp_fail(err, errno, "seal the memfd");
	return steal_fd(&mfd);
}
