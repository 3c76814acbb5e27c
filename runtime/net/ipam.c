/* runtime/net/ipam.c — the pure half of IPAM (see ipam.h): subnet and slice
 * arithmetic, config resolution, and the lease table (parse, format,
 * allocate, release).  No I/O here. */
#include <ctype.h>
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/ipam.h"
#include "state.h"
#include "util/cleanup.h"

/* ---- IPv4 text ---------------------------------------------------------- */

int qp_ipv4_parse(const char *s, uint32_t *addr, qp_error **err)
{
	uint32_t a = 0;
	const char *p = s;

	if (!s)
		return qp_error_set(err, QP_E_INVALID, 0, "missing IPv4 address");
	/* Our own parser instead of inet_aton: exactly four decimal parts of
	 * 1-3 digits, no octal, no hex, no shorthand forms. */
	for (int part = 0; part < 4; part++) {
		unsigned v = 0;
		int digits = 0;

		while (isdigit((unsigned char)*p) && digits < 4) {
			v = v * 10 + (unsigned)(*p++ - '0');
			digits++;
		}
		if (digits == 0 || digits > 3 || v > 255 || (digits > 1 && p[-digits] == '0'))
			goto bad;
		a = (a << 8) | v;
		if (part < 3 && *p++ != '.')
			goto bad;
	}
	if (*p)
		goto bad;
	*addr = a;
	return 0;
bad:
	return qp_error_set(err, QP_E_INVALID, 0, "invalid IPv4 address \"%.64s\"", s);
}

const char *qp_ipv4_str(uint32_t a, char *buf)
{
	snprintf(buf, 16, "%u.%u.%u.%u", a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255);
	return buf;
}

static uint32_t prefix_mask(int prefix)
{
	return prefix <= 0 ? 0 : 0xffffffffu << (32 - prefix);
}

int qp_ipv4_parse_cidr(const char *s, uint32_t *base, int *prefix, qp_error **err)
{
	char buf[32];
	char *slash, *end;
	long n;

	if (!s || strnlen(s, sizeof(buf)) >= sizeof(buf))
		return qp_error_set(err, QP_E_INVALID, 0, "invalid subnet: expected A.B.C.D/N");
	strcpy(buf, s);
	slash = strchr(buf, '/');
	if (!slash || !isdigit((unsigned char)slash[1]))
		return qp_error_set(err, QP_E_INVALID, 0, "invalid subnet \"%s\": expected A.B.C.D/N", s);
	*slash = '\0';
	errno = 0;
	n = strtol(slash + 1, &end, 10);
	if (errno || *end || n < 0 || n > 32)
		return qp_error_set(err, QP_E_INVALID, 0, "invalid subnet \"%s\": bad prefix length", s);
	if (qp_ipv4_parse(buf, base, err) < 0)
		return qp_error_prefix(err, "invalid subnet \"%s\"", s);
	if (*base & ~prefix_mask((int)n))
		return qp_error_set(err, QP_E_INVALID, 0,
				    "invalid subnet \"%s\": host bits set (did you mean %s/%ld?)", s,
				    qp_ipv4_str(*base & prefix_mask((int)n), buf), n);
	*prefix = (int)n;
	return 0;
}

/* ---- config ------------------------------------------------------------- */

static int ndigits(uint32_t v)
{
	int d = 1;
	while (v >= 10) {
		v /= 10;
		d++;
	}
	return d;
}

