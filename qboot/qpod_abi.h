/* qboot/qpod_abi.h — what the firmware and qpod's host side agree on
 * (both include this file; only #defines, so the assembly can too).
 *
 * Boundary markers.  The firmware writes single bytes to MARK_PORT, the
 * port of QEMU's isa-debugcon device, which qpod attaches (qemu_cmd.c) with
 * its chardev on a pipe whose read end the monitor polls during the boot
 * (mon_fwmark.c) and timestamps each byte on arrival: the port write is a
 * VM exit and QEMU forwards the byte at once, so the host's clock sees the
 * boundary within the monitor's wake-up.  debugcon rather than
 * isa-debug-exit: it ends nothing, carries text (the error line), and its
 * 0x402 is the port QEMU's firmwares already use for a debug console.
 *   MARK_RESET  the reset vector's first instruction
 *   MARK_JUMP   the last instruction before the kernel's entry
 *   MARK_ERROR  a fatal error: one line of text follows, then the firmware
 *               stops the VM (a triple fault; qpod runs QEMU with
 *               -no-reboot) and the monitor reports the line.
 *
 * The test hook: QPOD_TEST_FWCFG_CORRUPT=WHAT in qpod's environment makes
 * QEMU serve the fw_cfg file FW_CFG_TEST_CORRUPT_FILE with the text WHAT,
 * and the firmware then takes that answer as corrupt (fw_cfg.h). */
#ifndef QBOOT_QPOD_ABI_H
#define QBOOT_QPOD_ABI_H

#define MARK_PORT 0x402
#define MARK_RESET 'R'
#define MARK_JUMP 'J'
#define MARK_ERROR 'E'
#define MARK_ERROR_MAX 160      /* the longest error line the host keeps */

#define FW_CFG_TEST_CORRUPT_FILE "opt/org.qpod/test-corrupt"

#endif
