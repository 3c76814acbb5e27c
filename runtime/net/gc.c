/* runtime/net/gc.c — garbage collection after crashes: leases of pods that
 * no longer exist (and the link each names), and bridges without ports.
 * A link is only ever deleted through a lease of this root: a link that no
 * lease of ours names may belong to another root's pod, and is left alone
 * (the lease is written before the link exists, so a crash leaves a lease
 * to follow, not an unnamed link). */
#include <string.h>

#include "net/internal.h"
#include "net/net.h"

static bool is_live(char *const *live_ids, const char *id)
{
	for (; live_ids && *live_ids; live_ids++)
		if (!strcmp(*live_ids, id))
			return true;
	return false;
}

/* Leases of dead pods: delete their links, drop them, save once. */
static int gc_leases(struct qp_net_op *op, char *const *live_ids, int *count, qp_error **err)
{
	bool changed = false;

	for (size_t i = op->table.n; i-- > 0;) {
		struct qp_ipam_entry *e = &op->table.v[i];

		if (is_live(live_ids, e->id))
			continue;
		if (qp_net_link_del_ours(op->nl, e->ifname, NULL, err) < 0)
			return qp_error_prefix(err, "release lease of \"%s\"", e->id);
		qp_ipam_release(&op->table, e->id);
		changed = true;
		(*count)++;
	}
	return changed ? qp_ipam_save(op->dirfd, &op->table, err) : 0;
}

int qp_net_gc(const struct qp_net_config *c, char *const *live_ids, int *removed, qp_error **err)
{
	_cleanup_net_op_ struct qp_net_op op = QP_NET_OP_INIT;
	int count = 0;

	if (removed)
		*removed = 0;
	if (qp_net_op_begin(c, &op, err) < 0 || gc_leases(&op, live_ids, &count, err) < 0 ||
	    qp_net_prune_locked(op.nl, &op.cfg, -1, err) < 0) {
		if (removed)
			*removed = count;
		return qp_error_prefix(err, "network gc");
	}
	if (removed)
		*removed = count;
	return 0;
}

int qp_net_prune_bridges(const struct qp_net_config *c, qp_error **err)
{
	_cleanup_net_op_ struct qp_net_op op = QP_NET_OP_INIT;

	if (qp_net_op_begin(c, &op, err) < 0 || qp_net_prune_locked(op.nl, &op.cfg, -1, err) < 0)
		return qp_error_prefix(err, "prune bridges");
	return 0;
}
