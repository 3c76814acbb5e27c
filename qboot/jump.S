/* qboot/jump.S — the jumps into the kernel, each right after the jump
 * marker (so the host's timestamp of MARK_JUMP is the firmware's end), and
 * the stop after a fatal error.
 *   jump_pvh(entry, start_info):      EBX = start_info (the PVH ABI; TR
 *                                     is left as reset made it: Linux's
 *                                     PVH entry does not use it)
 *   jump_linux32(entry, boot_params): ESI = boot_params, EBX = EDI = EBP = 0
 *                                     (Linux's 32-bit boot protocol)
 *   stop_vm():  a triple fault: QEMU runs with -no-reboot, so the VM ends
 *               and the host reads the error line the firmware wrote. */
#include "layout.h"

	.code32
	.text
	.globl jump_pvh, jump_linux32, stop_vm
jump_pvh:
	mov 4(%esp), %ecx
	mov 8(%esp), %ebx
	jmp 1f
jump_linux32:
	mov 4(%esp), %ecx
	mov 8(%esp), %esi
	xor %ebx, %ebx
1:	xor %edi, %edi
	xor %ebp, %ebp
	mov $MARK_PORT, %dx
	mov $MARK_JUMP, %al
	out %al, %dx
	jmp *%ecx

stop_vm:
	cli
	lidt empty_idt
	int3                   /* no IDT: #GP, #DF, triple fault */
1:	hlt
	jmp 1b

	.section .rodata
	.balign 8
empty_idt:
	.word 0
	.long 0

	.section .note.GNU-stack, "", @progbits
