/* tests/fuzz/fuzz_spec.c — libFuzzer entry point for the config.json parser:
 * every input goes through spec_parse; what parses is validated, written
 * back, re-parsed (the round trip must hold) and freed.
 *   make fuzz && build/fuzz/fuzz_spec -max_total_time=60 [CORPUS_DIR]
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "spec/spec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pod_spec *spec = NULL, *again = NULL;
	qp_error *err = NULL;
	char *text = NULL, *text2 = NULL;

	if (spec_parse((const char *)data, size, &spec, &err) < 0) {
		if (!err || !err->msg || strchr(err->msg, '\n'))
			abort(); /* errors are one line */
		qp_error_free(&err);
		return 0;
	}
	if (spec_validate(spec, &err) < 0)
		qp_error_free(&err);
	if (spec_write(spec, &text, NULL, &err) < 0)
		abort(); /* parsed strings are valid UTF-8, so writing cannot fail */
	/* pretty printing may push a maximal input over the size bound */
	if (strlen(text) <= QP_SPEC_MAX_FILE &&
	    (spec_parse(text, strlen(text), &again, &err) < 0 ||
	    spec_write(again, &text2, NULL, &err) < 0 || strcmp(text, text2) != 0))
		abort(); /* parse(write(x)) == x */
	free(text);
	free(text2);
	spec_free(again);
	spec_free(spec);
	return 0;
}
