/* runtime/report/kinds.h — the kind of a result row and the row its ratio
 * is taken against (kinds.c). */
#ifndef QPOD_REPORT_KINDS_H
#define QPOD_REPORT_KINDS_H

#include <stddef.h>

#include "result/result.h"

/* "container", "sandbox", "vm", or "workload" (rows with a target) */
const char *qp_result_kind(const struct qp_bench_report *r, const struct qp_bench_result *res);
/* The base row for res's ratio: of res's kind, metric and test, with
 * samples; that kind's peer (runc, runsc, qpod-vm-cold) when it is there,
 * else the first such row; NULL if none.  *peers = how many such rows. */
const struct qp_bench_result *qp_result_base(const struct qp_bench_report *r,
					     const struct qp_bench_result *res, size_t *peers);

#endif
