/* runtime/cli/cmd_density.c — `qpod density [OPTIONS]` (bench/density.h):
 * options, the defaults (1 vCPU, 512M, reserve max(10% of RAM, 1G)), the
 * stop reason on stderr, the result in the chosen format. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench.h"
#include "bench/density.h"
#include "cli/cli.h"
#include "report/report.h"
#include "util/cleanup.h"
#include "driver.h"

#define DEFAULT_IMAGE "/var/cache/qpod/rootfs-busybox"

static const char usage[] =
	"Usage: qpod density [OPTIONS]\n"
	"Start idle pods (sleep) one after another until one of: a start fails for\n"
	"lack of memory (enomem), the network is full (tap-limit, bridge-full,\n"
	"subnet-full), the next pod would take the host's MemAvailable below the\n"
	"reserve (reserve), a pod too slow to start (start-timeout: the host's CPU is\n"
	"saturated), --max (max), Ctrl-C (interrupted) or another error (error).\n"
	"Then measure every pod (memory, and its CPU use idle over 3 s), tear them all\n"
	"down in parallel and report.\n"
	"  --mode vm|container   (default vm)\n"
	"  --vcpus N             vCPUs per vm pod (default 1)\n"
	"  --accel auto|kvm|tcg  accelerator of the vm pods (default auto)\n"
	"  --boot auto|template|cold  vm pods as clones of a template, or booted\n"
	"                       (default auto: clones; see qpod template --help)\n"
	"  --memory SIZE         per pod: guest RAM or the container's limit (default 512M)\n"
	"  --image ROOTFS        (default " DEFAULT_IMAGE ")\n"
	"  --max N               stop after N pods (default: no limit)\n"
	"  --reserve SIZE        host MemAvailable that must remain (default 10% of RAM,\n"
	"                        at least 1G)\n"
	"  --parallel N          starts in flight at once (default 1, at most 64)\n"
	"  --net none|bridge     the pods' network (default none); --subnet, --bridge as\n"
	"                        for qpod run\n"
	"  --keep                leave the pods running (qpod list shows them)\n"
	"  --ksm                 kernel samepage merging on for the run (QEMU marks guest\n"
	"                        RAM mergeable); waits for two full scans before the\n"
	"                        memory figures and reports ksm_saved_mb; the host's KSM\n"
	"                        settings are restored afterwards\n"
	"  --baseline            then the same number of idle pods under runc, crun and\n"
	"                        gVisor's runsc, one runtime at a time (a peer that is\n"
	"                        missing or refuses this host is a row with its reason)\n"
	"  --format table|markdown|csv|json  (default table); --output FILE\n"
	"The stop reason goes to stderr as \"qpod: density: stopped: REASON: detail\".\n";

static int size_arg(const char *arg, const char *what, int64_t *out, qp_error **err)
{
	if (cli_parse_size(arg, what, out, err) < 0)
		return -1;
	if (*out <= 0)
		return qp_error_set(err, QP_E_INVALID, 0, "%s must be more than 0", what);
	return 0;
}

const struct option cli_opts_density[] = {
	{ "mode", required_argument, NULL, 'm' },    { "vcpus", required_argument, NULL, 'c' },
	{ "memory", required_argument, NULL, 'M' },  { "image", required_argument, NULL, 'i' },
	{ "max", required_argument, NULL, 'x' },     { "reserve", required_argument, NULL, 'r' },
	{ "parallel", required_argument, NULL, 'p' }, { "keep", no_argument, NULL, 'k' },
	{ "net", required_argument, NULL, 'n' },     { "subnet", required_argument, NULL, 's' },
	{ "bridge", required_argument, NULL, 'b' },  { "format", required_argument, NULL, 'f' },
	{ "output", required_argument, NULL, 'o' },  { "help", no_argument, NULL, 'h' },
	{ "ksm", no_argument, NULL, 'K' },	     { "accel", required_argument, NULL, 'A' },
	{ "boot", required_argument, NULL, 'B' },   { "baseline", no_argument, NULL, 'L' },
	{ 0 },
};

int cmd_density(struct qp_cli *cli, int argc, char **argv, qp_error **err)
{
	const struct option *opts = cli_opts_density;
	static const char *const formats[] = { "table", "markdown", "csv", "json", NULL };
	struct qp_density_opts o = { .vm = true, .memory = 512LL << 20, .parallel = 1, .net = "none" };
	struct qp_bench_report *r = NULL;
	const char *format = "table", *output = NULL, *image_arg = DEFAULT_IMAGE;
	_cleanup_free_ char *image = NULL;
	int64_t ram = (int64_t)sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGESIZE);
	bool reserve_set = false, baseline = false;
	const char *accel = "none";
	char detail[1200], *end;
	sigset_t old;
	qp_error *peer_err = NULL;
	int c, ret = -1;
	long v;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			fputs(usage, stdout);
			exit(0);
		case 'A':
			if (cli_set_accel(optarg, "density", err) < 0)
				return -1;
			break;
		case 'B':
			o.boot = optarg; /* checked with the pods' spec, before any starts */
			break;
		case 'm':
			if (strcmp(optarg, "vm") && strcmp(optarg, "container"))
				return qp_error_set(err, QP_E_INVALID, 0, "density: --mode must be vm or container, not \"%s\"", optarg);
			o.vm = !strcmp(optarg, "vm");
			break;
		case 'c':
		case 'x':
		case 'p':
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (!*optarg || *end || errno || v < 1 || v > (c == 'c' ? 255 : c == 'p' ? 64 : 1000000))
				return qp_error_set(err, QP_E_INVALID, 0, "density: --%s must be 1..%d, not \"%s\"",
						    c == 'c' ? "vcpus" : c == 'p' ? "parallel" : "max",
						    c == 'c' ? 255 : c == 'p' ? 64 : 1000000, optarg);
			if (c == 'c')
				o.vcpus = (int)v;
			else if (c == 'p')
				o.parallel = (int)v;
			else
				o.max = v;
			break;
		case 'M':
			if (size_arg(optarg, "--memory", &o.memory, err) < 0)
				return qp_error_prefix(err, "density");
			if (o.memory < (16 << 20))
				return qp_error_set(err, QP_E_INVALID, 0, "density: --memory must be at least 16M");
			break;
		case 'r':
			if (size_arg(optarg, "--reserve", &o.reserve, err) < 0)
				return qp_error_prefix(err, "density");
			reserve_set = true;
			break;
		case 'i': image_arg = optarg; break;
		case 'k': o.keep = true; break;
		case 'K': o.ksm = true; break;
		case 'L': baseline = true; break;
		case 'n':
			if (strcmp(optarg, "none") && strcmp(optarg, "bridge"))
				return qp_error_set(err, QP_E_INVALID, 0, "density: --net must be none or bridge, not \"%s\"", optarg);
			o.net = optarg;
			break;
		case 's': o.subnet = optarg; break;
		case 'b': o.bridge = optarg; break;
		case 'f': format = optarg; break;
		case 'o': output = optarg; break;
		default:
			return qp_error_set(err, QP_E_INVALID, 0, "density: unknown option \"%s\" (see qpod density --help)",
					    argv[optind - 1]);
		}
	}
	if (optind != argc)
		return qp_error_set(err, QP_E_INVALID, 0, "density: unexpected argument \"%s\"", argv[optind]);
	if (!qp_bench_one_of(format, formats))
		return qp_error_set(err, QP_E_INVALID, 0, "density: --format must be table, markdown, csv or json");
	if ((o.subnet || o.bridge) && strcmp(o.net, "bridge"))
		return qp_error_set(err, QP_E_INVALID, 0, "density: --subnet and --bridge need --net bridge");
	if (!reserve_set)
		o.reserve = qp_density_default_reserve(ram);
	if (o.reserve >= ram)
		return qp_error_set(err, QP_E_INVALID, 0, "density: --reserve %lld MB is not less than this host's RAM (%lld MB)",
				    (long long)(o.reserve >> 20), (long long)(ram >> 20));
	if (cli_resolve_rootfs(image_arg, &image, err) < 0)
		return qp_error_prefix(err, "density: --image");
	o.image = image;
	if (o.vm && driver_default_accel("vm", &accel, err) < 0)
		return qp_error_prefix(err, "density");
	if (cli_root(cli, err) < 0)
		return qp_error_prefix(err, "density");
	o.rootfd = cli->rootfd;
	o.root = cli->root;
	o.progress = isatty(2);

	if (qp_bench_report_new("density", o.vm ? "vm" : "container", o.vm ? accel : "none", &r,
				err) < 0 ||
	    qp_bench_host_describe(&r->host, err) < 0 ||
	    qp_bench_param_num(r, "memory_mb", (double)(o.memory >> 20), err) < 0 ||
	    qp_bench_param_num(r, "vcpus", o.vcpus ? o.vcpus : 1, err) < 0 ||
	    qp_bench_param_num(r, "max", (double)o.max, err) < 0 ||
	    qp_bench_param_num(r, "reserve_mb", (double)(o.reserve >> 20), err) < 0 ||
	    qp_bench_param_num(r, "parallel", o.parallel, err) < 0 ||
	    qp_bench_param_str(r, "net", o.net, err) < 0 ||
	    (o.vm && qp_bench_param_str(r, "boot", o.boot ? o.boot : "auto", err) < 0) || qp_bench_param_str(r, "image", o.image, err) < 0 ||
	    qp_bench_param_str(r, "ksm", o.ksm ? "on" : "off", err) < 0 ||
	    qp_bench_param_str(r, "baseline", baseline ? "runc,crun,runsc" : "none", err) < 0)
		goto out;
	/* Ctrl-C and SIGTERM end the run between starts; teardown follows */
	qp_bench_hold_signals(&old);
	ret = qp_density_run(&o, r, detail, sizeof(detail), err);
	/* the peers start after qpod's pods are gone (unless --keep), as many;
	 * if they stop (Ctrl-C), what was measured is still written */
	if (ret == 0 && baseline && r->count > 0 && strcmp(r->stop_reason, QP_DENSITY_INTERRUPTED) &&
	    qp_density_peers(&o, r->count, r, &peer_err) < 0)
		r->partial = true;
	qp_bench_release_signals(&old);
	if (ret == 0) {
		fprintf(stderr, "qpod: density: stopped: %s%s%s\n", r->stop_reason, detail[0] ? ": " : "", detail);
		if ((ret = qp_report_write_one(r, format, output, "qpod density", err)) < 0)
			qp_error_prefix(err, "density");
		/* a run that ended in an unexplained error still says so in the exit status */
		if (ret == 0 && !strcmp(r->stop_reason, QP_DENSITY_ERROR))
			ret = qp_error_set(err, QP_E_GENERIC, 0, "density: a start failed: %s", detail);
		if (ret == 0 && peer_err) {
			*err = peer_err;
			peer_err = NULL;
			ret = qp_error_prefix(err, "density: --baseline");
		}
	}
	qp_error_free(&peer_err);
out:
	qp_bench_report_free(r);
	return ret;
}
