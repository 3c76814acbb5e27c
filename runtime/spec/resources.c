/* runtime/spec/resources.c — an OCI LinuxResources object -> struct
 * qp_resources, table-driven (see resources.h for strict and lenient),
 * and the merge and comparison `qpod update` needs.  The input is hostile:
 * types and ranges are checked before anything is stored; every error names
 * the JSON path. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spec/resources.h"
#include "util/log.h"

#define PATH_MAX_JSON 128

enum kind {
	K_I64,     /* int64, *has set */
	K_U64,     /* uint64 (raw text: beyond INT64_MAX), *has set */
	K_STR,     /* char *, NULL = absent */
	K_BOOL,
	K_SECTION, /* an object with its own table */
	K_DEVICES, /* device rules: kept from config.json, checked only on update */
	K_NO,      /* not supported: refused unless empty (both modes) */
	K_HUGEPAGES, /* not supported: refused unless every limit is 0 */
	K_UNIFIED, /* cgroup v2 file -> value (written on v2, refused on v1) */
	K_BLKIO,   /* linux.resources.blockIO */
};

struct field {
	const char *key;
	enum kind kind;
	size_t off, has_off;
	const struct field *sub; /* K_SECTION */
	const char *why;         /* K_NO: why it cannot be applied */
};

#define R(f) offsetof(struct qp_resources, f)
#define NUM(k, kind, f) { k, kind, R(f), R(has_##f), NULL, NULL }
#define NO(k, why) { k, K_NO, 0, 0, NULL, why }

static const struct field memory_fields[] = {
	NUM("limit", K_I64, memory_limit),
	NUM("swap", K_I64, memory_swap),
	{ "checkBeforeUpdate", K_BOOL, R(memory_check_before_update), 0, NULL, NULL },
	NUM("reservation", K_I64, memory_reservation),
	NO("kernel", "kernel memory limits are obsolete"),
	NO("kernelTCP", "kernel memory limits are obsolete"),
	NUM("swappiness", K_U64, memory_swappiness),
	{ "disableOOMKiller", K_BOOL, R(memory_disable_oom_killer), 0, NULL, NULL },
	NO("useHierarchy", "not supported"),
	{ 0 },
};

static const struct field cpu_fields[] = {
	NUM("shares", K_U64, cpu_shares),
	NUM("quota", K_I64, cpu_quota),
	NUM("period", K_U64, cpu_period),
	{ "cpus", K_STR, R(cpuset_cpus), 0, NULL, NULL },
	{ "mems", K_STR, R(cpuset_mems), 0, NULL, NULL },
	NO("burst", "cpu.max.burst is not supported"),
	NO("realtimeRuntime", "realtime scheduling limits are not supported"),
	NO("realtimePeriod", "realtime scheduling limits are not supported"),
	NO("idle", "SCHED_IDLE cgroups are not supported"),
	{ 0 },
};

static const struct field pids_fields[] = {
	NUM("limit", K_I64, pids_limit),
	{ 0 },
};

static const struct field top_fields[] = {
	{ "memory", K_SECTION, 0, 0, memory_fields, NULL },
	{ "cpu", K_SECTION, 0, 0, cpu_fields, NULL },
	{ "pids", K_SECTION, 0, 0, pids_fields, NULL },
	{ "devices", K_DEVICES, 0, 0, NULL, NULL },
	{ "blockIO", K_BLKIO, 0, 0, NULL, NULL },
	{ "hugepageLimits", K_HUGEPAGES, 0, 0, NULL, "hugetlb limits are not supported" },
	NO("network", "net_cls/net_prio are not supported"),
	NO("rdma", "rdma limits are not supported"),
	{ "unified", K_UNIFIED, 0, 0, NULL, NULL },
	{ 0 },
};

struct ctx {
	const char *what;
	bool strict;
	struct qp_resources *res;
	qp_error **err;
};

static int bad(struct ctx *c, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int bad(struct ctx *c, const char *path, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!path[0]) /* the top level */
		return qp_error_set(c->err, QP_E_INVALID, 0, "%s: %s", c->what, msg);
	return qp_error_set(c->err, QP_E_INVALID, 0, "%s: %s: %s", c->what, path, msg);
}

