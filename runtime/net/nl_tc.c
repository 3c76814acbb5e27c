/* runtime/net/nl_tc.c — the tc pieces of a mirrored namespace (net/mirror.h)
 * over libnl-route-3: ingress qdiscs and a match-all u32 filter whose
 * action is `mirred egress redirect` to another link. */
#include <errno.h>
#include <stdbool.h>
#include <linux/if_ether.h>
#include <linux/pkt_sched.h>
#include <linux/tc_act/tc_mirred.h>
#include <netlink/route/act/mirred.h>
#include <netlink/route/classifier.h>
#include <netlink/route/cls/u32.h>
#include <netlink/route/qdisc.h>

#include "net/internal.h"

#define INGRESS_HANDLE TC_H_MAKE(TC_H_INGRESS, 0)

static void qdisc_putp(struct rtnl_qdisc **q)
{
	if (*q)
		rtnl_qdisc_put(*q);
}
static void cls_putp(struct rtnl_cls **c)
{
	if (*c)
		rtnl_cls_put(*c);
}
static void act_putp(struct rtnl_act **a)
{
	if (*a)
		rtnl_act_put(*a);
}

static struct rtnl_qdisc *ingress(int ifindex)
{
	struct rtnl_qdisc *q = rtnl_qdisc_alloc();

	if (!q)
		return NULL;
	rtnl_tc_set_ifindex(TC_CAST(q), ifindex);
	rtnl_tc_set_parent(TC_CAST(q), TC_H_INGRESS);
	rtnl_tc_set_handle(TC_CAST(q), INGRESS_HANDLE);
	rtnl_tc_set_kind(TC_CAST(q), "ingress");
	return q;
}

/* Add (exclusively) or delete ifindex's ingress qdisc. */
static int ingress_op(struct qp_nl *nl, int ifindex, bool add, qp_error **err)
{
	__attribute__((cleanup(qdisc_putp))) struct rtnl_qdisc *q = ingress(ifindex);
	int r;

	if (!q)
		return qp_fail(err, ENOMEM, "ingress qdisc of link %d", ifindex);
	nl->syserr = 0;
	r = add ? rtnl_qdisc_add(nl->sk, q, NLM_F_CREATE | NLM_F_EXCL) : rtnl_qdisc_delete(nl->sk, q);
	/* none there to delete: the kernel says EINVAL (no such qdisc) or ENOENT */
	if (r < 0 && !add && (qp_nl_errno(nl, r) == EINVAL || qp_nl_errno(nl, r) == ENOENT))
		return 0;
	if (r < 0)
		return qp_fail(err, qp_nl_errno(nl, r), "%s the ingress qdisc of link %d", add ? "add" : "delete",
			       ifindex);
	return 0;
}

int qp_nl_ingress_add(struct qp_nl *nl, int ifindex, qp_error **err)
{
	return ingress_op(nl, ifindex, true, err);
}

int qp_nl_ingress_del(struct qp_nl *nl, int ifindex, qp_error **err)
{
	return ingress_op(nl, ifindex, false, err);
}

int qp_nl_redirect_add(struct qp_nl *nl, int from, int to, qp_error **err)
{
	__attribute__((cleanup(cls_putp))) struct rtnl_cls *c = rtnl_cls_alloc();
	__attribute__((cleanup(act_putp))) struct rtnl_act *a = rtnl_act_alloc();
	int r;

	if (!c || !a)
		return qp_fail(err, ENOMEM, "redirect link %d to %d", from, to);
	rtnl_tc_set_ifindex(TC_CAST(c), from);
	rtnl_tc_set_parent(TC_CAST(c), INGRESS_HANDLE);
	if (rtnl_tc_set_kind(TC_CAST(c), "u32") < 0 || rtnl_tc_set_kind(TC_CAST(a), "mirred") < 0)
		return qp_error_set(err, QP_E_GENERIC, 0, "libnl has no u32 classifier or mirred action");
	rtnl_cls_set_prio(c, 1);
	rtnl_cls_set_protocol(c, ETH_P_ALL);
	rtnl_mirred_set_action(a, TCA_EGRESS_REDIR);
	rtnl_mirred_set_policy(a, TC_ACT_STOLEN);
	rtnl_mirred_set_ifindex(a, (uint32_t)to);
	/* u32 with one key of mask 0: every frame matches; terminal, or the
	 * kernel never runs the action of the matching key */
	if (rtnl_u32_add_key_uint32(c, 0, 0, 0, 0) < 0 || rtnl_u32_set_cls_terminal(c) < 0 ||
	    rtnl_u32_add_action(c, a) < 0)
		return qp_fail(err, ENOMEM, "redirect link %d to %d", from, to);
	nl->syserr = 0;
	r = rtnl_cls_add(nl->sk, c, NLM_F_CREATE | NLM_F_EXCL);
	if (r < 0)
		return qp_fail(err, qp_nl_errno(nl, r), "redirect link %d to %d (tc u32 + mirred)", from, to);
	return 0;
}
