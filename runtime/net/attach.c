/* runtime/net/attach.c — attach a pod (veth into its netns, or a tap for its
 * VMM) and detach it again.  The lease is written before the link exists,
 * so a crash in between leaves a lease for gc, never an address given out
 * twice; a failed attach removes both. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "net/internal.h"
#include "net/net.h"
#include "util/cleanup.h"

/* Creates the pod's link on bridge br_ifindex.  An error with errnum EXFULL
 * means "bridge full": the caller then tries the next slice. */
typedef int (*make_link_fn)(struct qp_net_op *op, const struct qp_net_lease *l, int br_ifindex,
			    void *arg, qp_error **err);

static void fill_lease(const struct qp_net_op *op, const char *id, const char *ifname,
		       uint32_t addr, uint32_t slice, struct qp_net_lease *l)
{
	memset(l, 0, sizeof(*l));
	snprintf(l->id, sizeof(l->id), "%s", id);
	snprintf(l->ifname_host, sizeof(l->ifname_host), "%s", ifname);
	qp_bridge_name(&op->cfg, slice, l->bridge);
	l->addr.s_addr = htonl(addr);
	l->gateway.s_addr = htonl(qp_slice_gateway(&op->cfg, slice));
	l->prefix = op->cfg.slice_prefix;
	qp_net_pod_mac(id, l->mac);
}

/* Take the lease back after a failed attach (best effort: if saving fails,
 * the lease stays for gc, which is safe). */
static void undo_lease(struct qp_net_op *op, const char *id, uint32_t slice)
{
	qp_error *ignored = NULL;

	if (qp_ipam_release(&op->table, id))
		qp_ipam_save(op->dirfd, &op->table, &ignored);
	(void)slice; /* the bridge stays: see qp_net_detach() */
	qp_error_free(&ignored);
}

static int attach(const struct qp_net_config *c, const char *id, const char *requested_ip,
		  make_link_fn make, void *arg, struct qp_net_lease *out, qp_error **err)
{
	_cleanup_net_op_ struct qp_net_op op = QP_NET_OP_INIT;
	_cleanup_free_ uint32_t *skip = NULL;
	size_t nskip = 0;
	uint32_t req = 0;
	char ifname[16];

	if (qp_net_validate_id(id, err) < 0)
		return -1;
	if (requested_ip && qp_ipv4_parse(requested_ip, &req, err) < 0)
		return qp_error_prefix(err, "requested address");
	if (qp_net_op_begin(c, &op, err) < 0)
		return -1;
	qp_net_host_ifname(id, ifname);

	for (;;) {
		qp_error *e = NULL;
		uint32_t addr, slice = 0;
		int br = 0;

		if (qp_ipam_alloc(&op.table, &op.cfg, id, ifname, req, skip, nskip, &addr, &e) < 0) {
			if (nskip && e && e->code == QP_E_SUBNETFULL) {
				qp_error_free(&e);
				return qp_error_set(err, QP_E_BRIDGEFULL, EXFULL,
						    "every bridge with free addresses is full");
			}
			return qp_net_pass_error(err, &e);
		}
		qp_addr_classify(&op.cfg, addr, &slice);
		fill_lease(&op, id, ifname, addr, slice, out);
		if (qp_ipam_save(op.dirfd, &op.table, err) < 0) {
			qp_ipam_release(&op.table, id);
			return -1;
		}
		if (qp_net_bridge_ensure(op.nl, &op.cfg, slice, &br, &e) == 0 &&
		    make(&op, out, br, arg, &e) == 0)
			return 0;

		undo_lease(&op, id, slice);
		if (qp_net_errnum(e) != EXFULL)
			return qp_net_pass_error(err, &e);
		qp_error_free(&e);
		if (req)
			return qp_error_set(err, QP_E_BRIDGEFULL, EXFULL,
					    "bridge \"%s\" is full (requested address %s)",
					    out->bridge, requested_ip);
		/* The bridge refused a port: skip its slice and try the next. */
		uint32_t *ns = realloc(skip, (nskip + 1) * sizeof(*ns));
		if (!ns)
			return qp_fail(err, ENOMEM, "attach pod \"%s\"", id);
		skip = ns;
		skip[nskip++] = slice;
	}
}

/* ---- veth ---- */

/* Inside the pod: lo up, eth0 addr/prefix, up, default route. */
static int configure_pod(struct qp_nl *pnl, const struct qp_net_lease *l, qp_error **err)
{
	_cleanup_nl_link_ struct rtnl_link *lo = NULL, *eth = NULL;
	int r, idx;

	r = qp_nl_link_get(pnl, "lo", &lo, err);
	if (r < 0)
		return -1;
	if (r > 0 && qp_nl_link_up(pnl, rtnl_link_get_ifindex(lo), err) < 0)
		return qp_error_prefix(err, "lo");
	r = qp_nl_link_get(pnl, "eth0", &eth, err);
	if (r < 0)
		return -1;
	if (r == 0)
		return qp_error_set(err, QP_E_GENERIC, 0, "eth0 missing after creation");
	idx = rtnl_link_get_ifindex(eth);
	if (qp_nl_addr_add(pnl, idx, l->addr, l->prefix, 0, err) < 0 ||
	    qp_nl_link_up(pnl, idx, err) < 0 ||
	    qp_nl_route_add_default(pnl, idx, l->gateway, err) < 0)
		return qp_error_prefix(err, "eth0");
	return 0;
}

