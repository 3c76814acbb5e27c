/* runtime/net/mirror_read.c — what a pod's network namespace holds, read
 * for the guest: which interface is wired, its MAC, MTU, IPv4 address and
 * routes, and why each other interface is not (net/mirror.h). */
#include <errno.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netlink/route/addr.h>
#include <netlink/route/route.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "net/internal.h"
#include "net/mirror.h"

/* The IPv4 address in a (4 bytes), 0 if it is not one. */
static int in4(struct nl_addr *a, struct in_addr *out)
{
	if (!a || nl_addr_get_family(a) != AF_INET || nl_addr_get_len(a) != 4) {
		out->s_addr = 0;
		return a && nl_addr_get_family(a) == AF_INET ? 1 : 0; /* 0.0.0.0/0 has no bytes */
	}
	memcpy(out, nl_addr_get_binary_addr(a), 4);
	return 1;
}

/* Append "; " (unless buf is empty) and the formatted text (cut at size). */
static void note(char *buf, size_t size, const char *fmt, ...)
{
	size_t n = strlen(buf);
	va_list ap;

	if (n && n + 2 < size) {
		memcpy(buf + n, "; ", 3);
		n += 2;
	}
	if (n + 1 >= size)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + n, size - n, fmt, ap);
	va_end(ap);
}

/* The main table's unicast IPv4 routes, each through its first nexthop. */
static bool route_usable(struct rtnl_route *r, int *oif, struct in_addr *gw)
{
	struct rtnl_nexthop *nh;

	if (rtnl_route_get_table(r) != RT_TABLE_MAIN || rtnl_route_get_type(r) != RTN_UNICAST ||
	    rtnl_route_get_nnexthops(r) < 1 || !(nh = rtnl_route_nexthop_n(r, 0)))
		return false;
	*oif = rtnl_route_nh_get_ifindex(nh);
	in4(rtnl_route_nh_get_gateway(nh), gw);
	return true;
}

/* The interface with the IPv4 default route (0: none). */
static int default_route_oif(struct nl_cache *routes, struct in_addr *gw)
{
	for (struct nl_object *o = nl_cache_get_first(routes); o; o = nl_cache_get_next(o)) {
		struct rtnl_route *r = (struct rtnl_route *)o;
		int oif;
		if (nl_addr_get_prefixlen(rtnl_route_get_dst(r)) == 0 && route_usable(r, &oif, gw))
			return oif;
	}
	return 0;
}

/* First IPv4 address of ifindex into m (1), 0 if none; *v6 = whether it has
 * a global IPv6 address, *more = IPv4 addresses beyond the first. */
static int first_ipv4(struct nl_cache *addrs, int ifindex, struct qp_net_mirror *m, bool *v6, int *more)
{
	int found = 0;

	*v6 = false;
	*more = 0;
	for (struct nl_object *o = nl_cache_get_first(addrs); o; o = nl_cache_get_next(o)) {
		struct rtnl_addr *a = (struct rtnl_addr *)o;
		if (rtnl_addr_get_ifindex(a) != ifindex || rtnl_addr_get_scope(a) != RT_SCOPE_UNIVERSE)
			continue;
		if (rtnl_addr_get_family(a) == AF_INET6)
			*v6 = true;
		if (rtnl_addr_get_family(a) != AF_INET)
			continue;
		if (found) {
			(*more)++;
			continue;
		}
		found = in4(rtnl_addr_get_local(a), &m->addr);
		m->prefix = rtnl_addr_get_prefixlen(a);
	}
	return found;
}

/* The routes of m's interface, but the default route (m->gateway) and the
 * kernel's own route of its address's network. */
static int collect_routes(struct nl_cache *routes, int ifindex, struct qp_net_mirror *m, qp_error **err)
{
	for (struct nl_object *o = nl_cache_get_first(routes); o; o = nl_cache_get_next(o)) {
		struct rtnl_route *r = (struct rtnl_route *)o;
		struct nl_addr *dst = rtnl_route_get_dst(r);
		struct qp_net_mirror_route rt = { 0 };
		int oif;
		if (!route_usable(r, &oif, &rt.gateway) || oif != ifindex ||
		    rtnl_route_get_protocol(r) == RTPROT_KERNEL || nl_addr_get_prefixlen(dst) == 0)
			continue;
		if (m->nroutes == QP_NET_MIRROR_ROUTES)
			return qp_error_set(err, QP_E_INVALID, 0,
					    "\"%s\" has more than %d routes (the guest takes %d)", m->ifname,
					    QP_NET_MIRROR_ROUTES, QP_NET_MIRROR_ROUTES);
		in4(dst, &rt.dst);
		rt.prefix = nl_addr_get_prefixlen(dst);
		m->routes[m->nroutes++] = rt;
	}
	return 0;
}

