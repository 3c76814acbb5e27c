/* runtime/net/mirror_wire.c — wire a pod's network namespace to its VM's
 * NIC and unwire it again: the tap beside the veth, tc redirecting both
 * ways (net/mirror.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "net/internal.h"
#include "net/mirror.h"
#include "util/cleanup.h"

static int open_tap_here(void *arg, qp_error **err)
{
	int *fd = arg;

	/* /dev/net/tun makes the device in the netns of the opener */
	*fd = qp_tap_open(QP_NET_MIRROR_TAP, true, err);
	return *fd < 0 ? -1 : 0;
}

/* ifindex of link name in pnl's netns, 0 if there is none. */
static int ifindex_of(struct qp_nl *pnl, const char *name, qp_error **err)
{
	_cleanup_nl_link_ struct rtnl_link *l = NULL;
	int r = qp_nl_link_get(pnl, name, &l, err);

	return r <= 0 ? r : rtnl_link_get_ifindex(l);
}

/* The tap up with the veth's MTU, each one's ingress redirected to the
 * other.  On failure the veth's qdisc is removed; the tap goes with its fd. */
static int wire(struct qp_nl *pnl, struct qp_net_mirror *m, qp_error **err)
{
	qp_error *ignored = NULL;
	int veth, tap;

	if ((veth = ifindex_of(pnl, m->ifname, err)) < 0 || (tap = ifindex_of(pnl, QP_NET_MIRROR_TAP, err)) < 0)
		return -1;
	if (!veth || !tap)
		return qp_error_set(err, QP_E_GENERIC, 0, "\"%s\" vanished", veth ? QP_NET_MIRROR_TAP : m->ifname);
	m->tap_ifindex = tap;
	if (qp_nl_link_set_mtu_up(pnl, tap, m->mtu, err) < 0)
		return -1;
	if (qp_nl_ingress_add(pnl, veth, err) < 0) {
		if (qp_net_errnum(*err) == EEXIST)
			qp_error_prefix(err, "\"%s\" has an ingress qdisc already (qpod redirects its traffic "
					"with one)", m->ifname);
		return -1;
	}
	if (qp_nl_ingress_add(pnl, tap, err) == 0 && qp_nl_redirect_add(pnl, veth, tap, err) == 0 &&
	    qp_nl_redirect_add(pnl, tap, veth, err) == 0)
		return 0;
	qp_nl_ingress_del(pnl, veth, &ignored);
	qp_error_free(&ignored);
	return -1;
}

int qp_net_mirror_attach(const char *nspath, struct qp_net_mirror *out, int *tap_fd, qp_error **err)
{
	_cleanup_close_ int nsfd = -1, fd = -1;
	_cleanup_nl_ struct qp_nl *pnl = NULL;
	qp_error *e = NULL;
	int r;

	memset(out, 0, sizeof(*out));
	*tap_fd = -1;
	if ((nsfd = qp_netns_open_path(nspath, &e)) < 0 && e && e->code == QP_E_INVALID) {
		/* the host's own (a CRI container joining the namespace of a VM
		 * sandbox whose monitor has none to enter): nothing to wire there */
		snprintf(out->note, sizeof(out->note), "not wired: it is the host's network namespace");
		qp_error_free(&e);
		return 0;
	}
	if (nsfd < 0) {
		qp_net_pass_error(err, &e);
		goto fail;
	}
	if (qp_netns_nl_open(nsfd, &pnl, err) < 0)
		goto fail;
	if ((r = ifindex_of(pnl, QP_NET_MIRROR_TAP, err)) < 0)
		goto fail;
	if (r > 0) {
		snprintf(out->note, sizeof(out->note),
			 "not wired: the namespace is wired to another VM pod already (it has \"%s\")",
			 QP_NET_MIRROR_TAP);
		return 0;
	}
	if ((r = qp_net_mirror_read(pnl, out, err)) <= 0) {
		if (r == 0)
			return 0;
		goto fail;
	}
	if (qp_netns_call(nsfd, open_tap_here, &fd, err) < 0 || wire(pnl, out, err) < 0)
		goto fail;
	*tap_fd = steal_fd(&fd);
	return 1;
fail:
	return qp_error_prefix(err, "network namespace \"%s\"", nspath);
}

int qp_net_mirror_adopt(const char *nspath, const char *from_path, const char *host_tap, struct qp_net_mirror *m,
			qp_error **err)
{
	_cleanup_close_ int nsfd = -1, fromfd = -1;
	_cleanup_nl_ struct qp_nl *pnl = NULL, *hnl = NULL;
	int veth, host;

	if ((nsfd = qp_netns_open_path(nspath, err)) < 0 || qp_netns_nl_open(nsfd, &pnl, err) < 0 ||
	    (fromfd = open(from_path, O_RDONLY | O_CLOEXEC)) < 0)
		goto fail_errno;
	if (qp_netns_nl_open(fromfd, &hnl, err) < 0 || (veth = ifindex_of(pnl, m->ifname, err)) < 0 ||
	    (host = ifindex_of(hnl, host_tap, err)) < 0)
		goto fail;
	if (!host) {
		qp_error_set(err, QP_E_GENERIC, 0, "tap \"%s\" is gone", host_tap);
		goto fail;
	}
	/* attach's wiring out (the tap's qdisc goes with the tap), the spare's
	 * tap in under the same name, wired alike */
	if ((veth > 0 && qp_nl_ingress_del(pnl, veth, err) < 0) || qp_nl_link_del(pnl, QP_NET_MIRROR_TAP, err) < 0 ||
	    qp_nl_link_move(hnl, host, nsfd, QP_NET_MIRROR_TAP, err) < 0 || wire(pnl, m, err) < 0)
		goto fail;
	return 0;
fail_errno:
	if (nsfd >= 0 && pnl && fromfd < 0)
		qp_fail(err, errno, "open \"%s\"", from_path);
fail:
	return qp_error_prefix(err, "network namespace \"%s\": adopt tap \"%s\"", nspath, host_tap);
}

int qp_net_mirror_unwire(const char *nspath, const char *ifname, int tap_ifindex, qp_error **err)
{
	_cleanup_close_ int nsfd = -1;
	_cleanup_nl_ struct qp_nl *pnl = NULL;
	int idx, tap;

	nsfd = open(nspath, O_RDONLY | O_CLOEXEC);
	if (nsfd < 0 && (errno == ENOENT || errno == ENOTDIR))
		return 0; /* the namespace is gone, and everything in it */
	if (nsfd < 0)
		return qp_fail(err, errno, "open network namespace \"%s\"", nspath);
	if (qp_netns_nl_open(nsfd, &pnl, err) < 0 || (tap = ifindex_of(pnl, QP_NET_MIRROR_TAP, err)) < 0 ||
	    (idx = ifindex_of(pnl, ifname, err)) < 0)
		goto fail;
	/* another tap than ours: a later pod wired the namespace (ours died
	 * with its QEMU), and the veth's qdisc is that pod's now */
	if (tap > 0 && tap != tap_ifindex)
		return 0;
	if ((idx > 0 && qp_nl_ingress_del(pnl, idx, err) < 0) ||
	    (tap > 0 && qp_nl_link_del(pnl, QP_NET_MIRROR_TAP, err) < 0))
		goto fail;
	return 0;
fail:
	return qp_error_prefix(err, "unwire network namespace \"%s\"", nspath);
}
