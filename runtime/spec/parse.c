/* runtime/spec/parse.c — config.json (OCI runtime-spec 1.0–1.2) -> struct
 * pod_spec, with yajl's tree API.
 *
 * The input is hostile: the file size, every array and object, the JSON
 * nesting and each number's range are bounded; strings with NUL are refused.
 * Unknown keys are ignored (forward compatibility) but a known key with the
 * wrong type is an error naming its JSON path:
 *     config.json: process.args: expected an array of strings
 * JSON null counts as "absent".  Semantic rules that also apply to specs
 * built from CLI flags live in validate.c.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "spec/spec.h"
#include "spec/resources.h"
#include "util/cleanup.h"
#include "util/json.h"
#include "util/strv.h"

#define WHAT "config.json"
#define JPATH_MAX 128   /* longest JSON path we name in errors */

/* ---- errors ---------------------------------------------------------- */

static int bad(qp_error **err, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int bad(qp_error **err, const char *path, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return qp_error_set(err, QP_E_INVALID, 0, WHAT ": %s: %s", path, msg);
}

static int oom(qp_error **err)
{
	return qp_fail(err, ENOMEM, WHAT);
}


/* JSON paths for messages: "parent.key" and "parent[i]" */
static const char *path_done(char *buf, int n)
{
	if (n < 0 || n >= JPATH_MAX)  /* cannot happen with our key names; stay safe */
		strcpy(buf + JPATH_MAX - 4, "...");
	return buf;
}

static const char *jkey(char *buf, const char *parent, const char *key)
{
	return path_done(buf, snprintf(buf, JPATH_MAX, "%s%s%s", parent, parent[0] ? "." : "", key));
}

static const char *jidx(char *buf, const char *parent, size_t i)
{
	return path_done(buf, snprintf(buf, JPATH_MAX, "%s[%zu]", parent, i));
}

/* ---- typed accessors: v == NULL or JSON null means absent ------------- */

static bool absent(yajl_val v)
{
	return !v || YAJL_IS_NULL(v);
}

static int get_str(yajl_val v, const char *path, char **out, qp_error **err)
{
	if (absent(v))
		return 0;
	if (!YAJL_IS_STRING(v))
		return bad(err, path, "expected a string");
	free(*out);
	if (!(*out = strdup(v->u.string)))
		return oom(err);
	return 0;
}

static int get_bool(yajl_val v, const char *path, bool *out, qp_error **err)
{
	if (absent(v))
		return 0;
	if (!YAJL_IS_TRUE(v) && !YAJL_IS_FALSE(v))
		return bad(err, path, "expected true or false");
	*out = YAJL_IS_TRUE(v);
	return 0;
}

/* Signed integer within [min, max]. *has (if given) records presence. */
static int get_int_range(yajl_val v, const char *path, long long min, long long max, long long *out,
			 bool *has, qp_error **err)
{
	if (absent(v))
		return 0;
	if (!YAJL_IS_INTEGER(v) || YAJL_GET_INTEGER(v) < min || YAJL_GET_INTEGER(v) > max)
		return bad(err, path, "expected an integer in %lld..%lld", min, max);
	*out = YAJL_GET_INTEGER(v);
	if (has)
		*has = true;
	return 0;
}

static int get_u32(yajl_val v, const char *path, uint32_t *out, bool *has, qp_error **err)
{
	long long x = 0;
	if (absent(v))
		return 0;
	if (get_int_range(v, path, 0, UINT32_MAX, &x, has, err) < 0)
		return -1;
	*out = (uint32_t)x;
	return 0;
}

static int get_i64(yajl_val v, const char *path, int64_t *out, bool *has, qp_error **err)
{
	long long x = 0;
	if (absent(v))
		return 0;
	if (get_int_range(v, path, INT64_MIN, INT64_MAX, &x, has, err) < 0)
		return -1;
	*out = x;
	return 0;
}

/* Unsigned 64-bit: read from yajl's raw text, since values above INT64_MAX
 * (RLIM_INFINITY, seccomp masks) do not fit its long long. */
static int get_u64(yajl_val v, const char *path, uint64_t *out, bool *has, qp_error **err)
{
	const char *r;
	char *end;
	unsigned long long x;

	if (absent(v))
		return 0;
	r = YAJL_IS_NUMBER(v) ? v->u.number.r : NULL;
	if (!r || !isdigit((unsigned char)r[0]))
		return bad(err, path, "expected an integer in 0..18446744073709551615");
	errno = 0;
	x = strtoull(r, &end, 10);
	if (errno || *end)
		return bad(err, path, "expected an integer in 0..18446744073709551615");
	*out = x;
	if (has)
		*has = true;
	return 0;
}

/* Array of at most QP_SPEC_MAX_ITEMS; *n = 0 when absent. */
static int get_array(yajl_val v, const char *path, const char *of, size_t *n, qp_error **err)
{
	*n = 0;
	if (absent(v))
		return 0;
	if (!YAJL_IS_ARRAY(v))
		return bad(err, path, "expected an array of %s", of);
	if (v->u.array.len > QP_SPEC_MAX_ITEMS)
		return bad(err, path, "more than %u entries", QP_SPEC_MAX_ITEMS);
	*n = v->u.array.len;
	return 0;
}

/* Array of strings -> NULL-terminated vector (left NULL when absent). */
static int get_strv(yajl_val v, const char *path, char ***out, qp_error **err)
{
	size_t n;
	char **vec;

	if (get_array(v, path, "strings", &n, err) < 0)
		return -1;
	if (absent(v))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!YAJL_IS_STRING(v->u.array.values[i]))
			return bad(err, path, "expected an array of strings");
	if (!(vec = calloc(n + 1, sizeof(*vec))))
		return oom(err);
	for (size_t i = 0; i < n; i++)
		if (!(vec[i] = strdup(v->u.array.values[i]->u.string))) {
			qp_strv_free(vec);
			return oom(err);
		}
	qp_strv_free(*out);
	*out = vec;
	return 0;
}

