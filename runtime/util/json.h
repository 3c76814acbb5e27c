/* runtime/util/json.h — small helpers over yajl for qpod's own JSON (state,
 * reports, list output). Config parsing (spec/parse.c) uses yajl_tree too. */
#ifndef QPOD_JSON_H
#define QPOD_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "util/error.h"

/* New generator; beautify = pretty print. NULL on allocation failure. */
yajl_gen qp_json_gen_new(bool beautify);
void qp_json_str(yajl_gen g, const char *s);                 /* s may be NULL -> null */
void qp_json_kstr(yajl_gen g, const char *key, const char *s);
void qp_json_kint(yajl_gen g, const char *key, long long v);
/* an unsigned 64-bit number (beyond long long: from its decimal text) */
void qp_json_u64(yajl_gen g, uint64_t v);
void qp_json_ku64(yajl_gen g, const char *key, uint64_t v);
void qp_json_kbool(yajl_gen g, const char *key, bool v);
void qp_json_kdouble(yajl_gen g, const char *key, double v);
/* a duration in ms to the microsecond ("11.202", not 11.201999999999999957) */
void qp_json_kms(yajl_gen g, const char *key, double ms);
void qp_json_key(yajl_gen g, const char *key);
/* Take the generated text (malloc'd, NUL-terminated) and free the generator. */
int qp_json_gen_finish(yajl_gen g, char **out, size_t *len, qp_error **err);

#define QP_JSON_MAX_DEPTH 64

/* 0 if no array/object nests deeper than max_depth (strings are skipped). */
int qp_json_check_depth(const char *text, int max_depth);
/* Parse text into a tree (nesting bounded by QP_JSON_MAX_DEPTH); errors are
 * one line ("WHAT: parse error: ..."). */
int qp_json_parse(const char *text, const char *what, yajl_val *out, qp_error **err);
/* The same for len bytes that are not a C string (a file's contents): refused
 * when empty, over max bytes, or holding a NUL byte or a "\u0000" escape. */
int qp_json_parse_buf(const char *data, size_t len, size_t max, const char *what, yajl_val *out,
		      qp_error **err);
/* Lookups on an object; NULL when missing or of another type. */
const char *qp_json_get_str(yajl_val obj, const char *key);
bool qp_json_get_int(yajl_val obj, const char *key, long long *out);
yajl_val qp_json_get(yajl_val obj, const char *key);

#endif
