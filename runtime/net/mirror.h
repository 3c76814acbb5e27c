/* runtime/net/mirror.h — a VM pod in a network namespace that someone else
 * made (containerd's CNI, podman's netavark, `ip netns add`): the
 * namespace's interface mirrored into the guest.
 *
 * Design (docs/DECISIONS.md, "Issue 30"), Kata's "tcfilter" model.  In the
 * pod's namespace, next to its veth (say eth0), qpod makes a tap
 * (QP_NET_MIRROR_TAP, vnet_hdr, the veth's MTU, up) and redirects every
 * frame both ways with tc: an ingress qdisc on each and one u32 filter
 * matching all with `mirred egress redirect` to the other.  The tap's fd is
 * QEMU's virtio-net backend; the guest's eth0 takes the veth's MAC, first
 * IPv4 address and prefix, global IPv6 addresses, MTU and routes of both
 * families (default gateways included), read from the namespace when the
 * pod starts.  The veth keeps its address (no
 * frame reaches the namespace's own stack any more: they are redirected
 * before it), so whoever reads the namespace (the CRI's status, `ip addr`)
 * sees the pod's address where it was.  Nothing is made in the host's own
 * namespace.
 *
 * Lifetimes.  The tap is not persistent: it dies with QEMU, and its qdisc
 * and filter with it.  The veth's ingress qdisc (with the filter) is qpod's
 * to remove: qp_net_mirror_unwire, from the pod's delete (and gc's, for a
 * pod whose creator died).
 *
 * What is wired.  One interface per pod: the veth carrying the IPv4
 * default route, else the IPv6 one, else the first veth with an address
 * (IPv4, or global IPv6: an IPv6-only pod).  Every other interface but lo
 * is named in the note with the reason it is not wired (another kind than
 * veth, no address, down, a second veth).  A
 * namespace with lo only is nothing to mirror (podman's --network none):
 * the guest has loopback only.  A namespace with interfaces of which none
 * can be wired is refused, with each one's reason. */
#ifndef QPOD_NET_MIRROR_H
#define QPOD_NET_MIRROR_H

#include <netinet/in.h>

#include "util/error.h"

#define QP_NET_MIRROR_TAP "qp-tap0"
#define QP_NET_MIRROR_ROUTES 16 /* == QP_PROTO_MAX_ROUTES (guest-init/protocol.h) */
#define QP_NET_MIRROR_ADDRS6 8  /* == QP_PROTO_MAX_ADDRS6 */

struct qp_net_mirror_route {
	int family;                            /* AF_INET or AF_INET6 */
	unsigned char dst[16], gateway[16];    /* gateway all zero: on the link */
	int prefix;                            /* 0 with AF_INET6: IPv6's default route */
};

struct qp_net_mirror_addr6 {
	struct in6_addr addr;
	int prefix;
};

struct qp_net_mirror {
	char ifname[16];            /* the wired veth, in the pod's namespace */
	unsigned char mac[6];       /* the veth's: the guest's NIC takes it */
	unsigned mtu;
	struct in_addr addr, gateway; /* gateway 0.0.0.0: no default route */
	int prefix;                 /* 0: no IPv4 address (IPv6 only) */
	unsigned naddrs6;           /* global IPv6 addresses */
	struct qp_net_mirror_addr6 addrs6[QP_NET_MIRROR_ADDRS6];
	unsigned nroutes;           /* routes but IPv4's default and the addresses' own */
	struct qp_net_mirror_route routes[QP_NET_MIRROR_ROUTES];
	int tap_ifindex;            /* QP_NET_MIRROR_TAP's, for unwire */
	char note[512];             /* what is not wired and why ("" if all is) */
};

/* Read the namespace at nspath and wire its interface: 1 with *out and
 * *tap_fd (O_CLOEXEC, never 0..2; vnet_hdr) when an interface is wired,
 * 0 when there is nothing to wire (lo only, the host's own namespace, or
 * a namespace wired to another VM pod already: out->note says so), -1 (QP_E_INVALID with every
 * interface's reason) when the namespace cannot be mirrored. */
int qp_net_mirror_attach(const char *nspath, struct qp_net_mirror *out, int *tap_fd, qp_error **err);

/* A tap made elsewhere (tap, in the namespace at from_path: a spare's
 * QEMU's, in its holder's) in place of the one attach made: attach's
 * wiring removed, the tap moved into the namespace as QP_NET_MIRROR_TAP
 * and wired to m's veth (m->tap_ifindex updated). */
int qp_net_mirror_adopt(const char *nspath, const char *from_path, const char *tap, struct qp_net_mirror *m,
			qp_error **err);

/* Remove what attach left in the namespace: the ingress qdisc of ifname
 * and the tap, if still there, unless a tap of another ifindex than
 * tap_ifindex is (a later pod's wiring: left alone).  A namespace that is
 * gone is success. */
int qp_net_mirror_unwire(const char *nspath, const char *ifname, int tap_ifindex, qp_error **err);

#endif