/* Object of string values -> key/value array. */
static int get_kv(yajl_val v, const char *path, struct qp_kv **out, size_t *n_out, qp_error **err)
{
	size_t n;

	if (absent(v))
		return 0;
	if (!YAJL_IS_OBJECT(v))
		return bad(err, path, "expected an object of strings");
	n = v->u.object.len;
	if (n > QP_SPEC_MAX_ITEMS)
		return bad(err, path, "more than %u entries", QP_SPEC_MAX_ITEMS);
	for (size_t i = 0; i < n; i++)
		if (!YAJL_IS_STRING(v->u.object.values[i]))
			return bad(err, path, "expected an object of strings");
	if (n == 0)
		return 0;
	if (!(*out = calloc(n, sizeof(**out))))
		return oom(err);
	*n_out = n;
	for (size_t i = 0; i < n; i++)
		if (!((*out)[i].key = strdup(v->u.object.keys[i])) ||
		    !((*out)[i].value = strdup(v->u.object.values[i]->u.string)))
			return oom(err);
	return 0;
}

#define F(obj, key) qp_json_get((obj), (key))

/* ---- sections -------------------------------------------------------- */

static int parse_root(yajl_val top, struct pod_spec *s, qp_error **err)
{
	yajl_val root = F(top, "root");

	if (absent(root))
		return bad(err, "root", "missing (qpod needs root.path)");
	if (!YAJL_IS_OBJECT(root))
		return bad(err, "root", "expected an object");
	if (get_str(F(root, "path"), "root.path", &s->root_path, err) < 0 ||
	    get_bool(F(root, "readonly"), "root.readonly", &s->root_readonly, err) < 0)
		return -1;
	if (!s->root_path || !s->root_path[0])
		return bad(err, "root.path", "missing");
	return 0;
}

/* An array of objects -> a calloc'd array of `size`-byte elements, each
 * filled by fn(object, its JSON path, element, index, ctx).  The array is
 * handed to *out before the elements are parsed, so whoever frees the spec
 * frees a half-parsed array too.  Absent or empty: *out stays NULL. */
typedef int (*obj_fn)(yajl_val o, const char *path, void *elem, size_t i, void *ctx,
		      qp_error **err);

static int parse_objects(yajl_val a, const char *path, size_t size, void **out, size_t *n_out,
			 obj_fn fn, void *ctx, qp_error **err)
{
	char p[JPATH_MAX];
	char *arr;
	size_t n;

	if (get_array(a, path, "objects", &n, err) < 0)
		return -1;
	if (n == 0)
		return 0;
	if (!(arr = calloc(n, size)))
		return oom(err);
	*out = arr;
	*n_out = n;
	for (size_t i = 0; i < n; i++) {
		yajl_val o = a->u.array.values[i];

		jidx(p, path, i);
		if (!YAJL_IS_OBJECT(o))
			return bad(err, p, "expected an object");
		if (fn(o, p, arr + i * size, i, ctx, err) < 0)
			return -1;
	}
	return 0;
}

