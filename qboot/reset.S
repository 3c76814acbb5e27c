/* qboot/reset.S — the reset vector and the switch to 32-bit protected mode.
 *
 * The CPU starts in real mode at RESET_VECTOR (CS base 0xffff0000, IP
 * 0xfff0).  The first thing it does is the reset marker on MARK_PORT, so
 * the host's timestamp of that byte is the firmware's first instruction.
 * Then: a flat GDT (BOOT_CS/BOOT_DS, what both kernel entries accept),
 * caches enabled (CR0.CD/NW cleared), CR0.PE, a far jump into 32-bit code, the stack, fw_main(). */
#include "layout.h"

/* a flat 4 GiB descriptor, base 0, limit 0xfffff pages, as two longs */
#define FLAT_DESC(access) \
	.long 0x0000ffff; \
	.long ((access) << 8) | (((SEG_FLAG_G | SEG_FLAG_DB) << 4 | 0xf) << 16)

	.code16
	.section .reset, "ax"
	.globl reset_vector
reset_vector:
	mov $MARK_PORT, %dx
	mov $MARK_RESET, %al
	out %al, %dx
	jmp entry16

	.section .text16, "ax"
entry16:
	cli
	cld
	/* CS's base is still ROM_BASE: the descriptor by its offset in the
	 * ROM (gdt_desc_rom_offset, from fw.ld) */
	lgdtl %cs:gdt_desc_rom_offset
	/* caches on (reset leaves CD and NW set: under KVM the firmware
	 * would run uncached), protected mode */
	mov %cr0, %eax
	and $~(CR0_CD | CR0_NW), %eax
	or $CR0_PE, %eax
	mov %eax, %cr0
	ljmpl $BOOT_CS, $entry32

	.code32
	.text
entry32:
	mov $BOOT_DS, %ax
	mov %ax, %ds
	mov %ax, %es
	mov %ax, %ss
	mov %ax, %fs
	mov %ax, %gs
	mov $FW_STACK_TOP, %esp
	xor %ebp, %ebp
	call fw_main
1:	hlt
	jmp 1b

	.section .rodata
	.balign 8
gdt:
	.quad 0, 0                 /* the null descriptor, and one unused */
	FLAT_DESC(SEG_PRESENT | SEG_NONSYS | SEG_CODE | SEG_RW | SEG_ACCESSED)  /* BOOT_CS */
	FLAT_DESC(SEG_PRESENT | SEG_NONSYS | SEG_RW | SEG_ACCESSED)             /* BOOT_DS */
gdt_end:
	.globl gdt_desc
gdt_desc:
	.word gdt_end - gdt - 1
	.long gdt

	.section .note.GNU-stack, "", @progbits
