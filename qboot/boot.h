/* qboot/boot.h — what the two kernel entries share: the e820 memory map
 * (QEMU's etc/e820 file), the command line and the initrd, read from
 * fw_cfg and checked against the map. */
#ifndef QBOOT_BOOT_H
#define QBOOT_BOOT_H

#include <stdbool.h>
#include <stdint.h>

#include "fw_cfg.h"
#include "layout.h"

/* an e820 entry as QEMU's etc/e820 and Linux's zero page hold it */
struct e820_entry {
	uint64_t addr;
	uint64_t size;
	uint32_t type;
} __attribute__((packed));
#define E820_TYPE_RAM 1
#define E820_TYPE_RESERVED 2
/* reserved below 1 MiB, as on a PC: the last KiB of base memory (the MP
 * table's place, layout.h), VGA memory and the BIOS area */
#define ISA_HOLE_START MPTABLE_ADDR
#define ISA_HOLE_END 0x100000
#define E820_MAX_ENTRIES 128    /* the zero page's E820_MAX_ENTRIES_ZEROPAGE */
#define E820_FILE "etc/e820"

struct boot {
	struct fw_cfg cfg;
	struct e820_entry e820[E820_MAX_ENTRIES];
	uint32_t e820_n;
	uint32_t cmdline_addr, cmdline_size; /* size with the NUL */
	uint32_t initrd_addr, initrd_size;   /* size 0: none */
};

/* The map from etc/e820, file f of the directory (fatal if missing or
 * malformed). */
void boot_read_e820(struct boot *b, struct fw_cfg_file f);
/* Whether [addr, addr + size) lies in RAM by the map. */
bool boot_in_ram(const struct boot *b, uint64_t addr, uint64_t size);
/* Fatal unless [addr, addr + size) lies in RAM: what names the range. */
void boot_check_ram(const struct boot *b, const char *what, uint64_t addr, uint64_t size);
/* The command line to addr, and the initrd to where QEMU says. */
void boot_load_cmdline(struct boot *b, uint32_t addr);
void boot_load_initrd(struct boot *b);

/* The MP table (mptable.c). */
void mptable_build(struct boot *b);

/* the two kernel formats (pvh.c, linux.c): neither returns */
__attribute__((noreturn)) void boot_pvh(struct boot *b, uint32_t entry);
__attribute__((noreturn)) void boot_bzimage(struct boot *b);

#endif