static bool absent(yajl_val v)
{
	return !v || YAJL_IS_NULL(v);
}

/* absent, null, 0, false, "" or a container of only such values */
static bool empty(yajl_val v, int depth)
{
	if (absent(v) || YAJL_IS_FALSE(v))
		return true;
	if (depth > QP_JSON_MAX_DEPTH)
		return false;
	if (YAJL_IS_NUMBER(v))
		return YAJL_IS_INTEGER(v) ? YAJL_GET_INTEGER(v) == 0 : YAJL_GET_DOUBLE(v) == 0.0;
	if (YAJL_IS_STRING(v))
		return !v->u.string[0];
	if (YAJL_IS_ARRAY(v)) {
		for (size_t i = 0; i < v->u.array.len; i++)
			if (!empty(v->u.array.values[i], depth + 1))
				return false;
		return true;
	}
	if (YAJL_IS_OBJECT(v)) {
		for (size_t i = 0; i < v->u.object.len; i++)
			if (!empty(v->u.object.values[i], depth + 1))
				return false;
		return true;
	}
	return false;
}

static int get_i64(struct ctx *c, yajl_val v, const char *path, int64_t *out)
{
	if (!YAJL_IS_INTEGER(v))
		return bad(c, path, "expected an integer in %" PRId64 "..%" PRId64, INT64_MIN, INT64_MAX);
	*out = YAJL_GET_INTEGER(v);
	return 0;
}

/* from yajl's raw text, since values above INT64_MAX do not fit its long long */
static int get_u64(struct ctx *c, yajl_val v, const char *path, uint64_t *out)
{
	const char *r = YAJL_IS_NUMBER(v) ? v->u.number.r : NULL;
	char *end;

	if (r && isdigit((unsigned char)r[0])) {
		errno = 0;
		*out = strtoull(r, &end, 10);
		if (!errno && !*end)
			return 0;
	}
	return bad(c, path, "expected an integer in 0..18446744073709551615");
}

static int dev_number(struct ctx *c, yajl_val v, const char *path, int64_t *out)
{
	*out = QP_DEV_ANY;
	if (absent(v))
		return 0;
	if (!YAJL_IS_INTEGER(v) || YAJL_GET_INTEGER(v) < -1 || YAJL_GET_INTEGER(v) > UINT32_MAX)
		return bad(c, path, "expected -1 (any) or an integer in 0..4294967295");
	*out = YAJL_GET_INTEGER(v);
	return 0;
}

/* One rule: allow (required), type a/c/b (default a), major/minor (default
 * -1, any), access (one or more of r, w, m; may be left out for type a). */
static int dev_rule(struct ctx *c, yajl_val o, const char *path, struct qp_dev_rule *d)
{
	yajl_val allow = qp_json_get(o, "allow"), type = qp_json_get(o, "type");
	yajl_val access = qp_json_get(o, "access");
	char p[PATH_MAX_JSON + 32];

	if (!YAJL_IS_OBJECT(o))
		return bad(c, path, "expected an object");
	snprintf(p, sizeof(p), "%.100s.allow", path);
	if (!YAJL_IS_TRUE(allow) && !YAJL_IS_FALSE(allow))
		return bad(c, p, absent(allow) ? "missing (true or false)" : "expected true or false");
	d->allow = YAJL_IS_TRUE(allow);
	snprintf(p, sizeof(p), "%.100s.type", path);
	d->type = 'a';
	if (!absent(type)) {
		if (!YAJL_IS_STRING(type) || strlen(type->u.string) != 1 ||
		    !strchr("acb", type->u.string[0]))
			return bad(c, p, "expected \"a\", \"c\" or \"b\"");
		d->type = type->u.string[0];
	}
	snprintf(p, sizeof(p), "%.100s.major", path);
	if (dev_number(c, qp_json_get(o, "major"), p, &d->major) < 0)
		return -1;
	snprintf(p, sizeof(p), "%.100s.minor", path);
	if (dev_number(c, qp_json_get(o, "minor"), p, &d->minor) < 0)
		return -1;
	snprintf(p, sizeof(p), "%.100s.access", path);
	if (absent(access) && d->type == 'a') {
		d->access = QP_DEV_RWM;
		return 0;
	}
	if (!YAJL_IS_STRING(access) || !(d->access = qp_dev_access_parse(access->u.string)))
		return bad(c, p, absent(access) ? "missing (one or more of r, w, m)"
						: "expected one or more of r, w, m (\"rwm\")");
	return 0;
}

