/* runtime/bench/ksm.c — kernel samepage merging for `qpod density --ksm`:
 * QEMU marks guest RAM mergeable (its mem-merge default), so turning
 * /sys/kernel/mm/ksm on lets the host share identical pages across VMs
 * (the guest kernel image every VM loads, zeroed pages, page tables of
 * idle guests).  The previous settings are restored afterwards. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/ksm.h"

#define KSM "/sys/kernel/mm/ksm/"
#define SCAN_PAGES 5000 /* per wake-up, while the run lasts (default 100) */

static long read_num(const char *name)
{
	char path[128], buf[32];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), KSM "%s", name);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return strtol(buf, NULL, 10);
}

static int write_num(const char *name, long v, qp_error **err)
{
	char path[128], buf[32];
	int fd, n = snprintf(buf, sizeof(buf), "%ld", v);

	snprintf(path, sizeof(path), KSM "%s", name);
	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) < 0 || write(fd, buf, (size_t)n) != n) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		return qp_fail(err, e, "write %s", path);
	}
	close(fd);
	return 0;
}

int qp_ksm_on(struct qp_ksm *k, qp_error **err)
{
	k->run = read_num("run");
	k->pages_to_scan = read_num("pages_to_scan");
	if (k->run < 0 || k->pages_to_scan < 0)
		return qp_error_set(err, QP_E_NOTFOUND, 0, "KSM: " KSM " is missing (CONFIG_KSM)");
	if (write_num("pages_to_scan", SCAN_PAGES, err) < 0 || write_num("run", 1, err) < 0) {
		qp_ksm_restore(k);
		return -1;
	}
	k->active = true;
	return 0;
}

long qp_ksm_full_scans(void)
{
	return read_num("full_scans");
}

double qp_ksm_saved_mb(void)
{
	long sharing = read_num("pages_sharing");
	return sharing > 0 ? (double)sharing * (double)sysconf(_SC_PAGESIZE) / (1024.0 * 1024.0) : 0;
}

void qp_ksm_restore(struct qp_ksm *k)
{
	if (k->pages_to_scan >= 0)
		write_num("pages_to_scan", k->pages_to_scan, NULL);
	if (k->run >= 0)
		write_num("run", k->run, NULL);
	k->active = false;
}
