/* tests/unit/test_ipam.c — IPAM without a network: config validation,
 * subnet/slice arithmetic, the lease table (parse, format, allocate,
 * release), names derived from pod IDs, and the file store under concurrent
 * processes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "net/internal.h"
#include "net/ipam.h"
#include "net/net.h"

static struct qp_net_cfg cfg_for(const char *subnet, int slice)
{
	struct qp_net_config c = { .root = "/tmp", .subnet = subnet, .slice_prefix = slice };
	struct qp_net_cfg cfg;
	qp_error *err = NULL;

	assert_int_equal(qp_net_cfg_resolve(&c, &cfg, &err), 0);
	assert_null(err);
	return cfg;
}

static uint32_t ip(const char *s)
{
	uint32_t a;
	assert_int_equal(qp_ipv4_parse(s, &a, NULL), 0);
	return a;
}

static const char *str(uint32_t a)
{
	static char buf[16];
	return qp_ipv4_str(a, buf);
}

/* expect the call to fail with `code` */
#define assert_fails(call, want)                                   \
	do {                                                        \
		qp_error *e_ = NULL;                                \
		qp_error **err = &e_;                               \
		assert_int_equal((call), -1);                       \
		assert_non_null(e_);                                \
		assert_int_equal(e_->code, (want));                 \
		qp_error_free(&e_);                                 \
	} while (0)

static void test_config_defaults(void **state)
{
	struct qp_net_cfg cfg = cfg_for(NULL, 0);

	(void)state;
	assert_string_equal(cfg.prefix, "qpod");
	assert_string_equal(str(cfg.base), "10.213.0.0");
	assert_int_equal(cfg.subnet_prefix, 16);
	assert_int_equal(cfg.slice_prefix, 22);
	assert_int_equal(cfg.nslices, 64);
	assert_int_equal(qp_slice_size(&cfg), 1024);
	assert_string_equal(str(qp_slice_gateway(&cfg, 1)), "10.213.4.1");
	char name[16];
	qp_bridge_name(&cfg, 63, name);
	assert_string_equal(name, "qpod63");
}

static void test_config_invalid_subnet(void **state)
{
	static const char *bad[] = {
		"", "10.213.0.0", "10.213.0.0/", "10.213.0.0/33", "10.213.0.0/-1", "10.213.0.1/16",
		"300.1.1.0/24", "10.213.0/16", "010.213.0.0/16", "10.213.0.0/16x", " 10.213.0.0/16",
		"10.213.0.0/16 ", "10.213.0.0.0/16", "0x0a.88.0.0/16", "10.213.0.0//16",
		"10.213.0.0/1600000000000000000000000000000",
	};
	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct qp_net_config c = { .root = "/tmp", .subnet = bad[i] };
		assert_fails(qp_net_config_validate(&c, err), QP_E_INVALID);
	}
}

static void test_config_prefix_range(void **state)
{
	struct { const char *subnet; int slice; int ok; } cases[] = {
		{ "10.213.0.0/16", 21, 0 },  /* slice larger than a bridge can hold */
		{ "10.213.0.0/16", 31, 0 },  /* no pod address left */
		{ "10.213.0.0/16", 30, 1 },
		{ "10.0.0.0/7", 22, 0 },    /* subnet prefix below /8 */
		{ "10.0.0.0/8", 22, 1 },
		{ "10.213.0.0/24", 22, 0 },  /* slice larger than the subnet */
		{ "10.213.0.0/22", 22, 1 },
		{ "10.213.0.0/31", 0, 0 },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct qp_net_config c = { .root = "/tmp", .subnet = cases[i].subnet,
					   .slice_prefix = cases[i].slice };
		if (cases[i].ok)
			assert_int_equal(qp_net_config_validate(&c, NULL), 0);
		else
			assert_fails(qp_net_config_validate(&c, err), QP_E_INVALID);
	}
}

