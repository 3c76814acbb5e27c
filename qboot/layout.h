/* qboot/layout.h — where the firmware puts things in guest memory, and the
 * segments it runs in.  Shared by the assembly (reset.S, jump.S) and the C.
 *
 * The firmware runs from its ROM (the top 64 KiB below 4 GiB, where QEMU
 * maps -bios) and keeps every variable on its stack: the linker script
 * refuses writable globals.  Low memory while it runs:
 *   0x01000-0x06000  the firmware's stack (grows down from FW_STACK_TOP)
 *   0x06000-0x07000  PVH: hvm_start_info, its module list and memory map
 *   0x07000-0x08000  Linux boot protocol: boot_params (the "zero page")
 *   0x20000-0x30000  PVH: the kernel command line (a bzImage's goes where
 *                    QEMU says, FW_CFG_CMDLINE_ADDR, 0x20000 too)
 *   0x9fc00-0xa0000  the MP table (reserved in e820)
 * The kernel itself: a vmlinux is in RAM already (QEMU loads the ELF's
 * segments, at 16 MiB for qpod's); a bzImage's protected-mode part goes to
 * FW_CFG_KERNEL_ADDR (1 MiB); the initrd to FW_CFG_INITRD_ADDR (QEMU puts it
 * at the top of RAM below 4 GiB). */
#ifndef QBOOT_LAYOUT_H
#define QBOOT_LAYOUT_H

#define ROM_SIZE 0x10000        /* 64 KiB: QEMU wants a multiple of 64 KiB */
#define ROM_BASE 0xffff0000     /* 4 GiB - ROM_SIZE */
#define RESET_VECTOR 0xfffffff0 /* where an x86 CPU starts, CS base 0xffff0000 */

#define FW_STACK_TOP 0x6000
#define PVH_INFO_ADDR 0x6000
#define PVH_INFO_END 0x7000
#define BOOT_PARAMS_ADDR 0x7000
#define BOOT_PARAMS_SIZE 0x1000
#define PVH_CMDLINE_ADDR 0x20000
#define MPTABLE_ADDR 0x9fc00
#define MPTABLE_SIZE 0x400
#define CMDLINE_MAX 0x10000

/* The GDT's selectors.  Linux's 32-bit boot protocol wants exactly these
 * (__BOOT_CS, __BOOT_DS); the PVH entry takes any flat pair. */
#define BOOT_CS 0x10
#define BOOT_DS 0x18

/* segment descriptor fields (Intel SDM vol. 3, 3.4.5) */
#define SEG_ACCESSED 0x01
#define SEG_RW 0x02             /* code: readable; data: writable */
#define SEG_CODE 0x08
#define SEG_NONSYS 0x10         /* S: code or data, not a system segment */
#define SEG_PRESENT 0x80
#define SEG_FLAG_DB 0x4         /* 32-bit */
#define SEG_FLAG_G 0x8          /* limit in 4 KiB units */

#define CR0_PE 0x1
#define CR0_NW 0x20000000       /* not write-through: set at reset */
#define CR0_CD 0x40000000       /* cache disable: set at reset */

/* the marker port and bytes */
#include "qpod_abi.h"

#endif