static int make_veth(struct qp_net_op *op, const struct qp_net_lease *l, int br, void *arg,
		     qp_error **err)
{
	int nsfd = *(int *)arg;
	_cleanup_nl_ struct qp_nl *pnl = NULL;
	qp_error *ignored = NULL;

	if (qp_nl_veth_add(op->nl, l->ifname_host, br, "eth0", l->mac, nsfd, err) < 0)
		return qp_error_prefix(err, "bridge \"%s\"", l->bridge);
	if (qp_netns_nl_open(nsfd, &pnl, err) == 0 && configure_pod(pnl, l, err) == 0)
		return 0;
	/* Deleting the host end deletes eth0 in the pod too. */
	qp_nl_link_del(op->nl, l->ifname_host, &ignored);
	qp_error_free(&ignored);
	return qp_error_prefix(err, "pod network");
}

int qp_net_attach_veth(const struct qp_net_config *c, const char *id, pid_t pid,
		       const char *requested_ip, struct qp_net_lease *out, qp_error **err)
{
	_cleanup_close_ int nsfd = -1;

	nsfd = qp_netns_open(pid, err);
	if (nsfd < 0)
		return qp_error_prefix(err, "attach veth");
	if (attach(c, id, requested_ip, make_veth, &nsfd, out, err) < 0)
		return qp_error_prefix(err, "attach veth");
	return 0;
}

/* ---- tap ---- */

struct tap_arg {
	bool vnet_hdr;
	int fd;
};

static int make_tap(struct qp_net_op *op, const struct qp_net_lease *l, int br, void *arg,
		    qp_error **err)
{
	struct tap_arg *ta = arg;
	_cleanup_close_ int fd = -1;
	_cleanup_nl_link_ struct rtnl_link *link = NULL;
	int r;

	fd = qp_tap_open(l->ifname_host, ta->vnet_hdr, err);
	if (fd < 0)
		return -1;
	r = qp_nl_link_get(op->nl, l->ifname_host, &link, err);
	if (r < 0)
		return -1;
	if (r == 0)
		return qp_error_set(err, QP_E_GENERIC, 0, "tap \"%s\" vanished", l->ifname_host);
	/* On failure the fd closes and the (non-persistent) tap disappears. */
	if (qp_nl_link_set_master_up(op->nl, rtnl_link_get_ifindex(link), br, err) < 0)
		return qp_error_prefix(err, "tap \"%s\" on bridge \"%s\"", l->ifname_host,
				       l->bridge);
	ta->fd = steal_fd(&fd);
	return 0;
}

int qp_net_attach_tap(const struct qp_net_config *c, const char *id, const char *requested_ip,
		      struct qp_net_lease *out, int *tap_fd, qp_error **err)
{
	struct tap_arg ta = { .vnet_hdr = c && c->tap_vnet_hdr, .fd = -1 };

	if (attach(c, id, requested_ip, make_tap, &ta, out, err) < 0)
		return qp_error_prefix(err, "attach tap");
	*tap_fd = ta.fd;
	return 0;
}

/* ---- detach ---- */

int qp_net_detach(const struct qp_net_config *c, const char *id, qp_error **err)
{
	_cleanup_net_op_ struct qp_net_op op = QP_NET_OP_INIT;
	struct qp_ipam_entry *e;
	char ifname[16];
	uint32_t slice = 0;
	bool had_slice = false;

	if (qp_net_validate_id(id, err) < 0)
		return qp_error_prefix(err, "detach");
	if (qp_net_op_begin(c, &op, err) < 0)
		return qp_error_prefix(err, "detach \"%s\"", id);
	e = qp_ipam_find_id(&op.table, id);
	/* Without a lease (never attached, or a crash before it was saved)
	 * the link, if any, still has the name derived from the ID. */
	if (e) {
		snprintf(ifname, sizeof(ifname), "%s", e->ifname);
		had_slice = qp_addr_classify(&op.cfg, e->addr, &slice) != QP_ADDR_OUTSIDE;
	} else {
		qp_net_host_ifname(id, ifname);
	}
	if (qp_net_link_del_ours(op.nl, ifname, NULL, err) < 0)
		return qp_error_prefix(err, "detach \"%s\"", id);
	if (e) {
		qp_ipam_release(&op.table, id);
		if (qp_ipam_save(op.dirfd, &op.table, err) < 0)
			return qp_error_prefix(err, "detach \"%s\"", id);
	}
	/* The bridge stays, even without ports: deleting a bridge costs the
	 * kernel ~60 ms of RCU grace periods, which would land on every
	 * `run --rm` and again on the next start.  Bridges are shared
	 * infrastructure (like docker0); `qpod gc` prunes empty ones. */
	(void)had_slice;
	(void)slice;
	return 0;
}
