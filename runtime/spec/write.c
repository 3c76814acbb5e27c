/* runtime/spec/write.c — struct pod_spec -> config.json text (pretty printed).
 *
 * Writes every field parse.c reads, so parse(write(x)) == x; absent
 * optionals are omitted.  The qpod.* options (opts) are written as
 * annotations, taking precedence over annotations of the same key, so a spec
 * built from CLI flags survives the round trip through the state directory.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spec/spec.h"
#include "spec/resources.h"
#include "util/io.h"
#include "util/json.h"

/* The generator and the first string it refused (invalid UTF-8: strings
 * from the command line may be any bytes, JSON text may not). */
struct wr {
	yajl_gen g;
	const char *bad;
};

static void str(struct wr *w, const char *s)
{
	if (yajl_gen_string(w->g, (const unsigned char *)s, strlen(s)) != yajl_gen_status_ok && !w->bad)
		w->bad = s;
}

static void jkey(struct wr *w, const char *k)
{
	str(w, k);
}

static void kstr(struct wr *w, const char *k, const char *s)
{
	jkey(w, k);
	str(w, s ? s : "");
}

static void kbool(struct wr *w, const char *k, bool v)
{
	jkey(w, k);
	yajl_gen_bool(w->g, v);
}

static void gen_u64(struct wr *w, uint64_t v)
{
	qp_json_u64(w->g, v);
}

static void kint(struct wr *w, const char *k, long long v)
{
	jkey(w, k);
	yajl_gen_integer(w->g, v);
}

static void ku64(struct wr *w, const char *key, uint64_t v)
{
	jkey(w, key);
	gen_u64(w, v);
}

/* "key": [strings], omitted when v is NULL */
static void kstrv(struct wr *w, const char *key, char *const *v)
{
	if (!v)
		return;
	jkey(w, key);
	yajl_gen_array_open(w->g);
	for (size_t i = 0; v[i]; i++)
		str(w, v[i]);
	yajl_gen_array_close(w->g);
}

/* "key": "s", omitted when s is NULL */
static void kstr_opt(struct wr *w, const char *key, const char *s)
{
	if (s)
		kstr(w, key, s);
}

static void write_process(struct wr *w, const struct qp_process *p)
{
	jkey(w, "process");
	yajl_gen_map_open(w->g);
	kbool(w, "terminal", p->terminal);

	jkey(w, "user");
	yajl_gen_map_open(w->g);
	kint(w, "uid", p->uid);
	kint(w, "gid", p->gid);
	if (p->has_umask)
		kint(w, "umask", p->umask);
	if (p->n_additional_gids) {
		jkey(w, "additionalGids");
		yajl_gen_array_open(w->g);
		for (size_t i = 0; i < p->n_additional_gids; i++)
			yajl_gen_integer(w->g, p->additional_gids[i]);
		yajl_gen_array_close(w->g);
	}
	yajl_gen_map_close(w->g);

	kstrv(w, "args", p->args);
	kstrv(w, "env", p->env);
	kstr_opt(w, "cwd", p->cwd);

	if (p->caps.present) {
		jkey(w, "capabilities");
		yajl_gen_map_open(w->g);
		kstrv(w, "bounding", p->caps.bounding);
		kstrv(w, "effective", p->caps.effective);
		kstrv(w, "inheritable", p->caps.inheritable);
		kstrv(w, "permitted", p->caps.permitted);
		kstrv(w, "ambient", p->caps.ambient);
		yajl_gen_map_close(w->g);
	}
	if (p->n_rlimits) {
		jkey(w, "rlimits");
		yajl_gen_array_open(w->g);
		for (size_t i = 0; i < p->n_rlimits; i++) {
			yajl_gen_map_open(w->g);
			kstr(w, "type", p->rlimits[i].type);
			ku64(w, "hard", p->rlimits[i].hard);
			ku64(w, "soft", p->rlimits[i].soft);
			yajl_gen_map_close(w->g);
		}
		yajl_gen_array_close(w->g);
	}
	if (p->no_new_privileges)
		kbool(w, "noNewPrivileges", true);
	kstr_opt(w, "apparmorProfile", p->apparmor_profile);
	kstr_opt(w, "selinuxLabel", p->selinux_label);
	if (p->has_oom_score_adj)
		kint(w, "oomScoreAdj", p->oom_score_adj);
	yajl_gen_map_close(w->g);
}

static void write_mounts(struct wr *w, const struct pod_spec *s)
{
	if (!s->n_mounts)
		return;
	jkey(w, "mounts");
	yajl_gen_array_open(w->g);
	for (size_t i = 0; i < s->n_mounts; i++) {
		const struct qp_mount *m = &s->mounts[i];
		yajl_gen_map_open(w->g);
		kstr(w, "destination", m->destination);
		kstr_opt(w, "type", m->type);
		kstr_opt(w, "source", m->source);
		kstrv(w, "options", m->options);
		yajl_gen_map_close(w->g);
	}
	yajl_gen_array_close(w->g);
}

