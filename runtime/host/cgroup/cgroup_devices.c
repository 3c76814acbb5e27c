/* runtime/host/cgroup/cgroup_devices.c — the one writer of a pod's device
 * access, for v1 and v2 (called by qp_cg_set_limits on create and update).
 *
 * The target is always "deny all, then linux.resources.devices in order,
 * then the default devices" (devrules.h), as under runc: a pod without rules
 * gets the defaults only, never the host's devices.  v1 writes to the
 * devices controller only the transition from what devices.list shows (so an
 * update that changes nothing writes nothing and never denies for a moment),
 * then checks devices.list against the target.  v2 has no devices files: an
 * eBPF filter is compiled, loaded and attached (devices_bpf.h). */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "host/cgroup/cgroup.h"
#include "host/cgroup/devices_bpf.h"
#include "host/cgroup/devrules.h"
#include "util/cleanup.h"

#define DEVICES_LIST_MAX (256 * 1024)

static int read_state(int fd, struct qp_dev_state *st, qp_error **err)
{
	_cleanup_free_ char *list = malloc(DEVICES_LIST_MAX);

	if (!list)
		return qp_fail(err, ENOMEM, "devices.list");
	if (qp_cg_read(fd, "devices.list", list, DEVICES_LIST_MAX, err) < 0)
		return -1;
	return qp_dev_state_from_list(list, st, err);
}

static int set_v1(int fd, const struct qp_dev_state *target, qp_error **err)
{
	_cleanup_devstate_ struct qp_dev_state cur = { 0 }, after = { 0 };
	_cleanup_free_ struct qp_dev_rule *steps = NULL;
	size_t n = 0;

	if (read_state(fd, &cur, err) < 0 ||
	    qp_dev_state_transition(&cur, target, &steps, &n, err) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		char buf[QP_DEV_RULE_STR];
		if (qp_cg_write(fd, steps[i].allow ? "devices.allow" : "devices.deny",
				qp_dev_rule_str(&steps[i], buf), err) < 0)
			return -1;
	}
	/* as runc: what the kernel holds now must be what was asked for */
	if (read_state(fd, &after, err) < 0)
		return -1;
	if (!qp_dev_state_equal(&after, target))
		return qp_error_set(err, QP_E_GENERIC, 0,
				    "devices.list does not hold the rules written (%zu exceptions, "
				    "%zu expected)",
				    after.n, target->n);
	return 0;
}

static int set_v2(int fd, const struct qp_dev_state *target, qp_error **err)
{
	_cleanup_free_ struct bpf_insn *insns = NULL;
	_cleanup_close_ int prog = -1;
	size_t n = 0;

	if (qp_devbpf_build(target, &insns, &n, err) < 0 ||
	    (prog = qp_devbpf_load(insns, n, err)) < 0)
		return -1;
	/* the attachment holds the program; our fd goes when we return */
	return qp_devbpf_install(fd, prog, err);
}

int qp_cg_set_devices(const struct qp_cg_leaves *l, const struct qp_resources *res, qp_error **err)
{
	_cleanup_devstate_ struct qp_dev_state target = { 0 };
	int r;

	if (res->skip_devices)
		return 0;
	if (qp_dev_state_build(res->dev_rules, res->n_dev_rules, &target, err) < 0)
		return -1;
	if (qp_cg_need(l, QP_CG_DEVICES, "device access control", err) < 0)
		return -1;
	r = l->mode == QP_CGROUP_V2 ? set_v2(l->fd[QP_CG_DEVICES], &target, err)
				    : set_v1(l->fd[QP_CG_DEVICES], &target, err);
	return r < 0 ? qp_error_prefix(err, "devices") : 0;
}
