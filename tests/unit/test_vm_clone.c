/* tests/unit/test_vm_clone.c — the host's half of making a clone unique
 * (runtime/vm/snapshot/clone.c): every CLONE carries a seed of its own from
 * getrandom and the host's clock, and survives the wire; the HELLO that
 * answers it is accepted only when it reports each step guest-init's
 * apply_clone must do (seed added, CRNG reseeded, clock set) for the very
 * seed sent, and a HELLO that answers no CLONE reports none. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>
#include <time.h>

#include "vm/snapshot/clone.h"

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void test_each_clone_its_own_seed(void **state)
{
	static const uint8_t zero[QP_PROTO_SEED_SIZE];
	struct qp_msg a, b;
	uint32_t ca, cb;
	qp_error *err = NULL;
	uint64_t before = realtime_ns();

	(void)state;
	assert_int_equal(vm_clone_msg(&a, &ca, &err), 0);
	assert_int_equal(vm_clone_msg(&b, &cb, &err), 0);
	uint64_t after = realtime_ns();
	assert_null(err);
	assert_int_equal(a.type, QP_MSG_CLONE);
	assert_memory_not_equal(a.u.clone.seed, b.u.clone.seed, QP_PROTO_SEED_SIZE);
	assert_memory_not_equal(a.u.clone.seed, zero, QP_PROTO_SEED_SIZE);
	assert_memory_not_equal(b.u.clone.seed, zero, QP_PROTO_SEED_SIZE);
	assert_int_equal(ca, qp_seed_check(a.u.clone.seed));
	assert_int_equal(cb, qp_seed_check(b.u.clone.seed));
	/* the host's clock, read while the message was made */
	assert_true(a.u.clone.realtime_ns >= before && a.u.clone.realtime_ns <= b.u.clone.realtime_ns);
	assert_true(b.u.clone.realtime_ns <= after);
}

/* the seed and the clock reach the guest as they were made */
static void test_clone_on_the_wire(void **state)
{
	static uint8_t frame[QP_PROTO_FRAME_MAX];
	static struct qp_msg_store store;
	struct qp_msg m, out;
	uint32_t check;
	qp_error *err = NULL;

	(void)state;
	assert_int_equal(vm_clone_msg(&m, &check, &err), 0);
	ssize_t n = qp_msg_encode(&m, frame, sizeof(frame), &err);
	assert_int_equal(n, QP_PROTO_HDR_SIZE + 8 + QP_PROTO_SEED_SIZE);
	assert_int_equal(qp_msg_decode(frame, (size_t)n, &out, &store, &err), 0);
	assert_int_equal(qp_msg_check_sender(&out, QP_SENDER_HOST, &err), 0);
	assert_memory_equal(out.u.clone.seed, m.u.clone.seed, QP_PROTO_SEED_SIZE);
	assert_true(out.u.clone.realtime_ns == m.u.clone.realtime_ns);
	assert_int_equal(qp_seed_check(out.u.clone.seed), check);
}

static struct qp_msg hello(uint16_t flags, uint32_t check)
{
	struct qp_msg m = { .type = QP_MSG_HELLO };

	m.u.hello.version = QP_PROTO_VERSION;
	m.u.hello.flags = flags;
	m.u.hello.seed_check = check;
	return m;
}

/* vm_clone_hello_check fails with QP_E_GUEST and a message containing want */
static void refused(struct qp_msg m, const uint32_t *sent, const char *want)
{
	qp_error *err = NULL;

	assert_int_equal(vm_clone_hello_check(&m, sent, &err), -1);
	assert_non_null(err);
	assert_int_equal(err->code, QP_E_GUEST);
	if (!strstr(err->msg, want))
		fail_msg("error \"%s\" does not say \"%s\"", err->msg, want);
	qp_error_free(&err);
}

static void test_hello_must_confirm_the_clone(void **state)
{
	static const uint8_t seed[QP_PROTO_SEED_SIZE] = { 1, 2, 3 };
	const uint32_t sent = qp_seed_check(seed);
	qp_error *err = NULL;

	(void)state;
	assert_int_equal(vm_clone_hello_check(&(struct qp_msg){ 0 }, NULL, &err), 0);
	struct qp_msg ok = hello(QP_HELLO_F_CLONED, sent);
	assert_int_equal(vm_clone_hello_check(&ok, &sent, &err), 0);
	assert_null(err);

	/* a guest that skipped a step: the clone is refused, the step named */
	refused(hello(0, 0), &sent, "did not add the seed to its RNG");
	refused(hello(QP_HELLO_F_RESEEDED | QP_HELLO_F_CLOCK, 0), &sent, "did not add the seed");
	refused(hello(QP_HELLO_F_SEEDED | QP_HELLO_F_CLOCK, sent), &sent, "did not reseed its CRNG");
	refused(hello(QP_HELLO_F_SEEDED | QP_HELLO_F_RESEEDED, sent), &sent, "did not set its clock");
	/* all steps, but of another seed (or of none) */
	refused(hello(QP_HELLO_F_CLONED, sent ^ 1), &sent, "other than the one sent");
	refused(hello(QP_HELLO_F_CLONED, 0), &sent, "other than the one sent");
	/* a HELLO that answers no CLONE reports none */
	refused(hello(QP_HELLO_F_CLONED, sent), NULL, "that was not sent");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_each_clone_its_own_seed),
		cmocka_unit_test(test_clone_on_the_wire),
		cmocka_unit_test(test_hello_must_confirm_the_clone),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