int qp_net_cfg_resolve(const struct qp_net_config *c, struct qp_net_cfg *out, qp_error **err)
{
	const char *prefix = c->bridge_prefix ? c->bridge_prefix : QP_NET_DEFAULT_PREFIX;
	const char *subnet = c->subnet ? c->subnet : QP_NET_DEFAULT_SUBNET;
	int slice = c->slice_prefix ? c->slice_prefix : QP_NET_DEFAULT_SLICE;
	size_t plen;

	memset(out, 0, sizeof(*out));
	if (!c->root || !*c->root)
		return qp_error_set(err, QP_E_INVALID, 0, "network config: no state root");
	if (strlen(c->root) >= sizeof(out->root))
		return qp_error_set(err, QP_E_INVALID, 0, "network config: state root too long");
	strcpy(out->root, c->root);

	plen = strnlen(prefix, IFNAMSIZ);
	if (plen == 0 || plen > QP_NET_PREFIX_MAX)
		return qp_error_set(err, QP_E_INVALID, 0,
				    "invalid bridge prefix \"%.32s\": must be 1..%d bytes", prefix,
				    QP_NET_PREFIX_MAX);
	for (size_t i = 0; i < plen; i++) {
		unsigned char ch = (unsigned char)prefix[i];
		if (!(isalnum(ch) || ch == '_' || ch == '-' || ch == '.'))
			return qp_error_set(err, QP_E_INVALID, 0,
					    "invalid bridge prefix \"%s\": character 0x%02x "
					    "(allowed: letters, digits, _ - .)", prefix, ch);
	}
	if (isdigit((unsigned char)prefix[plen - 1]))
		return qp_error_set(err, QP_E_INVALID, 0,
				    "invalid bridge prefix \"%s\": must not end in a digit", prefix);
	memcpy(out->prefix, prefix, plen);

	if (qp_ipv4_parse_cidr(subnet, &out->base, &out->subnet_prefix, err) < 0)
		return -1;
	if (out->subnet_prefix < 8 || out->subnet_prefix > 30)
		return qp_error_set(err, QP_E_INVALID, 0,
				    "invalid subnet \"%s\": prefix must be /8../30", subnet);
	/* /22 is the largest slice whose pods fit the bridge's 1023 ports. */
	if (slice < 22 || slice > 30 || slice < out->subnet_prefix)
		return qp_error_set(err, QP_E_INVALID, 0,
				    "invalid slice prefix /%d: must be /22../30 and not larger than "
				    "the subnet /%d", slice, out->subnet_prefix);
	out->slice_prefix = slice;
	if (slice - out->subnet_prefix >= 16)
		out->nslices = QP_NET_MAX_SLICES;
	else
		out->nslices = 1u << (slice - out->subnet_prefix);
	if (plen + (size_t)ndigits(out->nslices - 1) > IFNAMSIZ - 1)
		return qp_error_set(err, QP_E_INVALID, 0,
				    "bridge prefix \"%s\" too long: bridge name \"%s%u\" exceeds %d bytes",
				    prefix, prefix, out->nslices - 1, IFNAMSIZ - 1);
	out->tap_vnet_hdr = c->tap_vnet_hdr;
	return 0;
}

int qp_net_config_validate(const struct qp_net_config *c, qp_error **err)
{
	struct qp_net_cfg cfg;

	if (!c)
		return qp_error_set(err, QP_E_INVALID, 0, "network config: missing");
	return qp_net_cfg_resolve(c, &cfg, err);
}

/* ---- slices -------------------------------------------------------------- */

uint32_t qp_slice_size(const struct qp_net_cfg *cfg)
{
	return 1u << (32 - cfg->slice_prefix);
}

uint32_t qp_slice_network(const struct qp_net_cfg *cfg, uint32_t slice)
{
	return cfg->base + slice * qp_slice_size(cfg);
}

uint32_t qp_slice_gateway(const struct qp_net_cfg *cfg, uint32_t slice)
{
	return qp_slice_network(cfg, slice) + 1;
}

enum qp_addr_kind qp_addr_classify(const struct qp_net_cfg *cfg, uint32_t addr, uint32_t *slice)
{
	uint32_t off, s, in;

	if ((addr & prefix_mask(cfg->subnet_prefix)) != cfg->base)
		return QP_ADDR_OUTSIDE;
	off = addr - cfg->base;
	s = off >> (32 - cfg->slice_prefix);
	if (s >= cfg->nslices)
		return QP_ADDR_OUTSIDE;
	if (slice)
		*slice = s;
	in = off & (qp_slice_size(cfg) - 1);
	if (in == 0)
		return QP_ADDR_NETWORK;
	if (in == 1)
		return QP_ADDR_GATEWAY;
	if (in == qp_slice_size(cfg) - 1)
		return QP_ADDR_BROADCAST;
	return QP_ADDR_HOST;
}