static int parse_mount(yajl_val m, const char *p, void *elem, size_t i, void *ctx, qp_error **err)
{
	struct qp_mount *mt = elem;
	char q[JPATH_MAX];

	if (get_str(F(m, "destination"), jkey(q, p, "destination"), &mt->destination, err) < 0 ||
	    get_str(F(m, "type"), jkey(q, p, "type"), &mt->type, err) < 0 ||
	    get_str(F(m, "source"), jkey(q, p, "source"), &mt->source, err) < 0 ||
	    get_strv(F(m, "options"), jkey(q, p, "options"), &mt->options, err) < 0)
		return -1;
	if (!mt->destination)
		return bad(err, jkey(q, p, "destination"), "missing");
	mt->n_options = qp_strv_len(mt->options);
	return 0;
}

static int parse_mounts(yajl_val top, struct pod_spec *s, qp_error **err)
{
	return parse_objects(F(top, "mounts"), "mounts", sizeof(*s->mounts), (void **)&s->mounts,
			     &s->n_mounts, parse_mount, NULL, err);
}

static const struct {
	const char *name;
	int resource;
} rlimit_names[] = {
	{ "RLIMIT_AS", RLIMIT_AS },           { "RLIMIT_CORE", RLIMIT_CORE },
	{ "RLIMIT_CPU", RLIMIT_CPU },         { "RLIMIT_DATA", RLIMIT_DATA },
	{ "RLIMIT_FSIZE", RLIMIT_FSIZE },     { "RLIMIT_LOCKS", RLIMIT_LOCKS },
	{ "RLIMIT_MEMLOCK", RLIMIT_MEMLOCK }, { "RLIMIT_MSGQUEUE", RLIMIT_MSGQUEUE },
	{ "RLIMIT_NICE", RLIMIT_NICE },       { "RLIMIT_NOFILE", RLIMIT_NOFILE },
	{ "RLIMIT_NPROC", RLIMIT_NPROC },     { "RLIMIT_RSS", RLIMIT_RSS },
	{ "RLIMIT_RTPRIO", RLIMIT_RTPRIO },   { "RLIMIT_RTTIME", RLIMIT_RTTIME },
	{ "RLIMIT_SIGPENDING", RLIMIT_SIGPENDING }, { "RLIMIT_STACK", RLIMIT_STACK },
};

static int parse_rlimit(yajl_val o, const char *p, void *elem, size_t i, void *ctx, qp_error **err)
{
	struct qp_process *pr = ctx;
	struct qp_rlimit *rl = elem;
	char q[JPATH_MAX], sbuf[QP_SHOWN_MAX];
	bool has_soft = false, has_hard = false;
	size_t k;

	if (get_str(F(o, "type"), jkey(q, p, "type"), &rl->type, err) < 0 ||
	    get_u64(F(o, "soft"), jkey(q, p, "soft"), &rl->soft, &has_soft, err) < 0 ||
	    get_u64(F(o, "hard"), jkey(q, p, "hard"), &rl->hard, &has_hard, err) < 0)
		return -1;
	if (!rl->type)
		return bad(err, jkey(q, p, "type"), "missing");
	if (!has_soft || !has_hard)
		return bad(err, jkey(q, p, has_soft ? "hard" : "soft"), "missing");
	for (k = 0; k < QP_ARRAY_SIZE(rlimit_names); k++)
		if (strcmp(rl->type, rlimit_names[k].name) == 0)
			break;
	if (k == QP_ARRAY_SIZE(rlimit_names))
		return bad(err, jkey(q, p, "type"), "unknown rlimit \"%s\"", qp_shown(rl->type, sbuf));
	rl->resource = rlimit_names[k].resource;
	for (size_t j = 0; j < i; j++)
		if (pr->rlimits[j].resource == rl->resource)
			return bad(err, jkey(q, p, "type"), "duplicate rlimit %s", rlimit_names[k].name);
	return 0;
}