/* qpod's own options are annotations too (spec_opt_set records them) */
static void write_annotations(struct wr *w, const struct pod_spec *s)
{
	if (!s->n_annotations)
		return;
	jkey(w, "annotations");
	yajl_gen_map_open(w->g);
	for (size_t i = 0; i < s->n_annotations; i++)
		kstr(w, s->annotations[i].key, s->annotations[i].value);
	yajl_gen_map_close(w->g);
}

static void write_hooks(struct wr *w, const struct pod_spec *s)
{
	bool any = false;

	for (int k = 0; k < QP_HOOK_COUNT; k++)
		any |= s->n_hooks[k] > 0;
	if (!any)
		return;
	jkey(w, "hooks");
	yajl_gen_map_open(w->g);
	for (int k = 0; k < QP_HOOK_COUNT; k++) {
		if (!s->n_hooks[k])
			continue;
		jkey(w, qp_hook_name(k));
		yajl_gen_array_open(w->g);
		for (size_t i = 0; i < s->n_hooks[k]; i++) {
			const struct qp_hook *h = &s->hooks[k][i];
			yajl_gen_map_open(w->g);
			kstr(w, "path", h->path);
			kstrv(w, "args", h->args);
			kstrv(w, "env", h->env);
			if (h->timeout)
				kint(w, "timeout", h->timeout);
			yajl_gen_map_close(w->g);
		}
		yajl_gen_array_close(w->g);
	}
	yajl_gen_map_close(w->g);
}

static void write_idmaps(struct wr *w, const char *key, const struct qp_idmap *m, size_t n)
{
	if (!n)
		return;
	jkey(w, key);
	yajl_gen_array_open(w->g);
	for (size_t i = 0; i < n; i++) {
		yajl_gen_map_open(w->g);
		kint(w, "containerID", m[i].container_id);
		kint(w, "hostID", m[i].host_id);
		kint(w, "size", m[i].size);
		yajl_gen_map_close(w->g);
	}
	yajl_gen_array_close(w->g);
}

/* linux.resources.devices as runc's spec writes them: "a" rules without
 * major/minor, -1 (any) left out */
static void write_dev_rules(struct wr *w, const struct qp_resources *r)
{
	if (!r->n_dev_rules)
		return;
	jkey(w, "devices");
	yajl_gen_array_open(w->g);
	for (size_t i = 0; i < r->n_dev_rules; i++) {
		const struct qp_dev_rule *d = &r->dev_rules[i];
		char type[2] = { d->type, '\0' }, access[4];

		yajl_gen_map_open(w->g);
		kbool(w, "allow", d->allow);
		if (d->type != 'a')
			kstr(w, "type", type);
		if (d->major != QP_DEV_ANY)
			kint(w, "major", d->major);
		if (d->minor != QP_DEV_ANY)
			kint(w, "minor", d->minor);
		kstr(w, "access", qp_dev_access_str(d->access, access));
		yajl_gen_map_close(w->g);
	}
	yajl_gen_array_close(w->g);
}

static void write_blkio_devs(struct wr *w, const char *key, const struct qp_blkio_dev *d, size_t n, bool weights)
{
	if (!n)
		return;
	jkey(w, key);
	yajl_gen_array_open(w->g);
	for (size_t i = 0; i < n; i++) {
		yajl_gen_map_open(w->g);
		kint(w, "major", d[i].major);
		kint(w, "minor", d[i].minor);
		if (!weights)
			ku64(w, "rate", d[i].value);
		if (weights && d[i].value)
			ku64(w, "weight", d[i].value);
		if (weights && d[i].leaf)
			ku64(w, "leafWeight", d[i].leaf);
		yajl_gen_map_close(w->g);
	}
	yajl_gen_array_close(w->g);
}

static void write_blkio(struct wr *w, const struct qp_resources *r)
{
	jkey(w, "blockIO");
	yajl_gen_map_open(w->g);
	if (r->has_blkio_weight)
		ku64(w, "weight", r->blkio_weight);
	if (r->has_blkio_leaf_weight)
		ku64(w, "leafWeight", r->blkio_leaf_weight);
	write_blkio_devs(w, "weightDevice", r->blkio_weight_dev, r->n_blkio_weight_dev, true);
	for (int t = 0; t < QP_BLKIO_THROTTLES; t++)
		write_blkio_devs(w, qp_blkio_throttle_keys[t], r->blkio_throttle[t], r->n_blkio_throttle[t], false);
	yajl_gen_map_close(w->g);
}

