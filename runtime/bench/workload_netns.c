/* runtime/bench/workload_netns.c — the vm-netns target of `qpod bench
 * workload`: the VM pod on the CNI path.  For each measurement the bench
 * makes what CNI's bridge plugin would leave: a network namespace (held by
 * a child of the bench that dies with it: PR_SET_PDEATHSIG) with a veth
 * WL_NETNS_POD_IF, 10.215.0.2/24, default route via 10.215.0.1, whose peer
 * WL_NETNS_CLIENT_IF (10.215.0.1/24) stays in the bench's own namespace,
 * where the clients and servers of the network tests run; then a VM pod
 * from a bundle whose linux.namespaces joins that namespace by path
 * (/proc/HOLDER/ns/net), so qpod mirrors the veth into the guest
 * (net/mirror.h).  wl_netns_remove deletes the veth pair and ends the
 * holder (the namespace goes with it). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/workload.h"
#include "net/internal.h"
#include "spec/spec.h"
#include "util/cleanup.h"
#include "util/strv.h"

#define CLIENT_ADDR "10.215.0.1"
#define NETNS_PREFIX 24

bool wl_is_netns(const char *target)
{
	return !strcmp(target, "vm-netns");
}

/* The holder: a namespace of its own with lo up; a byte on ready, then it
 * waits for its end (SIGKILL from wl_netns_remove, or its parent's death). */
static void holder(int ready, pid_t parent)
{
	struct ifreq ifr = { .ifr_name = "lo" };
	int sk;
	char ok = 1;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent || unshare(CLONE_NEWNET) < 0)
		_exit(1);
	if ((sk = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0 || ioctl(sk, SIOCGIFFLAGS, &ifr) < 0 ||
	    (ifr.ifr_flags |= IFF_UP, ioctl(sk, SIOCSIFFLAGS, &ifr)) < 0)
		_exit(1);
	if (write(ready, &ok, 1) != 1)
		_exit(1);
	for (;;)
		pause();
}

static int start_holder(struct wl_netns *ns, qp_error **err)
{
	int p[2];
	pid_t parent = getpid();
	char ok;

	if (pipe2(p, O_CLOEXEC) < 0)
		return qp_fail(err, errno, "bench: pipe");
	ns->holder = fork();
	if (ns->holder < 0) {
		int e = errno;
		close(p[0]), close(p[1]);
		return qp_fail(err, e, "bench: fork the network namespace's holder");
	}
	if (ns->holder == 0) {
		close(p[0]);
		holder(p[1], parent);
	}
	close(p[1]);
	ssize_t n = read(p[0], &ok, 1);
	close(p[0]);
	if (n != 1)
		return qp_error_set(err, QP_E_GENERIC, 0, "bench: the network namespace's holder failed");
	snprintf(ns->path, sizeof(ns->path), "/proc/%d/ns/net", (int)ns->holder);
	return 0;
}

static int ifindex(struct qp_nl *nl, const char *name, qp_error **err)
{
	_cleanup_nl_link_ struct rtnl_link *l = NULL;
	int r = qp_nl_link_get(nl, name, &l, err);

	if (r == 0)
		return qp_error_set(err, QP_E_GENERIC, 0, "bench: link \"%s\" vanished", name);
	return r < 0 ? -1 : rtnl_link_get_ifindex(l);
}

/* The veth pair and its addresses, the pod end's default route. */
static int make_veth(struct wl_netns *ns, qp_error **err)
{
	static const unsigned char mac[6] = { 0x02, 0x51, 0x70, 0x0d, 0x00, 0x02 };
	_cleanup_nl_ struct qp_nl *nl = NULL, *pnl = NULL;
	_cleanup_close_ int nsfd = -1;
	struct in_addr pod, client;
	int c, p;

	inet_pton(AF_INET, WL_NETNS_POD_ADDR, &pod);
	inet_pton(AF_INET, CLIENT_ADDR, &client);
	if ((nsfd = qp_netns_open_path(ns->path, err)) < 0 || qp_nl_open(&nl, err) < 0 ||
	    qp_netns_nl_open(nsfd, &pnl, err) < 0)
		return -1;
	if (qp_nl_veth_add(nl, WL_NETNS_CLIENT_IF, 0, WL_NETNS_POD_IF, mac, nsfd, err) < 0)
		return -1;
	ns->veth = true;
	if ((c = ifindex(nl, WL_NETNS_CLIENT_IF, err)) < 0 || (p = ifindex(pnl, WL_NETNS_POD_IF, err)) < 0 ||
	    qp_nl_addr_add(nl, c, client, NETNS_PREFIX, 0, err) < 0 || qp_nl_link_up(pnl, p, err) < 0 ||
	    qp_nl_addr_add(pnl, p, pod, NETNS_PREFIX, 0, err) < 0 || qp_nl_route_add_default(pnl, p, client, err) < 0)
		return -1;
	return 0;
}