static int parse_rlimits(yajl_val a, struct qp_process *pr, qp_error **err)
{
	return parse_objects(a, "process.rlimits", sizeof(*pr->rlimits), (void **)&pr->rlimits,
			     &pr->n_rlimits, parse_rlimit, pr, err);
}

static int parse_user(yajl_val u, struct qp_process *pr, qp_error **err)
{
	size_t n;
	yajl_val g;
	char q[JPATH_MAX];

	if (absent(u))
		return 0;
	if (!YAJL_IS_OBJECT(u))
		return bad(err, "process.user", "expected an object");
	if (get_u32(F(u, "uid"), "process.user.uid", &pr->uid, NULL, err) < 0 ||
	    get_u32(F(u, "gid"), "process.user.gid", &pr->gid, NULL, err) < 0 ||
	    get_u32(F(u, "umask"), "process.user.umask", &pr->umask, &pr->has_umask, err) < 0)
		return -1;
	if (pr->has_umask && pr->umask > 0777)
		return bad(err, "process.user.umask", "expected an integer in 0..511 (0777)");
	g = F(u, "additionalGids");
	if (get_array(g, "process.user.additionalGids", "integers", &n, err) < 0)
		return -1;
	if (n == 0)
		return 0;
	if (!(pr->additional_gids = calloc(n, sizeof(*pr->additional_gids))))
		return oom(err);
	pr->n_additional_gids = n;
	for (size_t i = 0; i < n; i++) {
		yajl_val x = g->u.array.values[i];

		jidx(q, "process.user.additionalGids", i);
		if (absent(x))
			return bad(err, q, "expected an integer in 0..4294967295");
		if (get_u32(x, q, &pr->additional_gids[i], NULL, err) < 0)
			return -1;
	}
	return 0;
}

static int parse_caps(yajl_val c, struct qp_caps *caps, qp_error **err)
{
	if (absent(c))
		return 0;
	if (!YAJL_IS_OBJECT(c))
		return bad(err, "process.capabilities", "expected an object");
	caps->present = true;
	if (get_strv(F(c, "bounding"), "process.capabilities.bounding", &caps->bounding, err) < 0 ||
	    get_strv(F(c, "effective"), "process.capabilities.effective", &caps->effective, err) < 0 ||
	    get_strv(F(c, "inheritable"), "process.capabilities.inheritable", &caps->inheritable, err) < 0 ||
	    get_strv(F(c, "permitted"), "process.capabilities.permitted", &caps->permitted, err) < 0 ||
	    get_strv(F(c, "ambient"), "process.capabilities.ambient", &caps->ambient, err) < 0)
		return -1;
	return 0;
}

static int parse_process(yajl_val top, struct pod_spec *s, qp_error **err)
{
	yajl_val p = F(top, "process");
	struct qp_process *pr = &s->process;
	long long oom_adj = 0;

	if (absent(p))
		return bad(err, "process", "missing");
	if (!YAJL_IS_OBJECT(p))
		return bad(err, "process", "expected an object");
	if (get_bool(F(p, "terminal"), "process.terminal", &pr->terminal, err) < 0 ||
	    parse_user(F(p, "user"), pr, err) < 0 ||
	    get_strv(F(p, "args"), "process.args", &pr->args, err) < 0 ||
	    get_strv(F(p, "env"), "process.env", &pr->env, err) < 0 ||
	    get_str(F(p, "cwd"), "process.cwd", &pr->cwd, err) < 0 ||
	    parse_caps(F(p, "capabilities"), &pr->caps, err) < 0 ||
	    parse_rlimits(F(p, "rlimits"), pr, err) < 0 ||
	    get_bool(F(p, "noNewPrivileges"), "process.noNewPrivileges", &pr->no_new_privileges, err) < 0 ||
	    get_str(F(p, "apparmorProfile"), "process.apparmorProfile", &pr->apparmor_profile, err) < 0 ||
	    get_str(F(p, "selinuxLabel"), "process.selinuxLabel", &pr->selinux_label, err) < 0 ||
	    get_int_range(F(p, "oomScoreAdj"), "process.oomScoreAdj", -1000, 1000, &oom_adj,
			  &pr->has_oom_score_adj, err) < 0)
		return -1;
	pr->oom_score_adj = (int)oom_adj;
	if (!pr->args || !pr->args[0])
		return bad(err, "process.args", pr->args ? "must not be empty" : "missing");
	if (!pr->cwd)
		return bad(err, "process.cwd", "missing");
	if (pr->cwd[0] != '/')
		return bad(err, "process.cwd", "must be an absolute path");
	return 0;
}

