/* qboot/lib.h — the little of a C library the firmware needs (lib.c), and
 * its output: the marker port (marker.c). */
#ifndef QBOOT_LIB_H
#define QBOOT_LIB_H

#include <stddef.h>
#include <stdint.h>

void *memcpy(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strnlen(const char *s, size_t max);

/* A fatal error: MARK_ERROR, the message (%s, %x, %u only), a newline on
 * the marker port, then the VM stops (jump.S): the host reports the line. */
__attribute__((noreturn, format(printf, 1, 2))) void fw_fail(const char *fmt, ...);

/* jump.S */
__attribute__((noreturn)) void jump_pvh(uint32_t entry, uint32_t start_info);
__attribute__((noreturn)) void jump_linux32(uint32_t entry, uint32_t boot_params);
__attribute__((noreturn)) void stop_vm(void);

#endif
