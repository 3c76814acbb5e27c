/* qboot/linux.c — booting a bzImage by Linux's 32-bit boot protocol
 * (Documentation/arch/x86/boot.rst): QEMU serves the setup sectors (their
 * header already filled in by QEMU: loader type, command line pointer,
 * initrd) and the protected-mode kernel; the firmware copies the header
 * into a zeroed boot_params, adds the e820 map, loads the kernel, the
 * command line and the initrd, and enters code32_start with ESI =
 * boot_params.  The real-mode setup code is not run: it would want BIOS
 * services this firmware does not have. */
#include "boot.h"
#include "layout.h"
#include "lib.h"

/* offsets in boot_params (the zero page); the setup header is at the same
 * offsets in the image's first sectors */
#define BP_E820_ENTRIES 0x1e8   /* u8 */
#define BP_SETUP_HEADER 0x1f1   /* the setup header's start */
#define BP_HDR_JUMP_LEN 0x201   /* u8: the header ends at 0x202 + this */
#define BP_HDR_JUMP_END 0x202
#define BP_HDR_MAGIC 0x202      /* u32 "HdrS" */
#define BP_HDR_VERSION 0x206    /* u16 */
#define BP_HDR_LOADFLAGS 0x211  /* u8 */
#define BP_HDR_CODE32_START 0x214
#define BP_HDR_RAMDISK_IMAGE 0x218
#define BP_HDR_RAMDISK_SIZE 0x21c
#define BP_HDR_CMD_LINE_PTR 0x228
#define BP_HDR_CMDLINE_SIZE 0x238 /* the longest command line, from 2.06 */
#define BP_E820_TABLE 0x2d0

#define HDR_MAGIC_HDRS 0x53726448
#define BOOT_PROTOCOL_MIN 0x0206
#define LOADFLAGS_LOADED_HIGH 0x01

#define SETUP_READ 0x400        /* enough setup sectors for the whole header */
_Static_assert(BP_E820_TABLE + E820_MAX_ENTRIES * sizeof(struct e820_entry) <= BOOT_PARAMS_SIZE,
	       "the e820 table overflows the zero page");

static uint32_t get32(const uint8_t *p, uint32_t off)
{
	uint32_t v;
	memcpy(&v, p + off, sizeof(v));
	return v;
}

static void put32(uint8_t *p, uint32_t off, uint32_t v) { memcpy(p + off, &v, sizeof(v)); }

void boot_bzimage(struct boot *b)
{
	uint8_t setup[SETUP_READ];
	uint8_t *bp = (uint8_t *)BOOT_PARAMS_ADDR;
	uint32_t setup_size = fw_cfg_u32(&b->cfg, FW_CFG_SETUP_SIZE);
	uint32_t kaddr = fw_cfg_u32(&b->cfg, FW_CFG_KERNEL_ADDR), ksize = fw_cfg_u32(&b->cfg, FW_CFG_KERNEL_SIZE);

	if (setup_size < SETUP_READ)
		fw_fail("fw_cfg: no kernel: setup data of %u bytes and no PVH entry", setup_size);
	fw_cfg_read(&b->cfg, FW_CFG_SETUP_DATA, setup, sizeof(setup));
	if (get32(setup, BP_HDR_MAGIC) != HDR_MAGIC_HDRS)
		fw_fail("fw_cfg: the kernel is neither a bzImage (no HdrS) nor a vmlinux with a PVH entry");
	uint16_t version = (uint16_t)(setup[BP_HDR_VERSION] | setup[BP_HDR_VERSION + 1] << 8);
	if (version < BOOT_PROTOCOL_MIN || !(setup[BP_HDR_LOADFLAGS] & LOADFLAGS_LOADED_HIGH))
		fw_fail("bzImage: boot protocol %x, loaded low: need %x or later, loaded high", version,
			(uint32_t)BOOT_PROTOCOL_MIN);
	uint32_t hdr_end = BP_HDR_JUMP_END + setup[BP_HDR_JUMP_LEN];
	if (hdr_end > SETUP_READ)
		fw_fail("bzImage: a setup header of %u bytes", hdr_end - BP_SETUP_HEADER);
	if (b->cfg.corrupt == CORRUPT_KERNEL)
		kaddr = ~0u;
	boot_check_ram(b, "kernel", kaddr, ksize);
	if (get32(setup, BP_HDR_CODE32_START) != kaddr)
		fw_fail("bzImage: code32_start %x is not where QEMU has the kernel (%x)",
			get32(setup, BP_HDR_CODE32_START), kaddr);

	memset(bp, 0, BOOT_PARAMS_SIZE);
	memcpy(bp + BP_SETUP_HEADER, setup + BP_SETUP_HEADER, hdr_end - BP_SETUP_HEADER);
	fw_cfg_read(&b->cfg, FW_CFG_KERNEL_DATA, (void *)kaddr, ksize);

	uint32_t cmdline_max = get32(bp, BP_HDR_CMDLINE_SIZE);
	boot_load_cmdline(b, fw_cfg_u32(&b->cfg, FW_CFG_CMDLINE_ADDR));
	if (b->cmdline_size > cmdline_max + 1)
		fw_fail("bzImage: a command line of %u bytes, the kernel takes %u", b->cmdline_size, cmdline_max);
	put32(bp, BP_HDR_CMD_LINE_PTR, b->cmdline_addr);
	boot_load_initrd(b);
	put32(bp, BP_HDR_RAMDISK_IMAGE, b->initrd_addr);
	put32(bp, BP_HDR_RAMDISK_SIZE, b->initrd_size);
	memcpy(bp + BP_E820_TABLE, b->e820, b->e820_n * sizeof(struct e820_entry));
	bp[BP_E820_ENTRIES] = (uint8_t)b->e820_n;
	jump_linux32(kaddr, (uint32_t)bp);
}