static void write_resources(struct wr *w, const struct qp_resources *r)
{
	bool unified = r->n_unified > 0;
	bool mem = r->has_memory_limit || r->has_memory_swap || r->has_memory_reservation ||
		   r->has_memory_swappiness || r->memory_disable_oom_killer;
	bool cpu = r->has_cpu_shares || r->has_cpu_quota || r->has_cpu_period || r->cpuset_cpus ||
		   r->cpuset_mems;

	bool blkio = spec_resources_has_blkio(r);

	if (!mem && !cpu && !r->has_pids_limit && !r->n_dev_rules && !unified && !blkio)
		return;
	jkey(w, "resources");
	yajl_gen_map_open(w->g);
	write_dev_rules(w, r);
	if (unified) {
		jkey(w, "unified");
		yajl_gen_map_open(w->g);
		for (size_t i = 0; i < r->n_unified; i++)
			kstr(w, r->unified[i].key, r->unified[i].value);
		yajl_gen_map_close(w->g);
	}
	if (mem) {
		jkey(w, "memory");
		yajl_gen_map_open(w->g);
		if (r->has_memory_limit)
			kint(w, "limit", r->memory_limit);
		if (r->has_memory_swap)
			kint(w, "swap", r->memory_swap);
		if (r->has_memory_reservation)
			kint(w, "reservation", r->memory_reservation);
		if (r->has_memory_swappiness)
			ku64(w, "swappiness", r->memory_swappiness);
		if (r->memory_disable_oom_killer) {
			jkey(w, "disableOOMKiller");
			yajl_gen_bool(w->g, 1);
		}
		yajl_gen_map_close(w->g);
	}
	if (cpu) {
		jkey(w, "cpu");
		yajl_gen_map_open(w->g);
		if (r->has_cpu_shares)
			ku64(w, "shares", r->cpu_shares);
		if (r->has_cpu_quota)
			kint(w, "quota", r->cpu_quota);
		if (r->has_cpu_period)
			ku64(w, "period", r->cpu_period);
		kstr_opt(w, "cpus", r->cpuset_cpus);
		kstr_opt(w, "mems", r->cpuset_mems);
		yajl_gen_map_close(w->g);
	}
	if (r->has_pids_limit) {
		jkey(w, "pids");
		yajl_gen_map_open(w->g);
		kint(w, "limit", r->pids_limit);
		yajl_gen_map_close(w->g);
	}
	if (blkio)
		write_blkio(w, r);
	yajl_gen_map_close(w->g);
}

static void write_seccomp(struct wr *w, const struct qp_seccomp *sc)
{
	if (!sc)
		return;
	jkey(w, "seccomp");
	yajl_gen_map_open(w->g);
	kstr_opt(w, "defaultAction", sc->default_action);
	if (sc->has_default_errno_ret)
		kint(w, "defaultErrnoRet", sc->default_errno_ret);
	kstrv(w, "architectures", sc->architectures);
	kstrv(w, "flags", sc->flags);
	if (sc->n_rules) {
		jkey(w, "syscalls");
		yajl_gen_array_open(w->g);
		for (size_t i = 0; i < sc->n_rules; i++) {
			const struct qp_seccomp_rule *r = &sc->rules[i];
			yajl_gen_map_open(w->g);
			kstrv(w, "names", r->names);
			kstr_opt(w, "action", r->action);
			if (r->has_errno_ret)
				kint(w, "errnoRet", r->errno_ret);
			if (r->n_args) {
				jkey(w, "args");
				yajl_gen_array_open(w->g);
				for (size_t j = 0; j < r->n_args; j++) {
					yajl_gen_map_open(w->g);
					kint(w, "index", r->args[j].index);
					ku64(w, "value", r->args[j].value);
					ku64(w, "valueTwo", r->args[j].value_two);
					kstr_opt(w, "op", r->args[j].op);
					yajl_gen_map_close(w->g);
				}
				yajl_gen_array_close(w->g);
			}
			yajl_gen_map_close(w->g);
		}
		yajl_gen_array_close(w->g);
	}
	yajl_gen_map_close(w->g);
}

static void write_devices(struct wr *w, const struct pod_spec *s)
{
	if (!s->n_devices)
		return;
	jkey(w, "devices");
	yajl_gen_array_open(w->g);
	for (size_t i = 0; i < s->n_devices; i++) {
		const struct qp_device *d = &s->devices[i];
		char type[2] = { d->type, '\0' };

		yajl_gen_map_open(w->g);
		kstr(w, "type", type);
		kstr(w, "path", d->path);
		kint(w, "major", d->major);
		kint(w, "minor", d->minor);
		if (d->has_mode)
			kint(w, "fileMode", d->mode);
		if (d->has_uid)
			kint(w, "uid", d->uid);
		if (d->has_gid)
			kint(w, "gid", d->gid);
		yajl_gen_map_close(w->g);
	}
	yajl_gen_array_close(w->g);
}

