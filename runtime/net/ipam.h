/* runtime/net/ipam.h — IPv4 address management.
 *
 * The pure part (ipam.c: subnet/slice arithmetic, config resolution, lease
 * table parsing, formatting, allocation, release) does no I/O and is unit
 * tested on its own.  The store part (ipam_store.c) opens ROOT/.net, takes
 * the host-wide network lock and loads / saves the table atomically.
 * Addresses are uint32_t in host byte order throughout.
 */
#ifndef QPOD_NET_IPAM_H
#define QPOD_NET_IPAM_H

#include <stddef.h>
#include <stdint.h>

#include "net/net.h"
#include "util/error.h"

#define QP_IPAM_MAX_ENTRIES 65536u      /* leases in one file */
#define QP_IPAM_FILE_MAX (16u << 20)    /* bytes */
#define QP_IPAM_LINE_MAX (16 + 1 + QP_NET_ID_MAX + 1 + 15 + 1)
#define QP_NET_MAX_SLICES 65536u        /* slices beyond this are never used */
#define QP_NET_PREFIX_MAX 14            /* bridge prefix bytes (plus >= 1 digit) */

/* A config with defaults filled in and the subnet parsed. */
struct qp_net_cfg {
	char root[4096];
	char prefix[16];      /* bridge name prefix */
	uint32_t base;        /* subnet network address */
	int subnet_prefix;    /* 8..30 */
	int slice_prefix;     /* max(22, subnet_prefix)..30 */
	uint32_t nslices;     /* min(2^(slice - subnet), QP_NET_MAX_SLICES) */
	int tap_vnet_hdr;
};

enum qp_addr_kind {
	QP_ADDR_OUTSIDE = 0,  /* not in the subnet, or in a slice past nslices */
	QP_ADDR_NETWORK,
	QP_ADDR_GATEWAY,
	QP_ADDR_BROADCAST,
	QP_ADDR_HOST,         /* a pod address */
};

struct qp_ipam_entry {
	uint32_t addr;
	char *id;
	char ifname[16];
};

struct qp_ipam_table {
	struct qp_ipam_entry *v;
	size_t n, cap;
};

/* "A.B.C.D/N" with zero host bits -> base, prefix. */
int qp_ipv4_parse_cidr(const char *s, uint32_t *base, int *prefix, qp_error **err);
/* Strict dotted quad. */
int qp_ipv4_parse(const char *s, uint32_t *addr, qp_error **err);
/* Dotted quad into buf (>= 16 bytes); returns buf. */
const char *qp_ipv4_str(uint32_t addr, char *buf);

int qp_net_cfg_resolve(const struct qp_net_config *c, struct qp_net_cfg *out, qp_error **err);

/* Slice geometry. */
uint32_t qp_slice_size(const struct qp_net_cfg *cfg);
uint32_t qp_slice_network(const struct qp_net_cfg *cfg, uint32_t slice);
uint32_t qp_slice_gateway(const struct qp_net_cfg *cfg, uint32_t slice);
enum qp_addr_kind qp_addr_classify(const struct qp_net_cfg *cfg, uint32_t addr, uint32_t *slice);
/* PREFIX<slice> into buf[16]. */
void qp_bridge_name(const struct qp_net_cfg *cfg, uint32_t slice, char buf[16]);

/* Pod ID check (the state directory's rule: letters, digits, _ . + - : @,
 * no leading '.' or '-', at most QP_NET_ID_MAX bytes). */
int qp_net_validate_id(const char *id, qp_error **err);
/* Interface name check: 1..15 bytes of letters, digits, _ . -. */
int qp_net_validate_ifname(const char *name, qp_error **err);

/* Table.  parse: every line "ADDR ID IFNAME\n" must be valid; duplicates of
 * an address or an ID make the file corrupt (QP_E_INVALID, with the line). */
int qp_ipam_parse(const char *buf, size_t len, struct qp_ipam_table *t, qp_error **err);
int qp_ipam_format(const struct qp_ipam_table *t, char **out, size_t *len, qp_error **err);
void qp_ipam_table_free(struct qp_ipam_table *t);
struct qp_ipam_entry *qp_ipam_find_id(const struct qp_ipam_table *t, const char *id);
/* Number of leases inside `slice`. */
size_t qp_ipam_count_slice(const struct qp_ipam_table *t, const struct qp_net_cfg *cfg,
			   uint32_t slice);

/* Lease an address for id/ifname.  requested: 0 = first free host address
 * of the first slice not listed in skip[0..nskip).  Errors: QP_E_EXISTS (id
 * has a lease), QP_E_INVALID, QP_E_ADDRINUSE, QP_E_SUBNETFULL. */
int qp_ipam_alloc(struct qp_ipam_table *t, const struct qp_net_cfg *cfg, const char *id,
		  const char *ifname, uint32_t requested, const uint32_t *skip, size_t nskip,
		  uint32_t *addr, qp_error **err);
/* Drop id's lease; returns 1 if there was one, 0 if not. */
int qp_ipam_release(struct qp_ipam_table *t, const char *id);

/* Store: create ROOT and ROOT/.net (0700) as needed, take the exclusive
 * network lock.  *dirfd = ROOT/.net; *lockfd holds the lock (close it to
 * unlock). */
int qp_ipam_lock(const struct qp_net_cfg *cfg, int *dirfd, int *lockfd, qp_error **err);
/* Missing file = empty table. */
int qp_ipam_load(int dirfd, struct qp_ipam_table *t, qp_error **err);
int qp_ipam_save(int dirfd, const struct qp_ipam_table *t, qp_error **err);

#endif
