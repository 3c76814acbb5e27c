/* guest-init/net.c — the guest's network from RUN: lo up, the pod's
 * interface's MAC, address and default route (ioctl, no netlink). */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <net/route.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

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

void gi_net_setup(const struct qp_run *r)
{
	static const uint8_t zero[6];
	struct ifreq ifr;
	int sk;

	if (r->prefix == 0)
		return; /* no NIC (lo went up before HELLO) */
	if ((sk = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0)
		die("socket AF_INET");
	uint32_t mask = htonl(r->prefix >= 32 ? 0xffffffffu : ~(0xffffffffu >> r->prefix));

	if (memcmp(r->mac, zero, 6) != 0) {
		ifreq_for(&ifr, "eth0");
		ifr.ifr_hwaddr.sa_family = ARPHRD_ETHER;
		memcpy(ifr.ifr_hwaddr.sa_data, r->mac, 6);
		if (ioctl(sk, SIOCSIFHWADDR, &ifr) < 0)
			die("SIOCSIFHWADDR eth0 (no virtio-net device?)");
	}
	ifreq_for(&ifr, "eth0");
	set_inet(&ifr.ifr_addr, r->ip);
	if (ioctl(sk, SIOCSIFADDR, &ifr) < 0)
		die("SIOCSIFADDR eth0 %u.%u.%u.%u (no virtio-net device?)", r->ip[0], r->ip[1],
		    r->ip[2], r->ip[3]);
	ifreq_for(&ifr, "eth0");
	set_inet(&ifr.ifr_netmask, (const uint8_t *)&mask);
	if (ioctl(sk, SIOCSIFNETMASK, &ifr) < 0)
		die("SIOCSIFNETMASK eth0 /%u", r->prefix);
	gi_link_up(sk, "eth0");
	if (memcmp(r->gateway, zero, 4) != 0) {
		struct rtentry rt;

		memset(&rt, 0, sizeof(rt));
		set_inet(&rt.rt_dst, zero);
		set_inet(&rt.rt_genmask, zero);
		set_inet(&rt.rt_gateway, r->gateway);
		rt.rt_flags = RTF_UP | RTF_GATEWAY;
		if (ioctl(sk, SIOCADDRT, &rt) < 0)
			die("SIOCADDRT default via %u.%u.%u.%u", r->gateway[0], r->gateway[1],
			    r->gateway[2], r->gateway[3]);
	}
	close(sk);
}
