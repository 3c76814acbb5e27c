/* runtime/cli/cmd_spares.c — `qpod spares fill|list|drain`: vm pods
 * started ahead (template clones kept unique and warm) that `run` and
 * `create` of the same memory, vCPUs, accel and firmware take instead of
 * starting a VM (vm/snapshot/spare.c; docs/TEMPLATES.md, "Spares").  Through the
 * VM driver's spares ops: this file knows no VM internals. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "driver.h"
#include "util/json.h"

static const char usage[] =
	"Usage: qpod spares fill [--count N] [--no-refill] [--memory SIZE] [--vcpus N]\n"
	"                        [--accel auto|kvm|tcg] [--firmware qpod|qboot|seabios|PATH] [--nic]\n"
	"       qpod spares list [--format table|json]\n"
	"       qpod spares drain\n"
	"Spares: vm pods started ahead of the pods that take them, kept in the state\n"
	"root (qpod's global option).  A spare is a clone of the VM template, made\n"
	"unique (its own RNG seed, the clock) and warm (the code a start runs has run\n"
	"once), waiting with its QEMU started.  `run` and `create` of a vm pod (boot\n"
	"auto or template) with the same memory, vCPUs, accel and firmware, no\n"
	"network and no bind mounts of its own take a free spare instead of starting\n"
	"a VM; its rootfs is then bound into the spare.  A spare made with --nic has\n"
	"a network device (on a tap attached to nothing): the pods that take it are\n"
	"those whose spec joins a network namespace by path that qpod mirrors into\n"
	"the guest (the tap moves into that namespace).  Each spare costs its memory\n"
	"while it waits.  Spares need QEMU's jail (root, QPOD_VM_JAIL on).\n"
	"  fill     make spares until --count (default 1) are free; waits until they\n"
	"           are; prints {\"made\":[NAME...]}.  The count and options are kept\n"
	"           as the pool's target, and every take starts a replacement in the\n"
	"           background (--no-refill: make them, keep no target)\n"
	"  list     the spares: name, status (making, free, taken), memory, vCPUs,\n"
	"           accel, the pod that took it, the holder's and QEMU's pids, the\n"
	"           template key; --format json: an array of objects\n"
	"  drain    stop every spare no pod has taken and forget the target; prints\n"
	"           {\"stopped\":N}\n"
	"  --memory SIZE, --vcpus N, --accel, --firmware: as for qpod run (defaults\n"
	"           256M, 1, auto, qpod)\n";

const struct option cli_opts_spares[] = {
	{ "count", required_argument, NULL, 'n' },  { "no-refill", no_argument, NULL, 'R' },
	{ "memory", required_argument, NULL, 'M' }, { "vcpus", required_argument, NULL, 'c' },
	{ "accel", required_argument, NULL, 'A' },  { "firmware", required_argument, NULL, 'f' },
	{ "format", required_argument, NULL, 'F' }, { "help", no_argument, NULL, 'h' },
	{ "nic", no_argument, NULL, 'N' },
	{ 0 }
};

static void put_made(void *ctx, const char *name)
{
	qp_json_str(ctx, name);
}

/* An option getopt knows but subcommand SUB does not take (named as
 * such, not by its argument), or one nobody takes. */
static int not_ours(const char *sub, int c, int li, char **argv, qp_error **err)
{
	if (c != '?' && li >= 0)
		return qp_error_set(err, QP_E_INVALID, 0, "spares %s: --%s is not an option of %s (see qpod spares --help)",
				    sub, cli_opts_spares[li].name, sub);
	return qp_error_set(err, QP_E_INVALID, 0, "spares %s: unknown option \"%s\" (see qpod spares --help)", sub,
			    argv[optind - 1]);
}

static int fill(const struct pod_driver *d, int rootfd, int argc, char **argv, qp_error **err)
{
	struct pod_spec *spec = spec_default();
	yajl_gen g = NULL;
	int64_t count = 1;
	bool keep = true;
	int c, r = -1;

	if (!spec)
		return qp_fail(err, ENOMEM, "spec");
	optind = 1;
	int li = -1;
	while ((c = getopt_long(argc, argv, "h", cli_opts_spares, &li)) != -1) {
		switch (c) {
		case 'h':
			fputs(usage, stdout);
			spec_free(spec);
			return 0;
		case 'n':
			if (cli_parse_i64(optarg, "--count", &count, err) < 0)
				goto out;
			break;
		case 'R':
			keep = false;
			break;
		case 'N':
			spec->opts.spare_nic = true;
			break;
		default: {
			int k = cli_vm_shape_opt(c, optarg, spec, err);
			if (k > 0)
				break;
			if (k == 0)
				not_ours("fill", c, li, argv, err);
			goto out;
		}
		}
	}
	if (optind < argc) {
		qp_error_set(err, QP_E_INVALID, 0, "spares fill: unexpected argument \"%s\"", argv[optind]);
		goto out;
	}
	if (count < 1 || count > 64) {
		qp_error_set(err, QP_E_INVALID, 0, "spares fill: --count must be 1..64, not %lld", (long long)count);
		goto out;
	}
	g = qp_json_gen_new(false);
	yajl_gen_map_open(g);
	qp_json_key(g, "made");
	yajl_gen_array_open(g);
	if (d->spares_fill(rootfd, spec, (int)count, keep, put_made, g, err) == 0) {
		char *text = NULL;
		yajl_gen_array_close(g);
		yajl_gen_map_close(g);
		if (qp_json_gen_finish(g, &text, NULL, err) == 0) {
			printf("%s\n", text);
			r = 0;
		}
		free(text);
		g = NULL;
	}
out:
	if (g)
		yajl_gen_free(g);
	spec_free(spec);
	return r;
}