static int parse_namespaces(yajl_val a, struct pod_spec *s, qp_error **err)
{
	char p[JPATH_MAX], q[JPATH_MAX], sbuf[QP_SHOWN_MAX];
	size_t n;

	if (get_array(a, "linux.namespaces", "objects", &n, err) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		yajl_val o = a->u.array.values[i];
		_cleanup_free_ char *type = NULL, *path = NULL;
		int ns;

		jidx(p, "linux.namespaces", i);
		if (!YAJL_IS_OBJECT(o))
			return bad(err, p, "expected an object");
		if (get_str(F(o, "type"), jkey(q, p, "type"), &type, err) < 0 ||
		    get_str(F(o, "path"), jkey(q, p, "path"), &path, err) < 0)
			return -1;
		if (!type)
			return bad(err, jkey(q, p, "type"), "missing");
		if ((ns = qp_ns_from_name(type)) < 0)
			return bad(err, jkey(q, p, "type"), "unknown namespace \"%s\"", qp_shown(type, sbuf));
		if (s->ns[ns].enabled)
			return bad(err, p, "duplicate namespace \"%s\"", qp_ns_name(ns));
		s->ns[ns].enabled = true;
		s->ns[ns].path = steal_ptr(&path);
	}
	return 0;
}

/* linux.timeOffsets: {"monotonic"|"boottime": {"secs": N, "nanosecs": M}};
 * another clock cannot be offset and is refused. */
static int parse_time_offsets(yajl_val o, struct pod_spec *s, qp_error **err)
{
	char p[JPATH_MAX], q[JPATH_MAX], sbuf[QP_SHOWN_MAX];

	if (absent(o))
		return 0;
	if (!YAJL_IS_OBJECT(o))
		return bad(err, "linux.timeOffsets", "expected an object");
	for (size_t i = 0; i < o->u.object.len; i++) {
		const char *key = o->u.object.keys[i];
		yajl_val v = o->u.object.values[i];
		struct qp_time_offset *t = NULL;
		long long ns = 0;

		for (int c = 0; c < QP_TIME_COUNT; c++)
			if (!strcmp(key, qp_time_clock_names[c]))
				t = &s->time_offsets[c];
		if (!t)
			return bad(err, "linux.timeOffsets", "unknown clock \"%s\" (monotonic, boottime)",
				   qp_shown(key, sbuf));
		jkey(p, "linux.timeOffsets", key);
		if (!YAJL_IS_OBJECT(v))
			return bad(err, p, "expected an object");
		if (get_i64(F(v, "secs"), jkey(q, p, "secs"), &t->secs, NULL, err) < 0 ||
		    get_int_range(F(v, "nanosecs"), jkey(q, p, "nanosecs"), 0, 999999999, &ns, NULL, err) < 0)
			return -1;
		t->nanosecs = (uint32_t)ns;
		t->set = true;
	}
	return 0;
}

static int parse_idmap(yajl_val o, const char *p, void *elem, size_t i, void *ctx, qp_error **err)
{
	struct qp_idmap *m = elem;
	char q[JPATH_MAX];
	bool hc = false, hh = false, hs = false;

	if (get_u32(F(o, "containerID"), jkey(q, p, "containerID"), &m->container_id, &hc, err) < 0 ||
	    get_u32(F(o, "hostID"), jkey(q, p, "hostID"), &m->host_id, &hh, err) < 0 ||
	    get_u32(F(o, "size"), jkey(q, p, "size"), &m->size, &hs, err) < 0)
		return -1;
	if (!hc || !hh || !hs)
		return bad(err, jkey(q, p, !hc ? "containerID" : !hh ? "hostID" : "size"), "missing");
	return 0;
}

static int parse_idmaps(yajl_val a, const char *path, struct qp_idmap **out, size_t *n_out,
			qp_error **err)
{
	return parse_objects(a, path, sizeof(**out), (void **)out, n_out, parse_idmap, NULL, err);
}

static int parse_resources(yajl_val r, struct qp_resources *res, qp_error **err)
{
	return spec_resources_parse(r, WHAT, "linux.resources", false, res, err);
}

