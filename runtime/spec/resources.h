/* runtime/spec/resources.h — the one parser of an OCI LinuxResources object
 * (linux.resources of config.json, and the input of `qpod update
 * --resources`), and what update does with the result. */
#ifndef QPOD_SPEC_RESOURCES_H
#define QPOD_SPEC_RESOURCES_H

#include <stdbool.h>
#include <stddef.h>

#include "spec/spec.h"
#include "util/json.h"

/* v (absent/null: nothing) -> the fields of *res it sets.  Errors read
 * "WHAT: PREFIX.FIELD: reason" (PREFIX may be "").
 * A field qpod cannot apply (hugepageLimits, network, rdma, ...) is
 * refused unless it is empty (absent, null, 0, false, "", [], {}
 * throughout: kubelet sends zero hugepage limits), in both modes.
 * strict (update input): an unknown field is refused too;
 * linux.resources.devices are type-checked and left as they were at create
 * (as runc's update does), with a warning.
 * lenient (config.json): unknown fields are ignored, for forward
 * compatibility (a newer spec's additions). */
int spec_resources_parse(yajl_val v, const char *what, const char *prefix, bool strict,
			 struct qp_resources *res, qp_error **err);
/* Strict parse of len bytes of JSON (at most QP_SPEC_MAX_FILE; no NUL). */
int spec_resources_parse_text(const char *text, size_t len, const char *what,
			      struct qp_resources *res, qp_error **err);

/* Every field upd sets replaces dst's (strings copied), except that zero
 * memory.limit/swap, cpu.shares/quota/period mean "unchanged", as in runc's
 * update (a zero pids.limit is "unlimited" and taken).  A memory limit
 * made unlimited (-1) makes a finite memory+swap limit unlimited too, as
 * the kernel requires memsw >= limit.  -1 only on ENOMEM. */
int spec_resources_merge(struct qp_resources *dst, const struct qp_resources *upd);
/* The OCI name ("memory.limit", ...) of the first field in which a and b
 * differ, NULL when they are the same. */
const char *spec_resources_changed(const struct qp_resources *a, const struct qp_resources *b);
/* Does r set anything of linux.resources.blockIO? */
bool spec_resources_has_blkio(const struct qp_resources *r);
/* Free the strings of r (not r itself) and zero it. */
void spec_resources_clear(struct qp_resources *r);

#endif
