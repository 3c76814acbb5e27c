/* runtime/net/nl.c — libnl-route-3 helpers (see nl.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/rtnetlink.h>
#include <netlink/netlink.h>
#include <netlink/errno.h>
#include <netlink/route/addr.h>
#include <netlink/route/route.h>
#include <netlink/route/link/bridge.h>
#include <netlink/route/link/veth.h>

#include "net/nl.h"

static void nl_addr_putp(struct nl_addr **a)
{
	if (*a)
		nl_addr_put(*a);
}
#define _cleanup_nl_addr_ __attribute__((cleanup(nl_addr_putp)))

/* Keep the kernel's errno: libnl folds several (EXFULL among them) into
 * NLE_FAILURE.  NL_STOP makes libnl still return its own code. */
static int on_error(struct sockaddr_nl *who, struct nlmsgerr *e, void *arg)
{
	struct qp_nl *nl = arg;

	(void)who;
	nl->syserr = -e->error;
	return NL_STOP;
}

int qp_nl_open(struct qp_nl **out, qp_error **err)
{
	struct qp_nl *nl = calloc(1, sizeof(*nl));
	int r;

	if (!nl)
		return qp_fail(err, ENOMEM, "netlink socket");
	nl->sk = nl_socket_alloc();
	if (!nl->sk) {
		free(nl);
		return qp_fail(err, ENOMEM, "netlink socket");
	}
	nl_socket_modify_err_cb(nl->sk, NL_CB_CUSTOM, on_error, nl);
	r = nl_connect(nl->sk, NETLINK_ROUTE); /* SOCK_CLOEXEC inside libnl */
	if (r < 0) {
		int e = qp_nl_errno(nl, r);
		qp_nl_free(nl);
		return qp_fail(err, e, "netlink connect");
	}
	*out = nl;
	return 0;
}

void qp_nl_free(struct qp_nl *nl)
{
	int e = errno;

	nl_socket_free(nl->sk); /* closes the fd */
	free(nl);
	errno = e;
}

int qp_nl_errno(struct qp_nl *nl, int nlerr)
{
	if (nl && nl->syserr > 0)
		return nl->syserr;
	switch (nlerr < 0 ? -nlerr : nlerr) {
	case NLE_NOMEM: return ENOMEM;
	case NLE_EXIST: return EEXIST;
	case NLE_OBJ_NOTFOUND: return ENOENT;
	case NLE_NODEV: return ENODEV;
	case NLE_PERM: return EPERM;
	case NLE_NOACCESS: return EACCES;
	case NLE_BUSY: return EBUSY;
	case NLE_INVAL: return EINVAL;
	case NLE_RANGE: return ERANGE;
	case NLE_AGAIN: return EAGAIN;
	case NLE_OPNOTSUPP: return EOPNOTSUPP;
	case NLE_NOADDR: return EADDRNOTAVAIL;
	case NLE_BAD_SOCK: return EBADF;
	default: return EIO;
	}
}

/* Clear the captured errno before each request. */
static struct nl_sock *sk(struct qp_nl *nl)
{
	nl->syserr = 0;
	return nl->sk;
}

int qp_nl_link_get(struct qp_nl *nl, const char *name, struct rtnl_link **out, qp_error **err)
{
	int r = rtnl_link_get_kernel(sk(nl), 0, name, out);

	if (r == -NLE_NODEV || r == -NLE_OBJ_NOTFOUND) {
		*out = NULL;
		return 0;
	}
	if (r < 0)
		return qp_fail(err, qp_nl_errno(nl, r), "look up link \"%s\"", name);
	return 1;
}

int qp_nl_link_cache(struct qp_nl *nl, struct nl_cache **out, qp_error **err)
{
	int r = rtnl_link_alloc_cache(sk(nl), AF_UNSPEC, out);

	if (r < 0)
		return qp_fail(err, qp_nl_errno(nl, r), "list links");
	return 0;
}

int qp_nl_link_del(struct qp_nl *nl, const char *name, qp_error **err)
{
	_cleanup_nl_link_ struct rtnl_link *l = rtnl_link_alloc();
	int r;

	if (!l)
		return qp_fail(err, ENOMEM, "delete link \"%s\"", name);
	rtnl_link_set_name(l, name);
	r = rtnl_link_delete(sk(nl), l);
	if (r < 0 && (r == -NLE_NODEV || r == -NLE_OBJ_NOTFOUND))
		return 0;
	if (r < 0)
		return qp_fail(err, qp_nl_errno(nl, r), "delete link \"%s\"", name);
	return 0;
}

