/* guest-init/net.c — the guest's network from RUN: lo up, the pod's
 * interface's MAC, MTU, IPv4 address, IPv6 addresses, default route and
 * further routes of both families (ioctl, no netlink). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <net/route.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

/* SIOCSIFADDR's argument on an AF_INET6 socket: the kernel's struct
 * in6_ifreq (linux/ipv6.h, a stable ABI; guest-init is built against a
 * libc whose headers do not carry the kernel's) */
struct gi_in6_ifreq {
	struct in6_addr ifr6_addr;
	uint32_t ifr6_prefixlen;
	int ifr6_ifindex;
};

#include "guest-init/guest.h"

static void ifreq_for(struct ifreq *ifr, const char *name)
{
	memset(ifr, 0, sizeof(*ifr));
	snprintf(ifr->ifr_name, sizeof(ifr->ifr_name), "%s", name);
}

static void set_inet(struct sockaddr *sa, const uint8_t a[4])
{
	struct sockaddr_in *in = (struct sockaddr_in *)sa;

	memset(in, 0, sizeof(*in));
	in->sin_family = AF_INET;
	memcpy(&in->sin_addr, a, 4);
}

void gi_link_up(int sk, const char *name)
{
	struct ifreq ifr;

	ifreq_for(&ifr, name);
	if (ioctl(sk, SIOCGIFFLAGS, &ifr) < 0)
		die("SIOCGIFFLAGS %s", name);
	ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
	if (ioctl(sk, SIOCSIFFLAGS, &ifr) < 0)
		die("SIOCSIFFLAGS %s up", name);
}

/* A route on eth0: dst/prefix via gw (all zero: on the link). */
static void add_route(int sk, const uint8_t dst[4], unsigned prefix, const uint8_t gw[4])
{
	static const uint8_t zero[4];
	uint32_t mask = htonl(prefix == 0 ? 0 : ~0u << (32 - prefix));
	char dev[IFNAMSIZ] = "eth0";
	struct rtentry rt;

	memset(&rt, 0, sizeof(rt));
	set_inet(&rt.rt_dst, dst);
	set_inet(&rt.rt_genmask, (const uint8_t *)&mask);
	set_inet(&rt.rt_gateway, gw);
	rt.rt_flags = RTF_UP | (prefix == 32 ? RTF_HOST : 0);
	if (memcmp(gw, zero, 4) != 0)
		rt.rt_flags |= RTF_GATEWAY;
	rt.rt_dev = dev;
	if (ioctl(sk, SIOCADDRT, &rt) < 0)
		die("SIOCADDRT %u.%u.%u.%u/%u via %u.%u.%u.%u", dst[0], dst[1], dst[2], dst[3], prefix,
		    gw[0], gw[1], gw[2], gw[3]);
}

/* An IPv6 route on eth0 (sk6: an AF_INET6 socket). */
static void add_route6(int sk6, unsigned ifindex, const struct qp_run_route *rr, bool on_link)
{
	struct in6_rtmsg rt;

	memset(&rt, 0, sizeof(rt));
	memcpy(&rt.rtmsg_dst, rr->dst, 16);
	memcpy(&rt.rtmsg_gateway, rr->gateway, 16);
	rt.rtmsg_dst_len = rr->prefix;
	rt.rtmsg_flags = RTF_UP | (on_link ? 0 : RTF_GATEWAY) | (rr->prefix == 128 ? RTF_HOST : 0);
	rt.rtmsg_metric = 1;
	rt.rtmsg_ifindex = (int)ifindex;
	if (ioctl(sk6, SIOCADDRT, &rt) < 0) {
		char text[QP_PROTO_MAX_ROUTE];
		if (qp_run_route_format(rr, text, sizeof(text)) < 0)
			snprintf(text, sizeof(text), "?");
		die("SIOCADDRT %s", text);
	}
}

/* RUN's routes, those on the link (gateway 0.0.0.0 or ::) or those through
 * a gateway: the first before the default route (a /32 gateway of a
 * point-to-point link must be reachable first), the others after it. */
