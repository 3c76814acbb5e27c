/* runtime/util/memfd_exec.c — see memfd_exec.h. */
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/memfd_exec.h"

#define QP_SEALS (F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)

extern char **environ;

int qp_running_sealed(void)
{
	_cleanup_close_ int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	int seals;

	if (fd < 0)
		return 0;
	seals = fcntl(fd, F_GET_SEALS);
	return seals >= 0 && (seals & QP_SEALS) == QP_SEALS;
}

int qp_memfd_reexec(char **argv, qp_error **err)
{
	_cleanup_close_ int src = -1, mfd = -1;
	struct stat st;
	off_t off = 0;

	if (qp_running_sealed())
		return 0;
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
	if (fcntl(mfd, F_ADD_SEALS, QP_SEALS) < 0)
		return qp_fail(err, errno, "seal the memfd");
	syscall(SYS_execveat, mfd, "", argv, environ, AT_EMPTY_PATH);
	return qp_fail(err, errno, "re-execute qpod from a memfd");
}
