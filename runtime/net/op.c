/* runtime/net/op.c — the frame of every network operation (attach, detach,
 * gc, prune): resolved config, the host-wide network lock, the lease table
 * and a netlink socket, released together. */
#include <string.h>
#include <unistd.h>

#include "net/internal.h"

int qp_net_op_begin(const struct qp_net_config *c, struct qp_net_op *op, qp_error **err)
{
	if (!c)
		return qp_error_set(err, QP_E_INVALID, 0, "network config: missing");
	if (qp_net_cfg_resolve(c, &op->cfg, err) < 0)
		return -1;
	if (qp_ipam_lock(&op->cfg, &op->dirfd, &op->lockfd, err) < 0)
		return -1;
	if (qp_ipam_load(op->dirfd, &op->table, err) < 0)
		return -1;
	return qp_nl_open(&op->nl, err);
}

void qp_net_op_end(struct qp_net_op *op)
{
	if (op->nl)
		qp_nl_free(op->nl);
	op->nl = NULL;
	qp_ipam_table_free(&op->table);
	if (op->dirfd >= 0)
		close(op->dirfd);
	if (op->lockfd >= 0)
		close(op->lockfd); /* drops the flock */
	op->dirfd = op->lockfd = -1;
}

bool qp_net_is_our_kind(const char *kind)
{
	return kind && (!strcmp(kind, "veth") || !strcmp(kind, "tun"));
}

int qp_net_link_del_ours(struct qp_nl *nl, const char *name, bool *deleted, qp_error **err)
{
	_cleanup_nl_link_ struct rtnl_link *l = NULL;
	int r = qp_nl_link_get(nl, name, &l, err);

	if (deleted)
		*deleted = false;
	if (r <= 0)
		return r;
	/* Never delete what we did not make, whatever its name. */
	if (!qp_net_is_our_kind(rtnl_link_get_type(l)))
		return 0;
	if (qp_nl_link_del(nl, name, err) < 0)
		return -1;
	if (deleted)
		*deleted = true;
	return 0;
}

int qp_net_lease_addr(const struct qp_net_config *c, const char *id, char buf[16], qp_error **err)
{
	_cleanup_net_op_ struct qp_net_op op = { .dirfd = -1, .lockfd = -1 };
	struct qp_ipam_entry *e;

	if (qp_net_op_begin(c, &op, err) < 0)
		return -1;
	if (!(e = qp_ipam_find_id(&op.table, id)))
		return 0;
	qp_ipv4_str(e->addr, buf);
	return 1;
}
