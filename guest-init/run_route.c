/* guest-init/run_route.c — RUN's route entries (channel.h): "DST/PREFIX
 * GATEWAY" in dotted IPv4, parsed and formatted with every field checked. */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest-init/channel.h"

int qp_run_route_parse(const char *entry, struct qp_run_route *out)
{
	char buf[QP_PROTO_MAX_ROUTE], *slash, *sp, *end;
	struct qp_run_route r;
	long prefix;

	if (!entry || strlen(entry) >= sizeof(buf))
		return -1;
	memcpy(buf, entry, strlen(entry) + 1);
	slash = strchr(buf, '/');
	sp = strchr(buf, ' ');
	if (!slash || !sp || sp < slash)
		return -1;
	*slash = *sp = '\0';
	if (slash[1] < '0' || slash[1] > '9')
		return -1;
	prefix = strtol(slash + 1, &end, 10);
	if (*end || prefix < 0 || prefix > 32 || inet_pton(AF_INET, buf, r.dst) != 1 ||
	    inet_pton(AF_INET, sp + 1, r.gateway) != 1)
		return -1;
	r.prefix = (uint8_t)prefix;
	/* no host bits past the prefix: the kernel would refuse the route */
	uint32_t dst, mask = prefix ? ~0u << (32 - prefix) : 0;
	memcpy(&dst, r.dst, 4);
	if (ntohl(dst) & ~mask)
		return -1;
	if (out)
		*out = r;
	return 0;
}

int qp_run_route_format(const struct qp_run_route *r, char *buf, size_t size)
{
	char dst[INET_ADDRSTRLEN], gw[INET_ADDRSTRLEN];
	int n;

	if (!inet_ntop(AF_INET, r->dst, dst, sizeof(dst)) || !inet_ntop(AF_INET, r->gateway, gw, sizeof(gw)))
		return -1;
	n = snprintf(buf, size, "%s/%u %s", dst, r->prefix, gw);
	if (n < 0 || (size_t)n >= size)
		return -1;
	return qp_run_route_parse(buf, NULL);
}