static int parse_seccomp_arg(yajl_val o, const char *p, void *elem, size_t i, void *ctx,
			     qp_error **err)
{
	struct qp_seccomp_arg *arg = elem;
	char q[JPATH_MAX];
	uint32_t index = 0;
	bool has_index = false;

	if (get_u32(F(o, "index"), jkey(q, p, "index"), &index, &has_index, err) < 0 ||
	    get_u64(F(o, "value"), jkey(q, p, "value"), &arg->value, NULL, err) < 0 ||
	    get_u64(F(o, "valueTwo"), jkey(q, p, "valueTwo"), &arg->value_two, NULL, err) < 0 ||
	    get_str(F(o, "op"), jkey(q, p, "op"), &arg->op, err) < 0)
		return -1;
	if (!has_index)
		return bad(err, jkey(q, p, "index"), "missing");
	if (index > 5)
		return bad(err, jkey(q, p, "index"), "expected an integer in 0..5");
	arg->index = index;
	if (!arg->op)
		return bad(err, jkey(q, p, "op"), "missing");
	return 0;
}

static int parse_seccomp_args(yajl_val a, const char *path, struct qp_seccomp_rule *r, qp_error **err)
{
	return parse_objects(a, path, sizeof(*r->args), (void **)&r->args, &r->n_args,
			     parse_seccomp_arg, NULL, err);
}

static int parse_seccomp_rule(yajl_val r, const char *p, void *elem, size_t i, void *ctx,
			      qp_error **err)
{
	struct qp_seccomp_rule *rule = elem;
	char q[JPATH_MAX];

	if (get_strv(F(r, "names"), jkey(q, p, "names"), &rule->names, err) < 0 ||
	    get_str(F(r, "action"), jkey(q, p, "action"), &rule->action, err) < 0 ||
	    get_u32(F(r, "errnoRet"), jkey(q, p, "errnoRet"), &rule->errno_ret, &rule->has_errno_ret,
		    err) < 0 ||
	    parse_seccomp_args(F(r, "args"), jkey(q, p, "args"), rule, err) < 0)
		return -1;
	if (!rule->names || !rule->names[0])
		return bad(err, jkey(q, p, "names"), rule->names ? "must not be empty" : "missing");
	if (!rule->action)
		return bad(err, jkey(q, p, "action"), "missing");
	return 0;
}

static int parse_seccomp(yajl_val o, struct pod_spec *s, qp_error **err)
{
	struct qp_seccomp *sc;

	if (absent(o))
		return 0;
	if (!YAJL_IS_OBJECT(o))
		return bad(err, "linux.seccomp", "expected an object");
	if (!(sc = s->seccomp = calloc(1, sizeof(*sc))))
		return oom(err);
	if (get_str(F(o, "defaultAction"), "linux.seccomp.defaultAction", &sc->default_action, err) < 0 ||
	    get_u32(F(o, "defaultErrnoRet"), "linux.seccomp.defaultErrnoRet", &sc->default_errno_ret,
		    &sc->has_default_errno_ret, err) < 0 ||
	    get_strv(F(o, "architectures"), "linux.seccomp.architectures", &sc->architectures, err) < 0 ||
	    get_strv(F(o, "flags"), "linux.seccomp.flags", &sc->flags, err) < 0)
		return -1;
	if (!sc->default_action)
		return bad(err, "linux.seccomp.defaultAction", "missing");
	return parse_objects(F(o, "syscalls"), "linux.seccomp.syscalls", sizeof(*sc->rules),
			     (void **)&sc->rules, &sc->n_rules, parse_seccomp_rule, NULL, err);
}

