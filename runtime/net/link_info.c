/* runtime/net/link_info.c — what the links of a network namespace are set to
 * for throughput (net/link_info.h): MTU, transmit queue length, root qdisc
 * and the offloads, read with ETHTOOL ioctls and rtnetlink. */
#include <errno.h>
#include <linux/ethtool.h>
#include <linux/pkt_sched.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <netlink/route/qdisc.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net/internal.h"
#include "net/link_info.h"
#include "util/cleanup.h"

static const struct {
	const char *name;
	unsigned cmd;
} offloads[] = {
	{ "tso", ETHTOOL_GTSO },	 { "gso", ETHTOOL_GGSO },	  { "gro", ETHTOOL_GGRO },
	{ "tx-csum", ETHTOOL_GTXCSUM }, { "rx-csum", ETHTOOL_GRXCSUM }, { "sg", ETHTOOL_GSG },
};

static int ethtool(int sk, const char *name, void *data)
{
	struct ifreq ifr = { .ifr_data = data };

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	return ioctl(sk, SIOCETHTOOL, &ifr);
}

/* The root qdisc's kind of ifindex ("-" if none is listed). */
static void root_qdisc(struct nl_cache *qdiscs, int ifindex, char *out, size_t size)
{
	snprintf(out, size, "-");
	for (struct nl_object *o = qdiscs ? nl_cache_get_first(qdiscs) : NULL; o; o = nl_cache_get_next(o)) {
		struct rtnl_qdisc *q = (struct rtnl_qdisc *)o;
		const char *kind = rtnl_tc_get_kind(TC_CAST(q));
		if (rtnl_tc_get_ifindex(TC_CAST(q)) == ifindex && rtnl_tc_get_parent(TC_CAST(q)) == TC_H_ROOT && kind) {
			snprintf(out, size, "%s", kind);
			return;
		}
	}
}

/* One link: its driver and the text; false if it is down or has no carrier. */
static bool describe(int sk, struct nl_cache *qdiscs, const struct if_nameindex *ni, struct qp_link_info *out)
{
	struct ifreq ifr = { 0 };
	struct ethtool_drvinfo drv = { .cmd = ETHTOOL_GDRVINFO };
	char qdisc[32];
	int mtu, qlen, n;

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ni->if_name);
	if (ioctl(sk, SIOCGIFFLAGS, &ifr) < 0 || !(ifr.ifr_flags & IFF_UP) || !(ifr.ifr_flags & IFF_RUNNING) ||
	    (ifr.ifr_flags & IFF_LOOPBACK))
		return false;
	mtu = ioctl(sk, SIOCGIFMTU, &ifr) < 0 ? -1 : ifr.ifr_mtu;
	qlen = ioctl(sk, SIOCGIFTXQLEN, &ifr) < 0 ? -1 : ifr.ifr_qlen;
	snprintf(out->name, sizeof(out->name), "%s", ni->if_name);
	snprintf(out->driver, sizeof(out->driver), "%s", ethtool(sk, ni->if_name, &drv) < 0 ? "?" : drv.driver);
	root_qdisc(qdiscs, (int)ni->if_index, qdisc, sizeof(qdisc));
	n = snprintf(out->text, sizeof(out->text), "%s mtu %d qlen %d qdisc %s", ni->if_name, mtu, qlen, qdisc);
	for (size_t i = 0; i < QP_ARRAY_SIZE(offloads) && n > 0 && (size_t)n < sizeof(out->text); i++) {
		struct ethtool_value v = { .cmd = offloads[i].cmd };
		n += snprintf(out->text + n, sizeof(out->text) - (size_t)n, " %s %s", offloads[i].name,
			      ethtool(sk, ni->if_name, &v) < 0 ? "?" : v.data ? "on" : "off");
	}
	return true;
}

int qp_net_links_info(struct qp_link_info *out, int max, qp_error **err)
{
	_cleanup_nl_ struct qp_nl *nl = NULL;
	_cleanup_nl_cache_ struct nl_cache *qdiscs = NULL;
	_cleanup_close_ int sk = -1;
	struct if_nameindex *all;
	int n = 0;

	if ((sk = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0)
		return qp_fail(err, errno, "links: socket");
	if (qp_nl_open(&nl, err) < 0)
		return -1;
	if (rtnl_qdisc_alloc_cache(nl->sk, &qdiscs) < 0)
		qdiscs = NULL; /* then every qdisc reads "-" */
	if (!(all = if_nameindex()))
		return qp_fail(err, errno, "links: list the interfaces");
	for (struct if_nameindex *ni = all; ni->if_index && n < max; ni++)
		if (describe(sk, qdiscs, ni, &out[n]))
			n++;
	if_freenameindex(all);
	return n;
}

struct in_ns {
	struct qp_link_info *out;
	int max, n;
};

static int info_here(void *arg, qp_error **err)
{
	struct in_ns *a = arg;

	return (a->n = qp_net_links_info(a->out, a->max, err)) < 0 ? -1 : 0;
}

int qp_net_links_info_at(const char *nspath, struct qp_link_info *out, int max, qp_error **err)
{
	_cleanup_close_ int nsfd = qp_netns_open_path(nspath, err);
	struct in_ns a = { .out = out, .max = max };

	if (nsfd < 0 || qp_netns_call(nsfd, info_here, &a, err) < 0)
		return -1;
	return a.n;
}
