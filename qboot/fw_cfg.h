/* qboot/fw_cfg.h — QEMU's firmware configuration device (docs/specs/
 * fw_cfg.rst in QEMU): items selected by a 16-bit key, read byte by byte
 * from the data port or, where QEMU offers it, by DMA.  microvm has it on
 * I/O ports.  Items' numbers are little-endian, the file directory's are
 * big-endian. */
#ifndef QBOOT_FW_CFG_H
#define QBOOT_FW_CFG_H

#include <stdbool.h>
#include <stdint.h>

#include "qpod_abi.h"

#define FW_CFG_PORT_SEL 0x510
#define FW_CFG_PORT_DATA 0x511
#define FW_CFG_PORT_DMA_HI 0x514 /* the DMA address, big-endian: high half */
#define FW_CFG_PORT_DMA_LO 0x518 /* low half: writing it starts the transfer */

/* the fixed items */
#define FW_CFG_SIGNATURE 0x00    /* "QEMU" */
#define FW_CFG_ID 0x01           /* feature bits */
#define FW_CFG_NB_CPUS 0x05      /* u16: the CPUs at boot */
#define FW_CFG_KERNEL_ADDR 0x07
#define FW_CFG_KERNEL_SIZE 0x08
#define FW_CFG_INITRD_ADDR 0x0a
#define FW_CFG_INITRD_SIZE 0x0b
#define FW_CFG_KERNEL_ENTRY 0x10 /* a vmlinux: its PVH entry */
#define FW_CFG_KERNEL_DATA 0x11
#define FW_CFG_INITRD_DATA 0x12
#define FW_CFG_CMDLINE_ADDR 0x13
#define FW_CFG_CMDLINE_SIZE 0x14 /* with its NUL */
#define FW_CFG_CMDLINE_DATA 0x15
#define FW_CFG_SETUP_ADDR 0x16
#define FW_CFG_SETUP_SIZE 0x17
#define FW_CFG_SETUP_DATA 0x18   /* a bzImage's setup sectors (a vmlinux: its first bytes) */
#define FW_CFG_FILE_DIR 0x19

#define FW_CFG_SIGNATURE_QEMU 0x554d4551 /* "QEMU", read as a little-endian u32 */
#define FW_CFG_ID_DMA 0x2

/* FWCfgDmaAccess.control */
#define FW_CFG_DMA_CTL_ERROR 0x01
#define FW_CFG_DMA_CTL_READ 0x02
#define FW_CFG_DMA_CTL_SKIP 0x04
#define FW_CFG_DMA_CTL_SELECT 0x08
#define FW_CFG_DMA_SELECTOR_SHIFT 16

#define FW_CFG_FILE_NAME_MAX 56

/* The firmware's test hook (qpod_abi.h): a file QEMU serves only when
 * qpod's test environment asks (QPOD_TEST_FWCFG_CORRUPT).  Its
 * text names one answer the firmware then takes as corrupt, as if QEMU had
 * sent it so: "e820" (a size that is no whole number of entries),
 * "cmdline" (a size over CMDLINE_MAX), "kernel" (an entry outside RAM).
 * The checks that catch it are the ones every boot runs. */
enum fw_cfg_corrupt { CORRUPT_NONE = 0, CORRUPT_E820, CORRUPT_CMDLINE, CORRUPT_KERNEL };

struct fw_cfg {
	bool dma;
	enum fw_cfg_corrupt corrupt;
};

struct fw_cfg_file {
	uint32_t size;           /* 0: not found */
	uint16_t key;
};

/* Check the signature (fatal without fw_cfg) and learn whether DMA works. */
void fw_cfg_init(struct fw_cfg *c);
/* Read len bytes of item key from its start into buf (physical address). */
void fw_cfg_read(const struct fw_cfg *c, uint16_t key, void *buf, uint32_t len);
/* ... and on from where the last read of the same item stopped. */
void fw_cfg_read_on(const struct fw_cfg *c, void *buf, uint32_t len);
uint32_t fw_cfg_u32(const struct fw_cfg *c, uint16_t key);
/* The files named in names[0..n) from the file directory, into out[]. */
void fw_cfg_find_files(const struct fw_cfg *c, const char *const *names, struct fw_cfg_file *out, int n);

#endif
