/* runtime/net/ident.c — names and MACs derived from a pod ID, so that any
 * qpod process (detach, gc) finds the same link for the same pod, and the
 * names of qpod's own bridges (PREFIX + slice). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/internal.h"

#define SEED_IFNAME 0x71706f64ULL       /* "qpod" */
#define SEED_MAC 0x6d6163ULL            /* "mac" */
#define SEED_BRIDGE 0x627269646765ULL   /* "bridge" */

/* FNV-1a over the bytes, then the splitmix64 finaliser so that every
 * output bit depends on every input bit.  Not cryptographic: names only
 * need to be well spread (40 bits: a collision among 1000 pods ~ 5e-7,
 * and a collision is caught as EEXIST when the link is created). */
uint64_t qp_net_hash(const char *s, uint64_t seed)
{
	uint64_t h = 0xcbf29ce484222325ULL ^ seed;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ULL;
	}
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebULL;
	h ^= h >> 31;
	return h;
}

void qp_net_host_ifname(const char *id, char buf[16])
{
	uint64_t h = qp_net_hash(id, SEED_IFNAME) & ((1ULL << (4 * QP_NET_LINK_HEX)) - 1);

	snprintf(buf, 16, QP_NET_LINK_PREFIX "%010llx", (unsigned long long)h);
}

bool qp_net_is_host_ifname(const char *name)
{
	size_t plen = strlen(QP_NET_LINK_PREFIX);

	if (strlen(name) != plen + QP_NET_LINK_HEX || strncmp(name, QP_NET_LINK_PREFIX, plen))
		return false;
	for (const char *p = name + plen; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
			return false;
	return true;
}

static void mac_from(uint64_t h, unsigned char mac[6])
{
	mac[0] = 0x02; /* locally administered (bit 1), unicast (bit 0 clear) */
	for (int i = 1; i < 6; i++)
		mac[i] = (unsigned char)(h >> (8 * (i - 1)));
}

void qp_net_pod_mac(const char *id, unsigned char mac[6])
{
	mac_from(qp_net_hash(id, SEED_MAC), mac);
}

void qp_net_bridge_mac(const char *bridge, unsigned char mac[6])
{
	mac_from(qp_net_hash(bridge, SEED_BRIDGE), mac);
}

bool qp_net_is_bridge_name(const struct qp_net_cfg *cfg, const char *name)
{
	size_t plen = strlen(cfg->prefix);
	const char *d = name + plen;
	unsigned long v;
	char *end;

	if (strncmp(name, cfg->prefix, plen) || !isdigit((unsigned char)*d))
		return false;
	if (d[0] == '0' && d[1])  /* canonical numbers only: "qpod01" is not ours */
		return false;
	for (const char *p = d; *p; p++)
		if (!isdigit((unsigned char)*p))
			return false;
	errno = 0;
	v = strtoul(d, &end, 10);
	return !errno && v < cfg->nslices;
}
