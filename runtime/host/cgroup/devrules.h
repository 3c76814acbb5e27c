/* runtime/host/cgroup/devrules.h — a pod's device access rules as the kernel's
 * v1 devices cgroup would hold them (runc's devices emulator is the model).
 *
 * The rules of linux.resources.devices are applied in order to a state that
 * starts as "deny all" (as runc's), then the runtime's own default devices
 * (runc's AllowedDevices: mknod of any node; /dev/null, zero, full, random,
 * urandom, tty, ptmx, pts/N, net/tun) are allowed on top.  The result is a
 * default (allow or deny) plus exceptions, one per (type, major, minor) with
 * merged access, in the order the rules first named them (the spec's, then
 * the defaults: a v1 devices.list lists them as written).  Both writers start from it: v1 writes the
 * transition from the cgroup's devices.list (cgroup_devices.c), v2 compiles
 * it into an eBPF program (devices_bpf.c), so both enforce the same thing.
 *
 * Like runc, a deny that would punch a hole into a wildcard exception
 * ("c *:* m" allowed, then "c 1:3 m" denied) is refused instead of silently
 * ignored, as cgroup v1 would.
 */
#ifndef QPOD_DEVRULES_H
#define QPOD_DEVRULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spec/spec.h"
#include "util/error.h"

struct qp_dev_exc {
	char type;            /* 'c' or 'b' */
	int64_t major, minor; /* QP_DEV_ANY = '*' */
	unsigned access;      /* QP_DEV_* bits, never 0 */
};

struct qp_dev_state {
	bool default_allow;   /* false: only the exceptions are allowed */
	struct qp_dev_exc *exc;
	size_t n, cap;
};

/* runc's AllowedDevices, in its order */
extern const struct qp_dev_rule qp_dev_defaults[];
extern const size_t qp_dev_n_defaults;

/* Apply one rule (runc's emulator.Apply). */
int qp_dev_state_apply(struct qp_dev_state *st, const struct qp_dev_rule *r, qp_error **err);
/* The pod's state: deny all, RULES in order, then the defaults, in that order.
 * Errors name the rule: "linux.resources.devices[2]: ...". */
int qp_dev_state_build(const struct qp_dev_rule *rules, size_t n, struct qp_dev_state *st,
		       qp_error **err);
/* The state a v1 devices.list describes ("a *:* rwm" = allow all). */
int qp_dev_state_from_list(const char *list, struct qp_dev_state *st, qp_error **err);
/* The fewest rules that take a v1 cgroup from FROM to TO (runc's
 * Transition): a disruptive "a" rule only when the default changes or FROM
 * allows all; *out malloc'd (NULL when *n == 0). */
int qp_dev_state_transition(const struct qp_dev_state *from, const struct qp_dev_state *to,
			    struct qp_dev_rule **out, size_t *n, qp_error **err);
bool qp_dev_state_equal(const struct qp_dev_state *a, const struct qp_dev_state *b);
void qp_dev_state_free(struct qp_dev_state *st);
#define _cleanup_devstate_ __attribute__((cleanup(qp_dev_state_free)))

/* "c 1:3 rwm", "b 7:* r", "a *:* rwm" (the devices.allow/deny syntax) */
#define QP_DEV_RULE_STR 64
const char *qp_dev_rule_str(const struct qp_dev_rule *r, char buf[QP_DEV_RULE_STR]);

#endif
