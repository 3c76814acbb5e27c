/* runtime/spec/util.c — freeing a pod_spec, annotation lookup and the
 * namespace and hook name tables shared by the parser, the writer and the
 * drivers. */
#include <stdlib.h>
#include <string.h>

#include "spec/spec.h"
#include "util/strv.h"

/* OCI names of the namespaces, indexed by enum qp_ns */
static const char *const ns_names[QP_NS_COUNT] = {
	[QP_NS_USER] = "user",   [QP_NS_PID] = "pid",     [QP_NS_NET] = "network",
	[QP_NS_IPC] = "ipc",     [QP_NS_UTS] = "uts",     [QP_NS_MOUNT] = "mount",
	[QP_NS_CGROUP] = "cgroup", [QP_NS_TIME] = "time",
};

const char *qp_ns_name(enum qp_ns ns)
{
	if ((unsigned)ns >= QP_NS_COUNT)
		return "unknown";
	return ns_names[ns];
}

int qp_ns_from_name(const char *name)
{
	for (int i = 0; name && i < QP_NS_COUNT; i++)
		if (strcmp(name, ns_names[i]) == 0)
			return i;
	return -1;
}

/* OCI names of the clocks of linux.timeOffsets, indexed by enum qp_time_clock */
const char *const qp_time_clock_names[QP_TIME_COUNT] = {
	[QP_TIME_MONOTONIC] = "monotonic",
	[QP_TIME_BOOTTIME] = "boottime",
};

/* OCI names of the hook kinds, indexed by enum qp_hook_kind */
static const char *const hook_names[QP_HOOK_COUNT] = {
	[QP_HOOK_PRESTART] = "prestart",
	[QP_HOOK_CREATE_RUNTIME] = "createRuntime",
	[QP_HOOK_CREATE_CONTAINER] = "createContainer",
	[QP_HOOK_START_CONTAINER] = "startContainer",
	[QP_HOOK_POSTSTART] = "poststart",
	[QP_HOOK_POSTSTOP] = "poststop",
};

const char *qp_hook_name(enum qp_hook_kind k)
{
	return (unsigned)k < QP_HOOK_COUNT ? hook_names[k] : "unknown";
}

const char *spec_annotation(const struct pod_spec *spec, const char *key)
{
	for (size_t i = 0; spec && key && i < spec->n_annotations; i++)
		if (spec->annotations[i].key && strcmp(spec->annotations[i].key, key) == 0)
			return spec->annotations[i].value;
	return NULL;
}

int spec_set_annotation(struct pod_spec *spec, const char *key, const char *value)
{
	char *v = strdup(value);
	struct qp_kv *nkv;

	if (!v)
		return -1;
	for (size_t i = 0; i < spec->n_annotations; i++)
		if (spec->annotations[i].key && !strcmp(spec->annotations[i].key, key)) {
			free(spec->annotations[i].value);
			spec->annotations[i].value = v;
			return 0;
		}
	nkv = realloc(spec->annotations, (spec->n_annotations + 1) * sizeof(*nkv));
	if (!nkv) {
		free(v);
		return -1;
	}
	spec->annotations = nkv;
	nkv[spec->n_annotations].value = v;
	if (!(nkv[spec->n_annotations].key = strdup(key))) {
		free(v);
		return -1;
	}
	spec->n_annotations++;
	return 0;
}

static void kv_free(struct qp_kv *kv, size_t n)
{
	for (size_t i = 0; kv && i < n; i++) {
		free(kv[i].key);
		free(kv[i].value);
	}
	free(kv);
}

void spec_seccomp_free(struct qp_seccomp *sc)
{
	if (!sc)
		return;
	free(sc->default_action);
	qp_strv_free(sc->architectures);
	qp_strv_free(sc->flags);
	for (size_t i = 0; sc->rules && i < sc->n_rules; i++) {
		struct qp_seccomp_rule *r = &sc->rules[i];
		qp_strv_free(r->names);
		free(r->action);
		for (size_t j = 0; r->args && j < r->n_args; j++)
			free(r->args[j].op);
		free(r->args);
	}
	free(sc->rules);
	free(sc);
}

static void process_free(struct qp_process *p)
{
	free(p->additional_gids);
	qp_strv_free(p->args);
	qp_strv_free(p->env);
	free(p->cwd);
	free(p->apparmor_profile);
	free(p->selinux_label);
	qp_strv_free(p->caps.bounding);
	qp_strv_free(p->caps.effective);
	qp_strv_free(p->caps.inheritable);
	qp_strv_free(p->caps.permitted);
	qp_strv_free(p->caps.ambient);
	for (size_t i = 0; p->rlimits && i < p->n_rlimits; i++)
		free(p->rlimits[i].type);
	free(p->rlimits);
}

void spec_free(struct pod_spec *spec)
{
	if (!spec)
		return;
	free(spec->oci_version);
	free(spec->root_path);
	free(spec->hostname);
	free(spec->domainname);
	process_free(&spec->process);
	for (size_t i = 0; spec->mounts && i < spec->n_mounts; i++) {
		free(spec->mounts[i].destination);
		free(spec->mounts[i].type);
		free(spec->mounts[i].source);
		qp_strv_free(spec->mounts[i].options);
	}
	free(spec->mounts);
	kv_free(spec->annotations, spec->n_annotations);
	for (int i = 0; i < QP_NS_COUNT; i++)
		free(spec->ns[i].path);
	free(spec->uid_mappings);
	free(spec->gid_mappings);
	free(spec->resources.cpuset_cpus);
	free(spec->resources.cpuset_mems);
	free(spec->resources.dev_rules);
	free(spec->cgroups_path);
	kv_free(spec->sysctl, spec->n_sysctl);
	spec_seccomp_free(spec->seccomp);
	free(spec->rootfs_propagation);
	free(spec->mount_label);
	qp_strv_free(spec->masked_paths);
	qp_strv_free(spec->readonly_paths);
	for (size_t i = 0; spec->devices && i < spec->n_devices; i++)
		free(spec->devices[i].path);
	free(spec->devices);
	spec_hooks_clear(spec);
	spec_opts_free(&spec->opts);
	free(spec);
}

void spec_hooks_clear(struct pod_spec *spec)
{
	for (int k = 0; k < QP_HOOK_COUNT; k++) {
		for (size_t i = 0; spec->hooks[k] && i < spec->n_hooks[k]; i++) {
			free(spec->hooks[k][i].path);
			qp_strv_free(spec->hooks[k][i].args);
			qp_strv_free(spec->hooks[k][i].env);
		}
		free(spec->hooks[k]);
		spec->hooks[k] = NULL;
		spec->n_hooks[k] = 0;
	}
}

unsigned qp_dev_access_parse(const char *s)
{
	unsigned bits = 0;

	for (; *s; s++) {
		unsigned b = *s == 'r' ? QP_DEV_READ : *s == 'w' ? QP_DEV_WRITE : *s == 'm' ? QP_DEV_MKNOD : 0;
		if (!b)
			return 0;
		bits |= b;
	}
	return bits;
}

const char *qp_dev_access_str(unsigned access, char buf[4])
{
	size_t n = 0;

	if (access & QP_DEV_READ)
		buf[n++] = 'r';
	if (access & QP_DEV_WRITE)
		buf[n++] = 'w';
	if (access & QP_DEV_MKNOD)
		buf[n++] = 'm';
	buf[n] = '\0';
	return buf;
}
