/* runtime/host/cgroup/cgroup_blkio.c — linux.resources.blockIO, the one
 * writer for v1 and v2 (called from cgroup_limits.c):
 *   weight, weightDevice  v1 blkio.weight[_device] (CFQ) or, where the
 *                         kernel has only BFQ, blkio.bfq.weight[_device];
 *                         v2 io.bfq.weight (same 10..1000 scale) or
 *                         io.weight (1..10000: runc's conversion)
 *   leafWeight            v1 blkio.leaf_weight[_device] (CFQ only); refused
 *                         where the file does not exist, and on v2
 *   throttle*Device       v1 blkio.throttle.{read,write}_{bps,iops}_device,
 *                         v2 io.max ("MAJ:MIN rbps=N"); rate 0 = no limit
 * A setting the kernel has no file for is refused with what is missing,
 * never skipped; the kernel's own refusals (a device that does not exist,
 * a per-device weight on a device whose scheduler is not BFQ) name the
 * device. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "host/cgroup/cgroup.h"
#include "spec/resources.h"

/* the first of the files that dirfd has, or NULL */
static const char *first_file(int fd, const char *a, const char *b)
{
	if (qp_cg_has_file(fd, a))
		return a;
	return b && qp_cg_has_file(fd, b) ? b : NULL;
}

/* runc's blkio weight (10..1000) -> io.weight (1..10000) */
static uint64_t io_weight(uint64_t w)
{
	return w ? 1 + (w - 10) * 9999 / 990 : 0;
}

static int dev_write(int fd, const char *file, const struct qp_blkio_dev *d, const char *value, const char *what,
		     qp_error **err)
{
	char line[96];

	snprintf(line, sizeof(line), "%" PRId64 ":%" PRId64 " %s", d->major, d->minor, value);
	if (qp_cg_write(fd, file, line, err) == 0)
		return 0;
	int e = err && *err ? (*err)->errnum : 0;
	if (e == ENODEV)
		return qp_error_prefix(err, "linux.resources.blockIO.%s: no block device %" PRId64 ":%" PRId64, what,
				       d->major, d->minor);
	if (e == EOPNOTSUPP || e == EINVAL)
		return qp_error_prefix(err, "linux.resources.blockIO.%s: device %" PRId64 ":%" PRId64
				       " refused it (a per-device weight needs the device's scheduler to be bfq)",
				       what, d->major, d->minor);
	return qp_error_prefix(err, "linux.resources.blockIO.%s", what);
}

static int missing(qp_error **err, const char *what, const char *files)
{
	return qp_error_set(err, QP_E_INVALID, 0,
			    "linux.resources.blockIO.%s cannot be applied: the pod's cgroup has no %s", what, files);
}

static int weights_v1(int fd, const struct qp_resources *r, qp_error **err)
{
	const char *wf = first_file(fd, "blkio.weight", "blkio.bfq.weight");
	const char *wdf = first_file(fd, "blkio.weight_device", "blkio.bfq.weight_device");
	char buf[32];

	if (r->has_blkio_weight && r->blkio_weight) {
		if (!wf)
			return missing(err, "weight", "blkio.weight or blkio.bfq.weight (no CFQ or BFQ group scheduling)");
		snprintf(buf, sizeof(buf), "%" PRIu64, r->blkio_weight);
		if (qp_cg_write(fd, wf, buf, err) < 0)
			return qp_error_prefix(err, "linux.resources.blockIO.weight");
	}
	if (r->has_blkio_leaf_weight && r->blkio_leaf_weight) {
		if (!qp_cg_has_file(fd, "blkio.leaf_weight"))
			return missing(err, "leafWeight", "blkio.leaf_weight (CFQ's; this kernel has none)");
		snprintf(buf, sizeof(buf), "%" PRIu64, r->blkio_leaf_weight);
		if (qp_cg_write(fd, "blkio.leaf_weight", buf, err) < 0)
			return qp_error_prefix(err, "linux.resources.blockIO.leafWeight");
	}
	for (size_t i = 0; i < r->n_blkio_weight_dev; i++) {
		const struct qp_blkio_dev *d = &r->blkio_weight_dev[i];
		if (d->value) {
			if (!wdf)
				return missing(err, "weightDevice", "blkio.weight_device or blkio.bfq.weight_device");
			snprintf(buf, sizeof(buf), "%" PRIu64, d->value);
			if (dev_write(fd, wdf, d, buf, "weightDevice", err) < 0)
				return -1;
		}
		if (d->leaf) {
			if (!qp_cg_has_file(fd, "blkio.leaf_weight_device"))
				return missing(err, "weightDevice.leafWeight", "blkio.leaf_weight_device (CFQ's)");
			snprintf(buf, sizeof(buf), "%" PRIu64, d->leaf);
			if (dev_write(fd, "blkio.leaf_weight_device", d, buf, "weightDevice", err) < 0)
				return -1;
		}
	}
	return 0;
}