static int parse_device(yajl_val o, const char *p, void *elem, size_t i, void *ctx, qp_error **err)
{
	struct qp_device *d = elem;
	char q[JPATH_MAX];
	_cleanup_free_ char *type = NULL;

	if (get_str(F(o, "type"), jkey(q, p, "type"), &type, err) < 0 ||
	    get_str(F(o, "path"), jkey(q, p, "path"), &d->path, err) < 0 ||
	    get_i64(F(o, "major"), jkey(q, p, "major"), &d->major, NULL, err) < 0 ||
	    get_i64(F(o, "minor"), jkey(q, p, "minor"), &d->minor, NULL, err) < 0 ||
	    get_u32(F(o, "fileMode"), jkey(q, p, "fileMode"), &d->mode, &d->has_mode, err) < 0 ||
	    get_u32(F(o, "uid"), jkey(q, p, "uid"), &d->uid, &d->has_uid, err) < 0 ||
	    get_u32(F(o, "gid"), jkey(q, p, "gid"), &d->gid, &d->has_gid, err) < 0)
		return -1;
	if (!d->path)
		return bad(err, jkey(q, p, "path"), "missing");
	if (!type)
		return bad(err, jkey(q, p, "type"), "missing");
	if (strlen(type) != 1 || !strchr("cbup", type[0]))
		return bad(err, jkey(q, p, "type"), "expected \"c\", \"b\", \"u\" or \"p\"");
	d->type = type[0];
	return 0;
}

static int parse_devices(yajl_val a, struct pod_spec *s, qp_error **err)
{
	return parse_objects(a, "linux.devices", sizeof(*s->devices), (void **)&s->devices,
			     &s->n_devices, parse_device, NULL, err);
}

static int parse_linux(yajl_val top, struct pod_spec *s, qp_error **err)
{
	yajl_val l = F(top, "linux");

	if (absent(l))
		return 0;
	if (!YAJL_IS_OBJECT(l))
		return bad(err, "linux", "expected an object");
	return parse_namespaces(F(l, "namespaces"), s, err) < 0 ||
			       parse_time_offsets(F(l, "timeOffsets"), s, err) < 0 ||
			       parse_idmaps(F(l, "uidMappings"), "linux.uidMappings", &s->uid_mappings,
					    &s->n_uid_mappings, err) < 0 ||
			       parse_idmaps(F(l, "gidMappings"), "linux.gidMappings", &s->gid_mappings,
					    &s->n_gid_mappings, err) < 0 ||
			       parse_resources(F(l, "resources"), &s->resources, err) < 0 ||
			       get_str(F(l, "cgroupsPath"), "linux.cgroupsPath", &s->cgroups_path, err) < 0 ||
			       get_kv(F(l, "sysctl"), "linux.sysctl", &s->sysctl, &s->n_sysctl, err) < 0 ||
			       parse_seccomp(F(l, "seccomp"), s, err) < 0 ||
			       get_str(F(l, "rootfsPropagation"), "linux.rootfsPropagation",
				       &s->rootfs_propagation, err) < 0 ||
			       get_str(F(l, "mountLabel"), "linux.mountLabel", &s->mount_label, err) < 0 ||
			       get_strv(F(l, "maskedPaths"), "linux.maskedPaths", &s->masked_paths, err) < 0 ||
			       get_strv(F(l, "readonlyPaths"), "linux.readonlyPaths", &s->readonly_paths,
					err) < 0 ||
			       parse_devices(F(l, "devices"), s, err) < 0
		       ? -1
		       : 0;
}

static int parse_hook(yajl_val o, const char *p, void *elem, size_t i, void *ctx, qp_error **err)
{
	struct qp_hook *h = elem;
	char q[JPATH_MAX];
	long long timeout = 0;

	if (get_str(F(o, "path"), jkey(q, p, "path"), &h->path, err) < 0 ||
	    get_strv(F(o, "args"), jkey(q, p, "args"), &h->args, err) < 0 ||
	    get_strv(F(o, "env"), jkey(q, p, "env"), &h->env, err) < 0 ||
	    get_int_range(F(o, "timeout"), jkey(q, p, "timeout"), 1, INT32_MAX, &timeout, NULL, err) < 0)
		return -1;
	if (!h->path)
		return bad(err, jkey(q, p, "path"), "missing");
	if (h->path[0] != '/')
		return bad(err, jkey(q, p, "path"), "must be an absolute path");
	h->timeout = (int)timeout;
	return 0;
}

/* hooks.{prestart,createRuntime,...}: arrays of hooks; other keys ignored */
static int parse_hooks(yajl_val o, struct pod_spec *s, qp_error **err)
{
	char p[JPATH_MAX];

	if (absent(o))
		return 0;
	if (!YAJL_IS_OBJECT(o))
		return bad(err, "hooks", "expected an object");
	for (int k = 0; k < QP_HOOK_COUNT; k++)
		if (parse_objects(F(o, qp_hook_name(k)), jkey(p, "hooks", qp_hook_name(k)),
				  sizeof(*s->hooks[k]), (void **)&s->hooks[k], &s->n_hooks[k], parse_hook,
				  NULL, err) < 0)
			return -1;
	return 0;
}

