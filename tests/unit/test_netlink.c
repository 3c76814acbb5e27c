/* tests/unit/test_netlink.c — the networking library against the real
 * kernel, inside a private network namespace: the process unshares
 * CLONE_NEWNET before anything else, so no link, address or packet ever
 * touches the machine's interfaces.  "Pods" are forked children that unshare
 * their own netns and obey commands over a pipe (listen / connect / quit).
 * Needs root; exits 77 (skip) without it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <netlink/route/addr.h>
#include <netlink/route/route.h>

#include "net/internal.h"
#include "net/ipam.h"
#include "net/net.h"
#include "net/nl.h"

#define PORT 7777
#define NTAPS 1100

static char root[] = "/dev/shm/qpod-nltest-XXXXXX";
static struct qp_net_config cfg = { .root = root };

/* ---- pods: children in their own netns ---- */

struct pod {
	pid_t pid;
	int cmd;    /* write commands */
	int resp;   /* read answers */
};

static void child_serve(int cmd, int resp)
{
	char c;

	for (;;) {
		if (read(cmd, &c, 1) != 1 || c == 'Q')
			_exit(0);
		if (c == 'L') {  /* accept one connection, greet it */
			int one = 1, s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), conn;
			struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(PORT) };
			setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
			if (bind(s, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(s, 4) < 0)
				_exit(2);
			if (write(resp, "k", 1) != 1)
				_exit(2);
			conn = accept(s, NULL, NULL);
			if (conn >= 0 && write(conn, "ok", 2) != 2)
				_exit(2);
			close(conn);
			close(s);
		} else if (c == 'C') {  /* connect to the address that follows */
			struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(PORT) };
			struct timeval tv = { .tv_sec = 5 };
			char buf[2] = "";
			int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), ok;
			if (read(cmd, &sa.sin_addr, 4) != 4)
				_exit(2);
			setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
			setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
			ok = connect(s, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
			     read(s, buf, 2) == 2 && !memcmp(buf, "ok", 2);
			close(s);
			if (write(resp, ok ? "y" : "n", 1) != 1)
				_exit(2);
		}
	}
}

static struct pod pod_start(void)
{
	int c[2], r[2];
	struct pod p;
	char ready;

	assert_int_equal(pipe2(c, O_CLOEXEC), 0);
	assert_int_equal(pipe2(r, O_CLOEXEC), 0);
	p.pid = fork();
	assert_true(p.pid >= 0);
	if (p.pid == 0) {
		close(c[1]);
		close(r[0]);
		if (unshare(CLONE_NEWNET) < 0)
			_exit(3);
		if (write(r[1], "R", 1) != 1)
			_exit(3);
		child_serve(c[0], r[1]);
	}
	close(c[0]);
	close(r[1]);
	p.cmd = c[1];
	p.resp = r[0];
	assert_int_equal(read(p.resp, &ready, 1), 1);
	assert_int_equal(ready, 'R');
	return p;
}

static void pod_stop(struct pod *p, int sig)
{
	int st;

	if (sig)
		kill(p->pid, sig);
	else if (write(p->cmd, "Q", 1) != 1)
		kill(p->pid, SIGKILL);
	close(p->cmd);
	close(p->resp);
	assert_int_equal(waitpid(p->pid, &st, 0), p->pid);
	if (!sig)
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void pod_listen(struct pod *p)
{
	char k;
	assert_int_equal(write(p->cmd, "L", 1), 1);
	assert_int_equal(read(p->resp, &k, 1), 1);
	assert_int_equal(k, 'k');
}

/* pod `from` connects to addr (a listening pod) */
static bool pod_connect(struct pod *from, struct in_addr addr)
{
	char buf[5] = "C", a;
	memcpy(buf + 1, &addr, 4);
	assert_int_equal(write(from->cmd, buf, 5), 5);
	assert_int_equal(read(from->resp, &a, 1), 1);
	return a == 'y';
}

/* the host (this process, in the test netns) connects to a listening pod */
static bool host_connect(struct in_addr addr)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(PORT), .sin_addr = addr };
	struct timeval tv = { .tv_sec = 5 };
	char buf[2] = "";
	int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool ok;

	setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	ok = connect(s, (struct sockaddr *)&sa, sizeof(sa)) == 0 && read(s, buf, 2) == 2 &&
	     !memcmp(buf, "ok", 2);
	close(s);
	return ok;
}