/* Parsed and checked in both modes; kept only from config.json: update
 * leaves the rules as they were at create, as runc's update does. */
static int devices(struct ctx *c, yajl_val v, const char *path)
{
	struct qp_dev_rule *rules;
	char p[PATH_MAX_JSON + 32];
	size_t n;

	if (!YAJL_IS_ARRAY(v))
		return bad(c, path, "expected an array of objects");
	n = v->u.array.len;
	if (n > QP_SPEC_MAX_ITEMS)
		return bad(c, path, "more than %u entries", QP_SPEC_MAX_ITEMS);
	if (!(rules = calloc(n ? n : 1, sizeof(*rules))))
		return qp_fail(c->err, ENOMEM, "%s", c->what);
	for (size_t i = 0; i < n; i++) {
		snprintf(p, sizeof(p), "%.100s[%zu]", path, i);
		if (dev_rule(c, v->u.array.values[i], p, &rules[i]) < 0) {
			free(rules);
			return -1;
		}
	}
	if (c->strict) {
		free(rules);
		if (n)
			qp_warn("%s: %s: device rules stay as the pod was created (update does not "
				"change them, as with runc)", c->what, path);
		return 0;
	}
	free(c->res->dev_rules);
	c->res->dev_rules = rules;
	c->res->n_dev_rules = n;
	return 0;
}

/* "controller.file": letters, digits and '_', one or more dots; never a
 * path.  The value is written as it is (no newline). */
static bool unified_key_ok(const char *k)
{
	size_t n = strlen(k);

	if (!n || n > 64 || k[0] == '.' || k[n - 1] == '.' || !strchr(k, '.'))
		return false;
	for (const char *p = k; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '_' && *p != '.')
			return false;
	return true;
}

static int unified(struct ctx *c, yajl_val v, const char *path)
{
	struct qp_resources *r = c->res;
	char shown[QP_SHOWN_MAX];

	if (!YAJL_IS_OBJECT(v))
		return bad(c, path, "expected an object of strings");
	for (size_t i = 0; i < v->u.object.len; i++) {
		const char *k = v->u.object.keys[i];
		yajl_val val = v->u.object.values[i];
		if (!unified_key_ok(k))
			return bad(c, path, "\"%s\" is not a cgroup v2 file name", qp_shown(k, shown));
		if (!YAJL_IS_STRING(val) || strlen(val->u.string) > 4096 || strchr(val->u.string, '\n'))
			return bad(c, path, "\"%s\": expected a one-line string", k);
		struct qp_kv *nv = realloc(r->unified, (r->n_unified + 1) * sizeof(*nv));
		if (!nv)
			return qp_fail(c->err, ENOMEM, "%s", c->what);
		r->unified = nv;
		nv[r->n_unified].key = strdup(k);
		nv[r->n_unified].value = strdup(val->u.string);
		if (!nv[r->n_unified].key || !nv[r->n_unified].value) {
			free(nv[r->n_unified].key);
			free(nv[r->n_unified].value);
			return qp_fail(c->err, ENOMEM, "%s", c->what);
		}
		r->n_unified++;
	}
	return 0;
}

const char *const qp_blkio_throttle_keys[QP_BLKIO_THROTTLES] = {
	"throttleReadBpsDevice", "throttleWriteBpsDevice", "throttleReadIOPSDevice", "throttleWriteIOPSDevice"
};

