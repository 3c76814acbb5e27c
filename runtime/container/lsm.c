/* runtime/container/lsm.c — AppArmor and SELinux for a container's process
 * (see lsm.h): is the module enabled, set the exec label, mount contexts. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "container/lsm.h"
#include "util/cleanup.h"

#define LSM_LABEL_MAX 4096

static bool apparmor_enabled(const char *root)
{
	char path[512], buf[4] = "";
	_cleanup_close_ int fd = -1;

	snprintf(path, sizeof(path), "%s/sys/module/apparmor/parameters/enabled", root);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd >= 0 && read(fd, buf, 1) == 1 && buf[0] == 'Y';
}

static bool selinux_enabled(const char *root)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/sys/fs/selinux/enforce", root);
	return access(path, F_OK) == 0;
}

/* a label goes into a /proc file or a mount option: printable, bounded */
static int check_label(const char *what, const char *label, qp_error **err)
{
	char shown[QP_SHOWN_MAX];

	if (strlen(label) >= LSM_LABEL_MAX)
		return qp_error_set(err, QP_E_INVALID, 0, "%s: longer than %d bytes", what, LSM_LABEL_MAX - 1);
	for (const char *p = label; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f || *p == '"')
			return qp_error_set(err, QP_E_INVALID, 0,
					    "%s \"%s\": control characters and '\"' are not allowed",
					    what, qp_shown(label, shown));
	return 0;
}

static int need(const char *what, const char *label, bool enabled, const char *lsm, const char *how,
		qp_error **err)
{
	char shown[QP_SHOWN_MAX];

	if (!label || !label[0]) /* "" is "none", as runc reads it */
		return 0;
	if (check_label(what, label, err) < 0)
		return -1;
	if (!enabled)
		return qp_error_set(err, QP_E_INVALID, 0, "%s \"%s\": %s is not enabled on this host (%s)",
				    what, qp_shown(label, shown), lsm, how);
	return 0;
}

int qp_lsm_check_at(const char *root, const struct pod_spec *spec, qp_error **err)
{
	bool se = selinux_enabled(root);

	return need("process.apparmorProfile", spec->process.apparmor_profile, apparmor_enabled(root),
		    "AppArmor", "/sys/module/apparmor/parameters/enabled is not Y", err) < 0 ||
			       need("process.selinuxLabel", spec->process.selinux_label, se, "SELinux",
				    "no selinuxfs at /sys/fs/selinux", err) < 0 ||
			       need("linux.mountLabel", spec->mount_label, se, "SELinux",
				    "no selinuxfs at /sys/fs/selinux", err) < 0
		       ? -1
		       : 0;
}

int qp_lsm_check(const struct pod_spec *spec, qp_error **err)
{
	return qp_lsm_check_at("", spec, err);
}

/* write TEXT to the first of FILES (below root/proc/self/attr) that exists */
static int write_attr(const char *root, const char *const *files, const char *text, qp_error **err)
{
	char path[512];

	for (size_t i = 0; files[i]; i++) {
		snprintf(path, sizeof(path), "%s/proc/self/attr/%s", root, files[i]);
		_cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0 && errno == ENOENT && files[i + 1])
			continue;
		if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
			return qp_fail(err, errno, "write \"%s\" to /proc/self/attr/%s", text, files[i]);
		return 0;
	}
	return 0;
}

int qp_lsm_apply_at(const char *root, const struct qp_process *p, qp_error **err)
{
	static const char *const apparmor[] = { "apparmor/exec", "exec", NULL };
	static const char *const selinux[] = { "exec", NULL };
	char buf[LSM_LABEL_MAX + 8];

	if (p->apparmor_profile && p->apparmor_profile[0]) {
		snprintf(buf, sizeof(buf), "exec %s", p->apparmor_profile);
		if (write_attr(root, apparmor, buf, err) < 0)
			return qp_error_prefix(err, "set the AppArmor profile");
	}
	if (p->selinux_label && p->selinux_label[0] && write_attr(root, selinux, p->selinux_label, err) < 0)
		return qp_error_prefix(err, "set the SELinux label");
	return 0;
}

int qp_lsm_apply(const struct qp_process *p, qp_error **err)
{
	return qp_lsm_apply_at("", p, err);
}

int qp_lsm_mount_data(const char *label, char *data, size_t len, qp_error **err)
{
	size_t used = strlen(data);
	int n;

	if (!label || !label[0])
		return 0;
	n = snprintf(data + used, len - used, "%scontext=\"%s\"", used ? "," : "", label);
	if (n < 0 || (size_t)n >= len - used)
		return qp_error_set(err, QP_E_INVALID, 0, "mount options too long with linux.mountLabel");
	return 0;
}