/* ---- inspection through libnl ---- */

static struct qp_nl *host_nl(void)
{
	struct qp_nl *nl = NULL;
	assert_int_equal(qp_nl_open(&nl, NULL), 0);
	return nl;
}

static struct qp_nl *pod_nl(struct pod *p)
{
	struct qp_nl *nl = NULL;
	int fd = qp_netns_open(p->pid, NULL);
	assert_true(fd >= 0);
	assert_int_equal(qp_netns_nl_open(fd, &nl, NULL), 0);
	close(fd);
	return nl;
}

/* ifindex of name, 0 if absent; optionally its kind/master/flags */
static int link_info(struct qp_nl *nl, const char *name, char kind[16], int *master,
		     unsigned *flags, unsigned char mac[6])
{
	struct rtnl_link *l = NULL;
	int idx;

	if (qp_nl_link_get(nl, name, &l, NULL) != 1)
		return 0;
	idx = rtnl_link_get_ifindex(l);
	if (kind)
		snprintf(kind, 16, "%s", rtnl_link_get_type(l) ? rtnl_link_get_type(l) : "");
	if (master)
		*master = rtnl_link_get_master(l);
	if (flags)
		*flags = rtnl_link_get_flags(l);
	if (mac) {
		struct nl_addr *a = rtnl_link_get_addr(l);
		assert_non_null(a);
		assert_int_equal(nl_addr_get_len(a), 6);
		memcpy(mac, nl_addr_get_binary_addr(a), 6);
	}
	rtnl_link_put(l);
	return idx;
}

static bool has_addr(struct qp_nl *nl, int ifindex, struct in_addr want, int prefix)
{
	struct nl_cache *c = NULL;
	bool found = false;

	assert_int_equal(rtnl_addr_alloc_cache(nl->sk, &c), 0);
	for (struct nl_object *o = nl_cache_get_first(c); o; o = nl_cache_get_next(o)) {
		struct rtnl_addr *a = (struct rtnl_addr *)o;
		struct nl_addr *l = rtnl_addr_get_local(a);
		if (rtnl_addr_get_family(a) == AF_INET && rtnl_addr_get_ifindex(a) == ifindex &&
		    rtnl_addr_get_prefixlen(a) == prefix && l &&
		    !memcmp(nl_addr_get_binary_addr(l), &want, 4))
			found = true;
	}
	nl_cache_free(c);
	return found;
}

/* dst/prefix on ifindex; gw.s_addr != 0: via gw */
static bool has_route(struct qp_nl *nl, const char *dst, int prefix, int ifindex,
		      struct in_addr gw)
{
	struct nl_cache *c = NULL;
	struct in_addr d;
	bool found = false;

	inet_pton(AF_INET, dst, &d);
	assert_int_equal(rtnl_route_alloc_cache(nl->sk, AF_INET, 0, &c), 0);
	for (struct nl_object *o = nl_cache_get_first(c); o; o = nl_cache_get_next(o)) {
		struct rtnl_route *r = (struct rtnl_route *)o;
		struct nl_addr *rd = rtnl_route_get_dst(r);
		struct rtnl_nexthop *nh;

		if (rtnl_route_get_table(r) != RT_TABLE_MAIN || !rd ||
		    (int)nl_addr_get_prefixlen(rd) != prefix || rtnl_route_get_nnexthops(r) != 1)
			continue;
		if (prefix && memcmp(nl_addr_get_binary_addr(rd), &d, 4))
			continue;
		nh = rtnl_route_nexthop_n(r, 0);
		if (rtnl_route_nh_get_ifindex(nh) != ifindex)
			continue;
		if (gw.s_addr) {
			struct nl_addr *g = rtnl_route_nh_get_gateway(nh);
			if (!g || memcmp(nl_addr_get_binary_addr(g), &gw, 4))
				continue;
		}
		found = true;
	}
	nl_cache_free(c);
	return found;
}