static int dev_major_minor(struct ctx *c, yajl_val o, const char *path, struct qp_blkio_dev *d)
{
	static const char *const keys[2] = { "major", "minor" };
	int64_t *out[2] = { &d->major, &d->minor };
	char p[PATH_MAX_JSON + 48];

	for (int i = 0; i < 2; i++) {
		yajl_val v = qp_json_get(o, keys[i]);
		snprintf(p, sizeof(p), "%.100s.%s", path, keys[i]);
		if (!YAJL_IS_INTEGER(v) || YAJL_GET_INTEGER(v) < 0 || YAJL_GET_INTEGER(v) > UINT32_MAX)
			return bad(c, p, absent(v) ? "missing" : "expected an integer in 0..4294967295");
		*out[i] = YAJL_GET_INTEGER(v);
	}
	return 0;
}

/* [{major, minor, KEY...}] -> a new array; weights: "weight" and
 * "leafWeight" (either), throttles: "rate" */
static int blkio_devs(struct ctx *c, yajl_val v, const char *path, bool weights, struct qp_blkio_dev **out,
		      size_t *n_out)
{
	struct qp_blkio_dev *d;
	char p[PATH_MAX_JSON + 48];
	size_t n;

	if (!YAJL_IS_ARRAY(v))
		return bad(c, path, "expected an array of objects");
	if ((n = v->u.array.len) > QP_SPEC_MAX_ITEMS)
		return bad(c, path, "more than %u entries", QP_SPEC_MAX_ITEMS);
	if (!(d = calloc(n ? n : 1, sizeof(*d))))
		return qp_fail(c->err, ENOMEM, "%s", c->what);
	for (size_t i = 0; i < n; i++) {
		yajl_val o = v->u.array.values[i];
		snprintf(p, sizeof(p), "%.100s[%zu]", path, i);
		if (!YAJL_IS_OBJECT(o)) {
			free(d);
			return bad(c, p, "expected an object");
		}
		if (dev_major_minor(c, o, p, &d[i]) < 0)
			goto fail;
		const char *k[2] = { weights ? "weight" : "rate", weights ? "leafWeight" : NULL };
		uint64_t *dst[2] = { &d[i].value, &d[i].leaf };
		for (int j = 0; j < 2 && k[j]; j++) {
			yajl_val x = qp_json_get(o, k[j]);
			char q[PATH_MAX_JSON + 64];
			snprintf(q, sizeof(q), "%.110s.%s", p, k[j]);
			if (!absent(x) && get_u64(c, x, q, dst[j]) < 0)
				goto fail;
		}
		if (!weights && absent(qp_json_get(o, "rate"))) {
			bad(c, p, "rate: missing");
			goto fail;
		}
		if (weights && !d[i].value && !d[i].leaf) {
			bad(c, p, "neither weight nor leafWeight");
			goto fail;
		}
	}
	free(*out);
	*out = d;
	*n_out = n;
	return 0;
fail:
	free(d);
	return -1;
}

static int blkio(struct ctx *c, yajl_val v, const char *path)
{
	struct qp_resources *r = c->res;
	char p[PATH_MAX_JSON + 48];

	if (!YAJL_IS_OBJECT(v))
		return bad(c, path, "expected an object");
	for (size_t i = 0; i < v->u.object.len; i++) {
		const char *k = v->u.object.keys[i];
		yajl_val x = v->u.object.values[i];
		size_t t = 0;
		snprintf(p, sizeof(p), "%.100s.%s", path, k);
		if (absent(x))
			continue;
		if (!strcmp(k, "weight") || !strcmp(k, "leafWeight")) {
			bool leaf = k[0] == 'l';
			if (get_u64(c, x, p, leaf ? &r->blkio_leaf_weight : &r->blkio_weight) < 0)
				return -1;
			*(leaf ? &r->has_blkio_leaf_weight : &r->has_blkio_weight) = true;
			continue;
		}
		if (!strcmp(k, "weightDevice")) {
			if (blkio_devs(c, x, p, true, &r->blkio_weight_dev, &r->n_blkio_weight_dev) < 0)
				return -1;
			continue;
		}
		while (t < QP_BLKIO_THROTTLES && strcmp(k, qp_blkio_throttle_keys[t]))
			t++;
		if (t < QP_BLKIO_THROTTLES) {
			if (blkio_devs(c, x, p, false, &r->blkio_throttle[t], &r->n_blkio_throttle[t]) < 0)
				return -1;
			continue;
		}
		char shown[QP_SHOWN_MAX];
		if (c->strict)
			return bad(c, path, "unknown field \"%s\"", qp_shown(k, shown));
	}
	return 0;
}

