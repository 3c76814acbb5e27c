/* guest-init/modules.h — loading the kernel modules packed into the
 * initramfs, for guest kernels that have the virtio drivers as modules (the
 * Debian cloud kernel of the traditional-VM baseline).  qpod's own guest
 * kernel has everything built in and its initramfs carries no modules. */
#ifndef QPOD_GI_MODULES_H
#define QPOD_GI_MODULES_H

#include "util/error.h"

/* Where the host packs the modules in the initramfs (runtime/vm/qemu/initrd.c). */
#define GI_MODULES_DIR "/lib/modules"
#define GI_MODULES_ORDER "modules.order"
#define GI_MODULES_MAX 64

/* If DIR/modules.order exists, load each module file it lists (one file name
 * per line, dependencies first; blank lines and '#' lines skipped) with
 * finit_module(2), in order.  A module already loaded (EEXIST) is fine.
 * Names must stay inside DIR (no '/', not "." or ".."), name regular files,
 * and number at most GI_MODULES_MAX.  Returns the number of modules loaded
 * (0 without modules.order), or -1 with *err set. */
int gi_load_modules(const char *dir, qp_error **err);

#endif