struct ports {
	int master, n;
};

static void count_ports_cb(struct nl_object *o, void *arg)
{
	struct ports *p = arg;
	if (rtnl_link_get_master((struct rtnl_link *)o) == p->master)
		p->n++;
}

static int bridge_ports(struct qp_nl *nl, const char *bridge)
{
	struct nl_cache *c = NULL;
	struct ports p = { .master = link_info(nl, bridge, NULL, NULL, NULL, NULL) };

	assert_true(p.master > 0);
	assert_int_equal(qp_nl_link_cache(nl, &c, NULL), 0);
	nl_cache_foreach(c, count_ports_cb, &p);
	nl_cache_free(c);
	return p.n;
}

static size_t lease_count(void)
{
	struct qp_net_cfg rc;
	struct qp_ipam_table t;
	int dirfd, lockfd;
	size_t n;

	assert_int_equal(qp_net_cfg_resolve(&cfg, &rc, NULL), 0);
	assert_int_equal(qp_ipam_lock(&rc, &dirfd, &lockfd, NULL), 0);
	assert_int_equal(qp_ipam_load(dirfd, &t, NULL), 0);
	n = t.n;
	qp_ipam_table_free(&t);
	close(dirfd);
	close(lockfd);
	return n;
}

static void attach_veth_ok(const char *id, struct pod *p, const char *req,
			   struct qp_net_lease *l)
{
	qp_error *err = NULL;
	int r = qp_net_attach_veth(&cfg, id, p->pid, req, l, &err);
	if (r < 0)
		fail_msg("attach %s: %s", id, err ? err->msg : "?");
}

static void detach_ok(const char *id)
{
	qp_error *err = NULL;
	if (qp_net_detach(&cfg, id, &err) < 0)
		fail_msg("detach %s: %s", id, err ? err->msg : "?");
}

static void prune_ok(void)
{
	qp_error *err = NULL;
	if (qp_net_prune_bridges(&cfg, &err) < 0)
		fail_msg("prune: %s", err ? err->msg : "?");
}

static struct in_addr in4(const char *s)
{
	struct in_addr a;
	assert_int_equal(inet_pton(AF_INET, s, &a), 1);
	return a;
}

/* ---- tests ---- */

