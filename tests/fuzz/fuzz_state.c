/* tests/fuzz/fuzz_state.c — libFuzzer entry point for the state file reader
 * (state_parse, behind state_load): whatever a damaged or hostile
 * state.json holds, it parses or fails with one line; what parses is saved
 * the way qpod saves it and must load again to the same fields.
 *   make fuzz && build/fuzz/fuzz_state -max_total_time=60 [CORPUS_DIR]
 */
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "state.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int scratch = -1; /* a private dir for the save/load round trip */
static char scratch_path[] = "/tmp/qpod-fuzz-state.XXXXXX";

static void remove_scratch(void)
{
	unlinkat(scratch, "state.json", 0);
	rmdir(scratch_path);
}

static bool same(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pod_state *st = NULL, *again = NULL;
	qp_error *err = NULL;
	char *text = malloc(size + 1);

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (state_parse(text, size, &st, &err) < 0) {
		if (!err || !err->msg || strchr(err->msg, '\n'))
			abort(); /* errors are one line */
		qp_error_free(&err);
		free(text);
		return 0;
	}
	free(text);
	if (scratch < 0) {
		if (!mkdtemp(scratch_path) || (scratch = open(scratch_path, O_RDONLY | O_DIRECTORY)) < 0)
			abort();
		atexit(remove_scratch);
	}
	if (state_save(scratch, st, &err) < 0) {
		qp_error_free(&err); /* e.g. a string that is not UTF-8 */
	} else if (state_load(scratch, &again, &err) < 0 || !same(st->id, again->id) ||
		   st->pid != again->pid || st->pid_start != again->pid_start ||
		   st->status != again->status || st->mode != again->mode ||
		   !same(st->cgroup, again->cgroup) || !same(st->rootfs, again->rootfs) ||
		   st->n_annotations != again->n_annotations) {
		abort(); /* load(save(x)) == x */
	}
	state_free(again);
	state_free(st);
	return 0;
}
