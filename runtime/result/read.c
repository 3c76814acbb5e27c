/* runtime/result/read.c — the JSON reader of the result format
 * (result.h, docs/REPORTS.md).  The input is hostile: the file size, every
 * type, every string length and every enumerated value is checked, and an
 * error names the field ("results[2].unit: expected a string"). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "result/result.h"
#include "util/cleanup.h"
#include "util/json.h"

#define BAD(err, ...) qp_error_set(err, QP_E_INVALID, 0, __VA_ARGS__)

/* A field: "where.key" for messages; where may be "" at the top level. */
struct field {
	const char *where, *key;
};
#define FMT "%s%s%s"
#define ARGS(f) (f).where, *(f).where ? "." : "", (f).key

static bool number(yajl_val v, double *out)
{
	if (!YAJL_IS_DOUBLE(v) || !isfinite(v->u.number.d))
		return false;
	*out = v->u.number.d;
	return true;
}

/* A string field of at most max bytes; absent or null is fine unless required. */
static int str_field(yajl_val obj, struct field f, bool required, size_t max, char **out,
		     qp_error **err)
{
	yajl_val v = qp_json_get(obj, f.key);

	if (!v || YAJL_IS_NULL(v)) {
		if (required)
			return BAD(err, FMT ": missing", ARGS(f));
		return 0;
	}
	if (!YAJL_IS_STRING(v))
		return BAD(err, FMT ": expected a string", ARGS(f));
	if (strlen(v->u.string) > max)
		return BAD(err, FMT ": longer than %zu bytes", ARGS(f), max);
	return qp_bench_set(out, v->u.string, err);
}

static int enum_field(yajl_val obj, struct field f, const char *const *allowed, char **out,
		      qp_error **err)
{
	char shown[QP_SHOWN_MAX];

	if (str_field(obj, f, true, QP_BENCH_MAX_NAME, out, err) < 0)
		return -1;
	if (!qp_bench_one_of(*out, allowed))
		return BAD(err, FMT ": unknown value \"%s\"", ARGS(f), qp_shown(*out, shown));
	return 0;
}

static int int_field(yajl_val obj, struct field f, long long *out, qp_error **err)
{
	yajl_val v = qp_json_get(obj, f.key);

	if (!v)
		return BAD(err, FMT ": missing", ARGS(f));
	if (!YAJL_IS_INTEGER(v) || YAJL_GET_INTEGER(v) < 0)
		return BAD(err, FMT ": expected a non-negative integer", ARGS(f));
	*out = YAJL_GET_INTEGER(v);
	return 0;
}

static int object_field(yajl_val obj, struct field f, yajl_val *out, qp_error **err)
{
	*out = qp_json_get(obj, f.key);
	if (!*out)
		return BAD(err, FMT ": missing", ARGS(f));
	if (!YAJL_IS_OBJECT(*out))
		return BAD(err, FMT ": expected an object", ARGS(f));
	return 0;
}

static int read_host(yajl_val root, struct qp_bench_host *h, qp_error **err)
{
	long long cores, mem;
	yajl_val o;

	if (object_field(root, (struct field){ "", "host" }, &o, err) < 0 ||
	    str_field(o, (struct field){ "host", "cpu" }, false, QP_BENCH_MAX_NAME, &h->cpu, err) < 0 ||
	    int_field(o, (struct field){ "host", "cores" }, &cores, err) < 0 ||
	    int_field(o, (struct field){ "host", "mem_mb" }, &mem, err) < 0 ||
	    str_field(o, (struct field){ "host", "kernel" }, false, QP_BENCH_MAX_NAME, &h->kernel, err) < 0 ||
	    str_field(o, (struct field){ "host", "qemu" }, false, QP_BENCH_MAX_NAME, &h->qemu, err) < 0)
		return -1;
	h->cores = (long)cores;
	h->mem_mb = (long)mem;
	return 0;
}

static int read_params(yajl_val root, struct qp_bench_report *r, qp_error **err)
{
	yajl_val o;
	double d;

	if (object_field(root, (struct field){ "", "params" }, &o, err) < 0)
		return -1;
	for (size_t i = 0; i < o->u.object.len; i++) {
		const char *key = o->u.object.keys[i];
		yajl_val v = o->u.object.values[i];
		char shown[QP_SHOWN_MAX];
		if (strlen(key) > QP_BENCH_MAX_NAME)
			return BAD(err, "params: a key is longer than %d bytes", QP_BENCH_MAX_NAME);
		if (YAJL_IS_STRING(v) && strlen(v->u.string) <= QP_BENCH_MAX_NAME) {
			if (qp_bench_param_str(r, key, v->u.string, err) < 0)
				return -1;
		} else if (number(v, &d)) {
			if (qp_bench_param_num(r, key, d, err) < 0)
				return -1;
		} else {
			return BAD(err, "params.%s: expected a number or a string of at most %d bytes",
				   qp_shown(key, shown), QP_BENCH_MAX_NAME);
		}
	}
	return 0;
}

