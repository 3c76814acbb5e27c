/* runtime/bench/ksm.h — turning kernel samepage merging on for a density
 * run and reading what it saved (ksm.c). */
#ifndef QPOD_KSM_H
#define QPOD_KSM_H

#include <stdbool.h>

#include "util/error.h"

struct qp_ksm {
	long run, pages_to_scan; /* the settings before, restored after */
	bool active;
};

/* Save the settings, then run=1 with a faster scan. */
int qp_ksm_on(struct qp_ksm *k, qp_error **err);
void qp_ksm_restore(struct qp_ksm *k);
/* /sys/kernel/mm/ksm/full_scans; -1 if unreadable */
long qp_ksm_full_scans(void);
/* pages_sharing in MB: the memory KSM saves right now */
double qp_ksm_saved_mb(void);

#endif
