/* runtime/net/overlap.c — refuse a pod subnet that collides with a network
 * the host already routes (podman's cni-podman0 on 10.88.0.0/16, docker0 on
 * 172.17.0.0/16, a Kubernetes pod CIDR, the LAN): two bridges claiming the
 * same addresses would make either unreachable.  Checked whenever qpod
 * makes a bridge.  Routes through qpod's own bridges (same prefix) are ours
 * and do not count; neither does the default route (0.0.0.0/0). */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <netlink/route/route.h>
#include <netlink/route/link.h>

#include "net/internal.h"

struct overlap_scan {
	const struct qp_net_cfg *cfg;
	struct nl_cache *links;
	char found[128];
};

static uint32_t mask_of(int prefix)
{
	return prefix <= 0 ? 0 : prefix >= 32 ? 0xffffffffu : ~((1u << (32 - prefix)) - 1);
}

static void check_route(struct nl_object *o, void *arg)
{
	struct overlap_scan *s = arg;
	struct rtnl_route *r = (struct rtnl_route *)o;
	struct nl_addr *dst = rtnl_route_get_dst(r);
	char dev[IF_NAMESIZE] = "?", net[INET_ADDRSTRLEN];

	if (s->found[0] || rtnl_route_get_family(r) != AF_INET || !dst ||
	    rtnl_route_get_table(r) == RT_TABLE_LOCAL || nl_addr_get_len(dst) != 4)
		return;
	int plen = (int)nl_addr_get_prefixlen(dst);
	if (plen == 0)
		return; /* the default route */
	uint32_t a;
	memcpy(&a, nl_addr_get_binary_addr(dst), 4);
	a = ntohl(a);
	/* two prefixes overlap iff they agree on the shorter one's bits */
	int shorter = plen < s->cfg->subnet_prefix ? plen : s->cfg->subnet_prefix;
	if ((a & mask_of(shorter)) != (s->cfg->base & mask_of(shorter)))
		return;
	if (rtnl_route_get_nnexthops(r) > 0) {
		struct rtnl_nexthop *nh = rtnl_route_nexthop_n(r, 0);
		rtnl_link_i2name(s->links, rtnl_route_nh_get_ifindex(nh), dev, sizeof(dev));
	}
	if (qp_net_is_bridge_name(s->cfg, dev))
		return; /* one of our own bridges */
	struct in_addr in = { .s_addr = htonl(a) };
	inet_ntop(AF_INET, &in, net, sizeof(net));
	snprintf(s->found, sizeof(s->found), "%s/%d on %s", net, plen, dev);
}

int qp_net_check_overlap(struct qp_nl *nl, const struct qp_net_cfg *cfg, qp_error **err)
{
	struct overlap_scan s = { .cfg = cfg };
	struct nl_cache *routes = NULL;
	char net[INET_ADDRSTRLEN];
	int r;

	if ((r = rtnl_link_alloc_cache(nl->sk, AF_UNSPEC, &s.links)) < 0)
		return qp_fail(err, qp_nl_errno(nl, r), "read links");
	if ((r = rtnl_route_alloc_cache(nl->sk, AF_INET, 0, &routes)) < 0) {
		nl_cache_free(s.links);
		return qp_fail(err, qp_nl_errno(nl, r), "read routes");
	}
	nl_cache_foreach(routes, check_route, &s);
	nl_cache_free(routes);
	nl_cache_free(s.links);
	if (!s.found[0])
		return 0;
	struct in_addr in = { .s_addr = htonl(cfg->base) };
	inet_ntop(AF_INET, &in, net, sizeof(net));
	return qp_error_set(err, QP_E_INVALID, 0,
			    "pod subnet %s/%d overlaps the host's route %s: choose another with "
			    "--subnet CIDR (annotation qpod.net.subnet)",
			    net, cfg->subnet_prefix, s.found);
}
