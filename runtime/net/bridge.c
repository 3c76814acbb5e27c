/* runtime/net/bridge.c — the host bridges PREFIX0, PREFIX1, ...: create on
 * demand with the slice's gateway address, enable forwarding between them,
 * and remove them when they have no ports left.  Callers hold the network
 * lock (ipam.h), so no other qpod creates or prunes bridges meanwhile. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "net/internal.h"
#include "util/cleanup.h"

#define IP_FORWARD "/proc/sys/net/ipv4/ip_forward"

int qp_net_enable_forwarding(qp_error **err)
{
	/* /proc/sys/net follows the netns of the opening thread: this only
	 * changes the namespace qpod's bridges live in. */
	_cleanup_close_ int fd = open(IP_FORWARD, O_RDWR | O_CLOEXEC);
	char c = 0;

	if (fd < 0)
		return qp_fail(err, errno, "open \"" IP_FORWARD "\"");
	if (read(fd, &c, 1) == 1 && c == '1')
		return 0;
	if (pwrite(fd, "1\n", 2, 0) != 2)
		return qp_fail(err, errno, "enable IPv4 forwarding (" IP_FORWARD ")");
	return 0;
}

int qp_net_bridge_ensure(struct qp_nl *nl, const struct qp_net_cfg *cfg, uint32_t slice,
			 int *ifindex, qp_error **err)
{
	_cleanup_nl_link_ struct rtnl_link *l = NULL;
	char name[16];
	struct in_addr gw;
	const char *kind;
	int r;

	qp_bridge_name(cfg, slice, name);
	r = qp_nl_link_get(nl, name, &l, err);
	if (r < 0)
		return -1;
	if (r == 0) {
		unsigned char mac[6];
		qp_error *e = NULL;

		if (qp_net_check_overlap(nl, cfg, err) < 0)
			return -1;
		qp_net_bridge_mac(name, mac);
		if (qp_nl_bridge_add(nl, name, mac, &e) < 0) {
			if (qp_net_errnum(e) != EEXIST) /* EEXIST: made by someone else */
				return qp_net_pass_error(err, &e);
			qp_error_free(&e);
		}
		r = qp_nl_link_get(nl, name, &l, err);
		if (r < 0)
			return -1;
		if (r == 0)
			return qp_error_set(err, QP_E_GENERIC, 0, "bridge \"%s\" vanished", name);
	}
	kind = rtnl_link_get_type(l);
	if (!kind || strcmp(kind, "bridge"))
		return qp_error_set(err, QP_E_INVALID, 0,
				    "link \"%s\" exists and is not a bridge (%s); choose another "
				    "bridge prefix", name, kind ? kind : "unknown kind");
	*ifindex = rtnl_link_get_ifindex(l);
	if (!(rtnl_link_get_flags(l) & IFF_UP) && qp_nl_link_up(nl, *ifindex, err) < 0)
		return qp_error_prefix(err, "bridge \"%s\"", name);
	gw.s_addr = htonl(qp_slice_gateway(cfg, slice));
	if (qp_nl_addr_add(nl, *ifindex, gw, cfg->slice_prefix, 1, err) < 0)
		return qp_error_prefix(err, "bridge \"%s\"", name);
	/* Pods on bridge 0 reach pods on bridge 1 only through the host. */
	if (slice >= 1 && qp_net_enable_forwarding(err) < 0)
		return qp_error_prefix(err, "bridge \"%s\"", name);
	return 0;
}

struct port_count {
	int master;
	int n;
};

static void count_port(struct nl_object *o, void *arg)
{
	struct port_count *pc = arg;

	if (rtnl_link_get_master((struct rtnl_link *)o) == pc->master)
		pc->n++;
}

int qp_net_prune_locked(struct qp_nl *nl, const struct qp_net_cfg *cfg, long only_slice,
			qp_error **err)
{
	_cleanup_nl_cache_ struct nl_cache *cache = NULL;
	char only[16] = "";

	if (only_slice >= 0)
		qp_bridge_name(cfg, (uint32_t)only_slice, only);
	if (qp_nl_link_cache(nl, &cache, err) < 0)
		return qp_error_prefix(err, "prune bridges");
	for (struct nl_object *o = nl_cache_get_first(cache); o; o = nl_cache_get_next(o)) {
		struct rtnl_link *l = (struct rtnl_link *)o;
		const char *name = rtnl_link_get_name(l), *kind = rtnl_link_get_type(l);
		struct port_count pc = { .master = rtnl_link_get_ifindex(l), .n = 0 };

		if (!name || !kind || strcmp(kind, "bridge") || !qp_net_is_bridge_name(cfg, name))
			continue;
		if (*only && strcmp(name, only))
			continue;
		nl_cache_foreach(cache, count_port, &pc);
		if (pc.n == 0 && qp_nl_link_del(nl, name, err) < 0)
			return qp_error_prefix(err, "prune bridges");
	}
	return 0;
}
