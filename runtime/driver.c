/* runtime/driver.c — the registry of pod drivers: which driver a mode has
 * (driver.h).  The only place outside the drivers that maps a mode to code. */
#include "driver.h"

const struct pod_driver *driver_for_mode(enum qp_mode mode, qp_error **err)
{
	switch (mode) {
	case QP_MODE_CONTAINER:
		return &qp_container_driver;
	case QP_MODE_VM:
		return &qp_vm_driver;
	default:
		qp_error_set(err, QP_E_INVALID, 0, "unknown pod mode %d", (int)mode);
		return NULL;
	}
}

const struct pod_driver *driver_for_pod(enum qp_mode mode, const char *in_pod, qp_error **err)
{
	if (in_pod && mode == QP_MODE_VM)
		return &qp_vm_member_driver;
	return driver_for_mode(mode, err);
}

const struct pod_driver *driver_by_name(const char *mode, qp_error **err)
{
	enum qp_mode m;

	if (qp_mode_parse(mode, &m) < 0)
		return qp_error_set(err, QP_E_INVALID, 0, "unknown pod mode \"%s\"", mode), NULL;
	return driver_for_mode(m, err);
}

int driver_default_accel(const char *mode, const char **name, qp_error **err)
{
	const struct pod_driver *d = driver_by_name(mode, err);

	return d ? d->accel(QP_ACCEL_AUTO, name, err) : -1;
}
