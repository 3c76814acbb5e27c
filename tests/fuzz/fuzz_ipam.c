/* tests/fuzz/fuzz_ipam.c — libFuzzer entry point for the IPAM store's
 * parser (qp_ipam_parse, behind qp_ipam_load): a damaged lease table
 * parses or fails with one line; what parses formats and parses again to
 * the same text.
 *   make fuzz && build/fuzz/fuzz_ipam -max_total_time=60 [CORPUS_DIR]
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "net/ipam.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct qp_ipam_table t = { 0 }, t2 = { 0 };
	qp_error *err = NULL;
	char *text = NULL, *text2 = NULL;
	size_t len = 0, len2 = 0;

	if (qp_ipam_parse((const char *)data, size, &t, &err) < 0) {
		if (!err || !err->msg || strchr(err->msg, '\n'))
			abort(); /* errors are one line */
		qp_error_free(&err);
		return 0;
	}
	if (qp_ipam_format(&t, &text, &len, &err) < 0 ||
	    qp_ipam_parse(text, len, &t2, &err) < 0 ||
	    qp_ipam_format(&t2, &text2, &len2, &err) < 0 || len != len2 ||
	    memcmp(text, text2, len) != 0)
		abort(); /* format(parse(format(x))) == format(x) */
	free(text);
	free(text2);
	qp_ipam_table_free(&t);
	qp_ipam_table_free(&t2);
	return 0;
}