static int section(struct ctx *c, yajl_val obj, const char *path, const struct field *table);

static int one(struct ctx *c, const struct field *f, yajl_val v, const char *path)
{
	char *base = (char *)c->res;

	switch (f->kind) {
	case K_I64:
		if (get_i64(c, v, path, (int64_t *)(base + f->off)) < 0)
			return -1;
		*(bool *)(base + f->has_off) = true;
		return 0;
	case K_U64:
		if (get_u64(c, v, path, (uint64_t *)(base + f->off)) < 0)
			return -1;
		*(bool *)(base + f->has_off) = true;
		return 0;
	case K_STR: {
		char **s = (char **)(base + f->off);
		if (!YAJL_IS_STRING(v))
			return bad(c, path, "expected a string");
		free(*s);
		if (!(*s = strdup(v->u.string)))
			return qp_fail(c->err, ENOMEM, "%s", c->what);
		return 0;
	}
	case K_BOOL:
		if (!YAJL_IS_TRUE(v) && !YAJL_IS_FALSE(v))
			return bad(c, path, "expected true or false");
		*(bool *)(base + f->off) = YAJL_IS_TRUE(v);
		return 0;
	case K_SECTION:
		return section(c, v, path, f->sub);
	case K_DEVICES:
		return devices(c, v, path);
	case K_UNIFIED:
		return unified(c, v, path);
	case K_BLKIO:
		return blkio(c, v, path);
	case K_HUGEPAGES:
		/* kubelet lists every page size with limit 0: nothing to apply */
		if (!YAJL_IS_ARRAY(v))
			return bad(c, path, "expected an array of objects");
		for (size_t i = 0; i < v->u.array.len; i++) {
			yajl_val e = v->u.array.values[i];
			yajl_val lim = YAJL_IS_OBJECT(e) ? qp_json_get(e, "limit") : NULL;
			if (!YAJL_IS_OBJECT(e))
				return bad(c, path, "expected an array of objects");
			if (!empty(lim, 0))
				return bad(c, path, "cannot be applied by qpod (%s)", f->why);
		}
		return 0;
	case K_NO:
		/* never accepted and ignored: refused in config.json as in update */
		if (!empty(v, 0))
			return bad(c, path, "cannot be applied by qpod (%s)", f->why);
		return 0;
	}
	return 0;
}

static int section(struct ctx *c, yajl_val obj, const char *path, const struct field *table)
{
	char p[PATH_MAX_JSON + 32];

	if (!YAJL_IS_OBJECT(obj))
		return bad(c, path, "expected an object");
	for (size_t i = 0; i < obj->u.object.len; i++) {
		const char *key = obj->u.object.keys[i];
		yajl_val v = obj->u.object.values[i];
		const struct field *f = table;

		while (f->key && strcmp(f->key, key))
			f++;
		snprintf(p, sizeof(p), "%s%s%s", path, path[0] ? "." : "", key);
		if (!f->key) {
			char shown[QP_SHOWN_MAX];
			if (c->strict)
				return bad(c, path, "unknown field \"%s\"", qp_shown(key, shown));
			continue;
		}
		if (!absent(v) && one(c, f, v, p) < 0)
			return -1;
	}
	return 0;
}

int spec_resources_parse(yajl_val v, const char *what, const char *prefix, bool strict,
			 struct qp_resources *res, qp_error **err)
{
	struct ctx c = { what, strict, res, err };

	if (absent(v))
		return 0;
	return section(&c, v, prefix, top_fields);
}

int spec_resources_parse_text(const char *text, size_t len, const char *what,
			      struct qp_resources *res, qp_error **err)
{
	yajl_val v = NULL;
	int r;