static int weights_v2(int fd, const struct qp_resources *r, qp_error **err)
{
	bool bfq = qp_cg_has_file(fd, "io.bfq.weight");
	const char *wf = bfq ? "io.bfq.weight" : qp_cg_has_file(fd, "io.weight") ? "io.weight" : NULL;
	char buf[32];

	if ((r->has_blkio_leaf_weight && r->blkio_leaf_weight))
		return qp_error_set(err, QP_E_INVALID, 0,
				    "linux.resources.blockIO.leafWeight cannot be applied on cgroup v2 (no such setting)");
	for (size_t i = 0; i < r->n_blkio_weight_dev; i++)
		if (r->blkio_weight_dev[i].leaf)
			return qp_error_set(err, QP_E_INVALID, 0, "linux.resources.blockIO.weightDevice[%zu].leafWeight "
					    "cannot be applied on cgroup v2 (no such setting)", i);
	if (((r->has_blkio_weight && r->blkio_weight) || r->n_blkio_weight_dev) && !wf)
		return missing(err, "weight", "io.bfq.weight or io.weight (no BFQ, no io cost controller)");
	if (r->has_blkio_weight && r->blkio_weight) {
		snprintf(buf, sizeof(buf), "%" PRIu64, bfq ? r->blkio_weight : io_weight(r->blkio_weight));
		if (qp_cg_write(fd, wf, buf, err) < 0)
			return qp_error_prefix(err, "linux.resources.blockIO.weight");
	}
	for (size_t i = 0; i < r->n_blkio_weight_dev; i++) {
		const struct qp_blkio_dev *d = &r->blkio_weight_dev[i];
		snprintf(buf, sizeof(buf), "%" PRIu64, bfq ? d->value : io_weight(d->value));
		if (dev_write(fd, wf, d, buf, "weightDevice", err) < 0)
			return -1;
	}
	return 0;
}

static int throttles(int fd, enum qp_cgroup_mode mode, const struct qp_resources *r, qp_error **err)
{
	static const char *const v1_files[QP_BLKIO_THROTTLES] = {
		"blkio.throttle.read_bps_device", "blkio.throttle.write_bps_device",
		"blkio.throttle.read_iops_device", "blkio.throttle.write_iops_device"
	};
	static const char *const v2_keys[QP_BLKIO_THROTTLES] = { "rbps", "wbps", "riops", "wiops" };
	char buf[48];

	for (int t = 0; t < QP_BLKIO_THROTTLES; t++) {
		const char *file = mode == QP_CGROUP_V2 ? "io.max" : v1_files[t];
		if (r->n_blkio_throttle[t] && !qp_cg_has_file(fd, file))
			return missing(err, qp_blkio_throttle_keys[t], mode == QP_CGROUP_V2 ? "io.max" : v1_files[t]);
		for (size_t i = 0; i < r->n_blkio_throttle[t]; i++) {
			const struct qp_blkio_dev *d = &r->blkio_throttle[t][i];
			if (mode == QP_CGROUP_V2) {
				if (d->value)
					snprintf(buf, sizeof(buf), "%s=%" PRIu64, v2_keys[t], d->value);
				else
					snprintf(buf, sizeof(buf), "%s=max", v2_keys[t]);
			} else
				snprintf(buf, sizeof(buf), "%" PRIu64, d->value);
			if (dev_write(fd, file, d, buf, qp_blkio_throttle_keys[t], err) < 0)
				return -1;
		}
	}
	return 0;
}

int qp_cg_set_blkio(const struct qp_cg_leaves *l, const struct qp_resources *r, qp_error **err)
{
	if (!spec_resources_has_blkio(r))
		return 0;
	if (qp_cg_need(l, QP_CG_BLKIO, "linux.resources.blockIO", err) < 0)
		return -1;
	int fd = l->fd[QP_CG_BLKIO];
	if ((l->mode == QP_CGROUP_V2 ? weights_v2(fd, r, err) : weights_v1(fd, r, err)) < 0)
		return -1;
	return throttles(fd, l->mode, r, err);
}
