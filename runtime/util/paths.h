/* runtime/util/paths.h — where qpod finds the files it ships beside its
 * binary (guest-init, the guest kernel, its command line, the traditional-VM
 * runner), in one order for all of them:
 *   1. the build tree: $QPOD_EXE_DIR/BUILD_REL (the binary is build/qpod),
 *   2. the installed tree: $QPOD_EXE_DIR/../lib/qpod/NAME (PREFIX/bin/qpod
 *      beside PREFIX/lib/qpod, whatever PREFIX and DESTDIR were),
 *   3. EXTRA (the kernel: the cache of kernel-config/build.sh),
 *   4. /usr/lib/qpod/NAME.
 * $QPOD_EXE_DIR is the directory of the qpod binary (main.c sets it before
 * the guarded re-exec, util/exe_guard.h, hides it).  Each caller checks its own $QPOD_* override
 * first. */
#ifndef QPOD_UTIL_PATHS_H
#define QPOD_UTIL_PATHS_H

#define QP_LIBDIR_SYSTEM "/usr/lib/qpod"
#define QP_LIBDIR_BESIDE_BIN "../lib/qpod"

/* The first of those that is a regular file (malloc'ed), or NULL.
 * build_rel and extra may be NULL. */
char *qp_find_shipped(const char *build_rel, const char *name, const char *extra);
/* ${QPOD_CACHE:-/var/cache/qpod} */
const char *qp_cache_dir(void);

#endif
