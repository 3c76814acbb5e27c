/* runtime/host/cgroup/freeze.c — the cgroup freezer, for both modes: pause and
 * resume of a container pod (v1 freezer.state FROZEN/THAWED, v2
 * cgroup.freeze with "frozen 1/0" in cgroup.events), the frozen test behind
 * the "paused" status, and signalling every process of a cgroup through a
 * freeze so that nothing forks past the signal. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/cgroup/cgroup.h"
#include "util/cleanup.h"
#include "util/log.h"

#define FREEZE_ROUNDS 10        /* a freeze is written again each round ... */
#define FREEZE_ROUND_MS 200     /* ... and waited for this long */
#define SIGNAL_FREEZE_MS 1000   /* signal_all signals anyway after this */
#define SIGNAL_PASSES 5

void qp_cg_leaves_close(struct qp_cg_leaves *l)
{
	int e = errno;

	for (size_t c = 0; c < QP_CG_N; c++) {
		if (l->fd[c] >= 0)
			close(l->fd[c]);
		l->fd[c] = -1;
	}
	errno = e;
}

static int write_state(const struct qp_cg_leaves *l, bool on, qp_error **err)
{
	if (l->mode == QP_CGROUP_V2)
		return qp_cg_write(l->fd[QP_CG_FREEZER], "cgroup.freeze", on ? "1" : "0", err);
	return qp_cg_write(l->fd[QP_CG_FREEZER], "freezer.state", on ? "FROZEN" : "THAWED", err);
}

static bool wait_state(const struct qp_cg_leaves *l, bool on, int timeout_ms)
{
	if (l->mode == QP_CGROUP_V2)
		return qp_cg_wait_for(l->fd[QP_CG_FREEZER], "cgroup.events", "frozen", on ? "1" : "0",
				      timeout_ms);
	return qp_cg_wait_for(l->fd[QP_CG_FREEZER], "freezer.state", NULL, on ? "FROZEN" : "THAWED",
			      timeout_ms);
}

/* frozen, or asked to be (v1 FREEZING, v2 cgroup.freeze 1 not yet done) */
static bool frozen_now(const struct qp_cg_leaves *l)
{
	char buf[32];

	if (l->fd[QP_CG_FREEZER] < 0)
		return false;
	if (l->mode == QP_CGROUP_V2)
		return qp_cg_read(l->fd[QP_CG_FREEZER], "cgroup.freeze", buf, sizeof(buf), NULL) == 0 &&
		       !strcmp(buf, "1");
	return qp_cg_read(l->fd[QP_CG_FREEZER], "freezer.state", buf, sizeof(buf), NULL) == 0 &&
	       strcmp(buf, "THAWED") != 0;
}

static int open_leaves(struct qp_cgroup *cg, struct qp_cg_leaves *l, qp_error **err)
{
	if (cg->ops->leaves(cg, l, err) < 0)
		return qp_error_prefix(err, "cgroup \"%s\"", cg->path);
	return 0;
}

int qp_cgroup_freeze(struct qp_cgroup *cg, bool on, qp_error **err)
{
	_cleanup_leaves_ struct qp_cg_leaves l = QP_CG_LEAVES_INIT;

	if (open_leaves(cg, &l, err) < 0)
		return -1;
	if (l.fd[QP_CG_FREEZER] < 0)
		return qp_error_set(err, QP_E_INVALID, 0, "cgroup \"%s\": %s",
				    cg->path, l.mode == QP_CGROUP_V2
						  ? "no cgroup.freeze (the v2 freezer needs Linux 5.2)"
						  : "the freezer controller is not mounted");
	/* a task in the middle of a vfork or a fault can hold the freeze up:
	 * writing the state again retries it */
	for (int round = 0; round < FREEZE_ROUNDS; round++) {
		if (write_state(&l, on, err) < 0)
			return qp_error_prefix(err, "cgroup \"%s\"", cg->path);
		if (wait_state(&l, on, FREEZE_ROUND_MS))
			return 0;
	}
	if (on)
		write_state(&l, false, NULL); /* never leave a half-frozen pod */
	return qp_error_set(err, QP_E_TIMEOUT, 0, "cgroup \"%s\": the processes did not %s within %d ms",
			    cg->path, on ? "freeze" : "thaw", FREEZE_ROUNDS * FREEZE_ROUND_MS);
}

