/* tests/fuzz/fuzz_result.c — libFuzzer entry point for the benchmark
 * result-file reader (qp_bench_report_parse, behind `qpod report`): any
 * input parses or fails with one line; what parses is written back as JSON
 * and must parse again.
 *   make fuzz && build/fuzz/fuzz_result -max_total_time=60 [CORPUS_DIR]
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "result/result.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct qp_bench_report *r = NULL, *again = NULL;
	qp_error *err = NULL;
	char *text = malloc(size + 1), *out = NULL;
	size_t out_len = 0;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (qp_bench_report_parse(text, size, &r, &err) < 0) {
		if (!err || !err->msg || strchr(err->msg, '\n'))
			abort(); /* errors are one line */
		qp_error_free(&err);
		free(text);
		return 0;
	}
	free(text);
	FILE *f = open_memstream(&out, &out_len);
	if (!f || qp_bench_report_write_json(r, f, &err) < 0)
		abort();
	fclose(f);
	if (out_len <= QP_BENCH_MAX_FILE && qp_bench_report_parse(out, out_len, &again, &err) < 0)
		abort(); /* what was read, once written, reads again */
	free(out);
	qp_bench_report_free(again);
	qp_bench_report_free(r);
	return 0;
}
