/* qboot/main.c — qpod's firmware: from fw_cfg to the kernel's entry.
 * reset.S got here in 32-bit protected mode on a stack in low memory.
 * Then the MP table (mptable.c).  A vmlinux (FW_CFG_KERNEL_ENTRY set) boots by PVH (pvh.c), a bzImage by
 * Linux's 32-bit boot protocol (linux.c); anything else, or an answer of
 * fw_cfg that does not add up, stops the VM with an error line on the
 * marker port (marker.c). */
#include "boot.h"
#include "lib.h"

/* the test hook's file (fw_cfg.h): which answer to take as corrupt */
static enum fw_cfg_corrupt read_test_hook(const struct fw_cfg *c, struct fw_cfg_file f)
{
	char what[16] = { 0 };

	if (!f.size)
		return CORRUPT_NONE;
	fw_cfg_read(c, f.key, what, f.size < sizeof(what) - 1 ? f.size : sizeof(what) - 1);
	if (!memcmp(what, "e820", 5))
		return CORRUPT_E820;
	if (!memcmp(what, "cmdline", 8))
		return CORRUPT_CMDLINE;
	if (!memcmp(what, "kernel", 7))
		return CORRUPT_KERNEL;
	fw_fail("fw_cfg: %s names no answer to corrupt: \"%s\"", FW_CFG_TEST_CORRUPT_FILE, what);
}

void fw_main(void);
void fw_main(void)
{
	static const char *const names[] = { E820_FILE, FW_CFG_TEST_CORRUPT_FILE };
	struct fw_cfg_file files[2];
	struct boot b;

	fw_cfg_init(&b.cfg);
	fw_cfg_find_files(&b.cfg, names, files, 2);
	b.cfg.corrupt = read_test_hook(&b.cfg, files[1]);
	boot_read_e820(&b, files[0]);
	mptable_build(&b);
	uint32_t entry = fw_cfg_u32(&b.cfg, FW_CFG_KERNEL_ENTRY);
	if (entry)
		boot_pvh(&b, entry);
	boot_bzimage(&b);
}
