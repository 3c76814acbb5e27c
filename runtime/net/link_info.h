/* runtime/net/link_info.h — the settings of a namespace's links that decide
 * network throughput, as text (`bench workload` names them in its result):
 * "NAME mtu 1500 qlen 1000 qdisc fq_codel tso on gso on gro off tx-csum on
 * rx-csum on sg on" (ETHTOOL_G* ioctls; "?" where the driver says nothing). */
#ifndef QPOD_NET_LINK_INFO_H
#define QPOD_NET_LINK_INFO_H

#include "util/error.h"

struct qp_link_info {
	char name[16];
	char driver[32]; /* ETHTOOL_GDRVINFO: "bridge", "tun", "veth", ... */
	char text[200];
};

/* The links of the caller's network namespace that are up with a carrier
 * (lo aside; a bridge without ports has no carrier), at most max: their
 * count, or -1. */
int qp_net_links_info(struct qp_link_info *out, int max, qp_error **err);
/* The same in the network namespace at nspath (not the caller's own). */
int qp_net_links_info_at(const char *nspath, struct qp_link_info *out, int max, qp_error **err);

#endif