static void add_routes(int sk, int sk6, unsigned ifindex, const struct qp_run *r, bool on_link)
{
	static const uint8_t zero[16];
	struct qp_run_route rr;

	for (uint32_t i = 0; i < r->routec; i++) {
		if (qp_run_route_parse(r->routes[i], &rr) < 0)
			die("RUN route \"%s\" is malformed", r->routes[i]); /* the codec checked it */
		size_t len = rr.family == AF_INET6 ? 16 : 4;
		if ((memcmp(rr.gateway, zero, len) == 0) != on_link)
			continue;
		if (rr.family == AF_INET6)
			add_route6(sk6, ifindex, &rr, on_link);
		else
			add_route(sk, rr.dst, rr.prefix, rr.gateway);
	}
}

/* Write text into a /proc/sys file (the guest's own). */
static void sysctl_set(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		die("write %s", path);
	close(fd);
}

/* RUN's IPv6 addresses on eth0 (sk6: an AF_INET6 socket). */
static void add_addrs6(int sk6, unsigned ifindex, const struct qp_run *r)
{
	struct qp_run_addr6 a;
	struct gi_in6_ifreq ifr6;

	for (uint32_t i = 0; i < r->addr6c; i++) {
		if (qp_run_addr6_parse(r->addrs6[i], &a) < 0)
			die("RUN IPv6 address \"%s\" is malformed", r->addrs6[i]); /* the codec checked it */
		memset(&ifr6, 0, sizeof(ifr6));
		memcpy(&ifr6.ifr6_addr, a.addr, 16);
		ifr6.ifr6_prefixlen = a.prefix;
		ifr6.ifr6_ifindex = (int)ifindex;
		if (ioctl(sk6, SIOCSIFADDR, &ifr6) < 0)
			die("SIOCSIFADDR eth0 %s", r->addrs6[i]);
	}
}

void gi_net_setup(const struct qp_run *r)
{
	static const uint8_t zero[6];
	struct ifreq ifr;
	int sk;

	int sk6 = -1;
	unsigned ifindex = 0;

	if (r->prefix == 0 && r->addr6c == 0)
		return; /* no NIC (lo went up before HELLO) */
	if ((sk = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0)
		die("socket AF_INET");
	if (r->addr6c) { /* IPv6 routes come only with IPv6 addresses (the codec) */
		if ((sk6 = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0)
			die("socket AF_INET6");
		if (!(ifindex = if_nametoindex("eth0")))
			die("if_nametoindex eth0 (no virtio-net device?)");
	}
	if (r->addr6c)
		/* the addresses are the namespace interface's, which did the
		 * detection already; eth0's own link-local is its MAC's, as
		 * the interface's was (and no other frame reaches that one) */
		sysctl_set("/proc/sys/net/ipv6/conf/eth0/accept_dad", "0");

	if (memcmp(r->mac, zero, 6) != 0) {
		ifreq_for(&ifr, "eth0");
		ifr.ifr_hwaddr.sa_family = ARPHRD_ETHER;
		memcpy(ifr.ifr_hwaddr.sa_data, r->mac, 6);
		if (ioctl(sk, SIOCSIFHWADDR, &ifr) < 0)
			die("SIOCSIFHWADDR eth0 (no virtio-net device?)");
	}
	if (r->mtu) {
		ifreq_for(&ifr, "eth0");
		ifr.ifr_mtu = r->mtu;
		if (ioctl(sk, SIOCSIFMTU, &ifr) < 0)
			die("SIOCSIFMTU eth0 %u", r->mtu);
	}
	if (r->prefix) {
		uint32_t mask = htonl(r->prefix >= 32 ? 0xffffffffu : ~(0xffffffffu >> r->prefix));
		ifreq_for(&ifr, "eth0");
		set_inet(&ifr.ifr_addr, r->ip);
		if (ioctl(sk, SIOCSIFADDR, &ifr) < 0)
			die("SIOCSIFADDR eth0 %u.%u.%u.%u (no virtio-net device?)", r->ip[0], r->ip[1],
			    r->ip[2], r->ip[3]);
		ifreq_for(&ifr, "eth0");
		set_inet(&ifr.ifr_netmask, (const uint8_t *)&mask);
		if (ioctl(sk, SIOCSIFNETMASK, &ifr) < 0)
			die("SIOCSIFNETMASK eth0 /%u", r->prefix);
	}
	gi_link_up(sk, "eth0");
	add_addrs6(sk6, ifindex, r);
	add_routes(sk, sk6, ifindex, r, true);
	if (memcmp(r->gateway, zero, 4) != 0)
		add_route(sk, zero, 0, r->gateway);
	add_routes(sk, sk6, ifindex, r, false);
	if (sk6 >= 0)
		close(sk6);
	close(sk);
}