/* The stored statistics must be numbers (null when there are no samples);
 * their values are recomputed from the samples. */
static int check_stats(yajl_val o, const char *where, size_t n, qp_error **err)
{
	static const char *const keys[] = { "min", "max", "avg", "median" };
	double d;

	for (size_t k = 0; k < QP_ARRAY_SIZE(keys); k++) {
		yajl_val v = qp_json_get(o, keys[k]);
		if (!v)
			return BAD(err, "%s.%s: missing", where, keys[k]);
		if (!number(v, &d) && !(n == 0 && YAJL_IS_NULL(v)))
			return BAD(err, "%s.%s: expected a number", where, keys[k]);
	}
	return 0;
}

static int read_result(yajl_val o, const char *where, struct qp_bench_report *r, qp_error **err)
{
	_cleanup_free_ char *name = NULL, *metric = NULL, *unit = NULL, *target = NULL, *test = NULL;
	_cleanup_free_ char *reason = NULL;
	struct qp_bench_result *res;
	long long n;
	yajl_val s;
	double d;

	if (!YAJL_IS_OBJECT(o))
		return BAD(err, "%s: expected an object", where);
	if (str_field(o, (struct field){ where, "name" }, true, QP_BENCH_MAX_NAME, &name, err) < 0 ||
	    str_field(o, (struct field){ where, "metric" }, true, QP_BENCH_MAX_NAME, &metric, err) < 0 ||
	    str_field(o, (struct field){ where, "unit" }, true, QP_BENCH_MAX_NAME, &unit, err) < 0 ||
	    str_field(o, (struct field){ where, "target" }, false, QP_BENCH_MAX_NAME, &target, err) < 0 ||
	    str_field(o, (struct field){ where, "test" }, false, QP_BENCH_MAX_NAME, &test, err) < 0 ||
	    str_field(o, (struct field){ where, "reason" }, false, QP_BENCH_MAX_TEXT, &reason, err) < 0 ||
	    int_field(o, (struct field){ where, "n" }, &n, err) < 0)
		return -1;
	s = qp_json_get(o, "samples");
	if (!s)
		return BAD(err, "%s.samples: missing", where);
	if (!YAJL_IS_ARRAY(s))
		return BAD(err, "%s.samples: expected an array", where);
	if ((size_t)n != s->u.array.len)
		return BAD(err, "%s.n: %lld, but there are %zu samples", where, n, s->u.array.len);
	if (check_stats(o, where, (size_t)n, err) < 0 ||
	    qp_bench_result_add(r, name, metric, unit, &res, err) < 0 ||
	    qp_bench_result_tag(res, target, test, err) < 0 ||
	    qp_bench_set(&res->reason, reason, err) < 0)
		return -1;
	for (size_t i = 0; i < s->u.array.len; i++) {
		if (!number(s->u.array.values[i], &d))
			return BAD(err, "%s.samples[%zu]: expected a number", where, i);
		if (qp_bench_sample(res, d, err) < 0)
			return -1;
	}
	return 0;
}

static int read_results(yajl_val root, struct qp_bench_report *r, qp_error **err)
{
	yajl_val a = qp_json_get(root, "results");
	char where[32];

	if (!a)
		return BAD(err, "results: missing");
	if (!YAJL_IS_ARRAY(a))
		return BAD(err, "results: expected an array");
	for (size_t i = 0; i < a->u.array.len; i++) {
		snprintf(where, sizeof(where), "results[%zu]", i);
		if (read_result(a->u.array.values[i], where, r, err) < 0)
			return -1;
	}
	return 0;
}

static int read_phases(yajl_val root, struct qp_bench_report *r, qp_error **err)
{
	char shown[QP_SHOWN_MAX], shown2[QP_SHOWN_MAX];
	yajl_val o;
	double d;

	if (object_field(root, (struct field){ "", "phases" }, &o, err) < 0)
		return -1;
	for (size_t i = 0; i < o->u.object.len; i++) {
		const char *name = o->u.object.keys[i];
		yajl_val ph = o->u.object.values[i];
		if (strlen(name) > QP_BENCH_MAX_NAME)
			return BAD(err, "phases: a key is longer than %d bytes", QP_BENCH_MAX_NAME);
		if (!YAJL_IS_OBJECT(ph))
			return BAD(err, "phases.%s: expected an object", qp_shown(name, shown));
		for (size_t j = 0; j < ph->u.object.len; j++) {
			const char *phase = ph->u.object.keys[j];
			if (strlen(phase) > QP_BENCH_MAX_NAME || !number(ph->u.object.values[j], &d))
				return BAD(err, "phases.%s.%s: expected a number", qp_shown(name, shown),
					   qp_shown(phase, shown2));
			if (qp_bench_phase(r, name, phase, d, err) < 0)
				return -1;
		}
	}
	return 0;
}