static void test_config_bridge_names(void **state)
{
	struct qp_net_config c = { .root = "/tmp" };

	(void)state;
	c.bridge_prefix = "abcdefghijklm";   /* 13 + "63" = 15: fits */
	assert_int_equal(qp_net_config_validate(&c, NULL), 0);
	c.bridge_prefix = "abcdefghijklmn";  /* 14 + "63" = 16: over IFNAMSIZ-1 */
	assert_fails(qp_net_config_validate(&c, err), QP_E_INVALID);
	c.bridge_prefix = "abcdefghijklmnop";
	assert_fails(qp_net_config_validate(&c, err), QP_E_INVALID);
	c.subnet = "10.213.0.0/22";           /* one slice: "abcdefghijklmn0" fits */
	c.bridge_prefix = "abcdefghijklmn";
	assert_int_equal(qp_net_config_validate(&c, NULL), 0);
	c.subnet = NULL;
	c.bridge_prefix = "";
	assert_fails(qp_net_config_validate(&c, err), QP_E_INVALID);
	c.bridge_prefix = "qp/d";
	assert_fails(qp_net_config_validate(&c, err), QP_E_INVALID);
	c.bridge_prefix = "qp d";
	assert_fails(qp_net_config_validate(&c, err), QP_E_INVALID);
	c.bridge_prefix = "br1";             /* "br1" + "1" would equal "br" + "11" */
	assert_fails(qp_net_config_validate(&c, err), QP_E_INVALID);
	c.bridge_prefix = "qpod";
	c.root = NULL;
	assert_fails(qp_net_config_validate(&c, err), QP_E_INVALID);
}

static void test_classify(void **state)
{
	struct qp_net_cfg cfg = cfg_for(NULL, 0);
	uint32_t s = 99;

	(void)state;
	assert_int_equal(qp_addr_classify(&cfg, ip("10.213.0.0"), &s), QP_ADDR_NETWORK);
	assert_int_equal(s, 0);
	assert_int_equal(qp_addr_classify(&cfg, ip("10.213.0.1"), NULL), QP_ADDR_GATEWAY);
	assert_int_equal(qp_addr_classify(&cfg, ip("10.213.3.255"), NULL), QP_ADDR_BROADCAST);
	assert_int_equal(qp_addr_classify(&cfg, ip("10.213.3.254"), &s), QP_ADDR_HOST);
	assert_int_equal(s, 0);
	assert_int_equal(qp_addr_classify(&cfg, ip("10.213.4.2"), &s), QP_ADDR_HOST);
	assert_int_equal(s, 1);
	assert_int_equal(qp_addr_classify(&cfg, ip("10.213.255.254"), &s), QP_ADDR_HOST);
	assert_int_equal(s, 63);
	assert_int_equal(qp_addr_classify(&cfg, ip("10.89.0.2"), NULL), QP_ADDR_OUTSIDE);
}

static void alloc_ok(struct qp_ipam_table *t, const struct qp_net_cfg *cfg, const char *id,
		     const char *want)
{
	qp_error *err = NULL;
	uint32_t a = 0;

	assert_int_equal(qp_ipam_alloc(t, cfg, id, "qp0000000000", 0, NULL, 0, &a, &err), 0);
	assert_null(err);
	assert_string_equal(str(a), want);
}

static void test_alloc_order_and_slices(void **state)
{
	struct qp_net_cfg cfg = cfg_for(NULL, 0);
	struct qp_ipam_table t = { 0 };
	char id[32];
	uint32_t a;

	(void)state;
	alloc_ok(&t, &cfg, "a", "10.213.0.2");
	alloc_ok(&t, &cfg, "b", "10.213.0.3");
	for (int i = 0; i < 1019; i++) {
		snprintf(id, sizeof(id), "p%d", i);
		assert_int_equal(qp_ipam_alloc(&t, &cfg, id, "qpx", 0, NULL, 0, &a, NULL), 0);
	}
	assert_string_equal(str(a), "10.213.3.254");   /* slice 0 holds 1021 pods */
	assert_int_equal(qp_ipam_count_slice(&t, &cfg, 0), 1021);
	alloc_ok(&t, &cfg, "next", "10.213.4.2");       /* spills into slice 1 */
	assert_int_equal(qp_ipam_count_slice(&t, &cfg, 1), 1);
	/* a released address is reused first */
	assert_int_equal(qp_ipam_release(&t, "b"), 1);
	assert_int_equal(qp_ipam_release(&t, "b"), 0);
	alloc_ok(&t, &cfg, "c", "10.213.0.3");
	/* the same ID twice */
	assert_fails(qp_ipam_alloc(&t, &cfg, "c", "qpx", 0, NULL, 0, &a, err), QP_E_EXISTS);
	qp_ipam_table_free(&t);
}

static void test_alloc_skip(void **state)
{
	struct qp_net_cfg cfg = cfg_for(NULL, 0);
	struct qp_ipam_table t = { 0 };
	uint32_t skip[] = { 0, 1 }, a;

	(void)state;
	assert_int_equal(qp_ipam_alloc(&t, &cfg, "x", "qpx", 0, skip, 2, &a, NULL), 0);
	assert_string_equal(str(a), "10.213.8.2");
	assert_int_equal(qp_ipam_alloc(&t, &cfg, "y", "qpx", 0, skip, 1, &a, NULL), 0);
	assert_string_equal(str(a), "10.213.4.2");
	qp_ipam_table_free(&t);
}

