/* runtime/net/internal.h — helpers shared inside runtime/net/ only:
 * names derived from pod IDs (ident.c), network namespaces (netns.c),
 * bridges (bridge.c) and taps (tap.c). */
#ifndef QPOD_NET_INTERNAL_H
#define QPOD_NET_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "net/ipam.h"
#include "net/nl.h"

/* Hand a locally collected error to the caller's err (which may be NULL);
 * returns -1.  Used where a function inspects an error (errnum) first. */
static inline int qp_net_pass_error(qp_error **err, qp_error **e)
{
	if (err && *e) {
		qp_error_free(err);
		*err = *e;
		*e = NULL;
	} else if (err && !*err) {
		qp_error_set(err, QP_E_NOMEM, 0, "out of memory while reporting an error");
	}
	qp_error_free(e);
	return -1;
}
/* errno of a collected error, 0 if none. */
static inline int qp_net_errnum(const qp_error *e)
{
	return e ? e->errnum : 0;
}

/* ---- ident.c: deterministic names from a pod ID, our bridges' names ---- */
#define QP_NET_LINK_PREFIX "qp"
#define QP_NET_LINK_HEX 10

uint64_t qp_net_hash(const char *s, uint64_t seed);
/* "qp" + 10 hex digits, into buf[16]. */
void qp_net_host_ifname(const char *id, char buf[16]);
/* True for names of that exact shape (what gc may delete). */
bool qp_net_is_host_ifname(const char *name);
/* 02:xx:xx:xx:xx:xx: locally administered, unicast. */
void qp_net_pod_mac(const char *id, unsigned char mac[6]);
void qp_net_bridge_mac(const char *bridge, unsigned char mac[6]);
/* True if name is PREFIX followed by a decimal slice number (one of our
 * bridges, bridge.c; overlap.c does not count routes through them). */
bool qp_net_is_bridge_name(const struct qp_net_cfg *cfg, const char *name);

/* ---- netns.c ---- */
/* Open /proc/PID/ns/net (O_CLOEXEC); QP_E_INVALID if it is our own netns
 * (attaching "eth0" there would reconfigure the host). */
int qp_netns_open(pid_t pid, qp_error **err);
/* The same for a netns by path (containerd's, podman's, /run/netns/NS). */
int qp_netns_open_path(const char *path, qp_error **err);
/* fn(arg) with the calling thread in the netns nsfd (a tap opened there is
 * created there); the thread always returns to its original netns.
 * Returns fn's result (-1: its error, prefixed). */
int qp_netns_call(int nsfd, int (*fn)(void *arg, qp_error **err), void *arg, qp_error **err);
/* A netlink socket living in the netns nsfd.  The calling thread enters
 * nsfd and always returns to its original netns before this returns. */
int qp_netns_nl_open(int nsfd, struct qp_nl **out, qp_error **err);

/* ---- bridge.c (caller holds the network lock) ---- */
/* Make sure bridge `slice` exists, is up and has its gateway address;
 * enables ip_forward for slice >= 1.  *ifindex = the bridge. */
int qp_net_bridge_ensure(struct qp_nl *nl, const struct qp_net_cfg *cfg, uint32_t slice,
			 int *ifindex, qp_error **err);
/* Delete our bridges without ports; only_slice >= 0 limits it to one. */
int qp_net_prune_locked(struct qp_nl *nl, const struct qp_net_cfg *cfg, long only_slice,
			qp_error **err);
int qp_net_enable_forwarding(qp_error **err);
/* -1 (QP_E_INVALID, naming the route and --subnet) if the host routes a
 * network that overlaps cfg's subnet through a link that is not one of
 * our bridges (overlap.c). */
int qp_net_check_overlap(struct qp_nl *nl, const struct qp_net_cfg *cfg, qp_error **err);

/* ---- op.c: one network operation = config + lock + lease table + socket ---- */
struct qp_net_op {
	struct qp_net_cfg cfg;
	int dirfd, lockfd;           /* ROOT/.net and the held lock */
	struct qp_ipam_table table;
	struct qp_nl *nl;            /* in the caller's (host) netns */
};
#define QP_NET_OP_INIT { .dirfd = -1, .lockfd = -1 }
/* Resolve the config, take the lock, load the table, open netlink. */
int qp_net_op_begin(const struct qp_net_config *c, struct qp_net_op *op, qp_error **err);
/* Release everything (unlocks); safe on a partly begun op. */
void qp_net_op_end(struct qp_net_op *op);
#define _cleanup_net_op_ __attribute__((cleanup(qp_net_op_end)))
/* Delete link `name` if it exists and is one of ours (veth or tun);
 * *deleted (may be NULL) says whether it did. */
int qp_net_link_del_ours(struct qp_nl *nl, const char *name, bool *deleted, qp_error **err);
bool qp_net_is_our_kind(const char *kind);

/* ---- nl_tc.c: tc for a mirrored namespace (mirror.h) ---- */
/* An ingress qdisc on ifindex; one there already is an error (EEXIST). */
int qp_nl_ingress_add(struct qp_nl *nl, int ifindex, qp_error **err);
/* Delete ifindex's ingress qdisc (its filters go with it); none is success. */
int qp_nl_ingress_del(struct qp_nl *nl, int ifindex, qp_error **err);
/* On from's ingress: every frame redirected to to's egress (u32 + mirred). */
int qp_nl_redirect_add(struct qp_nl *nl, int from, int to, qp_error **err);

/* ---- mirror_read.c ---- */
struct qp_net_mirror;
/* Read the netns of pnl (mirror.h): 1 with *m, 0 for lo only, -1 refused. */
int qp_net_mirror_read(struct qp_nl *pnl, struct qp_net_mirror *m, qp_error **err);

/* ---- tap.c ---- */
/* Create tap `name` (not persistent); returns its fd (O_CLOEXEC). */
int qp_tap_open(const char *name, bool vnet_hdr, qp_error **err);

#endif