/* rtnl_link_change of ifindex to chg's attributes: libnl's result. */
static int link_change(struct qp_nl *nl, int ifindex, struct rtnl_link *chg)
{
	_cleanup_nl_link_ struct rtnl_link *orig = rtnl_link_alloc();

	if (!orig)
		return -NLE_NOMEM;
	rtnl_link_set_ifindex(orig, ifindex);
	return rtnl_link_change(sk(nl), orig, chg, 0);
}

int qp_nl_link_move(struct qp_nl *nl, int ifindex, int nsfd, const char *name, qp_error **err)
{
	_cleanup_nl_link_ struct rtnl_link *chg = rtnl_link_alloc();
	int r = -NLE_NOMEM;

	if (chg) {
		rtnl_link_set_ns_fd(chg, nsfd);
		rtnl_link_set_name(chg, name); /* the kernel renames it as it moves it */
		r = link_change(nl, ifindex, chg);
	}
	if (r < 0)
		return qp_fail(err, qp_nl_errno(nl, r), "move link %d into another network namespace as \"%s\"",
			       ifindex, name);
	return 0;
}

/* Bring ifindex up, with a master (0: leave as is) and an MTU (0: leave). */
static int link_set_up(struct qp_nl *nl, int ifindex, int master, unsigned mtu, qp_error **err)
{
	_cleanup_nl_link_ struct rtnl_link *chg = rtnl_link_alloc();
	int r = -NLE_NOMEM;

	if (chg) {
		if (master > 0)
			rtnl_link_set_master(chg, master);
		if (mtu > 0)
			rtnl_link_set_mtu(chg, mtu);
		rtnl_link_set_flags(chg, IFF_UP);
		r = link_change(nl, ifindex, chg);
	}
	if (r < 0 && master > 0)
		return qp_fail(err, qp_nl_errno(nl, r), "attach link %d to bridge %d", ifindex,
			       master);
	if (r < 0 && mtu > 0)
		return qp_fail(err, qp_nl_errno(nl, r), "set link %d's MTU to %u and bring it up", ifindex, mtu);
	if (r < 0)
		return qp_fail(err, qp_nl_errno(nl, r), "bring up link %d", ifindex);
	return 0;
}

int qp_nl_link_set_master_up(struct qp_nl *nl, int ifindex, int master, qp_error **err)
{
	return link_set_up(nl, ifindex, master, 0, err);
}

int qp_nl_link_set_mtu_up(struct qp_nl *nl, int ifindex, unsigned mtu, qp_error **err)
{
	return link_set_up(nl, ifindex, 0, mtu, err);
}

int qp_nl_link_up(struct qp_nl *nl, int ifindex, qp_error **err)
{
	return qp_nl_link_set_master_up(nl, ifindex, 0, err);
}

static int set_mac(struct rtnl_link *l, const unsigned char mac[6])
{
	_cleanup_nl_addr_ struct nl_addr *a = nl_addr_build(AF_LLC, mac, 6);

	if (!a)
		return -1;
	rtnl_link_set_addr(l, a);
	return 0;
}

int qp_nl_bridge_add(struct qp_nl *nl, const char *name, const unsigned char mac[6],
		     qp_error **err)
{
	_cleanup_nl_link_ struct rtnl_link *l = rtnl_link_bridge_alloc();
	int r;

	if (!l || set_mac(l, mac) < 0)
		return qp_fail(err, ENOMEM, "create bridge \"%s\"", name);
	rtnl_link_set_name(l, name);
	rtnl_link_set_flags(l, IFF_UP);
	r = rtnl_link_add(sk(nl), l, NLM_F_CREATE | NLM_F_EXCL);
	if (r < 0)
		return qp_fail(err, qp_nl_errno(nl, r), "create bridge \"%s\"", name);
	return 0;
}

