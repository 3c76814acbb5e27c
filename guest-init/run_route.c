/* guest-init/run_route.c — RUN's network entries (channel.h): routes
 * "DST/PREFIX GATEWAY" (both dotted IPv4 or both IPv6) and IPv6 addresses
 * "ADDR/PREFIX", parsed and formatted with every field checked. */
#include <arpa/inet.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest-init/channel.h"

/* "ADDR/PREFIX" in s (modified): the address of its family (AF_INET if it
 * has no ':') into addr, *prefix; with net, no host bits past the prefix
 * (the kernel would refuse such a route).  0 or -1. */
static int parse_prefixed(char *s, bool net, int *family, uint8_t addr[16], uint8_t *prefix)
{
	char *slash = strchr(s, '/'), *end;
	long p;
	int bits;

	if (!slash || slash[1] < '0' || slash[1] > '9')
		return -1;
	*slash = '\0';
	*family = strchr(s, ':') ? AF_INET6 : AF_INET;
	bits = *family == AF_INET6 ? 128 : 32;
	p = strtol(slash + 1, &end, 10);
	memset(addr, 0, 16);
	if (*end || p < 0 || p > bits || inet_pton(*family, s, addr) != 1)
		return -1;
	*prefix = (uint8_t)p;
	for (int i = net ? (int)p : bits; i < bits; i++)
		if (addr[i / 8] & (0x80 >> (i % 8)))
			return -1;
	return 0;
}

/* A copy of entry in buf (size QP_PROTO_MAX_ROUTE), 0, or -1 if too long. */
static int copy_entry(const char *entry, char buf[QP_PROTO_MAX_ROUTE])
{
	size_t n = entry ? strlen(entry) : QP_PROTO_MAX_ROUTE;

	if (n >= QP_PROTO_MAX_ROUTE)
		return -1;
	memcpy(buf, entry, n + 1);
	return 0;
}

int qp_run_route_parse(const char *entry, struct qp_run_route *out)
{
	char buf[QP_PROTO_MAX_ROUTE], *sp;
	struct qp_run_route r;

	if (copy_entry(entry, buf) < 0 || !(sp = strchr(buf, ' ')))
		return -1;
	*sp = '\0';
	if (parse_prefixed(buf, true, &r.family, r.dst, &r.prefix) < 0 ||
	    (strchr(sp + 1, ':') != NULL) != (r.family == AF_INET6))
		return -1; /* both addresses of one family */
	memset(r.gateway, 0, sizeof(r.gateway));
	if (inet_pton(r.family, sp + 1, r.gateway) != 1)
		return -1;
	if (out)
		*out = r;
	return 0;
}

int qp_run_route_format(const struct qp_run_route *r, char *buf, size_t size)
{
	char dst[INET6_ADDRSTRLEN], gw[INET6_ADDRSTRLEN];
	int n;

	if ((r->family != AF_INET && r->family != AF_INET6) ||
	    !inet_ntop(r->family, r->dst, dst, sizeof(dst)) || !inet_ntop(r->family, r->gateway, gw, sizeof(gw)))
		return -1;
	n = snprintf(buf, size, "%s/%u %s", dst, r->prefix, gw);
	if (n < 0 || (size_t)n >= size)
		return -1;
	return qp_run_route_parse(buf, NULL);
}

int qp_run_addr6_parse(const char *entry, struct qp_run_addr6 *out)
{
	char buf[QP_PROTO_MAX_ROUTE];
	struct qp_run_addr6 a;
	int family;

	if (copy_entry(entry, buf) < 0 || strchr(buf, ' ') ||
	    parse_prefixed(buf, false, &family, a.addr, &a.prefix) < 0 || family != AF_INET6 ||
	    a.prefix == 0)
		return -1;
	/* global unicast only: not ::, loopback, link-local, multicast */
	static const uint8_t zero[15];
	if ((!memcmp(a.addr, zero, 15) && a.addr[15] <= 1) || a.addr[0] == 0xff ||
	    (a.addr[0] == 0xfe && (a.addr[1] & 0xc0) == 0x80))
		return -1;
	if (out)
		*out = a;
	return 0;
}

int qp_run_addr6_format(const struct qp_run_addr6 *a, char *buf, size_t size)
{
	char addr[INET6_ADDRSTRLEN];
	int n;

	if (!inet_ntop(AF_INET6, a->addr, addr, sizeof(addr)))
		return -1;
	n = snprintf(buf, size, "%s/%u", addr, a->prefix);
	if (n < 0 || (size_t)n >= size)
		return -1;
	return qp_run_addr6_parse(buf, NULL);
}