void qp_bridge_name(const struct qp_net_cfg *cfg, uint32_t slice, char buf[16])
{
	int n = snprintf(buf, 16, "%s%u", cfg->prefix, slice);

	if (n < 0 || n >= 16) /* cannot happen with a resolved config */
		buf[0] = '\0';
}

/* ---- names ---------------------------------------------------------------- */

int qp_net_validate_id(const char *id, qp_error **err)
{
	/* one rule for pod IDs everywhere: the state directory's */
	return state_validate_id(id, err);
}

int qp_net_validate_ifname(const char *name, qp_error **err)
{
	size_t n = name ? strnlen(name, IFNAMSIZ) : 0;

	if (n == 0 || n >= IFNAMSIZ)
		return qp_error_set(err, QP_E_INVALID, 0, "invalid interface name: must be 1..%d bytes",
				    IFNAMSIZ - 1);
	if (!strcmp(name, ".") || !strcmp(name, ".."))
		return qp_error_set(err, QP_E_INVALID, 0, "invalid interface name \"%s\"", name);
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)name[i];
		if (!(isalnum(ch) || ch == '_' || ch == '-' || ch == '.'))
			return qp_error_set(err, QP_E_INVALID, 0,
					    "invalid interface name: character 0x%02x", ch);
	}
	return 0;
}

/* ---- table ----------------------------------------------------------------- */

void qp_ipam_table_free(struct qp_ipam_table *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i].id);
	free(t->v);
	t->v = NULL;
	t->n = t->cap = 0;
}

struct qp_ipam_entry *qp_ipam_find_id(const struct qp_ipam_table *t, const char *id)
{
	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->v[i].id, id))
			return &t->v[i];
	return NULL;
}

static struct qp_ipam_entry *find_addr(const struct qp_ipam_table *t, uint32_t addr)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].addr == addr)
			return &t->v[i];
	return NULL;
}

static int table_add(struct qp_ipam_table *t, uint32_t addr, const char *id, const char *ifname,
		     qp_error **err)
{
	char *dup;

	if (t->n >= QP_IPAM_MAX_ENTRIES)
		return qp_error_set(err, QP_E_SUBNETFULL, 0, "IPAM table full (%u leases)",
				    QP_IPAM_MAX_ENTRIES);
	if (t->n == t->cap) {
		size_t ncap = t->cap ? t->cap * 2 : 64;
		struct qp_ipam_entry *nv = realloc(t->v, ncap * sizeof(*nv));
		if (!nv)
			return qp_fail(err, ENOMEM, "IPAM table");
		t->v = nv;
		t->cap = ncap;
	}
	dup = strdup(id);
	if (!dup)
		return qp_fail(err, ENOMEM, "IPAM table");
	t->v[t->n].addr = addr;
	t->v[t->n].id = dup;
	snprintf(t->v[t->n].ifname, sizeof(t->v[t->n].ifname), "%s", ifname);
	t->n++;
	return 0;
}

/* One line, NUL-terminated, without its newline. */
static int parse_line(struct qp_ipam_table *t, char *line, qp_error **err)
{
	char *f[3], *save = NULL, *extra;
	uint32_t addr;

	f[0] = strtok_r(line, " ", &save);
	f[1] = f[0] ? strtok_r(NULL, " ", &save) : NULL;
	f[2] = f[1] ? strtok_r(NULL, " ", &save) : NULL;
	extra = f[2] ? strtok_r(NULL, " ", &save) : NULL;
	if (!f[2] || extra)
		return qp_error_set(err, QP_E_INVALID, 0, "expected \"ADDR ID IFNAME\"");
	if (qp_ipv4_parse(f[0], &addr, err) < 0 || qp_net_validate_id(f[1], err) < 0 ||
	    qp_net_validate_ifname(f[2], err) < 0)
		return -1;
	return table_add(t, addr, f[1], f[2], err);
}

