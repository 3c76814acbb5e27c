/* tests/fuzz/fuzz_channel.c — libFuzzer entry point for the control-channel
 * decoder (guest-init/codec.c), the parser of everything a guest sends:
 *  1. the input as one frame: what decodes must re-encode, and the
 *     re-encoding must decode to the same bytes again (encode∘decode is
 *     stable); errors are one line;
 *  2. the input as a byte stream through a pipe into a qp_chan: messages are
 *     handed out until an error or EOF, never a crash, hang or overread.
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -include config.h \
 *     -Iruntime -I. $(pkg-config --cflags yajl) -o build/fuzz/fuzz_channel \
 *     tests/fuzz/fuzz_channel.c guest-init/channel.c guest-init/codec.c guest-init/run_mount.c guest-init/run_route.c runtime/util/error.c runtime/util/log.c -lyajl
 *   build/fuzz/fuzz_channel -max_total_time=60 [CORPUS_DIR]
 */
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "guest-init/channel.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct qp_msg_store store;
static struct qp_chan chan;
static uint8_t again[QP_PROTO_FRAME_MAX], again2[QP_PROTO_FRAME_MAX];

static void check_error(qp_error **err)
{
	if (!*err || !(*err)->msg || strchr((*err)->msg, '\n'))
		abort(); /* every failure explains itself in one line */
	qp_error_free(err);
}

static void one_frame(const uint8_t *data, size_t size)
{
	struct qp_msg m;
	qp_error *err = NULL;
	ssize_t n, n2;

	if (qp_msg_decode(data, size, &m, &store, &err) < 0) {
		check_error(&err);
		return;
	}
	if (qp_msg_check_sender(&m, QP_SENDER_GUEST, &err) < 0)
		check_error(&err);
	n = qp_msg_encode(&m, again, sizeof(again), &err);
	if (n < 0)
		abort(); /* what the decoder accepts, the encoder can write */
	if (qp_msg_decode(again, (size_t)n, &m, &store, &err) < 0)
		abort();
	n2 = qp_msg_encode(&m, again2, sizeof(again2), &err);
	if (n2 != n || memcmp(again, again2, (size_t)n) != 0)
		abort();
}

static void as_stream(const uint8_t *data, size_t size)
{
	int p[2];
	struct qp_msg m;
	qp_error *err = NULL;

	if (size > 65536 || pipe2(p, O_CLOEXEC) < 0)
		return;
	if (write(p[1], data, size) != (ssize_t)size) {
		close(p[0]);
		close(p[1]);
		return;
	}
	close(p[1]);
	qp_chan_init(&chan, p[0]);
	while (qp_chan_recv(&chan, &m, 0, &err) == 0)
		;
	check_error(&err);
	close(p[0]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	one_frame(data, size);
	as_stream(data, size);
	return 0;
}