static void test_veth_pods(void **state)
{
	struct qp_nl *nl = host_nl();
	struct pod p[3];
	struct qp_net_lease l[3];
	static const char *ips[] = { "10.213.0.2", "10.213.0.3", "10.213.0.4" };
	char kind[16], id[16];
	int master;
	unsigned flags;

	(void)state;
	for (int i = 0; i < 3; i++) {
		p[i] = pod_start();
		snprintf(id, sizeof(id), "veth-%d", i);
		attach_veth_ok(id, &p[i], NULL, &l[i]);
		assert_string_equal(inet_ntoa(l[i].addr), ips[i]);
		assert_string_equal(inet_ntoa(l[i].gateway), "10.213.0.1");
		assert_string_equal(l[i].bridge, "qpod0");
		assert_int_equal(l[i].prefix, 22);
		assert_true(qp_net_is_host_ifname(l[i].ifname_host));
	}
	/* host side: the bridge with the gateway, and three ports, up */
	int br = link_info(nl, "qpod0", kind, NULL, &flags, NULL);
	assert_true(br > 0);
	assert_string_equal(kind, "bridge");
	assert_true(flags & IFF_UP);
	assert_true(has_addr(nl, br, in4("10.213.0.1"), 22));
	assert_true(has_route(nl, "10.213.0.0", 22, br, (struct in_addr){ 0 }));
	for (int i = 0; i < 3; i++) {
		assert_true(link_info(nl, l[i].ifname_host, kind, &master, &flags, NULL) > 0);
		assert_string_equal(kind, "veth");
		assert_int_equal(master, br);
		assert_true(flags & IFF_UP);
	}
	assert_int_equal(bridge_ports(nl, "qpod0"), 3);

	/* pod side, read through a socket inside each pod's netns */
	for (int i = 0; i < 3; i++) {
		struct qp_nl *pn = pod_nl(&p[i]);
		unsigned char mac[6];
		int eth = link_info(pn, "eth0", kind, NULL, &flags, mac);

		assert_true(eth > 0);
		assert_string_equal(kind, "veth");
		assert_true(flags & IFF_UP);
		assert_memory_equal(mac, l[i].mac, 6);
		assert_int_equal(mac[0], 0x02);
		assert_true(has_addr(pn, eth, l[i].addr, 22));
		assert_true(has_route(pn, "0.0.0.0", 0, eth, l[i].gateway));
		link_info(pn, "lo", NULL, NULL, &flags, NULL);
		assert_true(flags & IFF_UP);
		qp_nl_free(pn);

		pod_listen(&p[i]);
		assert_true(host_connect(l[i].addr));
	}
	/* pod to pod on the same bridge */
	pod_listen(&p[2]);
	assert_true(pod_connect(&p[0], l[2].addr));

	/* one lease per pod */
	struct qp_net_lease dup;
	qp_error *err = NULL;
	assert_int_equal(qp_net_attach_veth(&cfg, "veth-0", p[0].pid, NULL, &dup, &err), -1);
	assert_int_equal(err->code, QP_E_EXISTS);
	qp_error_free(&err);
	/* a requested address in use */
	struct pod extra = pod_start();
	assert_int_equal(qp_net_attach_veth(&cfg, "veth-x", extra.pid, "10.213.0.3", &dup, &err), -1);
	assert_int_equal(err->code, QP_E_ADDRINUSE);
	qp_error_free(&err);
	/* the host's own netns is refused */
	assert_int_equal(qp_net_attach_veth(&cfg, "veth-y", getpid(), NULL, &dup, &err), -1);
	assert_int_equal(err->code, QP_E_INVALID);
	qp_error_free(&err);
	pod_stop(&extra, 0);
	assert_int_equal(lease_count(), 3);

	/* detach: links go (both ends), leases go, idempotent, bridge pruned */
	for (int i = 0; i < 3; i++) {
		snprintf(id, sizeof(id), "veth-%d", i);
		detach_ok(id);
		assert_int_equal(link_info(nl, l[i].ifname_host, NULL, NULL, NULL, NULL), 0);
		struct qp_nl *pn = pod_nl(&p[i]);
		assert_int_equal(link_info(pn, "eth0", NULL, NULL, NULL, NULL), 0);
		qp_nl_free(pn);
		detach_ok(id);
		assert_int_equal(lease_count(), (size_t)(2 - i));
		if (i < 2)
			assert_true(link_info(nl, "qpod0", NULL, NULL, NULL, NULL) > 0);
	}
	/* detach leaves the (now portless) bridge; pruning removes it */
	assert_true(link_info(nl, "qpod0", NULL, NULL, NULL, NULL) > 0);
	prune_ok();
	assert_int_equal(link_info(nl, "qpod0", NULL, NULL, NULL, NULL), 0);
	for (int i = 0; i < 3; i++)
		pod_stop(&p[i], 0);
	qp_nl_free(nl);
}

