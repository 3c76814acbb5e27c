/* qboot/fw_cfg.c — reading QEMU's fw_cfg: by DMA where the device offers
 * it (one transfer per read, the device writes the status back), else
 * through the data port. */
#include "fw_cfg.h"
#include "io.h"
#include "lib.h"

/* FWCfgDmaAccess: all big-endian */
struct fw_cfg_dma_access {
	uint32_t control;
	uint32_t length;
	uint64_t address;
} __attribute__((packed));

/* FWCfgFile, an entry of the file directory */
struct fw_cfg_dir_entry {
	uint32_t size;
	uint16_t select;
	uint16_t reserved;
	char name[FW_CFG_FILE_NAME_MAX];
} __attribute__((packed));

static void dma_transfer(uint32_t control, void *buf, uint32_t len)
{
	volatile struct fw_cfg_dma_access a __attribute__((aligned(16))) = {
		.control = be32(control),
		.length = be32(len),
		.address = be64((uint32_t)buf),
	};
	uint32_t status;

	outl(FW_CFG_PORT_DMA_HI, 0);
	outl(FW_CFG_PORT_DMA_LO, be32((uint32_t)&a));
	/* QEMU completes the transfer within the port write; the loop is for
	 * a device that would not */
	while ((status = be32(a.control)) & ~FW_CFG_DMA_CTL_ERROR)
		;
	if (status & FW_CFG_DMA_CTL_ERROR)
		fw_fail("fw_cfg: DMA transfer of %u bytes to %x failed", len, (uint32_t)buf);
}

void fw_cfg_read(const struct fw_cfg *c, uint16_t key, void *buf, uint32_t len)
{
	if (c->dma) {
		dma_transfer((uint32_t)key << FW_CFG_DMA_SELECTOR_SHIFT | FW_CFG_DMA_CTL_SELECT | FW_CFG_DMA_CTL_READ,
			     buf, len);
		return;
	}
	outw(FW_CFG_PORT_SEL, key);
	insb(FW_CFG_PORT_DATA, buf, len);
}

void fw_cfg_read_on(const struct fw_cfg *c, void *buf, uint32_t len)
{
	if (c->dma)
		dma_transfer(FW_CFG_DMA_CTL_READ, buf, len);
	else
		insb(FW_CFG_PORT_DATA, buf, len);
}

uint32_t fw_cfg_u32(const struct fw_cfg *c, uint16_t key)
{
	uint32_t v = 0;
	fw_cfg_read(c, key, &v, sizeof(v));
	return v;
}

void fw_cfg_init(struct fw_cfg *c)
{
	uint32_t sig = 0, id = 0;

	c->dma = false;
	c->corrupt = CORRUPT_NONE;
	fw_cfg_read(c, FW_CFG_SIGNATURE, &sig, sizeof(sig));
	if (sig != FW_CFG_SIGNATURE_QEMU)
		fw_fail("fw_cfg: no QEMU signature (read %x): not a QEMU machine with fw_cfg", sig);
	fw_cfg_read(c, FW_CFG_ID, &id, sizeof(id));
	c->dma = (id & FW_CFG_ID_DMA) != 0;
}

void fw_cfg_find_files(const struct fw_cfg *c, const char *const *names, struct fw_cfg_file *out, int n)
{
	struct fw_cfg_dir_entry e;
	uint32_t count = 0;

	for (int i = 0; i < n; i++)
		out[i] = (struct fw_cfg_file){ 0, 0 };
	fw_cfg_read(c, FW_CFG_FILE_DIR, &count, sizeof(count));
	count = be32(count);
	for (uint32_t k = 0; k < count; k++) {
		fw_cfg_read_on(c, &e, sizeof(e));
		size_t len = strnlen(e.name, sizeof(e.name));
		for (int i = 0; i < n; i++)
			if (strnlen(names[i], FW_CFG_FILE_NAME_MAX) == len && !memcmp(names[i], e.name, len))
				out[i] = (struct fw_cfg_file){ be32(e.size), be16(e.select) };
	}
}
