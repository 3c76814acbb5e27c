/* runtime/vm/qemu/guest_cmdline.c — the guest kernel's command line: the
 * shipped kernel-config/cmdline.txt, plus what the accelerator needs.
 *
 * Under TCG the guest kernel's own boot-time measurements and patching are
 * emulated instruction by instruction, so three parameters are added there
 * and only there (under KVM the kernel's defaults cost next to nothing):
 *   tsc_early_khz=  the host's TSC rate (tsc.c says why)
 *   noreplace-smp   keep the LOCK prefixes of a one-vCPU guest: the kernel
 *                   otherwise rewrites each of its ~6,000 lock sites with
 *                   text_poke (a page-table switch and a TLB flush each),
 *                   which TCG turned into ~90 ms of a ~500 ms boot
 *                   (docs/BENCHMARKS.md, "the lean guest")
 *   nolapic_timer   one vCPU outside a template's boot (below) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/cleanup.h"
#include "util/paths.h"
#include "vm/qemu/qemu.h"
#include "vm/vm.h"

/* kernel-config/cmdline.txt, joined; used when that file is not found */
#define CMDLINE_DEFAULT                                                                            \
	"console=ttyS0 quiet reboot=t panic=-1 no_timer_check tsc=reliable 8250.nr_uarts=1 "      \
	"virtio_console.rx_bufs=64"

/* see qemu.h; the file is kernel-config/ beside the build, or installed
 * beside the kernel (util/paths.h) */
void vm_read_cmdline(char *out, size_t size)
{
	const char *env = getenv("QPOD_KERNEL_CMDLINE");
	_cleanup_free_ char *p = env && *env ? strdup(env)
					     : qp_find_shipped("../kernel-config/cmdline.txt", "cmdline.txt", NULL);
	_cleanup_fclose_ FILE *f = p ? fopen(p, "re") : NULL;
	char line[256];
	size_t len = 0;

	snprintf(out, size, "%s", CMDLINE_DEFAULT);
	if (!f)
		return;
	out[0] = '\0';
	while (fgets(line, sizeof(line), f)) {
		size_t n = strcspn(line, "\r\n");
		line[n] = '\0';
		if (!n || line[0] == '#')
			continue;
		for (size_t i = 0; i < n; i++)
			if ((unsigned char)line[i] < 0x20 || line[i] == 0x7f)
				line[i] = ' ';
		if (len + n + 2 > size)
			break;
		len += (size_t)snprintf(out + len, size - len, "%s%s", len ? " " : "", line);
	}
	if (!len)
		snprintf(out, size, "%s", CMDLINE_DEFAULT);
}

void vm_guest_cmdline(char *out, size_t size, bool kvm, int vcpus, bool template_boot)
{
	char khz[40] = "";
	size_t len;

	vm_read_cmdline(out, size);
	if (kvm)
		return; /* kvm-clock; the kernel's patching runs natively */
	long rate = vm_host_tsc_khz();
	if (rate > 0)
		snprintf(khz, sizeof(khz), " tsc_early_khz=%ld", rate);
	/* one vCPU: the LAPIC timer's calibration (10 ticks of the PIT: 100 ms)
	 * costs a cold boot more than it gives, and the PIT does (one-shot,
	 * 55 ms at most).  A template pays it once for all its clones, whose
	 * idle then wakes seconds apart instead of 18+ times a second. */
	len = strlen(out);
	if (len < size)
		snprintf(out + len, size - len, "%s noreplace-smp%s", khz,
			 vcpus == 1 && !template_boot ? " nolapic_timer" : "");
}