static void write_time_offsets(struct wr *w, const struct pod_spec *s)
{
	bool any = false;

	for (int c = 0; c < QP_TIME_COUNT; c++)
		any |= s->time_offsets[c].set;
	if (!any)
		return;
	jkey(w, "timeOffsets");
	yajl_gen_map_open(w->g);
	for (int c = 0; c < QP_TIME_COUNT; c++) {
		if (!s->time_offsets[c].set)
			continue;
		jkey(w, qp_time_clock_names[c]);
		yajl_gen_map_open(w->g);
		kint(w, "secs", s->time_offsets[c].secs);
		kint(w, "nanosecs", s->time_offsets[c].nanosecs);
		yajl_gen_map_close(w->g);
	}
	yajl_gen_map_close(w->g);
}

static void write_linux(struct wr *w, const struct pod_spec *s)
{
	jkey(w, "linux");
	yajl_gen_map_open(w->g);
	write_idmaps(w, "uidMappings", s->uid_mappings, s->n_uid_mappings);
	write_idmaps(w, "gidMappings", s->gid_mappings, s->n_gid_mappings);
	if (s->n_sysctl) {
		jkey(w, "sysctl");
		yajl_gen_map_open(w->g);
		for (size_t i = 0; i < s->n_sysctl; i++)
			kstr(w, s->sysctl[i].key, s->sysctl[i].value);
		yajl_gen_map_close(w->g);
	}
	write_resources(w, &s->resources);
	kstr_opt(w, "cgroupsPath", s->cgroups_path);
	jkey(w, "namespaces");
	yajl_gen_array_open(w->g);
	for (int i = 0; i < QP_NS_COUNT; i++) {
		if (!s->ns[i].enabled)
			continue;
		yajl_gen_map_open(w->g);
		kstr(w, "type", qp_ns_name(i));
		kstr_opt(w, "path", s->ns[i].path);
		yajl_gen_map_close(w->g);
	}
	yajl_gen_array_close(w->g);
	write_time_offsets(w, s);
	write_devices(w, s);
	write_seccomp(w, s->seccomp);
	kstr_opt(w, "rootfsPropagation", s->rootfs_propagation);
	kstr_opt(w, "mountLabel", s->mount_label);
	kstrv(w, "maskedPaths", s->masked_paths);
	kstrv(w, "readonlyPaths", s->readonly_paths);
	yajl_gen_map_close(w->g);
}

int spec_write(const struct pod_spec *s, char **out, size_t *len, qp_error **err)
{
	struct wr w = { .g = qp_json_gen_new(true) };

	*out = NULL;
	if (!w.g)
		return qp_fail(err, ENOMEM, "write config.json");
	yajl_gen_config(w.g, yajl_gen_validate_utf8, 1);
	yajl_gen_map_open(w.g);
	kstr_opt(&w, "ociVersion", s->oci_version);
	write_process(&w, &s->process);
	if (s->root_path) {
		jkey(&w, "root");
		yajl_gen_map_open(w.g);
		kstr(&w, "path", s->root_path);
		kbool(&w, "readonly", s->root_readonly);
		yajl_gen_map_close(w.g);
	}
	kstr_opt(&w, "hostname", s->hostname);
	kstr_opt(&w, "domainname", s->domainname);
	write_mounts(&w, s);
	write_annotations(&w, s);
	write_hooks(&w, s);
	write_linux(&w, s);
	yajl_gen_map_close(w.g);
	if (w.bad) {
		yajl_gen_free(w.g);
		return qp_error_set(err, QP_E_INVALID, 0,
				    "write config.json: a string is not valid UTF-8 (JSON cannot hold it)");
	}
	if (qp_json_gen_finish(w.g, out, len, err) < 0)
		return qp_error_prefix(err, "write config.json");
	return 0;
}

int spec_write_bundle(const struct pod_spec *s, const char *dir, qp_error **err)
{
	char path[4200];
	char *json = NULL;
	size_t len;
	int fd, r = -1;

	if ((size_t)snprintf(path, sizeof(path), "%s/config.json", dir) >= sizeof(path))
		return qp_error_set(err, QP_E_INVALID, 0, "write config.json: \"%s\": path too long", dir);
	if (spec_write(s, &json, &len, err) < 0)
		return -1;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0 || qp_write_all(fd, json, len) < 0)
		qp_fail(err, errno, "write \"%s\"", path);
	else
		r = 0;
	if (fd >= 0 && close(fd) < 0 && r == 0)
		r = qp_fail(err, errno, "write \"%s\"", path);
	free(json);
	return r;
}
