/* runtime/net/nl.h — thin helpers over libnl-route-3 for what qpod needs:
 * look links up, create bridges and veth pairs, enslave, bring up, delete,
 * add addresses and default routes.  Each helper returns -1 with a qp_error
 * carrying the kernel's own errno (captured from the netlink error message,
 * so EXFULL from a full bridge is not lost in libnl's error mapping). */
#ifndef QPOD_NET_NL_H
#define QPOD_NET_NL_H

#include <netinet/in.h>
#include <netlink/route/link.h>
#include <netlink/cache.h>

#include "util/error.h"

/* A NETLINK_ROUTE socket, bound to the netns it was opened in. */
struct qp_nl {
	struct nl_sock *sk;
	int syserr;   /* errno of the last kernel error message, 0 if none */
};

int qp_nl_open(struct qp_nl **out, qp_error **err);
void qp_nl_free(struct qp_nl *nl);
static inline void qp_nl_freep(struct qp_nl **nl)
{
	if (*nl)
		qp_nl_free(*nl);
}
#define _cleanup_nl_ __attribute__((cleanup(qp_nl_freep)))

static inline void qp_nl_cache_freep(struct nl_cache **c)
{
	if (*c)
		nl_cache_free(*c);
}
#define _cleanup_nl_cache_ __attribute__((cleanup(qp_nl_cache_freep)))

static inline void qp_nl_link_putp(struct rtnl_link **l)
{
	if (*l)
		rtnl_link_put(*l);
}
#define _cleanup_nl_link_ __attribute__((cleanup(qp_nl_link_putp)))

/* Link by name: 1 and *out (caller puts it), 0 if there is none, -1 on error. */
int qp_nl_link_get(struct qp_nl *nl, const char *name, struct rtnl_link **out, qp_error **err);
/* All links of the netns (dump). */
int qp_nl_link_cache(struct qp_nl *nl, struct nl_cache **out, qp_error **err);
/* Delete by name; a missing link is success. */
int qp_nl_link_del(struct qp_nl *nl, const char *name, qp_error **err);
/* Set master (0 = leave as is) and bring up. */
int qp_nl_link_set_master_up(struct qp_nl *nl, int ifindex, int master, qp_error **err);
int qp_nl_link_up(struct qp_nl *nl, int ifindex, qp_error **err);
/* Move link ifindex into the netns nsfd, renamed name there. */
int qp_nl_link_move(struct qp_nl *nl, int ifindex, int nsfd, const char *name, qp_error **err);
/* Set the MTU and bring up. */
int qp_nl_link_set_mtu_up(struct qp_nl *nl, int ifindex, unsigned mtu, qp_error **err);

/* New bridge `name` with a fixed MAC (so its address never follows its
 * ports), up.  EEXIST is reported as an error. */
int qp_nl_bridge_add(struct qp_nl *nl, const char *name, const unsigned char mac[6],
		     qp_error **err);
/* New veth pair in one request: host end `host` on bridge `master`, up; peer
 * `peer` with `peer_mac`, created directly in the netns of `peer_nsfd`. */
int qp_nl_veth_add(struct qp_nl *nl, const char *host, int master, const char *peer,
		   const unsigned char peer_mac[6], int peer_nsfd, qp_error **err);
/* Add addr/prefix to ifindex; exists_ok: an identical address is success. */
int qp_nl_addr_add(struct qp_nl *nl, int ifindex, struct in_addr addr, int prefix,
		   int exists_ok, qp_error **err);
/* Default route via gw on ifindex. */
int qp_nl_route_add_default(struct qp_nl *nl, int ifindex, struct in_addr gw, qp_error **err);

/* errno for a libnl return code: the kernel's if it sent one. */
int qp_nl_errno(struct qp_nl *nl, int nlerr);

#endif
