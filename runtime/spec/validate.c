/* runtime/spec/validate.c — semantic checks on a pod_spec, whatever built it
 * (a bundle's config.json or `qpod run` flags on top of spec_default()).
 * parse.c checks types and presence; this file checks meaning: paths
 * are absolute, mappings go with a user namespace, limits are sane, and
 * strings that end up in paths (sysctl keys, cgroupsPath) cannot climb out
 * with "..". */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "spec/spec.h"
#include "util/strv.h"


static int invalid(qp_error **err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int invalid(qp_error **err, const char *fmt, ...)
{
	char msg[320];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return qp_error_set(err, QP_E_INVALID, 0, "spec: %s", msg);
}


static bool has_dotdot(const char *p)
{
	for (const char *c = p; (c = strstr(c, "..")); c += 2)
		if ((c == p || c[-1] == '/') && (c[2] == '\0' || c[2] == '/'))
			return true;
	return false;
}

static int abs_paths(char *const *v, const char *what, qp_error **err)
{
	char sbuf[QP_SHOWN_MAX];

	for (size_t i = 0; v && v[i]; i++)
		if (v[i][0] != '/')
			return invalid(err, "%s[%zu]: \"%s\" is not an absolute path", what, i,
				       qp_shown(v[i], sbuf));
	return 0;
}

static int validate_process(const struct qp_process *p, qp_error **err)
{
	char sbuf[QP_SHOWN_MAX];

	if (qp_strv_len(p->args) == 0)
		return invalid(err, "process.args: no command to run");
	if (qp_strv_len(p->args) > QP_SPEC_MAX_ITEMS || qp_strv_len(p->env) > QP_SPEC_MAX_ITEMS)
		return invalid(err, "process: more than %u args or env entries", QP_SPEC_MAX_ITEMS);
	if (!p->cwd || p->cwd[0] != '/')
		return invalid(err, "process.cwd: must be an absolute path");
	for (size_t i = 0; p->env && p->env[i]; i++)
		if (!strchr(p->env[i], '=') || p->env[i][0] == '=')
			return invalid(err, "process.env[%zu]: \"%s\" is not NAME=VALUE", i,
				       qp_shown(p->env[i], sbuf));
	for (size_t i = 0; i < p->n_rlimits; i++)
		if (p->rlimits[i].soft > p->rlimits[i].hard)
			return invalid(err, "process.rlimits[%zu]: soft limit above hard limit", i);
	if (p->has_oom_score_adj && (p->oom_score_adj < -1000 || p->oom_score_adj > 1000))
		return invalid(err, "process.oomScoreAdj: must be in -1000..1000");
	return 0;
}

static bool cpuset_ok(const char *s)
{
	return strlen(s) < 1024 && strspn(s, "0123456789,-") == strlen(s);
}

int spec_validate_resources(const struct qp_resources *r, qp_error **err)
{
	if (r->has_memory_limit && r->memory_limit <= 0 && r->memory_limit != -1)
		return invalid(err, "linux.resources.memory.limit: must be > 0 or -1 (unlimited)");
	if (r->has_memory_swap && r->memory_swap < -1)
		return invalid(err, "linux.resources.memory.swap: must be >= 0 or -1 (unlimited)");
	if (r->has_memory_swap && r->has_memory_limit && r->memory_swap > 0 && r->memory_limit > 0 &&
	    r->memory_swap < r->memory_limit)
		return invalid(err, "linux.resources.memory.swap: memory+swap must be >= memory.limit");
	if (r->has_cpu_shares && r->cpu_shares != 0 && (r->cpu_shares < 2 || r->cpu_shares > 262144))
		return invalid(err, "linux.resources.cpu.shares: must be in 2..262144");
	if (r->has_cpu_quota && r->cpu_quota != -1 && r->cpu_quota < 1000)
		return invalid(err, "linux.resources.cpu.quota: must be >= 1000 (µs) or -1 (unlimited)");
	if (r->has_cpu_period && (r->cpu_period < 1000 || r->cpu_period > 1000000))
		return invalid(err, "linux.resources.cpu.period: must be in 1000..1000000 (µs)");
	if (r->cpuset_cpus && !cpuset_ok(r->cpuset_cpus))
		return invalid(err, "linux.resources.cpu.cpus: expected a CPU list such as \"0-3,6\"");
	if (r->cpuset_mems && !cpuset_ok(r->cpuset_mems))
		return invalid(err, "linux.resources.cpu.mems: expected a node list such as \"0-1\"");
	if (r->has_memory_reservation && r->memory_reservation < -1)
		return invalid(err, "linux.resources.memory.reservation: must be >= 0 or -1 (none)");
	if (r->has_memory_swappiness && r->memory_swappiness > 100)
		return invalid(err, "linux.resources.memory.swappiness: must be in 0..100");
	if (r->has_pids_limit && r->pids_limit < -1)
		return invalid(err, "linux.resources.pids.limit: must be >= -1");
	/* the kernel's range (CFQ's and BFQ's: 10..1000, as runc documents) */
#define WEIGHT_OK(w) ((w) >= 10 && (w) <= 1000)
	if (r->has_blkio_weight && r->blkio_weight && !WEIGHT_OK(r->blkio_weight))
		return invalid(err, "linux.resources.blockIO.weight: must be in 10..1000");
	if (r->has_blkio_leaf_weight && r->blkio_leaf_weight && !WEIGHT_OK(r->blkio_leaf_weight))
		return invalid(err, "linux.resources.blockIO.leafWeight: must be in 10..1000");
	for (size_t i = 0; i < r->n_blkio_weight_dev; i++) {
		const struct qp_blkio_dev *d = &r->blkio_weight_dev[i];
		if ((d->value && !WEIGHT_OK(d->value)) || (d->leaf && !WEIGHT_OK(d->leaf)))
			return invalid(err, "linux.resources.blockIO.weightDevice[%zu]: weights must be in 10..1000", i);
	}
#undef WEIGHT_OK
	return 0;
}

static int validate_seccomp(const struct qp_seccomp *sc, qp_error **err)
{
	if (!sc)
		return 0;
	if (!sc->default_action)
		return invalid(err, "linux.seccomp.defaultAction: missing");
	if (sc->n_rules > QP_SPEC_MAX_ITEMS)
		return invalid(err, "linux.seccomp.syscalls: more than %u entries", QP_SPEC_MAX_ITEMS);
	for (size_t i = 0; i < sc->n_rules; i++) {
		const struct qp_seccomp_rule *r = &sc->rules[i];
		if (qp_strv_len(r->names) == 0 || !r->action)
			return invalid(err, "linux.seccomp.syscalls[%zu]: names and action are required", i);
		for (size_t j = 0; j < r->n_args; j++)
			if (r->args[j].index > 5 || !r->args[j].op)
				return invalid(err, "linux.seccomp.syscalls[%zu].args[%zu]: index 0..5 and op "
						    "are required", i, j);
	}
	return 0;
}

static int validate_linux(const struct pod_spec *s, qp_error **err)
{
	static const char *const propagations[] = {
		"private", "rprivate", "slave", "rslave", "shared", "rshared", "unbindable", "runbindable",
	};
	const struct qp_namespace *user = &s->ns[QP_NS_USER];
	char sbuf[QP_SHOWN_MAX];

	for (int i = 0; i < QP_NS_COUNT; i++)
		if (s->ns[i].path && (!s->ns[i].enabled || s->ns[i].path[0] != '/'))
			return invalid(err, "linux.namespaces: %s path must be absolute", qp_ns_name(i));
	for (int c = 0; c < QP_TIME_COUNT; c++)
		if (s->time_offsets[c].set && (!s->ns[QP_NS_TIME].enabled || s->ns[QP_NS_TIME].path))
			return invalid(err, "linux.timeOffsets: need a new time namespace (linux.namespaces "
					    "\"time\" without a path)");
	if ((s->n_uid_mappings || s->n_gid_mappings) && !user->enabled)
		return invalid(err, "linux.uidMappings/gidMappings: need a user namespace");
	if (user->enabled && !user->path && (!s->n_uid_mappings || !s->n_gid_mappings))
		return invalid(err, "linux.uidMappings/gidMappings: required with a new user namespace");
	for (size_t i = 0; i < s->n_uid_mappings + s->n_gid_mappings; i++) {
		const struct qp_idmap *m = i < s->n_uid_mappings ? &s->uid_mappings[i]
							       : &s->gid_mappings[i - s->n_uid_mappings];
		if (m->size == 0 || (uint64_t)m->container_id + m->size > (1ull << 32) ||
		    (uint64_t)m->host_id + m->size > (1ull << 32))
			return invalid(err, "linux.%sMappings: a mapping is empty or overflows",
				       i < s->n_uid_mappings ? "uid" : "gid");
	}
	if (spec_validate_resources(&s->resources, err) < 0 || validate_seccomp(s->seccomp, err) < 0)
		return -1;
	if (s->cgroups_path && has_dotdot(s->cgroups_path))
		return invalid(err, "linux.cgroupsPath: must not contain \"..\"");
	for (size_t i = 0; i < s->n_sysctl; i++) {
		const char *k = s->sysctl[i].key;
		if (!k[0] || k[0] == '/' || k[0] == '.' || strstr(k, "..") || strchr(k, '\n'))
			return invalid(err, "linux.sysctl: bad key \"%s\"", qp_shown(k, sbuf));
	}
	if (s->rootfs_propagation) {
		size_t i;
		for (i = 0; i < sizeof(propagations) / sizeof(propagations[0]); i++)
			if (strcmp(s->rootfs_propagation, propagations[i]) == 0)
				break;
		if (i == sizeof(propagations) / sizeof(propagations[0]))
			return invalid(err, "linux.rootfsPropagation: unknown value \"%s\"",
				       qp_shown(s->rootfs_propagation, sbuf));
	}
	if (abs_paths(s->masked_paths, "linux.maskedPaths", err) < 0 ||
	    abs_paths(s->readonly_paths, "linux.readonlyPaths", err) < 0)
		return -1;
	for (size_t i = 0; i < s->n_devices; i++) {
		const struct qp_device *d = &s->devices[i];
		if (!d->path || d->path[0] != '/' || has_dotdot(d->path))
			return invalid(err, "linux.devices[%zu].path: must be absolute, without \"..\"", i);
		if (!d->type || !strchr("cbup", d->type))
			return invalid(err, "linux.devices[%zu].type: expected c, b, u or p", i);
		if (d->major < 0 || d->minor < 0 || d->major > 0xfff || d->minor > 0xfffff)
			return invalid(err, "linux.devices[%zu]: major/minor out of range", i);
	}
	return 0;
}

int spec_validate(const struct pod_spec *s, qp_error **err)
{
	char sbuf[QP_SHOWN_MAX];

	if (!s->root_path || !s->root_path[0])
		return invalid(err, "root.path: missing");
	if (validate_process(&s->process, err) < 0)
		return -1;
	for (size_t i = 0; i < s->n_mounts; i++) {
		const char *d = s->mounts[i].destination;
		if (!d || d[0] != '/')
			return invalid(err, "mounts[%zu].destination: \"%s\" is not an absolute path", i,
				       d ? qp_shown(d, sbuf) : "");
	}
	if ((s->hostname || s->domainname) && !s->ns[QP_NS_UTS].enabled)
		return invalid(err, "hostname/domainname: need a UTS namespace (linux.namespaces \"uts\")");
	if (s->hostname && strlen(s->hostname) > 64)
		return invalid(err, "hostname: longer than 64 bytes");
	if (s->domainname && strlen(s->domainname) > 64)
		return invalid(err, "domainname: longer than 64 bytes");
	if (s->opts.vcpus < 0 || s->opts.vcpus > QP_VCPUS_MAX)
		return invalid(err, "qpod.vcpus: must be in 1..%d", QP_VCPUS_MAX);
	if ((s->opts.net_ip || s->opts.net_subnet || s->opts.net_bridge) &&
	    (!s->opts.net || strcmp(s->opts.net, "bridge")))
		return invalid(err, "qpod.net.ip, qpod.net.subnet and qpod.net.bridge need qpod.net=bridge");
	return validate_linux(s, err);
}
