/* runtime/cli/cmd_template.c — `qpod template list|create|rm`: the VM
 * templates that vm pods with --boot auto|template start as clones of
 * (vm/snapshot/template.c; what a clone shares with its template: docs/TEMPLATES.md).
 * Through the VM driver's template ops: this file knows no VM internals. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "driver.h"
#include "util/json.h"

static const char usage[] =
	"Usage: qpod template list\n"
	"       qpod template create [--memory SIZE] [--vcpus N] [--accel auto|kvm|tcg]\n"
	"                            [--firmware qpod|qboot|seabios|PATH]\n"
	"       qpod template rm KEY...\n"
	"       qpod template prune\n"
	"VM templates: a microVM booted once up to its init's hello and saved (its RAM\n"
	"and device state); vm pods (run's boot option: auto, the default, or\n"
	"template) start as copy-on-write clones of the template of their kernel,\n"
	"firmware, memory, vCPUs and accel instead of booting a kernel.  Made on\n"
	"first use; kept in\n"
	"$QPOD_CACHE/templates (default /var/cache/qpod/templates).\n"
	"  list     one JSON object per line: key, mem_mb, meta (what it boots),\n"
	"           stale (one of its files changed: no pod clones it again)\n"
	"  create   make the template that pods with these options clone, now;\n"
	"           prints {\"key\":...,\"made\":true|false} (false: it existed)\n"
	"  rm KEY   remove templates (running clones keep their memory)\n"
	"  prune    remove the stale templates and what dead makers left; prints\n"
	"           {\"removed\":[KEY...]} (making a template prunes too)\n"
	"  --memory SIZE, --vcpus N, --accel, --firmware: as for qpod run (defaults\n"
	"           256M, 1, auto, qpod)\n";

const struct option cli_opts_template[] = {
	{ "memory", required_argument, NULL, 'M' }, { "vcpus", required_argument, NULL, 'c' },
	{ "accel", required_argument, NULL, 'A' },  { "firmware", required_argument, NULL, 'f' },
	{ "help", no_argument, NULL, 'h' },	    { 0 }
};

static void put_one(void *ctx, const char *key, const char *meta, long long mem_bytes, bool stale)
{
	yajl_gen g = qp_json_gen_new(false);
	char *text = NULL;

	(void)ctx;
	yajl_gen_map_open(g);
	qp_json_kstr(g, "key", key);
	qp_json_kint(g, "mem_mb", mem_bytes < 0 ? -1 : mem_bytes >> 20);
	qp_json_kstr(g, "meta", meta);
	qp_json_kbool(g, "stale", stale);
	yajl_gen_map_close(g);
	if (qp_json_gen_finish(g, &text, NULL, NULL) == 0)
		printf("%s\n", text);
	free(text);
}

static void put_removed(void *ctx, const char *key)
{
	qp_json_str(ctx, key);
}

static int create(const struct pod_driver *d, int argc, char **argv, qp_error **err)
{
	struct pod_spec *spec = spec_default();
	char key[17];
	bool made = false;
	int c, r = -1;

	if (!spec)
		return qp_fail(err, ENOMEM, "spec");
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", cli_opts_template, NULL)) != -1) {
		switch (c) {
		case 'h':
			fputs(usage, stdout);
			spec_free(spec);
			return 0;
		default: {
			int k = cli_vm_shape_opt(c, optarg, spec, err);
			if (k > 0)
				break;
			if (k == 0)
				qp_error_set(err, QP_E_INVALID, 0, "unknown option \"%s\" (see qpod template --help)",
					     argv[optind - 1]);
			goto out;
		}
		}
	}
	if (optind < argc) {
		qp_error_set(err, QP_E_INVALID, 0, "unexpected argument \"%s\"", argv[optind]);
		goto out;
	}
	if (d->template_create(spec, key, &made, err) == 0) {
		printf("{\"key\":\"%s\",\"made\":%s}\n", key, made ? "true" : "false");
		r = 0;
	}
out:
	spec_free(spec);
	return r;
}

int cmd_template(struct qp_cli *cli, int argc, char **argv, qp_error **err)
{
	const struct pod_driver *d = driver_by_name("vm", err);
	const char *sub = argc > 1 ? argv[1] : NULL;
	int r = 0;

	(void)cli;
	if (!d)
		return qp_error_prefix(err, "template");
	if (!sub)
		return qp_error_set(err, QP_E_INVALID, 0, "template: missing list, create or rm (see qpod template --help)");
	if (!strcmp(sub, "--help") || !strcmp(sub, "-h") || !strcmp(sub, "help")) {
		fputs(usage, stdout);
		return 0;
	}
	if (!strcmp(sub, "list")) {
		if (argc > 2)
			return qp_error_set(err, QP_E_INVALID, 0, "template list: unexpected argument \"%s\"", argv[2]);
		r = d->template_list(put_one, NULL, err);
	} else if (!strcmp(sub, "create"))
		r = create(d, argc - 1, argv + 1, err);
	else if (!strcmp(sub, "rm")) {
		if (argc < 3)
			return qp_error_set(err, QP_E_INVALID, 0, "template rm: missing KEY (qpod template list)");
		for (int i = 2; i < argc && r == 0; i++)
			r = d->template_remove(argv[i], err);
	} else if (!strcmp(sub, "prune")) {
		if (argc > 2)
			return qp_error_set(err, QP_E_INVALID, 0, "template prune: unexpected argument \"%s\"", argv[2]);
		yajl_gen g = qp_json_gen_new(false);
		char *text = NULL;
		yajl_gen_map_open(g);
		qp_json_key(g, "removed");
		yajl_gen_array_open(g);
		r = d->template_prune(put_removed, g, err);
		yajl_gen_array_close(g);
		yajl_gen_map_close(g);
		if (r < 0)
			yajl_gen_free(g); /* finish frees it otherwise */
		else if ((r = qp_json_gen_finish(g, &text, NULL, err)) == 0)
			printf("%s\n", text);
		free(text);
	} else
		return qp_error_set(err, QP_E_INVALID, 0, "template: unknown subcommand \"%s\" (list, create, rm, prune)",
				    sub);
	return r < 0 ? qp_error_prefix(err, "template %s", sub) : 0;
}
