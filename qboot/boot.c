/* qboot/boot.c — the memory map, the command line and the initrd, for
 * either kernel format; every size and address fw_cfg answers is checked
 * before anything is written to it. */
#include "boot.h"
#include "layout.h"
#include "lib.h"

static void e820_add(struct boot *b, uint64_t addr, uint64_t size, uint32_t type)
{
	if (!size)
		return;
	if (b->e820_n == E820_MAX_ENTRIES)
		fw_fail("fw_cfg: %s: more than %u entries with the ISA hole", E820_FILE, (uint32_t)E820_MAX_ENTRIES);
	b->e820[b->e820_n++] = (struct e820_entry){ addr, size, type };
}

/* The map as a PC's BIOS gives it: QEMU's microvm map is one RAM range
 * from 0, and Linux ignores an e820 table of fewer than two entries (it
 * would fall back to e801: 640 KiB).  RAM overlapping the ISA hole is
 * split around it and the hole is reserved. */
static void e820_punch_isa_hole(struct boot *b)
{
	struct e820_entry in[E820_MAX_ENTRIES];
	uint32_t n = b->e820_n;
	bool hole = false;

	memcpy(in, b->e820, n * sizeof(in[0]));
	b->e820_n = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t start = in[i].addr, end = in[i].addr + in[i].size;
		if (in[i].type != E820_TYPE_RAM || end <= ISA_HOLE_START || start >= ISA_HOLE_END) {
			e820_add(b, in[i].addr, in[i].size, in[i].type);
			continue;
		}
		hole = true;
		if (start < ISA_HOLE_START)
			e820_add(b, start, ISA_HOLE_START - start, E820_TYPE_RAM);
		if (end > ISA_HOLE_END)
			e820_add(b, ISA_HOLE_END, end - ISA_HOLE_END, E820_TYPE_RAM);
	}
	if (hole)
		e820_add(b, ISA_HOLE_START, ISA_HOLE_END - ISA_HOLE_START, E820_TYPE_RESERVED);
}

void boot_read_e820(struct boot *b, struct fw_cfg_file f)
{
	if (!f.size)
		fw_fail("fw_cfg: no %s: the firmware needs QEMU's memory map", E820_FILE);
	if (b->cfg.corrupt == CORRUPT_E820)
		f.size--;
	if (f.size % sizeof(struct e820_entry))
		fw_fail("fw_cfg: %s has %u bytes, not a whole number of %u-byte entries", E820_FILE, f.size,
			(uint32_t)sizeof(struct e820_entry));
	if (f.size > sizeof(b->e820))
		fw_fail("fw_cfg: %s has %u entries, more than %u", E820_FILE,
			f.size / (uint32_t)sizeof(struct e820_entry), (uint32_t)E820_MAX_ENTRIES);
	b->e820_n = f.size / sizeof(struct e820_entry);
	fw_cfg_read(&b->cfg, f.key, b->e820, f.size);
	e820_punch_isa_hole(b);
	if (!boot_in_ram(b, FW_STACK_TOP - 1, 1) || !boot_in_ram(b, PVH_CMDLINE_ADDR, CMDLINE_MAX))
		fw_fail("fw_cfg: %s has no RAM below 1 MiB for the firmware's tables", E820_FILE);
}

bool boot_in_ram(const struct boot *b, uint64_t addr, uint64_t size)
{
	for (uint32_t i = 0; i < b->e820_n; i++) {
		const struct e820_entry *e = &b->e820[i];
		if (e->type == E820_TYPE_RAM && addr >= e->addr && addr + size <= e->addr + e->size &&
		    addr + size >= addr)
			return true;
	}
	return false;
}

void boot_check_ram(const struct boot *b, const char *what, uint64_t addr, uint64_t size)
{
	if (!boot_in_ram(b, addr, size))
		fw_fail("fw_cfg: the %s (%u bytes at %x) is not in RAM", what, (uint32_t)size, (uint32_t)addr);
}

void boot_load_cmdline(struct boot *b, uint32_t addr)
{
	uint32_t size = fw_cfg_u32(&b->cfg, FW_CFG_CMDLINE_SIZE);

	if (b->cfg.corrupt == CORRUPT_CMDLINE)
		size = ~0u;
	if (size > CMDLINE_MAX)
		fw_fail("fw_cfg: a command line of %u bytes, more than %u", size, (uint32_t)CMDLINE_MAX);
	boot_check_ram(b, "command line", addr, size ? size : 1);
	b->cmdline_addr = addr;
	b->cmdline_size = size;
	if (size)
		fw_cfg_read(&b->cfg, FW_CFG_CMDLINE_DATA, (void *)addr, size);
	/* whatever QEMU sent, the kernel gets a terminated string */
	((char *)addr)[size ? size - 1 : 0] = '\0';
}

void boot_load_initrd(struct boot *b)
{
	b->initrd_size = fw_cfg_u32(&b->cfg, FW_CFG_INITRD_SIZE);
	b->initrd_addr = fw_cfg_u32(&b->cfg, FW_CFG_INITRD_ADDR);
	if (!b->initrd_size)
		return;
	boot_check_ram(b, "initrd", b->initrd_addr, b->initrd_size);
	fw_cfg_read(&b->cfg, FW_CFG_INITRD_DATA, (void *)b->initrd_addr, b->initrd_size);
}