	if (qp_json_parse_buf(text, len, QP_SPEC_MAX_FILE, what, &v, err) < 0)
		return -1;
	if (!YAJL_IS_OBJECT(v)) {
		yajl_tree_free(v);
		return qp_error_set(err, QP_E_INVALID, 0, "%s: expected a JSON object (OCI LinuxResources)",
				    what);
	}
	r = spec_resources_parse(v, what, "", true, res, err);
	yajl_tree_free(v);
	return r;
}

static int copy_str(char **dst, const char *src)
{
	char *s;

	if (!src)
		return 0;
	if (!(s = strdup(src)))
		return -1;
	free(*dst);
	*dst = s;
	return 0;
}

bool spec_resources_has_blkio(const struct qp_resources *r)
{
	bool any = r->has_blkio_weight || r->has_blkio_leaf_weight || r->n_blkio_weight_dev;

	for (int t = 0; t < QP_BLKIO_THROTTLES; t++)
		any = any || r->n_blkio_throttle[t];
	return any;
}

static int blkio_copy(struct qp_blkio_dev **dst, size_t *n_dst, const struct qp_blkio_dev *src, size_t n)
{
	struct qp_blkio_dev *d = malloc(n * sizeof(*d));

	if (!d)
		return -1;
	memcpy(d, src, n * sizeof(*d));
	free(*dst);
	*dst = d;
	*n_dst = n;
	return 0;
}

int spec_resources_merge(struct qp_resources *dst, const struct qp_resources *u)
{
	/* as runc's update: a zero memory, swap, shares, quota or period means
	 * "unchanged" (a zero pids limit means unlimited) */
#define TAKE(f, zero_keeps)                                       \
	do {                                                      \
		if (u->has_##f && !(zero_keeps && u->f == 0)) {   \
			dst->has_##f = true;                      \
			dst->f = u->f;                            \
		}                                                 \
	} while (0)
	TAKE(memory_limit, true);
	TAKE(memory_swap, true);
	TAKE(cpu_shares, true);
	TAKE(cpu_quota, true);
	TAKE(cpu_period, true);
	TAKE(pids_limit, false);
	TAKE(memory_reservation, false);
	TAKE(memory_swappiness, false);
	TAKE(blkio_weight, true);
	TAKE(blkio_leaf_weight, true);
#undef TAKE
	/* device lists: the update's replace the pod's */
	if (u->n_blkio_weight_dev && blkio_copy(&dst->blkio_weight_dev, &dst->n_blkio_weight_dev,
						u->blkio_weight_dev, u->n_blkio_weight_dev) < 0)
		return -1;
	for (int t = 0; t < QP_BLKIO_THROTTLES; t++)
		if (u->n_blkio_throttle[t] && blkio_copy(&dst->blkio_throttle[t], &dst->n_blkio_throttle[t],
							 u->blkio_throttle[t], u->n_blkio_throttle[t]) < 0)
			return -1;
	if (u->memory_disable_oom_killer)
		dst->memory_disable_oom_killer = true;
	/* memsw >= limit: an unlimited memory limit cannot keep a finite swap */
	if (u->has_memory_limit && u->memory_limit < 0 && !u->has_memory_swap && dst->has_memory_swap)
		dst->memory_swap = -1;
	dst->memory_check_before_update = u->memory_check_before_update;
	if (u->n_dev_rules) {
		struct qp_dev_rule *d = malloc(u->n_dev_rules * sizeof(*d));
		if (!d)
			return -1;
		memcpy(d, u->dev_rules, u->n_dev_rules * sizeof(*d));
		free(dst->dev_rules);
		dst->dev_rules = d;
		dst->n_dev_rules = u->n_dev_rules;
	}
	/* unified: the update's files replace the pod's of the same name */
	for (size_t i = 0; i < u->n_unified; i++) {
		size_t k = 0;
		while (k < dst->n_unified && strcmp(dst->unified[k].key, u->unified[i].key))
			k++;
		if (k == dst->n_unified) {
			struct qp_kv *nv = realloc(dst->unified, (k + 1) * sizeof(*nv));
			if (!nv)
				return -1;
			dst->unified = nv;
			nv[k].key = strdup(u->unified[i].key);
			nv[k].value = NULL;
			if (!nv[k].key)
				return -1;
			dst->n_unified++;
		}
		if (copy_str(&dst->unified[k].value, u->unified[i].value) < 0)
			return -1;
	}
	return copy_str(&dst->cpuset_cpus, u->cpuset_cpus) < 0 ||
			       copy_str(&dst->cpuset_mems, u->cpuset_mems) < 0
		       ? -1
		       : 0;
}

