/* runtime/util/json.c — see json.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/json.h"

yajl_gen qp_json_gen_new(bool beautify)
{
	yajl_gen g = yajl_gen_alloc(NULL);
	if (g && beautify) {
		yajl_gen_config(g, yajl_gen_beautify, 1);
		yajl_gen_config(g, yajl_gen_indent_string, "  ");
	}
	return g;
}

void qp_json_str(yajl_gen g, const char *s)
{
	if (s)
		yajl_gen_string(g, (const unsigned char *)s, strlen(s));
	else
		yajl_gen_null(g);
}

void qp_json_key(yajl_gen g, const char *key)
{
	yajl_gen_string(g, (const unsigned char *)key, strlen(key));
}

void qp_json_kstr(yajl_gen g, const char *key, const char *s)
{
	qp_json_key(g, key);
	qp_json_str(g, s);
}

void qp_json_kint(yajl_gen g, const char *key, long long v)
{
	qp_json_key(g, key);
	yajl_gen_integer(g, v);
}

void qp_json_u64(yajl_gen g, uint64_t v)
{
	char buf[24];
	int n = snprintf(buf, sizeof(buf), "%" PRIu64, v);
	yajl_gen_number(g, buf, (size_t)n);
}

void qp_json_ku64(yajl_gen g, const char *key, uint64_t v)
{
	qp_json_key(g, key);
	qp_json_u64(g, v);
}

void qp_json_kbool(yajl_gen g, const char *key, bool v)
{
	qp_json_key(g, key);
	yajl_gen_bool(g, v);
}

void qp_json_kdouble(yajl_gen g, const char *key, double v)
{
	qp_json_key(g, key);
	yajl_gen_double(g, v);
}

void qp_json_kms(yajl_gen g, const char *key, double ms)
{
	char num[64];
	int n = snprintf(num, sizeof(num), "%.3f", ms);

	qp_json_key(g, key);
	yajl_gen_number(g, num, (size_t)n);
}

int qp_json_gen_finish(yajl_gen g, char **out, size_t *len, qp_error **err)
{
	const unsigned char *buf;
	size_t n;
	char *copy;

	if (yajl_gen_get_buf(g, &buf, &n) != yajl_gen_status_ok) {
		yajl_gen_free(g);
		return qp_error_set(err, QP_E_GENERIC, 0, "generate JSON: incomplete document");
	}
	copy = malloc(n + 1);
	if (!copy) {
		yajl_gen_free(g);
		return qp_fail(err, ENOMEM, "generate JSON");
	}
	memcpy(copy, buf, n);
	copy[n] = '\0';
	yajl_gen_free(g);
	*out = copy;
	if (len)
		*len = n;
	return 0;
}

int qp_json_check_depth(const char *text, int max_depth)
{
	int depth = 0;
	bool in_str = false;

	for (const char *p = text; *p; p++) {
		if (in_str) {
			if (*p == '\\' && p[1])
				p++;
			else if (*p == '"')
				in_str = false;
		} else if (*p == '"') {
			in_str = true;
		} else if (*p == '[' || *p == '{') {
			if (++depth > max_depth)
				return -1;
		} else if (*p == ']' || *p == '}') {
			depth--;
		}
	}
	return 0;
}

int qp_json_parse(const char *text, const char *what, yajl_val *out, qp_error **err)
{
	char ebuf[256] = "";
	yajl_val v;

	/* yajl_tree frees recursively: bound the nesting before building */
	if (qp_json_check_depth(text, QP_JSON_MAX_DEPTH) < 0)
		return qp_error_set(err, QP_E_INVALID, 0, "%s: nested deeper than %d levels", what,
				    QP_JSON_MAX_DEPTH);
	v = yajl_tree_parse(text, ebuf, sizeof(ebuf));

	if (!v) {
		/* yajl's message is multi-line; keep the first line only */
		char *nl = strchr(ebuf, '\n');
		if (nl)
			*nl = '\0';
		const char *why = ebuf[0] ? ebuf : "malformed JSON";
		if (!strncmp(why, "parse error: ", 13))
			why += 13;
		return qp_error_set(err, QP_E_INVALID, 0, "%s: parse error: %s", what, why);
	}
	*out = v;
	return 0;
}

yajl_val qp_json_get(yajl_val obj, const char *key)
{
	if (!YAJL_IS_OBJECT(obj))
		return NULL;
	for (size_t i = 0; i < obj->u.object.len; i++)
		if (strcmp(obj->u.object.keys[i], key) == 0)
			return obj->u.object.values[i];
	return NULL;
}

const char *qp_json_get_str(yajl_val obj, const char *key)
{
	yajl_val v = qp_json_get(obj, key);
	return YAJL_IS_STRING(v) ? YAJL_GET_STRING(v) : NULL;
}

bool qp_json_get_int(yajl_val obj, const char *key, long long *out)
{
	yajl_val v = qp_json_get(obj, key);
	if (!YAJL_IS_INTEGER(v))
		return false;
	*out = YAJL_GET_INTEGER(v);
	return true;
}

/* yajl_tree keeps C strings: a "\u0000" escape would silently truncate. */
static bool has_nul_escape(const char *t)
{
	bool in_str = false;

	for (; *t; t++) {
		if (!in_str) {
			in_str = *t == '"';
		} else if (*t == '"') {
			in_str = false;
		} else if (*t == '\\' && t[1]) {
			if (t[1] == 'u' && strncmp(t + 2, "0000", 4) == 0)
				return true;
			t++;
		}
	}
	return false;
}

int qp_json_parse_buf(const char *data, size_t len, size_t max, const char *what, yajl_val *out,
		      qp_error **err)
{
	char *text;
	int r;

	*out = NULL;
	if (len > max)
		return qp_error_set(err, QP_E_INVALID, 0, "%s: larger than %zu bytes", what, max);
	if (len == 0)
		return qp_error_set(err, QP_E_INVALID, 0, "%s: empty file", what);
	if (memchr(data, '\0', len))
		return qp_error_set(err, QP_E_INVALID, 0, "%s: contains a NUL byte", what);
	if (!(text = malloc(len + 1)))
		return qp_fail(err, ENOMEM, "%s", what);
	memcpy(text, data, len);
	text[len] = '\0';
	r = qp_json_parse(text, what, out, err);
	if (r == 0 && has_nul_escape(text)) {
		yajl_tree_free(*out);
		*out = NULL;
		r = qp_error_set(err, QP_E_INVALID, 0, "%s: strings must not contain NUL (\\u0000)", what);
	}
	free(text);
	return r;
}
