/* tests/fuzz/fuzz_resources.c — libFuzzer entry point for the strict
 * LinuxResources parser behind `qpod update --resources` (what containerd's
 * shim sends): every input is parsed; what parses is merged and validated
 * as an update would be, then freed.  Errors must be one line.
 *   make fuzz && build/fuzz/fuzz_resources -max_total_time=60 [CORPUS_DIR]
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "spec/resources.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct qp_resources r = { 0 }, merged = { 0 };
	qp_error *err = NULL;

	if (spec_resources_parse_text((const char *)data, size, "--resources", &r, &err) < 0) {
		if (!err || !err->msg || strchr(err->msg, '\n'))
			abort(); /* errors are one line */
		qp_error_free(&err);
		spec_resources_clear(&r);
		return 0;
	}
	if (spec_resources_merge(&merged, &r) < 0)
		abort();
	if (spec_validate_resources(&merged, &err) < 0)
		qp_error_free(&err);
	spec_resources_clear(&merged);
	spec_resources_clear(&r);
	return 0;
}