static void test_gc_after_crash(void **state)
{
	struct qp_nl *nl = host_nl();
	struct pod a = pod_start(), b = pod_start();
	struct qp_net_lease la, lb, lt;
	qp_error *err = NULL;
	int tapfd = -1, decoy_tap, removed = -1;
	unsigned char mac[6] = { 0x02, 1, 2, 3, 4, 5 };

	(void)state;
	attach_veth_ok("gc-a", &a, NULL, &la);
	attach_veth_ok("gc-b", &b, NULL, &lb);
	assert_int_equal(qp_net_attach_tap(&cfg, "gc-vm", NULL, &lt, &tapfd, &err), 0);
	assert_true(tapfd >= 0);
	assert_int_equal(fcntl(tapfd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);

	/* A link named like ours that no lease of this root names (another
	 * root's, or a crash's): gc must leave it alone. */
	struct pod c = pod_start();
	int cns = qp_netns_open(c.pid, NULL);
	assert_int_equal(qp_nl_veth_add(nl, "qp00deadbeef", link_info(nl, "qpod0", NULL, NULL,
				       NULL, NULL), "eth0", mac, cns, NULL), 0);
	close(cns);
	/* Decoys gc must not touch: a bridge with our link-name shape, a tap
	 * with another name, and a foreign bridge. */
	assert_int_equal(qp_nl_bridge_add(nl, "qp0123456789", mac, NULL), 0);
	decoy_tap = qp_tap_open("qpdecoy", false, NULL);
	assert_true(decoy_tap >= 0);
	assert_int_equal(qp_nl_bridge_add(nl, "other0", mac, NULL), 0);

	/* "crash": pod a dies without detach, and the VM's lease is stale too */
	pod_stop(&a, SIGKILL);
	char *live[] = { "gc-b", NULL };
	assert_int_equal(qp_net_gc(&cfg, live, &removed, &err), 0);
	assert_int_equal(removed, 2); /* leases gc-a and gc-vm (with their links) */
	assert_int_equal(lease_count(), 1);
	assert_int_equal(link_info(nl, la.ifname_host, NULL, NULL, NULL, NULL), 0);
	assert_int_equal(link_info(nl, lt.ifname_host, NULL, NULL, NULL, NULL), 0);
	assert_true(link_info(nl, "qp00deadbeef", NULL, NULL, NULL, NULL) > 0);
	assert_int_equal(qp_nl_link_del(nl, "qp00deadbeef", NULL), 0);
	assert_true(link_info(nl, lb.ifname_host, NULL, NULL, NULL, NULL) > 0);
	assert_true(link_info(nl, "qp0123456789", NULL, NULL, NULL, NULL) > 0);
	assert_true(link_info(nl, "qpdecoy", NULL, NULL, NULL, NULL) > 0);
	assert_true(link_info(nl, "other0", NULL, NULL, NULL, NULL) > 0);
	assert_true(link_info(nl, "qpod0", NULL, NULL, NULL, NULL) > 0);

	/* nothing live: the last lease and the bridge go */
	assert_int_equal(qp_net_gc(&cfg, NULL, &removed, &err), 0);
	assert_int_equal(removed, 1);
	assert_int_equal(lease_count(), 0);
	assert_int_equal(link_info(nl, lb.ifname_host, NULL, NULL, NULL, NULL), 0);
	assert_int_equal(link_info(nl, "qpod0", NULL, NULL, NULL, NULL), 0);
	assert_int_equal(qp_net_gc(&cfg, NULL, &removed, &err), 0);
	assert_int_equal(removed, 0);

	assert_int_equal(qp_nl_link_del(nl, "qp0123456789", NULL), 0);
	assert_int_equal(qp_nl_link_del(nl, "other0", NULL), 0);
	close(decoy_tap);
	close(tapfd);
	pod_stop(&b, 0);
	pod_stop(&c, 0);
	qp_nl_free(nl);
}

static int taps[NTAPS + 64];

static void attach_taps(int n, const char *prefix, int *per_bridge)
{
	for (int i = 0; i < n; i++) {
		struct qp_net_lease l;
		qp_error *err = NULL;
		char id[32];

		snprintf(id, sizeof(id), "%s-%d", prefix, i);
		if (qp_net_attach_tap(&cfg, id, NULL, &l, &taps[i], &err) < 0)
			fail_msg("attach tap %d: %s", i, err ? err->msg : "?");
		per_bridge[!strcmp(l.bridge, "qpod1") ? 1 : 0]++;
		assert_true(!strcmp(l.bridge, "qpod0") || !strcmp(l.bridge, "qpod1"));
	}
}

static void detach_taps(int n, const char *prefix)
{
	for (int i = 0; i < n; i++) {
		char id[32];
		snprintf(id, sizeof(id), "%s-%d", prefix, i);
		detach_ok(id);
		if (taps[i] >= 0)
			close(taps[i]);
		taps[i] = -1;
	}
}

static void test_taps_two_bridges(void **state)
{
	struct qp_nl *nl = host_nl();
	int per[2] = { 0, 0 };
	char c;

	(void)state;
	attach_taps(NTAPS, "vm", per);
	assert_int_equal(per[0], 1021);
	assert_int_equal(per[1], NTAPS - 1021);
	assert_int_equal(bridge_ports(nl, "qpod0"), 1021);
	assert_int_equal(bridge_ports(nl, "qpod1"), NTAPS - 1021);
	assert_int_equal(lease_count(), NTAPS); /* load rejects duplicate addresses */

	/* the host routes to both slices; forwarding on for pod-to-pod */
	int b0 = link_info(nl, "qpod0", NULL, NULL, NULL, NULL);
	int b1 = link_info(nl, "qpod1", NULL, NULL, NULL, NULL);
	assert_true(has_route(nl, "10.213.0.0", 22, b0, (struct in_addr){ 0 }));
	assert_true(has_route(nl, "10.213.4.0", 22, b1, (struct in_addr){ 0 }));
	int fd = open("/proc/sys/net/ipv4/ip_forward", O_RDONLY | O_CLOEXEC);
	assert_int_equal(read(fd, &c, 1), 1);
	assert_int_equal(c, '1');
	close(fd);

	/* real traffic: a pod on each bridge (free one address on bridge 0) */
	struct qp_net_lease la, lb;
	detach_ok("vm-5");
	close(taps[5]);
	taps[5] = -1;
	struct pod a = pod_start(), b = pod_start();
	attach_veth_ok("net-a", &a, NULL, &la);
	attach_veth_ok("net-b", &b, NULL, &lb);
	assert_string_equal(la.bridge, "qpod0");
	assert_string_equal(inet_ntoa(la.addr), "10.213.0.7");
	assert_string_equal(lb.bridge, "qpod1");
	pod_listen(&a);
	assert_true(host_connect(la.addr));
	pod_listen(&b);
	assert_true(host_connect(lb.addr));
	pod_listen(&b);
	assert_true(pod_connect(&a, lb.addr)); /* across bridges, through the host */
	detach_ok("net-a");
	detach_ok("net-b");
	pod_stop(&a, 0);
	pod_stop(&b, 0);

	/* Foreign ports on our bridge: with 5 addresses of slice 0 free but
	 * the bridge at 1023 ports, the kernel refuses the port (EXFULL) and
	 * the pods go to the next bridge anyway. */
	int foreign[7], more[5], per2[2] = { 0, 0 };
	char name[16];
	for (int i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), "vm-%d", i);
		detach_ok(name);
		close(taps[i]);
		taps[i] = -1;
	}
	assert_int_equal(bridge_ports(nl, "qpod0"), 1016);
	for (int i = 0; i < 7; i++) {
		snprintf(name, sizeof(name), "xtap%d", i);
		foreign[i] = qp_tap_open(name, false, NULL);
		assert_true(foreign[i] >= 0);
		assert_int_equal(qp_nl_link_set_master_up(nl, link_info(nl, name, NULL, NULL, NULL,
								       NULL), b0, NULL), 0);
	}
	assert_int_equal(bridge_ports(nl, "qpod0"), 1023);
	for (int i = 0; i < 5; i++) {
		qp_error *err = NULL;
		struct qp_net_lease l;
		snprintf(name, sizeof(name), "more-%d", i);
		if (qp_net_attach_tap(&cfg, name, NULL, &l, &more[i], &err) < 0)
			fail_msg("attach %s: %s", name, err ? err->msg : "?");
		per2[!strcmp(l.bridge, "qpod1")]++;
	}
	assert_int_equal(per2[1], 5);
	assert_int_equal(bridge_ports(nl, "qpod0"), 1023);
	/* a requested, free address on the full bridge */
	struct qp_net_lease lw;
	qp_error *err = NULL;
	int wfd = -1;
	assert_int_equal(qp_net_attach_tap(&cfg, "want", "10.213.0.2", &lw, &wfd, &err), -1);
	assert_int_equal(err->code, QP_E_BRIDGEFULL);
	qp_error_free(&err);
	assert_int_equal(lease_count(), NTAPS - 5 + 5);
	for (int i = 0; i < 5; i++) {
		snprintf(name, sizeof(name), "more-%d", i);
		detach_ok(name);
		close(more[i]);
	}
	for (int i = 0; i < 7; i++)
		close(foreign[i]);

	detach_taps(NTAPS, "vm");
	assert_int_equal(lease_count(), 0);
	prune_ok();
	assert_int_equal(link_info(nl, "qpod0", NULL, NULL, NULL, NULL), 0);
	assert_int_equal(link_info(nl, "qpod1", NULL, NULL, NULL, NULL), 0);
	qp_nl_free(nl);
}