static void test_alloc_requested(void **state)
{
	struct qp_net_cfg cfg = cfg_for(NULL, 0);
	struct qp_ipam_table t = { 0 };
	uint32_t a;

	(void)state;
	assert_int_equal(qp_ipam_alloc(&t, &cfg, "r", "qpx", ip("10.213.0.50"), NULL, 0, &a, NULL), 0);
	assert_string_equal(str(a), "10.213.0.50");
	assert_fails(qp_ipam_alloc(&t, &cfg, "s", "qpx", ip("10.213.0.50"), NULL, 0, &a, err),
		     QP_E_ADDRINUSE);
	static const char *bad[] = { "10.89.0.5", "192.168.0.2", "10.213.0.0", "10.213.0.1",
				     "10.213.3.255", "10.213.4.0", "10.213.4.1", "10.213.255.255" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_fails(qp_ipam_alloc(&t, &cfg, "s", "qpx", ip(bad[i]), NULL, 0, &a, err),
			     QP_E_INVALID);
	/* first-free allocation steps around the requested one */
	for (int i = 2; i < 50; i++) {
		char id[16];
		snprintf(id, sizeof(id), "f%d", i);
		assert_int_equal(qp_ipam_alloc(&t, &cfg, id, "qpx", 0, NULL, 0, &a, NULL), 0);
	}
	alloc_ok(&t, &cfg, "after", "10.213.0.51");
	qp_ipam_table_free(&t);
}

static void test_exhaustion(void **state)
{
	/* 4 slices of /30: each has exactly one pod address */
	struct qp_net_cfg cfg = cfg_for("10.9.0.0/28", 30);
	struct qp_ipam_table t = { 0 };
	uint32_t a;

	(void)state;
	alloc_ok(&t, &cfg, "a", "10.9.0.2");
	alloc_ok(&t, &cfg, "b", "10.9.0.6");
	alloc_ok(&t, &cfg, "c", "10.9.0.10");
	alloc_ok(&t, &cfg, "d", "10.9.0.14");
	assert_fails(qp_ipam_alloc(&t, &cfg, "e", "qpx", 0, NULL, 0, &a, err), QP_E_SUBNETFULL);
	qp_ipam_release(&t, "c");
	alloc_ok(&t, &cfg, "e", "10.9.0.10");
	qp_ipam_table_free(&t);
}

static void test_parse_format(void **state)
{
	const char *text = "10.213.0.2 pod-a qp0123456789\n10.213.4.7 b:c@d qpabcdefabcd\n";
	struct qp_ipam_table t;
	char *out = NULL;
	size_t len;

	(void)state;
	assert_int_equal(qp_ipam_parse(text, strlen(text), &t, NULL), 0);
	assert_int_equal(t.n, 2);
	assert_string_equal(t.v[1].id, "b:c@d");
	assert_string_equal(t.v[1].ifname, "qpabcdefabcd");
	assert_int_equal(qp_ipam_format(&t, &out, &len, NULL), 0);
	assert_int_equal(len, strlen(text));
	assert_memory_equal(out, text, len);
	free(out);
	qp_ipam_table_free(&t);
	assert_int_equal(qp_ipam_parse("", 0, &t, NULL), 0);
	assert_int_equal(t.n, 0);

	static const char *bad[] = {
		"10.213.0.2 a qp1\n10.213.0.2 b qp2\n",   /* address twice */
		"10.213.0.2 a qp1\n10.213.0.3 a qp2\n",   /* ID twice */
		"10.213.0.2 a qp1",                       /* no newline */
		"10.213.0.2 a\n",                         /* missing field */
		"10.213.0.2 a qp1 extra\n",
		"10.213.0.2 ../x qp1\n",                  /* bad ID */
		"10.213.0.2 a qp/1\n",                    /* bad ifname */
		"10.213.0.2 a qp0123456789abcdef\n",      /* ifname too long */
		"10.213.0.256 a qp1\n",
		"\n",
		"10.213.0.2\ta\tqp1\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_fails(qp_ipam_parse(bad[i], strlen(bad[i]), &t, err), QP_E_INVALID);
	/* an embedded NUL */
	assert_fails(qp_ipam_parse("10.213.0.2 a\0 qp1\n", 18, &t, err), QP_E_INVALID);
}

static void test_names(void **state)
{
	char a[16], b[16];
	unsigned char m1[6], m2[6];

	(void)state;
	qp_net_host_ifname("pod-1", a);
	qp_net_host_ifname("pod-1", b);
	assert_string_equal(a, b);
	assert_int_equal(strlen(a), 12);
	assert_true(qp_net_is_host_ifname(a));
	qp_net_host_ifname("pod-2", b);
	assert_string_not_equal(a, b);
	assert_false(qp_net_is_host_ifname("qpod0"));
	assert_false(qp_net_is_host_ifname("qp012345678"));
	assert_false(qp_net_is_host_ifname("qp0123456789a"));
	assert_false(qp_net_is_host_ifname("qp012345678G"));
	assert_false(qp_net_is_host_ifname("eth0"));

	qp_net_pod_mac("pod-1", m1);
	qp_net_pod_mac("pod-1", m2);
	assert_memory_equal(m1, m2, 6);
	assert_int_equal(m1[0], 0x02);  /* locally administered, unicast */
	qp_net_pod_mac("pod-2", m2);
	assert_memory_not_equal(m1, m2, 6);

	struct qp_net_cfg cfg = cfg_for(NULL, 0);
	assert_true(qp_net_is_bridge_name(&cfg, "qpod0"));
	assert_true(qp_net_is_bridge_name(&cfg, "qpod63"));
	assert_false(qp_net_is_bridge_name(&cfg, "qpod64"));
	assert_false(qp_net_is_bridge_name(&cfg, "qpod01"));
	assert_false(qp_net_is_bridge_name(&cfg, "qpod"));
	assert_false(qp_net_is_bridge_name(&cfg, "qpodx"));
	assert_false(qp_net_is_bridge_name(&cfg, "qpo0"));

	assert_int_equal(qp_net_validate_id("a.b_c+d-e:f@g", NULL), 0);
	assert_fails(qp_net_validate_id("", err), QP_E_INVALID);
	assert_fails(qp_net_validate_id(".x", err), QP_E_INVALID);
	assert_fails(qp_net_validate_id("a b", err), QP_E_INVALID);
	assert_fails(qp_net_validate_id("a\nb", err), QP_E_INVALID);
}

/* Four processes allocate 100 leases each through the locked store; every
 * address must be handed out exactly once. */
static void test_store_concurrent(void **state)
{
	char dir[] = "/tmp/qpod-ipam-XXXXXX";
	struct qp_net_config c = { .root = dir };
	struct qp_net_cfg cfg;
	struct qp_ipam_table t;
	int dirfd, lockfd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_int_equal(qp_net_cfg_resolve(&c, &cfg, NULL), 0);
	for (int p = 0; p < 4; p++) {
		pid_t pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			for (int i = 0; i < 100; i++) {
				char id[32];
				uint32_t a;
				snprintf(id, sizeof(id), "p%d-%d", p, i);
				if (qp_ipam_lock(&cfg, &dirfd, &lockfd, NULL) < 0 ||
				    qp_ipam_load(dirfd, &t, NULL) < 0 ||
				    qp_ipam_alloc(&t, &cfg, id, "qpx", 0, NULL, 0, &a, NULL) < 0 ||
				    qp_ipam_save(dirfd, &t, NULL) < 0)
					_exit(1);
				qp_ipam_table_free(&t);
				close(dirfd);
				close(lockfd);
			}
			_exit(0);
		}
	}
	for (int p = 0; p < 4; p++) {
		int st;
		assert_true(wait(&st) > 0);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	assert_int_equal(qp_ipam_lock(&cfg, &dirfd, &lockfd, NULL), 0);
	assert_int_equal(qp_ipam_load(dirfd, &t, NULL), 0); /* rejects duplicates */
	assert_int_equal(t.n, 400);
	/* first-free from an empty table: exactly 10.213.0.2 .. 10.213.1.145 */
	for (size_t i = 0; i < t.n; i++) {
		uint32_t s;
		assert_int_equal(qp_addr_classify(&cfg, t.v[i].addr, &s), QP_ADDR_HOST);
		assert_true(t.v[i].addr >= ip("10.213.0.2") && t.v[i].addr <= ip("10.213.1.145"));
	}
	qp_ipam_table_free(&t);
	close(dirfd);
	close(lockfd);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config_defaults),
		cmocka_unit_test(test_config_invalid_subnet),
		cmocka_unit_test(test_config_prefix_range),
		cmocka_unit_test(test_config_bridge_names),
		cmocka_unit_test(test_classify),
		cmocka_unit_test(test_alloc_order_and_slices),
		cmocka_unit_test(test_alloc_skip),
		cmocka_unit_test(test_alloc_requested),
		cmocka_unit_test(test_exhaustion),
		cmocka_unit_test(test_parse_format),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_store_concurrent),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