bool qp_cgroup_is_frozen(struct qp_cgroup *cg)
{
	_cleanup_leaves_ struct qp_cg_leaves l = QP_CG_LEAVES_INIT;

	return cg->ops->leaves(cg, &l, NULL) == 0 && frozen_now(&l);
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
	return (x > y) - (x < y);
}

/* Without a freezer: signal, look again, signal the newcomers (pids not in
 * the previous, sorted, list), a few times. */
static int signal_passes(int fd, int sig, qp_error **err)
{
	_cleanup_free_ pid_t *prev = NULL;
	size_t nprev = 0;

	for (int pass = 0; pass < SIGNAL_PASSES; pass++) {
		pid_t *pids = NULL;
		size_t n = 0, fresh = 0;

		if (qp_cg_collect_pids(fd, &pids, &n, err) < 0)
			return -1;
		for (size_t i = 0; i < n; i++) {
			if (nprev && bsearch(&pids[i], prev, nprev, sizeof(*prev), cmp_pid))
				continue;
			if (qp_cg_kill_list(&pids[i], 1, sig, err) < 0) {
				free(pids);
				return -1;
			}
			fresh++;
		}
		free(prev);
		prev = pids;
		nprev = n;
		if (!fresh)
			break;
	}
	return 0;
}

static int signal_frozen(struct qp_cgroup *cg, const struct qp_cg_leaves *l, int sig, qp_error **err)
{
	_cleanup_free_ pid_t *pids = NULL;
	bool paused = frozen_now(l);
	size_t n = 0;
	int r;

	if (!paused && write_state(l, true, err) < 0)
		return -1;
	if (!paused && !wait_state(l, true, SIGNAL_FREEZE_MS))
		qp_debug("cgroup \"%s\": not frozen after %d ms, signalling anyway", cg->path,
			 SIGNAL_FREEZE_MS);
	r = qp_cg_collect_pids(l->fd[QP_CG_FREEZER], &pids, &n, err);
	if (r == 0)
		r = qp_cg_kill_list(pids, n, sig, err);
	/* thaw what we froze; a paused pod stays paused unless it was
	 * SIGKILLed, which a frozen v1 task only receives once thawed */
	if ((!paused || sig == SIGKILL) && write_state(l, false, r < 0 ? NULL : err) < 0)
		r = -1;
	return r;
}

int qp_cgroup_signal_all(struct qp_cgroup *cg, int sig, qp_error **err)
{
	_cleanup_leaves_ struct qp_cg_leaves l = QP_CG_LEAVES_INIT;
	int r;

	if (sig <= 0 || sig >= NSIG)
		return qp_error_set(err, QP_E_INVALID, 0, "cgroup: bad signal %d", sig);
	if (open_leaves(cg, &l, err) < 0)
		return -1;
	/* cgroup.kill (Linux 5.14) kills the whole subtree atomically, frozen or not */
	if (l.mode == QP_CGROUP_V2 && sig == SIGKILL && qp_cg_has_file(l.fd[QP_CG_ANY], "cgroup.kill"))
		r = qp_cg_write(l.fd[QP_CG_ANY], "cgroup.kill", "1", err);
	else if (l.fd[QP_CG_FREEZER] >= 0)
		r = signal_frozen(cg, &l, sig, err);
	else
		r = signal_passes(l.fd[QP_CG_ANY], sig, err);
	return r < 0 ? qp_error_prefix(err, "cgroup \"%s\"", cg->path) : 0;
}