static ino_t my_netns(void)
{
	struct stat st;
	assert_int_equal(stat("/proc/thread-self/ns/net", &st), 0);
	return st.st_ino;
}

/* Failures inside and before the pod's netns leave nothing behind and
 * always bring the thread back to its own netns. */
static void test_veth_failure_cleanup(void **state)
{
	struct qp_nl *nl = host_nl();
	struct pod p = pod_start(), q = pod_start();
	struct qp_net_lease l;
	qp_error *err = NULL;
	unsigned char mac[6] = { 0x02, 9, 9, 9, 9, 9 };
	ino_t ns = my_netns();

	(void)state;
	/* pod p already has a default route: ours cannot be added (EEXIST)
	 * after eth0 was made and configured in the pod */
	struct qp_nl *pn = pod_nl(&p);
	assert_int_equal(qp_nl_bridge_add(pn, "br9", mac, NULL), 0);
	int br9 = link_info(pn, "br9", NULL, NULL, NULL, NULL);
	assert_int_equal(qp_nl_addr_add(pn, br9, in4("10.99.0.1"), 24, 0, NULL), 0);
	assert_int_equal(qp_nl_route_add_default(pn, br9, in4("10.99.0.2"), NULL), 0);
	assert_int_equal(qp_net_attach_veth(&cfg, "fail-p", p.pid, NULL, &l, &err), -1);
	assert_int_equal(err->errnum, EEXIST);
	assert_non_null(strstr(err->msg, "default route"));
	qp_error_free(&err);
	assert_int_equal(my_netns(), ns);
	assert_int_equal(link_info(pn, "eth0", NULL, NULL, NULL, NULL), 0);
	qp_nl_free(pn);

	/* pod q already has an eth0: the veth request fails as a whole */
	pn = pod_nl(&q);
	assert_int_equal(qp_nl_bridge_add(pn, "eth0", mac, NULL), 0);
	qp_nl_free(pn);
	assert_int_equal(qp_net_attach_veth(&cfg, "fail-q", q.pid, NULL, &l, &err), -1);
	assert_int_equal(err->errnum, EEXIST);
	qp_error_free(&err);
	assert_int_equal(my_netns(), ns);

	/* a dead pod */
	assert_int_equal(qp_net_attach_veth(&cfg, "fail-r", 999999999, NULL, &l, &err), -1);
	qp_error_free(&err);

	char host_p[16], host_q[16];
	qp_net_host_ifname("fail-p", host_p);
	qp_net_host_ifname("fail-q", host_q);
	assert_int_equal(link_info(nl, host_p, NULL, NULL, NULL, NULL), 0);
	assert_int_equal(link_info(nl, host_q, NULL, NULL, NULL, NULL), 0);
	prune_ok();
	assert_int_equal(link_info(nl, "qpod0", NULL, NULL, NULL, NULL), 0);
	assert_int_equal(lease_count(), 0);
	pod_stop(&p, 0);
	pod_stop(&q, 0);
	qp_nl_free(nl);
}