int wl_netns_make(struct wl_netns *ns, qp_error **err)
{
	*ns = (struct wl_netns){ .holder = -1 };
	if (start_holder(ns, err) < 0 || make_veth(ns, err) < 0) {
		wl_netns_remove(ns);
		return qp_error_prefix(err, "vm-netns: the pod's network namespace");
	}
	return 0;
}

void wl_netns_remove(struct wl_netns *ns)
{
	_cleanup_nl_ struct qp_nl *nl = NULL;

	if (ns->veth && qp_nl_open(&nl, NULL) == 0)
		qp_nl_link_del(nl, WL_NETNS_CLIENT_IF, NULL); /* its peer goes with it */
	ns->veth = false;
	if (ns->holder > 0) {
		kill(ns->holder, SIGKILL);
		while (waitpid(ns->holder, NULL, 0) < 0 && errno == EINTR)
			;
	}
	ns->holder = -1;
}

/* ROOT/.bench-netns-bundle: cmd in the image as a VM pod in ns. */
static int write_bundle(const struct wl *b, const struct wl_netns *ns, const char *const *cmd, const char *dir,
			qp_error **err)
{
	struct pod_spec *s = spec_default();
	char vcpus[16];
	int r = -1;

	if (!s)
		return qp_fail(err, ENOMEM, "bench: spec");
	qp_strv_free(s->process.args);
	free(s->root_path);
	free(s->ns[QP_NS_NET].path);
	s->process.args = qp_strv_dup((char *const *)cmd);
	s->root_path = strdup(b->img);
	s->ns[QP_NS_NET].enabled = true;
	s->ns[QP_NS_NET].path = strdup(ns->path);
	s->process.terminal = false;
	s->resources.has_memory_limit = true;
	s->resources.memory_limit = b->o->memory ? b->o->memory_bytes : WL_VM_MEMORY;
	snprintf(vcpus, sizeof(vcpus), "%d", b->o->vcpus > 0 ? b->o->vcpus : 1);
	if (!s->process.args || !s->root_path || !s->ns[QP_NS_NET].path)
		qp_fail(err, ENOMEM, "bench: spec");
	else if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		qp_fail(err, errno, "bench: mkdir \"%s\"", dir);
	else if (spec_opt_set(s, "qpod.mode", "vm", err) == 0 && spec_opt_set(s, "qpod.vcpus", vcpus, err) == 0)
		r = spec_write_bundle(s, dir, err);
	spec_free(s);
	return r;
}

int wl_netns_pod(const struct wl *b, const struct wl_netns *ns, const char *name, const char *const *cmd,
		 qp_error **err)
{
	struct qp_child_out out = { 0 };
	char dir[4300], cfg[4400];
	double ms;
	int status, r;

	snprintf(dir, sizeof(dir), "%s/.bench-netns-bundle", b->o->root);
	if (write_bundle(b, ns, cmd, dir, err) < 0)
		return -1;
	const char *argv[] = { b->o->qpod, "--root", b->o->root, "run", name, "--bundle", dir, "--detach", NULL };
	r = qp_bench_child((char *const *)argv, &ms, &status, &out, err);
	snprintf(cfg, sizeof(cfg), "%s/config.json", dir);
	unlink(cfg);
	rmdir(dir);
	if (r == 0 && status != 0)
		r = qp_error_set(err, QP_E_GENERIC, 0, "vm-netns: the pod did not start (status %d): %.*s", status,
				 out.err ? (int)strcspn(out.err, "\n") : 0, out.err ? out.err : "");
	qp_child_out_free(&out);
	return r;
}