/* Why link l cannot be wired (NULL: it can). */
static const char *unwirable(struct rtnl_link *l, struct nl_cache *addrs, struct qp_net_mirror *tmp)
{
	const char *kind = rtnl_link_get_type(l);
	bool v6;
	int more;

	if (!kind || strcmp(kind, "veth"))
		return "not a veth: qpod wires veth interfaces only";
	if (!(rtnl_link_get_flags(l) & IFF_UP))
		return "down";
	if (!first_ipv4(addrs, rtnl_link_get_ifindex(l), tmp, &v6, &more))
		return "no IPv4 address";
	return NULL;
}

int qp_net_mirror_read(struct qp_nl *pnl, struct qp_net_mirror *m, qp_error **err)
{
	_cleanup_nl_cache_ struct nl_cache *links = NULL, *addrs = NULL, *routes = NULL;
	char refused[sizeof(m->note)] = "";
	struct rtnl_link *chosen = NULL;
	struct in_addr gw = { 0 };
	int r, others = 0, def;

	memset(m, 0, sizeof(*m));
	if (qp_nl_link_cache(pnl, &links, err) < 0)
		return -1;
	if ((r = rtnl_addr_alloc_cache(pnl->sk, &addrs)) < 0)
		return qp_fail(err, qp_nl_errno(pnl, r), "list addresses");
	if ((r = rtnl_route_alloc_cache(pnl->sk, AF_INET, 0, &routes)) < 0)
		return qp_fail(err, qp_nl_errno(pnl, r), "list routes");
	def = default_route_oif(routes, &gw);

	/* the candidate with the default route, else the first */
	for (struct nl_object *o = nl_cache_get_first(links); o; o = nl_cache_get_next(o)) {
		struct rtnl_link *l = (struct rtnl_link *)o;
		struct qp_net_mirror tmp;
		if (rtnl_link_get_flags(l) & IFF_LOOPBACK)
			continue;
		others++;
		if (!unwirable(l, addrs, &tmp) &&
		    (!chosen || (rtnl_link_get_ifindex(l) == def && rtnl_link_get_ifindex(chosen) != def)))
			chosen = l;
	}
	if (!others)
		return 0;
	for (struct nl_object *o = nl_cache_get_first(links); o; o = nl_cache_get_next(o)) {
		struct rtnl_link *l = (struct rtnl_link *)o;
		struct qp_net_mirror tmp;
		const char *why;
		if ((rtnl_link_get_flags(l) & IFF_LOOPBACK) || l == chosen)
			continue;
		why = unwirable(l, addrs, &tmp);
		note(refused, sizeof(refused), "\"%s\" (%s)", rtnl_link_get_name(l),
		     why ? why : "one interface per VM pod");
	}
	if (!chosen)
		return qp_error_set(err, QP_E_INVALID, 0, "no interface qpod can wire into the guest: %s",
				    refused);

	bool v6;
	int more;
	struct nl_addr *mac = rtnl_link_get_addr(chosen);
	int idx = rtnl_link_get_ifindex(chosen);
	snprintf(m->ifname, sizeof(m->ifname), "%s", rtnl_link_get_name(chosen));
	if (!mac || nl_addr_get_len(mac) != 6)
		return qp_error_set(err, QP_E_INVALID, 0, "\"%s\" has no Ethernet address", m->ifname);
	memcpy(m->mac, nl_addr_get_binary_addr(mac), 6);
	m->mtu = rtnl_link_get_mtu(chosen);
	first_ipv4(addrs, idx, m, &v6, &more);
	if (idx == def)
		m->gateway = gw;
	if (collect_routes(routes, idx, m, err) < 0)
		return -1;
	snprintf(m->note, sizeof(m->note), "wired \"%s\"", m->ifname);
	if (refused[0])
		note(m->note, sizeof(m->note), "not wired: %s", refused);
	if (more)
		note(m->note, sizeof(m->note), "%d more IPv4 address(es) of \"%s\" not mirrored (the guest takes one)", more,
		     m->ifname);
	if (v6)
		note(m->note, sizeof(m->note), "the IPv6 addresses of \"%s\" are not mirrored (IPv4 only)", m->ifname);
	return 1;
}
