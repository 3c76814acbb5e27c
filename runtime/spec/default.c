/* runtime/spec/default.c — the default OCI spec (`qpod spec`, and the base
 * of `qpod run ROOTFS -- CMD`): what `runc spec` prints, with a
 * non-interactive `sh`, Docker's default capability set and qpod's default
 * seccomp profile (seccomp_profile.c). */
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "spec/spec.h"
#include "util/cleanup.h"
#include "util/strv.h"

static const char *const default_env[] = {
	"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
	"TERM=xterm",
};

/* Docker's default set: enough for ordinary services, nothing that touches
 * the host (no SYS_ADMIN, NET_ADMIN, SYS_MODULE, ...). */
static const char *const default_caps[] = {
	"CAP_CHOWN",   "CAP_DAC_OVERRIDE", "CAP_FSETID",           "CAP_FOWNER",      "CAP_MKNOD",
	"CAP_NET_RAW", "CAP_SETGID",       "CAP_SETUID",           "CAP_SETFCAP",     "CAP_SETPCAP",
	"CAP_NET_BIND_SERVICE", "CAP_SYS_CHROOT", "CAP_KILL",      "CAP_AUDIT_WRITE",
};

static const struct {
	const char *destination, *type, *source;
	const char *options[6];
} default_mounts[] = {
	{ "/proc", "proc", "proc", { NULL } },
	{ "/dev", "tmpfs", "tmpfs", { "nosuid", "strictatime", "mode=755", "size=65536k" } },
	{ "/dev/pts", "devpts", "devpts",
	  { "nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620" } },
	{ "/dev/shm", "tmpfs", "shm", { "nosuid", "noexec", "nodev", "mode=1777", "size=65536k" } },
	{ "/dev/mqueue", "mqueue", "mqueue", { "nosuid", "noexec", "nodev" } },
	{ "/sys", "sysfs", "sysfs", { "nosuid", "noexec", "nodev", "ro" } },
	{ "/sys/fs/cgroup", "cgroup", "cgroup", { "nosuid", "noexec", "nodev", "relatime", "ro" } },
};

static const enum qp_ns default_ns[] = {
	QP_NS_PID, QP_NS_NET, QP_NS_IPC, QP_NS_UTS, QP_NS_MOUNT, QP_NS_CGROUP,
};

/* Kernel interfaces that leak host information or allow host changes. */
static const char *const masked_paths[] = {
	"/proc/acpi",       "/proc/asound",     "/proc/kcore",      "/proc/keys",
	"/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug",
	"/sys/firmware",    "/proc/scsi",       "/sys/devices/virtual/powercap",
};

static const char *const readonly_paths[] = {
	"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger",
};

static char **strv_of(const char *const *v, size_t n)
{
	char **out = calloc(n + 1, sizeof(*out));
	for (size_t i = 0; out && i < n && v[i]; i++)
		if (!(out[i] = strdup(v[i]))) {
			qp_strv_free(out);
			return NULL;
		}
	return out;
}

#define STRV(a) strv_of((a), QP_ARRAY_SIZE(a))

static int default_process(struct qp_process *p)
{
	static const char *const args[] = { "sh" };
	struct qp_caps *c = &p->caps;

	p->terminal = false;
	p->no_new_privileges = true;
	p->args = STRV(args);
	p->env = STRV(default_env);
	p->cwd = strdup("/");
	c->present = true;
	c->bounding = STRV(default_caps);
	c->effective = STRV(default_caps);
	c->permitted = STRV(default_caps);
	c->inheritable = strv_of(NULL, 0);
	c->ambient = strv_of(NULL, 0);
	p->rlimits = calloc(1, sizeof(*p->rlimits));
	if (!p->args || !p->env || !p->cwd || !c->bounding || !c->effective || !c->permitted ||
	    !c->inheritable || !c->ambient || !p->rlimits)
		return -1;
	p->n_rlimits = 1;
	p->rlimits[0].resource = RLIMIT_NOFILE;
	p->rlimits[0].soft = p->rlimits[0].hard = 1024;
	return (p->rlimits[0].type = strdup("RLIMIT_NOFILE")) ? 0 : -1;
}

static int default_mounts_fill(struct pod_spec *s)
{
	size_t n = QP_ARRAY_SIZE(default_mounts);

	if (!(s->mounts = calloc(n, sizeof(*s->mounts))))
		return -1;
	s->n_mounts = n;
	for (size_t i = 0; i < n; i++) {
		struct qp_mount *m = &s->mounts[i];

		m->destination = strdup(default_mounts[i].destination);
		m->type = strdup(default_mounts[i].type);
		m->source = strdup(default_mounts[i].source);
		m->options = strv_of(default_mounts[i].options, QP_ARRAY_SIZE(default_mounts[i].options));
		if (!m->destination || !m->type || !m->source || !m->options)
			return -1;
		m->n_options = qp_strv_len(m->options);
	}
	return 0;
}

struct pod_spec *spec_default(void)
{
	struct pod_spec *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->oci_version = strdup("1.0.2");
	s->root_path = strdup("rootfs");
	s->hostname = strdup("qpod");
	if (!s->oci_version || !s->root_path || !s->hostname || default_process(&s->process) < 0 ||
	    default_mounts_fill(s) < 0)
		goto oom;
	for (size_t i = 0; i < QP_ARRAY_SIZE(default_ns); i++)
		s->ns[default_ns[i]].enabled = true;
	s->masked_paths = STRV(masked_paths);
	s->readonly_paths = STRV(readonly_paths);
	s->seccomp = spec_default_seccomp();
	/* runc spec's linux.resources.devices: deny all; the runtime's own
	 * default devices are allowed on top (host/cgroup/devrules.c) */
	s->resources.dev_rules = calloc(1, sizeof(*s->resources.dev_rules));
	if (!s->masked_paths || !s->readonly_paths || !s->seccomp || !s->resources.dev_rules)
		goto oom;
	s->resources.n_dev_rules = 1;
	s->resources.dev_rules[0] = (struct qp_dev_rule){ .allow = false, .type = 'a',
							  .major = QP_DEV_ANY, .minor = QP_DEV_ANY,
							  .access = QP_DEV_RWM };
	return s;
oom:
	spec_free(s);
	return NULL;
}
