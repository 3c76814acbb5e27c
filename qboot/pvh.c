/* qboot/pvh.c — booting an uncompressed vmlinux by its PVH entry (the
 * ELF note XEN_ELFNOTE_PHYS32_ENTRY; QEMU has loaded the ELF's segments
 * and says where the entry is: FW_CFG_KERNEL_ENTRY).  The kernel gets a
 * struct hvm_start_info (Xen's public arch-x86/hvm/start_info.h, version
 * 1: with the memory map) in EBX. */
#include "boot.h"
#include "layout.h"
#include "lib.h"

#define XEN_HVM_START_MAGIC_VALUE 0x336ec578
#define HVM_START_INFO_VERSION 1

struct hvm_start_info {
	uint32_t magic;
	uint32_t version;
	uint32_t flags;
	uint32_t nr_modules;
	uint64_t modlist_paddr;
	uint64_t cmdline_paddr;
	uint64_t rsdp_paddr;
	uint64_t memmap_paddr;
	uint32_t memmap_entries;
	uint32_t reserved;
};

struct hvm_modlist_entry {
	uint64_t paddr;
	uint64_t size;
	uint64_t cmdline_paddr;
	uint64_t reserved;
};

struct hvm_memmap_table_entry {
	uint64_t addr;
	uint64_t size;
	uint32_t type;          /* the e820 types */
	uint32_t reserved;
};

/* start info, then one module (the initrd), then the map, in PVH_INFO */
struct pvh_tables {
	struct hvm_start_info info;
	struct hvm_modlist_entry initrd;
	struct hvm_memmap_table_entry map[E820_MAX_ENTRIES];
};
_Static_assert(sizeof(struct pvh_tables) <= PVH_INFO_END - PVH_INFO_ADDR, "PVH tables overflow their page");

void boot_pvh(struct boot *b, uint32_t entry)
{
	struct pvh_tables *t = (struct pvh_tables *)PVH_INFO_ADDR;

	if (b->cfg.corrupt == CORRUPT_KERNEL)
		entry = ~0u;
	boot_check_ram(b, "PVH entry", entry, 1);
	boot_load_cmdline(b, PVH_CMDLINE_ADDR);
	boot_load_initrd(b);
	memset(t, 0, sizeof(*t));
	t->info.magic = XEN_HVM_START_MAGIC_VALUE;
	t->info.version = HVM_START_INFO_VERSION;
	t->info.cmdline_paddr = b->cmdline_addr;
	if (b->initrd_size) {
		t->initrd.paddr = b->initrd_addr;
		t->initrd.size = b->initrd_size;
		t->info.nr_modules = 1;
		t->info.modlist_paddr = (uint32_t)&t->initrd;
	}
	for (uint32_t i = 0; i < b->e820_n; i++)
		t->map[i] = (struct hvm_memmap_table_entry){ b->e820[i].addr, b->e820[i].size, b->e820[i].type, 0 };
	t->info.memmap_paddr = (uint32_t)t->map;
	t->info.memmap_entries = b->e820_n;
	jump_pvh(entry, (uint32_t)&t->info);
}
