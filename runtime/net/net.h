/* runtime/net/net.h — pod networking: host bridges, veth pairs for container
 * pods, tap devices for microVM pods, and IPv4 address management (IPAM).
 * Everything goes through libnl-3 / libnl-route-3; nothing shells out to ip.
 *
 * Design
 * ------
 * Bridges.  Host bridges are named PREFIX0, PREFIX1, ... (default prefix
 * "qpod"; a name longer than IFNAMSIZ-1 = 15 bytes is a config error).
 * The configured subnet (default 10.213.0.0/16) is cut into slices
 * (default /22); bridge N owns slice N.  In each slice the first address is
 * the network, the second the gateway (assigned to the bridge), the last the
 * broadcast, and the rest (1021 for a /22) go to pods.  A Linux bridge holds
 * at most 1023 ports (BR_MAX_PORTS - 1), so a /22 slice never asks a bridge
 * for more ports than it has; slices larger than /22 are refused.
 *
 * Spill-over.  The next pod lands in the first slice with a free address.
 * When a slice is exhausted, that is the next slice and so the next bridge.
 * If the kernel refuses a port anyway (EXFULL: someone else put ports on our
 * bridge), the slice is skipped for this attach and the next one is tried;
 * only when every slice with free addresses is full does the attach fail
 * with QP_E_BRIDGEFULL.  Because every bridge carries its slice's gateway
 * address, the host reaches every pod directly, and pods on different
 * bridges reach each other through the host: when bridge 1 or higher is
 * used, net.ipv4.ip_forward is set to 1 in the current network namespace
 * (a host firewall whose FORWARD policy is DROP still blocks that traffic;
 * that is the administrator's choice and is left alone).
 *
 * IPAM.  ROOT/.net/ipam holds one line per lease, "ADDR ID IFNAME"
 * (ROOT is the state root; pod IDs cannot start with '.', so ".net" never
 * clashes with a pod directory).  The file is replaced atomically
 * (write tmp + rename) and every qpod network change on a host — IPAM
 * update, bridge creation and removal, link creation and deletion — runs
 * under flock() of ROOT/.net/lock, so concurrent qpod processes never hand
 * an address out twice and never remove a bridge another is about to use.
 * The file is input like any other: lines are bounded and validated, and a
 * corrupt file is an error, never silently ignored.  Allocation is the first
 * free pod address of the first usable slice, or the requested one
 * (QP_E_INVALID if outside the subnet or a network/gateway/broadcast
 * address, QP_E_ADDRINUSE if leased); no free address is QP_E_SUBNETFULL.
 *
 * Names.  From the pod ID (a 64-bit hash): the host-side link is
 * "qp" + 10 hex digits (12 bytes, fits IFNAMSIZ), which is how gc
 * recognises our links; the pod's MAC is 02:xx:xx:xx:xx:xx (locally
 * administered, unicast).  A container pod's interface is "eth0" with that
 * MAC; a microVM pod gets the MAC in the lease for its virtio-net device.
 *
 * Pod netns.  The veth is created in one request with its peer already in
 * the pod's netns (IFLA_NET_NS_FD), named eth0, and the host end already on
 * the bridge and up: an EXFULL from the bridge leaves nothing behind.  To
 * configure eth0, the calling thread setns()es into /proc/PID/ns/net, opens
 * a netlink socket there (it stays bound to that netns) and setns()es back;
 * the original netns fd is kept and always restored, on errors too.
 *
 * Taps are not persistent: the device lives as long as the returned fd (the
 * VMM's), so a dead VMM leaves no link behind, only a lease for gc.
 */
#ifndef QPOD_NET_H
#define QPOD_NET_H

#include <netinet/in.h>
#include <sys/types.h>

#include "util/error.h"

#define QP_NET_DEFAULT_PREFIX "qpod"
#define QP_NET_DEFAULT_SUBNET "10.213.0.0/16"
#define QP_NET_DEFAULT_SLICE 22
#define QP_NET_ID_MAX 255             /* == QP_ID_MAX (spec/spec.h) */

struct qp_net_config {
	const char *root;           /* state root dir (e.g. /run/qpod) */
	const char *bridge_prefix;  /* NULL: "qpod" */
	const char *subnet;         /* NULL: "10.213.0.0/16" */
	int slice_prefix;           /* 0: 22; accepted 22..30, >= the subnet's prefix */
	int tap_vnet_hdr;           /* 1: taps get IFF_VNET_HDR (QEMU vnet_hdr=on) */
};

struct qp_net_lease {
	char id[QP_NET_ID_MAX + 1];
	char ifname_host[16];       /* "qp" + 10 hex: host end of the veth, or the tap */
	char bridge[16];            /* PREFIX + slice number */
	struct in_addr addr, gateway;
	int prefix;                 /* the slice prefix, e.g. 22 */
	unsigned char mac[6];       /* the pod's MAC (eth0, or the VM's NIC) */
};

/* Check a config (NULL fields take defaults): subnet syntax and host bits,
 * prefix ranges, bridge prefix characters and resulting name lengths. */
int qp_net_config_validate(const struct qp_net_config *c, qp_error **err);

/* veth pair: host end on the bridge (up), pod end moved into the netns of
 * `pid`, named eth0, given lease->addr/prefix and the lease MAC, up, lo up,
 * default route via the gateway.  requested_ip may be NULL.  An ID that
 * already has a lease is QP_E_EXISTS. */
int qp_net_attach_veth(const struct qp_net_config *c, const char *id, pid_t pid,
		       const char *requested_ip, struct qp_net_lease *out, qp_error **err);

/* tap for a VM: /dev/net/tun TUNSETIFF (IFF_TAP|IFF_NO_PI, IFF_VNET_HDR if
 * c->tap_vnet_hdr), attached to the bridge and up; *tap_fd (O_CLOEXEC, never
 * 0..2) is for the VMM.  EMFILE/ENFILE/ENOMEM/ENOBUFS/ENOSPC -> QP_E_TAPLIMIT. */
int qp_net_attach_tap(const struct qp_net_config *c, const char *id, const char *requested_ip,
		      struct qp_net_lease *out, int *tap_fd, qp_error **err);

/* A tap attached to nothing and down, named name, or (NULL) "qpt-" + 8
 * random hex digits (not a pod's link: gc's "qp" + 10 hex never matches
 * it), with IFF_VNET_HDR; it dies with its last fd.  A VM template's NIC:
 * the device its clones' own taps take the place of; a spare's.  Returns
 * the fd (O_CLOEXEC, never 0..2). */
int qp_net_tap_unattached(const char *name, qp_error **err);

/* Delete the host link (if present) and release the lease; idempotent.
 * Bridges stay (qpod gc prunes empty ones): deleting one is slow. */
int qp_net_detach(const struct qp_net_config *c, const char *id, qp_error **err);

/* Garbage-collect: release every lease whose ID is not in live_ids (NULL-
 * terminated; NULL = none live) and delete its link; delete every veth/tun
 * link named qp + 10 hex that no remaining (live) lease names; then prune
 * bridges.  Nothing else is touched.  *removed (may be NULL) = leases
 * released + orphan links deleted. */
int qp_net_gc(const struct qp_net_config *c, char *const *live_ids, int *removed, qp_error **err);

/* The address leased to pod ID, dotted into buf: 1, or 0 if it has none. */
int qp_net_lease_addr(const struct qp_net_config *c, const char *id, char buf[16], qp_error **err);

/* Remove bridges PREFIX<n> (kind bridge) that have no ports left. */
int qp_net_prune_bridges(const struct qp_net_config *c, qp_error **err);

#endif
