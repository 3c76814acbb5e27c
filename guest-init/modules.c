/* guest-init/modules.c — load the modules listed in DIR/modules.order with
 * finit_module(2).  The list is read once into a bounded buffer; every name
 * is checked before it is opened, relative to DIR, without following links. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "guest-init/modules.h"
#include "util/cleanup.h"

#define ORDER_MAX 4096 /* GI_MODULES_MAX names of up to 63 bytes */
#define NAME_MAX_LEN 63

static int load_one(int dirfd, const char *name, qp_error **err)
{
	_cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0)
		return qp_fail(err, errno, "module \"%s\"", name);
	if (!S_ISREG(st.st_mode))
		return qp_error_set(err, QP_E_INVALID, 0, "module \"%s\": not a regular file", name);
	/* no libc wrapper in musl; params "", no flags */
	if (syscall(SYS_finit_module, fd, "", 0) < 0 && errno != EEXIST)
		return qp_fail(err, errno, "load module \"%s\"", name);
	return 0;
}

int gi_load_modules(const char *dir, qp_error **err)
{
	_cleanup_close_ int dirfd = -1, fd = -1;
	char buf[ORDER_MAX + 1];
	size_t len = 0;
	int loaded = 0;

	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0 && errno == ENOENT)
		return 0;
	if (dirfd >= 0)
		fd = openat(dirfd, GI_MODULES_ORDER, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (dirfd >= 0 && fd < 0 && errno == ENOENT)
		return 0;
	if (fd < 0)
		return qp_fail(err, errno, "open \"%s/" GI_MODULES_ORDER "\"", dir);
	for (;;) { /* read until EOF, refusing more than ORDER_MAX bytes */
		ssize_t n = read(fd, buf + len, sizeof(buf) - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return qp_fail(err, errno, "read \"%s/" GI_MODULES_ORDER "\"", dir);
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > ORDER_MAX)
			return qp_error_set(err, QP_E_INVALID, 0, "\"%s/" GI_MODULES_ORDER "\": over %d bytes",
					    dir, ORDER_MAX);
	}
	buf[len] = '\0';

	for (char *line = buf, *next; line; line = next) {
		char shown[QP_SHOWN_MAX];
		size_t n;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		n = strlen(line);
		if (n && line[n - 1] == '\r')
			line[--n] = '\0';
		if (!n || line[0] == '#')
			continue;
		if (n > NAME_MAX_LEN || strchr(line, '/') || !strcmp(line, ".") || !strcmp(line, ".."))
			return qp_error_set(err, QP_E_INVALID, 0,
					    "\"%s/" GI_MODULES_ORDER "\": bad module name \"%s\"", dir,
					    qp_shown(line, shown));
		if (loaded == GI_MODULES_MAX)
			return qp_error_set(err, QP_E_INVALID, 0,
					    "\"%s/" GI_MODULES_ORDER "\": more than %d modules", dir,
					    GI_MODULES_MAX);
		if (load_one(dirfd, line, err) < 0)
			return qp_error_prefix(err, "%s", dir);
		loaded++;
	}
	return loaded;
}