static bool version_supported(const char *v)
{
	/* "1.0", "1.1.0", "1.2.0-rc.1", "1.0.2-dev": major 1, minor 0..2 */
	if (strncmp(v, "1.", 2) != 0 || v[2] < '0' || v[2] > '2')
		return false;
	return v[3] == '\0' || v[3] == '.' || v[3] == '-' || v[3] == '+';
}

static int parse_tree(yajl_val top, struct pod_spec *s, qp_error **err)
{
	char vbuf[QP_SHOWN_MAX];

	if (!YAJL_IS_OBJECT(top))
		return qp_error_set(err, QP_E_INVALID, 0, WHAT ": expected a JSON object");
	if (get_str(F(top, "ociVersion"), "ociVersion", &s->oci_version, err) < 0)
		return -1;
	if (!s->oci_version)
		return bad(err, "ociVersion", "missing");
	if (!version_supported(s->oci_version))
		return qp_error_set(err, QP_E_INVALID, 0,
				    WHAT ": ociVersion \"%s\" is not supported (1.0.x\u20131.2.x)",
				    qp_shown(s->oci_version, vbuf));
	if (parse_root(top, s, err) < 0 ||
	    get_str(F(top, "hostname"), "hostname", &s->hostname, err) < 0 ||
	    get_str(F(top, "domainname"), "domainname", &s->domainname, err) < 0 ||
	    parse_mounts(top, s, err) < 0 || parse_process(top, s, err) < 0 ||
	    get_kv(F(top, "annotations"), "annotations", &s->annotations, &s->n_annotations, err) < 0 ||
	    parse_hooks(F(top, "hooks"), s, err) < 0 || parse_linux(top, s, err) < 0 ||
	    spec_opts_parse(s, err) < 0)
		return -1;
	return 0;
}

int spec_parse(const char *json, size_t len, struct pod_spec **out, qp_error **err)
{
	struct pod_spec *s;
	yajl_val top = NULL;
	int r;

	*out = NULL;
	if (qp_json_parse_buf(json, len, QP_SPEC_MAX_FILE, WHAT, &top, err) < 0)
		return -1;
	if (!(s = calloc(1, sizeof(*s)))) {
		yajl_tree_free(top);
		return oom(err);
	}
	r = parse_tree(top, s, err);
	yajl_tree_free(top);
	if (r < 0) {
		spec_free(s);
		return -1;
	}
	*out = s;
	return 0;
}

int spec_load_bundle(const char *bundle_dir, struct pod_spec **out, qp_error **err)
{
	_cleanup_free_ char *path = NULL, *buf = NULL;
	_cleanup_close_ int fd = -1;
	struct stat st;
	size_t len = 0;

	*out = NULL;
	if (asprintf(&path, "%s/config.json", bundle_dir) < 0) {
		path = NULL;
		return oom(err);
	}
	/* O_NONBLOCK: a FIFO planted as config.json must not hang us before fstat */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return qp_fail(err, errno, "open \"%s\"", path);
	if (fstat(fd, &st) < 0)
		return qp_fail(err, errno, "stat \"%s\"", path);
	if (!S_ISREG(st.st_mode))
		return qp_error_set(err, QP_E_INVALID, 0, "\"%s\": not a regular file", path);
	if (st.st_size > (off_t)QP_SPEC_MAX_FILE)
		return qp_error_set(err, QP_E_INVALID, 0, "\"%s\": larger than %u bytes", path,
				    QP_SPEC_MAX_FILE);
	/* read up to the bound + 1, so a file growing under us is still caught */
	if (!(buf = malloc(QP_SPEC_MAX_FILE + 1)))
		return oom(err);
	for (;;) {
		ssize_t n = read(fd, buf + len, QP_SPEC_MAX_FILE + 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return qp_fail(err, errno, "read \"%s\"", path);
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > QP_SPEC_MAX_FILE)
			return qp_error_set(err, QP_E_INVALID, 0, "\"%s\": larger than %u bytes", path,
					    QP_SPEC_MAX_FILE);
	}
	return spec_parse(buf, len, out, err);
}