static bool str_differs(const char *a, const char *b)
{
	return (a || b) && (!a || !b || strcmp(a, b));
}

static bool dev_rules_same(const struct qp_resources *a, const struct qp_resources *b)
{
	if (a->n_dev_rules != b->n_dev_rules)
		return false;
	for (size_t i = 0; i < a->n_dev_rules; i++) {
		const struct qp_dev_rule *x = &a->dev_rules[i], *y = &b->dev_rules[i];
		if (x->allow != y->allow || x->type != y->type || x->major != y->major ||
		    x->minor != y->minor || x->access != y->access)
			return false;
	}
	return true;
}

static bool blkio_same(const struct qp_blkio_dev *a, size_t na, const struct qp_blkio_dev *b, size_t nb)
{
	return na == nb && (!na || !memcmp(a, b, na * sizeof(*a)));
}

const char *spec_resources_changed(const struct qp_resources *a, const struct qp_resources *b)
{
#define SAME(f) (a->has_##f == b->has_##f && (!a->has_##f || a->f == b->f))
	if (!SAME(memory_limit))
		return "memory.limit";
	if (!SAME(memory_swap))
		return "memory.swap";
	if (!SAME(cpu_shares))
		return "cpu.shares";
	if (!SAME(cpu_quota))
		return "cpu.quota";
	if (!SAME(cpu_period))
		return "cpu.period";
	if (str_differs(a->cpuset_cpus, b->cpuset_cpus))
		return "cpu.cpus";
	if (str_differs(a->cpuset_mems, b->cpuset_mems))
		return "cpu.mems";
	if (!SAME(pids_limit))
		return "pids.limit";
	if (!SAME(memory_reservation))
		return "memory.reservation";
	if (!SAME(memory_swappiness))
		return "memory.swappiness";
	if (a->memory_disable_oom_killer != b->memory_disable_oom_killer)
		return "memory.disableOOMKiller";
	if (!dev_rules_same(a, b))
		return "devices";
	if (!SAME(blkio_weight) || !SAME(blkio_leaf_weight))
		return "blockIO.weight";
	if (!blkio_same(a->blkio_weight_dev, a->n_blkio_weight_dev, b->blkio_weight_dev, b->n_blkio_weight_dev))
		return "blockIO.weightDevice";
	for (int t = 0; t < QP_BLKIO_THROTTLES; t++)
		if (!blkio_same(a->blkio_throttle[t], a->n_blkio_throttle[t], b->blkio_throttle[t],
				b->n_blkio_throttle[t]))
			return "blockIO.throttle";
	if (a->n_unified != b->n_unified)
		return "unified";
	for (size_t i = 0; i < a->n_unified; i++)
		if (strcmp(a->unified[i].key, b->unified[i].key) ||
		    strcmp(a->unified[i].value, b->unified[i].value))
			return "unified";
#undef SAME
	return NULL;
}

void spec_resources_clear(struct qp_resources *r)
{
	free(r->cpuset_cpus);
	free(r->cpuset_mems);
	free(r->dev_rules);
	free(r->blkio_weight_dev);
	for (int t = 0; t < QP_BLKIO_THROTTLES; t++)
		free(r->blkio_throttle[t]);
	for (size_t i = 0; i < r->n_unified; i++) {
		free(r->unified[i].key);
		free(r->unified[i].value);
	}
	free(r->unified);
	memset(r, 0, sizeof(*r));
}
