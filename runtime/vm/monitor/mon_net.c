/* runtime/vm/monitor/mon_net.c — the network of a VM pod whose spec joins a
 * network namespace by path (containerd's CNI namespace, podman's): that
 * namespace's interface wired to the VM's NIC (net/mirror.h), and what
 * RUN tells the guest about its NIC.  The wiring is recorded in the pod's
 * dir (QP_VM_NET_MIRROR) so that delete, or gc, can undo it. */
#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pod.h"
#include "util/cleanup.h"
#include "util/log.h"
#include "vm/snapshot/spare.h"
#include "vm/monitor/monitor.h"

/* The network namespace path a VM pod mirrors, NULL if none: one joined by
 * path, and no qpod.net of its own (bridge and none keep their meaning). */
static const char *mirror_path(const struct pod_spec *spec)
{
	const struct qp_namespace *ns = &spec->ns[QP_NS_NET];

	return !spec->opts.net && ns->enabled && ns->path ? ns->path : NULL;
}

/* What vm_net_unwire undoes: the veth and the tap's ifindex. */
static int record(struct vm_mon *m, qp_error **err)
{
	char rec[64];
	int n = snprintf(rec, sizeof(rec), "%s %d\n", m->mirror.ifname, m->mirror.tap_ifindex);

	return state_write_file(m->pod->dirfd, QP_VM_NET_MIRROR, rec, (size_t)n, err);
}

int mon_net_mirror(struct vm_mon *m, int *tap, qp_error **err)
{
	const struct pod_spec *spec = m->pod->spec;
	const char *path = mirror_path(spec);
	struct qp_net_mirror *mi = &m->mirror;
	int r;

	*tap = -1;
	if (!path)
		return 0;
	r = qp_net_mirror_attach(path, mi, tap, err);
	if (r < 0)
		return -1;
	if (r == 0) {
		if (mi->note[0])
			qp_warn("vm pod: network namespace \"%s\": %s: the guest has loopback only", path, mi->note);
		return 0;
	}
	m->mirrored = true;
	if (strstr(mi->note, "not "))
		qp_warn("vm pod: network namespace \"%s\": %s", path, mi->note);
	else
		qp_debug("vm %s: network namespace \"%s\": %s", m->pod->id, path, mi->note);
	/* recorded first: a failure from here on is undone (vm_net_unwire) */
	if (record(m, err) < 0) {
		qp_net_mirror_unwire(path, mi->ifname, mi->tap_ifindex, NULL);
		return -1;
	}
	if (spec->opts.vm_backend == QP_VM_BACKEND_LIBVIRT)
		return qp_error_set(err, QP_E_INVALID, 0,
				    "network namespace \"%s\": not supported with --vm-backend libvirt "
				    "(libvirtd opens taps in its own network namespace)", path);
	return 0;
}

int mon_net_adopt_spare(struct vm_mon *m, int sd, const char *spare, qp_error **err)
{
	struct vm_spare_info in;
	char tap[16], from[64];

	vm_spare_read_info(sd, spare, &in);
	if (!in.holder_alive)
		return qp_error_set(err, QP_E_GENERIC, 0, "spare %s: its holder is gone", spare);
	snprintf(from, sizeof(from), "/proc/%d/ns/net", (int)in.holder);
	vm_spare_tap_name(spare, tap);
	if (qp_net_mirror_adopt(mirror_path(m->pod->spec), from, tap, &m->mirror, err) < 0)
		return -1;
	return record(m, err);
}

int mon_net_enter(struct vm_mon *m, qp_error **err)
{
	const char *path = mirror_path(m->pod->spec);
	_cleanup_close_ int fd = -1;

	if (!m->mirrored)
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return qp_fail(err, errno, "open network namespace \"%s\"", path);
	if (setns(fd, CLONE_NEWNET) < 0)
		return qp_fail(err, errno, "enter network namespace \"%s\"", path);
	return 0;
}

void mon_net_run(struct vm_mon *m, struct qp_run *r)
{
	if (m->has_net) {
		memcpy(r->ip, &m->lease.addr, 4);
		r->prefix = (uint8_t)m->lease.prefix;
		memcpy(r->gateway, &m->lease.gateway, 4);
		memcpy(r->mac, m->lease.mac, 6);
	}
	if (!m->mirrored)
		return;
	const struct qp_net_mirror *mi = &m->mirror;
	memcpy(r->ip, &mi->addr, 4);
	r->prefix = (uint8_t)mi->prefix;
	memcpy(r->gateway, &mi->gateway, 4);
	memcpy(r->mac, mi->mac, 6);
	r->mtu = mi->mtu >= 68 && mi->mtu <= 65535 ? (uint16_t)mi->mtu : 0;
	r->routec = 0;
	for (unsigned i = 0; i < mi->nroutes; i++) {
		struct qp_run_route rr = { .family = mi->routes[i].family, .prefix = (uint8_t)mi->routes[i].prefix };
		memcpy(rr.dst, mi->routes[i].dst, 16);
		memcpy(rr.gateway, mi->routes[i].gateway, 16);
		if (qp_run_route_format(&rr, m->route_text[r->routec], sizeof(m->route_text[0])) == 0)
			m->routes[r->routec] = m->route_text[r->routec], r->routec++;
	}
	m->routes[r->routec] = NULL;
	r->routes = m->routes;
	r->addr6c = 0;
	for (unsigned i = 0; i < mi->naddrs6; i++) {
		struct qp_run_addr6 a = { .prefix = (uint8_t)mi->addrs6[i].prefix };
		memcpy(a.addr, &mi->addrs6[i].addr, 16);
		if (qp_run_addr6_format(&a, m->addr6_text[r->addr6c], sizeof(m->addr6_text[0])) == 0)
			m->addrs6[r->addr6c] = m->addr6_text[r->addr6c], r->addr6c++;
	}
	m->addrs6[r->addr6c] = NULL;
	r->addrs6 = m->addrs6;
}

int vm_net_unwire(struct pod *pod, qp_error **err)
{
	_cleanup_free_ char *rec = NULL;
	const char *path = mirror_path(pod->spec);
	char ifname[16];
	int tap;
	size_t len;

	if (faccessat(pod->dirfd, QP_VM_NET_MIRROR, F_OK, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT)
		return 0; /* nothing was wired */
	if (state_read_file(pod->dirfd, QP_VM_NET_MIRROR, 64, &rec, &len, err) < 0)
		return -1;
	if (!path || sscanf(rec, "%15s %d", ifname, &tap) != 2)
		return qp_error_set(err, QP_E_INVALID, 0, "pod \"%s\": %s is malformed", pod->id, QP_VM_NET_MIRROR);
	if (qp_net_mirror_unwire(path, ifname, tap, err) < 0)
		return -1;
	unlinkat(pod->dirfd, QP_VM_NET_MIRROR, 0);
	return 0;
}
