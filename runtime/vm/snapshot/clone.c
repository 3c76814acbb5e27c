/* runtime/vm/snapshot/clone.c — what makes a clone of a VM template unique: the
 * CLONE message (the host's clock, a seed from its getrandom) and the check
 * of the guest's HELLO that answers it (guest-init's apply_clone reports
 * each step it did, and a check of the seed it added: protocol.h). */
#include <errno.h>
#include <sys/random.h>
#include <time.h>

#include "util/cleanup.h"
#include "vm/snapshot/clone.h"

int vm_clone_msg(struct qp_msg *m, uint32_t *check, qp_error **err)
{
	struct timespec now;

	*m = (struct qp_msg){ .type = QP_MSG_CLONE };
	clock_gettime(CLOCK_REALTIME, &now);
	m->u.clone.realtime_ns = (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
	if (getrandom(m->u.clone.seed, sizeof(m->u.clone.seed), 0) != (ssize_t)sizeof(m->u.clone.seed))
		return qp_fail(err, errno, "getrandom");
	*check = qp_seed_check(m->u.clone.seed);
	return 0;
}

int vm_clone_hello_check(const struct qp_msg *hello, const uint32_t *clone_check, qp_error **err)
{
	static const struct {
		uint16_t flag;
		const char *step;
	} steps[] = {
		{ QP_HELLO_F_SEEDED, "add the seed to its RNG" },
		{ QP_HELLO_F_RESEEDED, "reseed its CRNG" },
		{ QP_HELLO_F_CLOCK, "set its clock" },
	};
	uint16_t flags = hello->u.hello.flags;

	if (!clone_check) {
		if (flags)
			return qp_error_set(err, QP_E_GUEST, 0,
					    "the guest's HELLO reports a CLONE (flags 0x%x) that was not sent", flags);
		return 0;
	}
	for (size_t i = 0; i < QP_ARRAY_SIZE(steps); i++)
		if (!(flags & steps[i].flag))
			return qp_error_set(err, QP_E_GUEST, 0,
					    "the clone's guest did not %s (HELLO flags 0x%x): it is not unique",
					    steps[i].step, flags);
	if (hello->u.hello.seed_check != *clone_check)
		return qp_error_set(err, QP_E_GUEST, 0,
				    "the clone's guest added a seed other than the one sent: it is not unique");
	return 0;
}