static int cmp_entry_addr(const void *a, const void *b)
{
	uint32_t x = (*(const struct qp_ipam_entry *const *)a)->addr;
	uint32_t y = (*(const struct qp_ipam_entry *const *)b)->addr;
	return x < y ? -1 : x > y;
}

static int cmp_entry_id(const void *a, const void *b)
{
	return strcmp((*(const struct qp_ipam_entry *const *)a)->id,
		      (*(const struct qp_ipam_entry *const *)b)->id);
}

/* Duplicates make the file corrupt.  Sorting keeps this O(n log n) on a
 * hostile file of QP_IPAM_MAX_ENTRIES lines. */
static int check_duplicates(const struct qp_ipam_table *t, qp_error **err)
{
	_cleanup_free_ const struct qp_ipam_entry **p = malloc((t->n ? t->n : 1) * sizeof(*p));
	char a[16];

	if (!p)
		return qp_fail(err, ENOMEM, "IPAM table");
	for (size_t i = 0; i < t->n; i++)
		p[i] = &t->v[i];
	qsort(p, t->n, sizeof(*p), cmp_entry_addr);
	for (size_t i = 1; i < t->n; i++)
		if (p[i]->addr == p[i - 1]->addr)
			return qp_error_set(err, QP_E_INVALID, 0, "IPAM file: address %s leased twice",
					    qp_ipv4_str(p[i]->addr, a));
	qsort(p, t->n, sizeof(*p), cmp_entry_id);
	for (size_t i = 1; i < t->n; i++)
		if (!strcmp(p[i]->id, p[i - 1]->id))
			return qp_error_set(err, QP_E_INVALID, 0, "IPAM file: pod \"%s\" leased twice",
					    p[i]->id);
	return 0;
}

int qp_ipam_parse(const char *buf, size_t len, struct qp_ipam_table *t, qp_error **err)
{
	char line[QP_IPAM_LINE_MAX + 1];
	size_t pos = 0, lineno = 0;

	t->v = NULL;
	t->n = t->cap = 0;
	while (pos < len) {
		const char *nl = memchr(buf + pos, '\n', len - pos);
		size_t n;

		lineno++;
		if (!nl) {
			qp_ipam_table_free(t);
			return qp_error_set(err, QP_E_INVALID, 0,
					    "IPAM file line %zu: truncated (no newline)", lineno);
		}
		n = (size_t)(nl - (buf + pos));
		if (n > QP_IPAM_LINE_MAX || memchr(buf + pos, '\0', n)) {
			qp_ipam_table_free(t);
			return qp_error_set(err, QP_E_INVALID, 0, "IPAM file line %zu: malformed",
					    lineno);
		}
		memcpy(line, buf + pos, n);
		line[n] = '\0';
		pos += n + 1;
		if (parse_line(t, line, err) < 0) {
			qp_ipam_table_free(t);
			return qp_error_prefix(err, "IPAM file line %zu", lineno);
		}
	}
	if (check_duplicates(t, err) < 0) {
		qp_ipam_table_free(t);
		return -1;
	}
	return 0;
}

int qp_ipam_format(const struct qp_ipam_table *t, char **out, size_t *len, qp_error **err)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);
	char a[16];

	if (!f)
		return qp_fail(err, errno, "format IPAM table");
	for (size_t i = 0; i < t->n; i++)
		fprintf(f, "%s %s %s\n", qp_ipv4_str(t->v[i].addr, a), t->v[i].id, t->v[i].ifname);
	if (ferror(f) | fclose(f)) {
		free(buf);
		return qp_fail(err, ENOMEM, "format IPAM table");
	}
	*out = buf;
	*len = size;
	return 0;
}

size_t qp_ipam_count_slice(const struct qp_ipam_table *t, const struct qp_net_cfg *cfg,
			   uint32_t slice)
{
	size_t n = 0;
	uint32_t s;

	for (size_t i = 0; i < t->n; i++)
		if (qp_addr_classify(cfg, t->v[i].addr, &s) != QP_ADDR_OUTSIDE && s == slice)
			n++;
	return n;
}