static void put_row(void *ctx, const struct qp_spare *s)
{
	yajl_gen g = ctx;

	if (!g) {
		printf("%-14s %-7s %6lluM %5d %-5s %-20s %8d %8d %s\n", s->name, s->status, s->mem_mib, s->vcpus,
		       s->accel[0] ? s->accel : "-", s->taken_by[0] ? s->taken_by : "-", (int)s->holder,
		       (int)s->qemu, s->key[0] ? s->key : "-");
		return;
	}
	yajl_gen_map_open(g);
	qp_json_kstr(g, "name", s->name);
	qp_json_kstr(g, "status", s->status);
	qp_json_kint(g, "mem_mb", (long long)s->mem_mib);
	qp_json_kint(g, "vcpus", s->vcpus);
	qp_json_kstr(g, "accel", s->accel);
	qp_json_kstr(g, "taken_by", s->taken_by);
	qp_json_kint(g, "holder_pid", s->holder);
	qp_json_kint(g, "qemu_pid", s->qemu);
	qp_json_kstr(g, "key", s->key);
	yajl_gen_map_close(g);
}

static int list(const struct pod_driver *d, int rootfd, int argc, char **argv, qp_error **err)
{
	bool json = false;
	int c, li = -1;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", cli_opts_spares, &li)) != -1) {
		if (c == 'h') {
			fputs(usage, stdout);
			return 0;
		}
		if (c != 'F')
			return not_ours("list", c, li, argv, err);
		if (cli_parse_format(optarg, &json, err) < 0)
			return -1;
	}
	if (optind < argc)
		return qp_error_set(err, QP_E_INVALID, 0, "spares list: unexpected argument \"%s\"", argv[optind]);
	if (!json) {
		printf("%-14s %-7s %7s %5s %-5s %-20s %8s %8s %s\n", "NAME", "STATUS", "MEMORY", "VCPUS", "ACCEL",
		       "TAKEN_BY", "HOLDER", "QEMU", "KEY");
		return d->spares_list(rootfd, put_row, NULL, err);
	}
	yajl_gen g = qp_json_gen_new(false);
	char *text = NULL;
	yajl_gen_array_open(g);
	if (d->spares_list(rootfd, put_row, g, err) < 0) {
		yajl_gen_free(g);
		return -1;
	}
	yajl_gen_array_close(g);
	if (qp_json_gen_finish(g, &text, NULL, err) < 0)
		return -1;
	printf("%s\n", text);
	free(text);
	return 0;
}

int cmd_spares(struct qp_cli *cli, int argc, char **argv, qp_error **err)
{
	const struct pod_driver *d = driver_by_name("vm", err);
	const char *sub = argc > 1 ? argv[1] : NULL;
	int rootfd, n = 0;

	if (!d)
		return qp_error_prefix(err, "spares");
	if (!sub)
		return qp_error_set(err, QP_E_INVALID, 0, "spares: missing fill, list or drain (see qpod spares --help)");
	if (!strcmp(sub, "--help") || !strcmp(sub, "-h") || !strcmp(sub, "help")) {
		fputs(usage, stdout);
		return 0;
	}
	if (strcmp(sub, "fill") && strcmp(sub, "list") && strcmp(sub, "drain"))
		return qp_error_set(err, QP_E_INVALID, 0, "spares: unknown subcommand \"%s\" (fill, list or drain)", sub);
	if ((rootfd = cli_root(cli, err)) < 0)
		return -1;
	if (!strcmp(sub, "fill"))
		return fill(d, rootfd, argc - 1, argv + 1, err);
	if (!strcmp(sub, "list"))
		return list(d, rootfd, argc - 1, argv + 1, err);
	if (argc > 2)
		return qp_error_set(err, QP_E_INVALID, 0, "spares drain: unexpected argument \"%s\"", argv[2]);
	if (d->spares_drain(rootfd, &n, err) < 0)
		return -1;
	printf("{\"stopped\":%d}\n", n);
	return 0;
}
