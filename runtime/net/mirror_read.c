/* runtime/net/mirror_read.c — what a pod's network namespace holds, read
 * for the guest: which interface is wired, its MAC, MTU, IPv4 address,
 * IPv6 addresses and routes, and why each other interface is not
 * (net/mirror.h). */
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

/* The address in a of family into out (16 bytes, zero-filled; a default
 * route's 0/0 has no bytes). */
static void in_any(struct nl_addr *a, int family, unsigned char out[16])
{
	unsigned len = family == AF_INET6 ? 16 : 4;

	memset(out, 0, 16);
	if (a && nl_addr_get_family(a) == family && nl_addr_get_len(a) == len)
		memcpy(out, nl_addr_get_binary_addr(a), len);
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

/* The main table's unicast routes, each through its first nexthop. */
static bool route_usable(struct rtnl_route *r, int *oif, unsigned char gw[16])
{
	struct rtnl_nexthop *nh;

	if (rtnl_route_get_table(r) != RT_TABLE_MAIN || rtnl_route_get_type(r) != RTN_UNICAST ||
	    rtnl_route_get_nnexthops(r) < 1 || !(nh = rtnl_route_nexthop_n(r, 0)))
		return false;
	*oif = rtnl_route_nh_get_ifindex(nh);
	in_any(rtnl_route_nh_get_gateway(nh), rtnl_route_get_family(r), gw);
	return true;
}

/* The interface with family's default route (0: none). */
static int default_route_oif(struct nl_cache *routes, int family, unsigned char gw[16])
{
	for (struct nl_object *o = nl_cache_get_first(routes); o; o = nl_cache_get_next(o)) {
		struct rtnl_route *r = (struct rtnl_route *)o;
		int oif;
		if (rtnl_route_get_family(r) == family && nl_addr_get_prefixlen(rtnl_route_get_dst(r)) == 0 &&
		    route_usable(r, &oif, gw))
			return oif;
	}
	return 0;
}

/* The addresses of ifindex: the first IPv4 one into m, the global IPv6
 * ones too (up to QP_NET_MIRROR_ADDRS6; m NULL: only counted); *n4 and
 * *n6 how many of each there are. */
static void read_addrs(struct nl_cache *addrs, int ifindex, struct qp_net_mirror *m, int *n4, int *n6)
{
	*n4 = *n6 = 0;
	for (struct nl_object *o = nl_cache_get_first(addrs); o; o = nl_cache_get_next(o)) {
		struct rtnl_addr *a = (struct rtnl_addr *)o;
		struct nl_addr *local = rtnl_addr_get_local(a);
		if (rtnl_addr_get_ifindex(a) != ifindex || rtnl_addr_get_scope(a) != RT_SCOPE_UNIVERSE ||
		    (rtnl_addr_get_flags(a) & IFA_F_DADFAILED))
			continue;
		if (rtnl_addr_get_family(a) == AF_INET6 && local && nl_addr_get_len(local) == 16) {
			if (m && *n6 < QP_NET_MIRROR_ADDRS6) {
				memcpy(&m->addrs6[*n6].addr, nl_addr_get_binary_addr(local), 16);
				m->addrs6[*n6].prefix = rtnl_addr_get_prefixlen(a);
				m->naddrs6 = (unsigned)*n6 + 1;
			}
			(*n6)++;
		} else if (rtnl_addr_get_family(a) == AF_INET) {
			if (m && !*n4 && in4(local, &m->addr))
				m->prefix = rtnl_addr_get_prefixlen(a);
			(*n4)++;
		}
	}
}

/* The routes of m's interface, of both families, but IPv4's default route
 * (m->gateway), the kernel's own (the addresses' networks, IPv6's
 * link-local and multicast) and those of a family m has no address of. */
static int collect_routes(struct nl_cache *routes, int ifindex, struct qp_net_mirror *m, qp_error **err)
{
	for (struct nl_object *o = nl_cache_get_first(routes); o; o = nl_cache_get_next(o)) {
		struct rtnl_route *r = (struct rtnl_route *)o;
		struct nl_addr *dst = rtnl_route_get_dst(r);
		struct qp_net_mirror_route rt = { .family = rtnl_route_get_family(r) };
		int oif;
		if ((rt.family != AF_INET && rt.family != AF_INET6) || !route_usable(r, &oif, rt.gateway) ||
		    oif != ifindex || rtnl_route_get_protocol(r) == RTPROT_KERNEL ||
		    (rt.family == AF_INET ? !m->prefix || nl_addr_get_prefixlen(dst) == 0 : !m->naddrs6))
			continue;
		in_any(dst, rt.family, rt.dst);
		rt.prefix = nl_addr_get_prefixlen(dst);
		if (rt.family == AF_INET6 && rt.prefix && (rt.dst[0] == 0xff || (rt.dst[0] == 0xfe && (rt.dst[1] & 0xc0) == 0x80)))
			continue;
		if (m->nroutes == QP_NET_MIRROR_ROUTES)
			return qp_error_set(err, QP_E_INVALID, 0,
					    "\"%s\" has more than %d routes (the guest takes %d)", m->ifname,
					    QP_NET_MIRROR_ROUTES, QP_NET_MIRROR_ROUTES);
		m->routes[m->nroutes++] = rt;
	}
	return 0;
}

/* Why link l cannot be wired (NULL: it can). */
static const char *unwirable(struct rtnl_link *l, struct nl_cache *addrs)
{
	const char *kind = rtnl_link_get_type(l);
	int n4, n6;

	if (!kind || strcmp(kind, "veth"))
		return "not a veth: qpod wires veth interfaces only";
	if (!(rtnl_link_get_flags(l) & IFF_UP))
		return "down";
	read_addrs(addrs, rtnl_link_get_ifindex(l), NULL, &n4, &n6);
	if (!n4 && !n6)
		return "no IPv4 or global IPv6 address";
	return NULL;
}

/* How much l is the pod's interface: 2 with the IPv4 default route, 1
 * with the IPv6 one, else 0. */
static int rank(struct rtnl_link *l, int def, int def6)
{
	int idx = rtnl_link_get_ifindex(l);

	return idx == def ? 2 : idx == def6 ? 1 : 0;
}

int qp_net_mirror_read(struct qp_nl *pnl, struct qp_net_mirror *m, qp_error **err)
{
	_cleanup_nl_cache_ struct nl_cache *links = NULL, *addrs = NULL, *routes = NULL;
	char refused[sizeof(m->note)] = "";
	struct rtnl_link *chosen = NULL;
	unsigned char gw[16], gw6[16];
	int r, others = 0, def, def6;

	memset(m, 0, sizeof(*m));
	if (qp_nl_link_cache(pnl, &links, err) < 0)
		return -1;
	if ((r = rtnl_addr_alloc_cache(pnl->sk, &addrs)) < 0)
		return qp_fail(err, qp_nl_errno(pnl, r), "list addresses");
	if ((r = rtnl_route_alloc_cache(pnl->sk, AF_UNSPEC, 0, &routes)) < 0)
		return qp_fail(err, qp_nl_errno(pnl, r), "list routes");
	def = default_route_oif(routes, AF_INET, gw);
	def6 = default_route_oif(routes, AF_INET6, gw6);

	/* the candidate with the IPv4 default route, else with the IPv6 one,
	 * else the first */
	for (struct nl_object *o = nl_cache_get_first(links); o; o = nl_cache_get_next(o)) {
		struct rtnl_link *l = (struct rtnl_link *)o;
		if (rtnl_link_get_flags(l) & IFF_LOOPBACK)
			continue;
		others++;
		if (!unwirable(l, addrs) && (!chosen || rank(l, def, def6) > rank(chosen, def, def6)))
			chosen = l;
	}
	if (!others)
		return 0;
	for (struct nl_object *o = nl_cache_get_first(links); o; o = nl_cache_get_next(o)) {
		struct rtnl_link *l = (struct rtnl_link *)o;
		const char *why;
		if ((rtnl_link_get_flags(l) & IFF_LOOPBACK) || l == chosen)
			continue;
		why = unwirable(l, addrs);
		note(refused, sizeof(refused), "\"%s\" (%s)", rtnl_link_get_name(l),
		     why ? why : "one interface per VM pod");
	}
	if (!chosen)
		return qp_error_set(err, QP_E_INVALID, 0, "no interface qpod can wire into the guest: %s",
				    refused);

	int n4, n6;
	struct nl_addr *mac = rtnl_link_get_addr(chosen);
	int idx = rtnl_link_get_ifindex(chosen);
	snprintf(m->ifname, sizeof(m->ifname), "%s", rtnl_link_get_name(chosen));
	if (!mac || nl_addr_get_len(mac) != 6)
		return qp_error_set(err, QP_E_INVALID, 0, "\"%s\" has no Ethernet address", m->ifname);
	memcpy(m->mac, nl_addr_get_binary_addr(mac), 6);
	m->mtu = rtnl_link_get_mtu(chosen);
	read_addrs(addrs, idx, m, &n4, &n6);
	if (idx == def && m->prefix)
		memcpy(&m->gateway, gw, 4);
	if (collect_routes(routes, idx, m, err) < 0)
		return -1;
	snprintf(m->note, sizeof(m->note), "wired \"%s\"", m->ifname);
	if (refused[0])
		note(m->note, sizeof(m->note), "not wired: %s", refused);
	if (n4 > 1)
		note(m->note, sizeof(m->note), "%d more IPv4 address(es) of \"%s\" not mirrored (the guest takes one)",
		     n4 - 1, m->ifname);
	if (n6 > QP_NET_MIRROR_ADDRS6)
		note(m->note, sizeof(m->note), "%d more IPv6 address(es) of \"%s\" not mirrored (the guest takes %d)",
		     n6 - QP_NET_MIRROR_ADDRS6, m->ifname, QP_NET_MIRROR_ADDRS6);
	return 1;
}
