/* runtime/util/timeline.h — start timelines and other timing records:
 * named phases in ms (on util/clock.h's clock), written as one JSON object
 * {"name": ms, ...} by the one writer below.  The pod's timeline.json (both
 * drivers), `qpod run --timeline` and the replace timings all come from it,
 * so `qpod bench` reads one format. */
#ifndef QPOD_UTIL_TIMELINE_H
#define QPOD_UTIL_TIMELINE_H

#include <stddef.h>

#include "util/clock.h"

/* When this qpod process began handling its command (set by main(); 0 in
 * a process that did not): every start timeline's zero. */
extern long long qp_request_ns;

struct qp_phase {
	const char *name;
	double ms;
};
#define QP_MAX_PHASES 12

/* ms from a to b (both qp_now_ns() values) */
double qp_ms_between(long long a, long long b);

/* {"name": ms, ...} of ph[0..n), 3 decimals, in order: malloc'ed,
 * NUL-terminated text in *out (*len bytes, len may be NULL).  -1 only on
 * allocation failure. */
int qp_timeline_json(const struct qp_phase *ph, size_t n, char **out, size_t *len);

#endif
