/* qboot/io.h — x86 port I/O and the byte-order helpers fw_cfg needs. */
#ifndef QBOOT_IO_H
#define QBOOT_IO_H

#include <stdint.h>

static inline void outb(uint16_t port, uint8_t v) { __asm__ volatile("outb %0, %1" : : "a"(v), "Nd"(port) : "memory"); }
static inline void outw(uint16_t port, uint16_t v) { __asm__ volatile("outw %0, %1" : : "a"(v), "Nd"(port) : "memory"); }
static inline void outl(uint16_t port, uint32_t v) { __asm__ volatile("outl %0, %1" : : "a"(v), "Nd"(port) : "memory"); }
static inline uint8_t inb(uint16_t port)
{
	uint8_t v;
	__asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port) : "memory");
	return v;
}
static inline void insb(uint16_t port, void *buf, uint32_t n)
{
	__asm__ volatile("rep insb" : "+D"(buf), "+c"(n) : "d"(port) : "memory");
}

static inline uint32_t be32(uint32_t v) { return __builtin_bswap32(v); }
static inline uint16_t be16(uint16_t v) { return __builtin_bswap16(v); }
static inline uint64_t be64(uint64_t v) { return __builtin_bswap64(v); }

#endif