static int read_top(yajl_val root, struct qp_bench_report *r, qp_error **err)
{
	static const char *const tools[] = { "qpod", NULL };
	_cleanup_free_ char *tool = NULL;
	yajl_val v;

	if (!YAJL_IS_OBJECT(root))
		return BAD(err, "expected a JSON object");
	/* a JSON file of something else (config.json, state.json): say what
	 * it is not, rather than which field it lacks */
	v = qp_json_get(root, "tool");
	const char *tool_name = v && YAJL_IS_STRING(v) ? YAJL_GET_STRING(v) : NULL;
	if (!tool_name || strcmp(tool_name, "qpod"))
		return BAD(err, "not a qpod result file (no \"tool\": \"qpod\"; qpod bench and "
				"qpod density write them with --format json)");
	if (enum_field(root, (struct field){ "", "tool" }, tools, &tool, err) < 0 ||
	    str_field(root, (struct field){ "", "version" }, true, QP_BENCH_MAX_NAME, &r->version, err) < 0 ||
	    enum_field(root, (struct field){ "", "scenario" }, qp_bench_scenarios, &r->scenario, err) < 0 ||
	    enum_field(root, (struct field){ "", "mode" }, qp_bench_modes, &r->mode, err) < 0 ||
	    enum_field(root, (struct field){ "", "accel" }, qp_bench_accels, &r->accel, err) < 0 ||
	    read_host(root, &r->host, err) < 0 || read_params(root, r, err) < 0 ||
	    read_results(root, r, err) < 0 || read_phases(root, r, err) < 0)
		return -1;
	v = qp_json_get(root, "partial");
	if (!v)
		return BAD(err, "partial: missing");
	if (!YAJL_IS_TRUE(v) && !YAJL_IS_FALSE(v))
		return BAD(err, "partial: expected true or false");
	r->partial = YAJL_IS_TRUE(v);
	if (qp_json_get(root, "count")) {
		if (int_field(root, (struct field){ "", "count" }, &r->count, err) < 0)
			return -1;
		r->has_count = true;
	}
	if (str_field(root, (struct field){ "", "stop_reason" }, false, QP_BENCH_MAX_TEXT,
		      &r->stop_reason, err) < 0 ||
	    str_field(root, (struct field){ "", "definitions" }, false, QP_BENCH_MAX_TEXT,
		      &r->definitions, err) < 0)
		return -1;
	return 0;
}

int qp_bench_report_parse(const char *text, size_t len, struct qp_bench_report **out,
			  qp_error **err)
{
	struct qp_bench_report *r;
	yajl_val root = NULL;
	int ret;

	if (len > QP_BENCH_MAX_FILE)
		return BAD(err, "larger than %u bytes", QP_BENCH_MAX_FILE);
	if (strlen(text) != len)
		return BAD(err, "contains a NUL byte");
	if (qp_json_parse(text, "JSON", &root, err) < 0)
		return -1;
	r = calloc(1, sizeof(*r));
	if (!r) {
		yajl_tree_free(root);
		return qp_fail(err, ENOMEM, "result");
	}
	ret = read_top(root, r, err);
	yajl_tree_free(root);
	if (ret < 0) {
		qp_bench_report_free(r);
		return -1;
	}
	*out = r;
	return 0;
}

int qp_bench_report_read_json(const char *path, struct qp_bench_report **out, qp_error **err)
{
	/* O_NONBLOCK: a FIFO must not hang us before fstat() refuses it */
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	_cleanup_free_ char *buf = NULL;
	struct stat st;
	size_t len = 0;

	if (fd < 0)
		return qp_fail(err, errno, "\"%s\"", path);
	if (fstat(fd, &st) < 0)
		return qp_fail(err, errno, "\"%s\"", path);
	if (!S_ISREG(st.st_mode))
		return BAD(err, "\"%s\": not a regular file", path);
	if (st.st_size > (off_t)QP_BENCH_MAX_FILE)
		return BAD(err, "\"%s\": larger than %u bytes", path, QP_BENCH_MAX_FILE);
	if (!(buf = malloc((size_t)st.st_size + 2)))
		return qp_fail(err, ENOMEM, "\"%s\"", path);
	/* read one byte past the size seen, so a file growing under us is caught */
	for (;;) {
		ssize_t n = read(fd, buf + len, (size_t)st.st_size + 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return qp_fail(err, errno, "read \"%s\"", path);
		if (n == 0 || (len += (size_t)n) > (size_t)st.st_size)
			break;
	}
	if (len > (size_t)st.st_size)
		return BAD(err, "\"%s\": changed while being read", path);
	buf[len] = '\0';
	if (qp_bench_report_parse(buf, len, out, err) < 0)
		return qp_error_prefix(err, "\"%s\"", path);
	return 0;
}