int qp_nl_veth_add(struct qp_nl *nl, const char *host, int master, const char *peer,
		   const unsigned char peer_mac[6], int peer_nsfd, qp_error **err)
{
	_cleanup_nl_link_ struct rtnl_link *l = rtnl_link_veth_alloc();
	struct rtnl_link *p;
	int r;

	if (!l)
		return qp_fail(err, ENOMEM, "create veth \"%s\"", host);
	p = rtnl_link_veth_get_peer(l); /* a reference we must put */
	if (!p)
		return qp_fail(err, ENOMEM, "create veth \"%s\"", host);
	rtnl_link_set_name(l, host);
	rtnl_link_set_master(l, master);
	rtnl_link_set_flags(l, IFF_UP);
	rtnl_link_set_name(p, peer);
	rtnl_link_set_ns_fd(p, peer_nsfd);
	r = set_mac(p, peer_mac);
	rtnl_link_put(p);
	if (r < 0)
		return qp_fail(err, ENOMEM, "create veth \"%s\"", host);
	/* One request: the kernel creates the peer in the pod's netns, then the
	 * host end, puts it up and enslaves it; if enslaving fails (EXFULL) it
	 * unregisters both ends again. */
	r = rtnl_link_add(sk(nl), l, NLM_F_CREATE | NLM_F_EXCL);
	if (r < 0)
		return qp_fail(err, qp_nl_errno(nl, r), "create veth \"%s\" (pod end \"%s\")",
			       host, peer);
	return 0;
}

static struct nl_addr *ipv4_addr(struct in_addr a, int prefix)
{
	struct nl_addr *na = nl_addr_build(AF_INET, &a, sizeof(a));

	if (na)
		nl_addr_set_prefixlen(na, prefix);
	return na;
}

int qp_nl_addr_add(struct qp_nl *nl, int ifindex, struct in_addr addr, int prefix,
		   int exists_ok, qp_error **err)
{
	struct rtnl_addr *ra = rtnl_addr_alloc();
	_cleanup_nl_addr_ struct nl_addr *local = ipv4_addr(addr, prefix);
	_cleanup_nl_addr_ struct nl_addr *bcast = NULL;
	struct in_addr b;
	int r;

	b.s_addr = addr.s_addr | htonl(prefix >= 32 ? 0 : 0xffffffffu >> prefix);
	bcast = ipv4_addr(b, 32);
	if (!ra || !local || !bcast) {
		if (ra)
			rtnl_addr_put(ra);
		return qp_fail(err, ENOMEM, "add address");
	}
	rtnl_addr_set_ifindex(ra, ifindex);
	rtnl_addr_set_family(ra, AF_INET);
	r = rtnl_addr_set_local(ra, local);
	if (r >= 0)
		r = rtnl_addr_set_broadcast(ra, bcast);
	if (r >= 0)
		r = rtnl_addr_add(sk(nl), ra, 0);
	rtnl_addr_put(ra);
	if (r < 0 && exists_ok && qp_nl_errno(nl, r) == EEXIST)
		return 0;
	if (r < 0) {
		char s[INET_ADDRSTRLEN];
		inet_ntop(AF_INET, &addr, s, sizeof(s));
		return qp_fail(err, qp_nl_errno(nl, r), "add address %s/%d to link %d", s, prefix,
			       ifindex);
	}
	return 0;
}

int qp_nl_route_add_default(struct qp_nl *nl, int ifindex, struct in_addr gw, qp_error **err)
{
	struct rtnl_route *rt = rtnl_route_alloc();
	struct rtnl_nexthop *nh = rtnl_route_nh_alloc();
	struct in_addr any = { 0 };
	_cleanup_nl_addr_ struct nl_addr *dst = ipv4_addr(any, 0);
	_cleanup_nl_addr_ struct nl_addr *via = ipv4_addr(gw, 32);
	int r;

	if (!rt || !nh || !dst || !via) {
		if (rt)
			rtnl_route_put(rt);
		if (nh)
			rtnl_route_nh_free(nh);
		return qp_fail(err, ENOMEM, "add default route");
	}
	rtnl_route_set_family(rt, AF_INET);
	rtnl_route_set_table(rt, RT_TABLE_MAIN);
	rtnl_route_set_scope(rt, RT_SCOPE_UNIVERSE);
	rtnl_route_set_protocol(rt, RTPROT_BOOT);
	rtnl_route_set_type(rt, RTN_UNICAST);
	rtnl_route_set_dst(rt, dst);
	rtnl_route_nh_set_ifindex(nh, ifindex);
	rtnl_route_nh_set_gateway(nh, via);
	rtnl_route_add_nexthop(rt, nh); /* rt owns nh now */
	r = rtnl_route_add(sk(nl), rt, NLM_F_EXCL);
	rtnl_route_put(rt);
	if (r < 0) {
		char s[INET_ADDRSTRLEN];
		inet_ntop(AF_INET, &gw, s, sizeof(s));
		return qp_fail(err, qp_nl_errno(nl, r), "add default route via %s", s);
	}
	return 0;
}