static void test_tap_limit(void **state)
{
	struct rlimit old, rl;
	qp_error *err = NULL;
	int lowest = dup(0);

	(void)state;
	close(lowest);
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	rl = old;
	rl.rlim_cur = (rlim_t)lowest; /* no fd left for /dev/net/tun */
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
	int fd = qp_tap_open("qplimit", false, &err);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
	assert_int_equal(fd, -1);
	assert_int_equal(err->code, QP_E_TAPLIMIT);
	assert_int_equal(err->errnum, EMFILE);
	assert_non_null(strstr(err->msg, "tap device limit reached"));
	qp_error_free(&err);
}

static void test_config_errors(void **state)
{
	struct qp_net_config bad = { .root = root, .bridge_prefix = "much-too-long-prefix" };
	struct qp_net_lease l;
	qp_error *err = NULL;
	int fd;

	(void)state;
	assert_int_equal(qp_net_attach_tap(&bad, "x", NULL, &l, &fd, &err), -1);
	assert_int_equal(err->code, QP_E_INVALID);
	qp_error_free(&err);
	assert_int_equal(qp_net_attach_tap(&cfg, "x y", NULL, &l, &fd, &err), -1);
	assert_int_equal(err->code, QP_E_INVALID);
	qp_error_free(&err);
	assert_int_equal(qp_net_attach_tap(&cfg, "x", "10.99.0.2", &l, &fd, &err), -1);
	assert_int_equal(err->code, QP_E_INVALID);
	qp_error_free(&err);
	assert_int_equal(lease_count(), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_veth_pods),
		cmocka_unit_test(test_veth_failure_cleanup),
		cmocka_unit_test(test_gc_after_crash),
		cmocka_unit_test(test_taps_two_bridges),
		cmocka_unit_test(test_tap_limit),
		cmocka_unit_test(test_config_errors),
	};
	struct rlimit rl = { 8192, 8192 };
	struct qp_nl *nl;
	char cmd[128];
	int r;

	/* First of all: a private netns, so nothing below touches the host. */
	if (geteuid() != 0 || unshare(CLONE_NEWNET) < 0) {
		fprintf(stderr, "test_netlink: SKIP: needs root and unshare(CLONE_NEWNET): %s\n",
			geteuid() ? "not root" : strerror(errno));
		return 77;
	}
	if (access("/dev/net/tun", R_OK | W_OK) < 0) {
		fprintf(stderr, "test_netlink: SKIP: /dev/net/tun: %s\n", strerror(errno));
		return 77;
	}
	signal(SIGPIPE, SIG_IGN);
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0) {
		fprintf(stderr, "test_netlink: setrlimit: %s\n", strerror(errno));
		return 1;
	}
	memset(taps, -1, sizeof(taps));
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		return 1;
	}
	if (qp_nl_open(&nl, NULL) < 0) {
		fprintf(stderr, "test_netlink: cannot open netlink\n");
		return 1;
	}
	qp_nl_link_up(nl, 1, NULL); /* lo */
	qp_nl_free(nl);

	r = cmocka_run_group_tests(tests, NULL, NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		fprintf(stderr, "test_netlink: could not remove %s\n", root);
	return r;
}