/* ---- allocation -------------------------------------------------------------- */

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

static int skipped(uint32_t slice, const uint32_t *skip, size_t nskip)
{
	for (size_t i = 0; i < nskip; i++)
		if (skip[i] == slice)
			return 1;
	return 0;
}

/* First free host address in a slice not skipped; 0 if none.  used[] is the
 * sorted list of leased addresses. */
static uint32_t first_free(const struct qp_net_cfg *cfg, const uint32_t *used, size_t n,
			   const uint32_t *skip, size_t nskip)
{
	size_t idx = 0;

	for (uint32_t s = 0; s < cfg->nslices; s++) {
		uint32_t lo = qp_slice_network(cfg, s) + 2;
		uint32_t hi = qp_slice_network(cfg, s) + qp_slice_size(cfg) - 2;
		uint32_t cand = lo;

		while (idx < n && used[idx] < lo)
			idx++;
		if (skipped(s, skip, nskip))
			continue;
		for (size_t j = idx; j < n && used[j] == cand && cand <= hi; j++)
			cand++;
		if (cand <= hi)
			return cand;
	}
	return 0;
}

int qp_ipam_alloc(struct qp_ipam_table *t, const struct qp_net_cfg *cfg, const char *id,
		  const char *ifname, uint32_t requested, const uint32_t *skip, size_t nskip,
		  uint32_t *addr, qp_error **err)
{
	char a[16];
	uint32_t pick;

	if (qp_net_validate_id(id, err) < 0 || qp_net_validate_ifname(ifname, err) < 0)
		return -1;
	if (qp_ipam_find_id(t, id))
		return qp_error_set(err, QP_E_EXISTS, 0, "pod \"%s\" already has a network lease", id);

	if (requested) {
		switch (qp_addr_classify(cfg, requested, NULL)) {
		case QP_ADDR_OUTSIDE:
			return qp_error_set(err, QP_E_INVALID, 0,
					    "address %s is outside the pod subnet",
					    qp_ipv4_str(requested, a));
		case QP_ADDR_NETWORK:
		case QP_ADDR_GATEWAY:
		case QP_ADDR_BROADCAST:
			return qp_error_set(err, QP_E_INVALID, 0,
					    "address %s is a network, gateway or broadcast address",
					    qp_ipv4_str(requested, a));
		case QP_ADDR_HOST:
			break;
		}
		if (find_addr(t, requested))
			return qp_error_set(err, QP_E_ADDRINUSE, 0, "address %s is already in use",
					    qp_ipv4_str(requested, a));
		pick = requested;
	} else {
		_cleanup_free_ uint32_t *used = malloc((t->n ? t->n : 1) * sizeof(*used));
		size_t n = 0;

		if (!used)
			return qp_fail(err, ENOMEM, "IPAM allocation");
		for (size_t i = 0; i < t->n; i++)
			if (qp_addr_classify(cfg, t->v[i].addr, NULL) == QP_ADDR_HOST)
				used[n++] = t->v[i].addr;
		qsort(used, n, sizeof(*used), cmp_u32);
		pick = first_free(cfg, used, n, skip, nskip);
		if (!pick)
			return qp_error_set(err, QP_E_SUBNETFULL, 0,
					    "no free address left in the pod subnet %s/%d",
					    qp_ipv4_str(cfg->base, a), cfg->subnet_prefix);
	}
	if (table_add(t, pick, id, ifname, err) < 0)
		return -1;
	*addr = pick;
	return 0;
}

int qp_ipam_release(struct qp_ipam_table *t, const char *id)
{
	struct qp_ipam_entry *e = qp_ipam_find_id(t, id);

	if (!e)
		return 0;
	free(e->id);
	/* keep file order stable: shift the rest down */
	memmove(e, e + 1, (size_t)(t->v + t->n - (e + 1)) * sizeof(*e));
	t->n--;
	return 1;
}
