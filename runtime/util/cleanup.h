/* runtime/util/cleanup.h — scope-bound ownership (GCC/Clang cleanup attribute).
 *
 *   _cleanup_free_ char *p = malloc(n);   freed on every return path
 *   _cleanup_close_ int fd = open(...);   closed on every return path
 *   return steal_fd(&fd);                 hand ownership out explicitly
 *   *out = steal_ptr(&p);
 * Cleanup handlers preserve errno so an error path can still report it.
 */
#ifndef QPOD_CLEANUP_H
#define QPOD_CLEANUP_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <dirent.h>

static inline void qp_freep(void *p)
{
	int e = errno;
	free(*(void **)p);
	errno = e;
}
static inline void qp_closep(int *fd)
{
	int e = errno;
	if (*fd >= 0)
		close(*fd);
	errno = e;
}
static inline void qp_fclosep(FILE **f)
{
	int e = errno;
	if (*f)
		fclose(*f);
	errno = e;
}
static inline void qp_closedirp(DIR **d)
{
	int e = errno;
	if (*d)
		closedir(*d);
	errno = e;
}

#define _cleanup_free_ __attribute__((cleanup(qp_freep)))
#define _cleanup_close_ __attribute__((cleanup(qp_closep)))
#define _cleanup_fclose_ __attribute__((cleanup(qp_fclosep)))
#define _cleanup_closedir_ __attribute__((cleanup(qp_closedirp)))

static inline int steal_fd(int *fd)
{
	int r = *fd;
	*fd = -1;
	return r;
}
static inline void *steal_ptr_(void **p)
{
	void *r = *p;
	*p = NULL;
	return r;
}
#define steal_ptr(pp) steal_ptr_((void **)(pp))

#define QP_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif
