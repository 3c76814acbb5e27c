/* runtime/cli/cmd_bench.c — `qpod bench start|replace|memory|workload|consolidate|cri [OPTIONS]`:
 * run a scenario (runtime/bench/) against a private state root, then write
 * the result (result/result.h) as a table, markdown, CSV or the stable JSON
 * format.  SIGINT/SIGTERM stop it between runs: every pod is torn down and
 * what was measured is written with "partial": true. */
#include <errno.h>
#include <ftw.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
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

#define RUNS_MAX 10000
#define DEFAULT_IMAGE "/var/cache/qpod/rootfs-busybox"

static const char usage[] =
	"Usage: qpod bench start|replace|memory|workload|consolidate|cri [OPTIONS]\n"
	"  start    start latency (request to workload exec'd, from the run's timeline)\n"
	"           and run-to-exit wall time of `qpod run IMAGE /bin/true` (pod deleted),\n"
	"           with per-phase averages\n"
	"  replace  N replaces of a running pod: warm (vm: the VM stays) and cold\n"
	"  memory   vm: minimum guest memory (bisection), then QEMU RSS/PSS/VSZ and the\n"
	"           guest's total/used/free over N idle pods at that size and at --memory;\n"
	"           container: the cgroup's memory usage of N idle pods; with --baseline\n"
	"           also the host PSS and MemAvailable drop per idle pod under qpod, runc,\n"
	"           crun and runsc\n"
	"  workload the static benchmark tools (tools/bench) on the host, in a container\n"
	"           and in a microVM: --targets host,container,vm (default; also\n"
	"           runc,crun,runsc, which --baseline adds: every test, a network\n"
	"           test's server pod in a namespace the bench makes with a veth whose\n"
	"           peer is the client's; and vm-netns: the VM pod on the CNI path, in\n"
	"           such a namespace, mirrored into the guest; network tests only),\n"
	"           --tests ctxsw,ctxsw8,fork,execve,syscall,int,fp,stream,tcp_rr,tcp_stream,\n"
	"           tcp_stream_out,\n"
	"           rr_idle,rr_busy_host,rr_busy_pod,http,file_write,file_read,file_copy,\n"
	"           file_create,vol_write,vol_read,vol_copy,vol_create or all (default), --duration SECONDS per run (default 2); --runs default 3,\n"
	"           vm --memory default 2G. The network tests run in a network namespace\n"
	"           of the bench's own (server in the pod, client on the host); the\n"
	"           links' MTU, qdisc and offloads are params net.TARGET.*.\n"
	"  consolidate  N = 1..--pods pods (default 4) at once, container then vm, each\n"
	"           serving TCP_RR to a host client while running intbench and stream\n"
	"           for --duration seconds (default 5): aggregate throughput and the\n"
	"           worst pod's latency per N; density's memory reserve (10% of RAM,\n"
	"           at least 1G) stops it early; vm --memory default 512M. No --runs,\n"
	"           --warmup or --baseline (one measurement per N).\n"
	"  cri      pod start as a kubelet sees it, through containerd's CRI, per runtime\n"
	"           handler side by side (runc first, the ratios' base): RunPodSandbox\n"
	"           called -> first container RUNNING (phases: the three calls), stop\n"
	"           (StopPodSandbox + RemovePodSandbox), the runtime's own share of the\n"
	"           start (its commands' wall time, from the kernel's process events)\n"
	"           and the rest, the host's MemAvailable drop per running pod and\n"
	"           its processes' PSS (pods of 1, 2 and 4 containers, 3 of each, or\n"
	"           --runs if fewer). A\n"
	"           private containerd (handlers runc, qpod, qpod-vm; CNI bridge in a\n"
	"           network namespace of its own; --image imported) unless --cri-socket\n"
	"           is given. Options:\n"
	"           --cri-socket PATH, --handlers a,b (default: every one configured),\n"
	"           --parallel N (N pods at once per round: per-pod start, p90, wall;\n"
	"           --runs default 1 then), --spares N (the private containerd's\n"
	"           qpod-vm handler keeps N spares, refilled as sandboxes take them;\n"
	"           default none). Needs python3-grpcio (tools/cri/).\n"
	"Options:\n"
	"  --mode container|vm|both  (default: start both, replace and memory vm)\n"
	"  --runs N         measured runs (default 20; memory: pods per size)\n"
	"  --warmup N       unmeasured runs first (default 1; memory: none; not for workload)\n"
	"  --image ROOTFS   the pods' rootfs (default " DEFAULT_IMAGE ")\n"
	"  --memory SIZE    pod memory (vm: guest RAM; memory: the second size, default 512M)\n"
	"  --vcpus N        vm pods' vCPUs\n"
	"  --accel auto|kvm|tcg  vm pods' accelerator (default auto: KVM if a probe\n"
	"                   boot under it works)\n"
	"  --baseline       start: runc, crun and gVisor's runsc on the same bundle\n"
	"                   (containers; one missing or refused here is a row with its\n"
	"                   reason; runsc: its default platform, network none); cold\n"
	"                   boots with Debian's qboot.rom and SeaBIOS beside qpod's\n"
	"                   firmware, and the traditional VM (vm), interleaved in the\n"
	"                   same rounds; workload and memory: the same peers\n"
	"  --libvirt-uri URI  start, vm: also the cold boot through the libvirt\n"
	"                   backend at URI (row qpod-vm-libvirt beside qpod-vm-cold),\n"
	"                   interleaved in the same rounds\n"
	"  --format table|markdown|csv|json   (default table)\n"
	"  --output FILE    write there instead of stdout\n"
	"A progress line goes to stderr when it is a terminal.\n";

static const char *const formats[] = { "table", "markdown", "csv", "json", NULL };

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

static int parse_int(const char *s, const char *what, int lo, int hi, int *out, qp_error **err)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (!*s || *end || errno || v < lo || v > hi)
		return qp_error_set(err, QP_E_INVALID, 0, "%s must be %d..%d, not \"%s\"", what, lo, hi, s);
	*out = (int)v;
	return 0;
}

/* "a,b,c" -> out[] (at most max), each one of `allowed`, no repeats. */
static int split_list(const char *arg, const char *const *allowed, const char **out, int max,
		      const char *what, qp_error **err)
{
	const char *p = arg;
	int n = 0;

	while (*p) {
		size_t len = strcspn(p, ",");
		int found = -1;
		for (int i = 0; allowed[i]; i++)
			if (strlen(allowed[i]) == len && !strncmp(allowed[i], p, len))
				found = i;
		if (found < 0)
			return qp_error_set(err, QP_E_INVALID, 0, "%s: unknown \"%.*s\"", what, (int)len, p);
		for (int i = 0; i < n; i++)
			if (out[i] == allowed[found])
				return qp_error_set(err, QP_E_INVALID, 0, "%s: \"%s\" twice", what, allowed[found]);
		if (n >= max)
			return qp_error_set(err, QP_E_INVALID, 0, "%s: too many entries", what);
		out[n++] = allowed[found];
		p += len;
		if (*p == ',' && *++p == '\0')
			return qp_error_set(err, QP_E_INVALID, 0, "%s: empty entry", what);
	}
	if (!n)
		return qp_error_set(err, QP_E_INVALID, 0, "%s: empty", what);
	out[n] = NULL;
	return 0;
}

/* --handlers: a comma list of runtime handler names (containerd's TOML
 * keys); whether each is configured, the CRI endpoint says */
static int check_handlers(const char *arg, qp_error **err)
{
	const char *p = arg;

	if (!*arg)
		return qp_error_set(err, QP_E_INVALID, 0, "--handlers: empty");
	for (; *p; p++)
		if (!(*p == ',' || *p == '-' || *p == '_' || *p == '.' || (*p >= 'a' && *p <= 'z') ||
		      (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')))
			return qp_error_set(err, QP_E_INVALID, 0, "--handlers: \"%s\" is not a comma list of handler names", arg);
	if (*arg == ',' || p[-1] == ',' || strstr(arg, ",,"))
		return qp_error_set(err, QP_E_INVALID, 0, "--handlers: empty entry in \"%s\"", arg);
	return 0;
}

const struct option cli_opts_bench[] = {
	{ "mode", required_argument, NULL, 'm' },   { "runs", required_argument, NULL, 'n' },
	{ "warmup", required_argument, NULL, 'w' }, { "image", required_argument, NULL, 'i' },
	{ "memory", required_argument, NULL, 'M' }, { "vcpus", required_argument, NULL, 'c' },
	{ "baseline", no_argument, NULL, 'b' },     { "format", required_argument, NULL, 'f' },
	{ "output", required_argument, NULL, 'o' }, { "help", no_argument, NULL, 'h' },
	{ "targets", required_argument, NULL, 'T' }, { "tests", required_argument, NULL, 't' },
	{ "duration", required_argument, NULL, 'd' }, { "accel", required_argument, NULL, 'A' },
	{ "pods", required_argument, NULL, 'P' },
	{ "libvirt-uri", required_argument, NULL, 'L' },
	{ "cri-socket", required_argument, NULL, 'S' }, { "handlers", required_argument, NULL, 'H' },
	{ "parallel", required_argument, NULL, 'p' }, { "spares", required_argument, NULL, 's' },
	{ 0 },
};

int cmd_bench(struct qp_cli *cli, int argc, char **argv, qp_error **err)
{
	const struct option *opts = cli_opts_bench;
	struct qp_bench_opts o = { .runs = 20, .warmup = 1 };
	struct qp_bench_report *r = NULL;
	const char *mode = NULL, *format = "table", *output = NULL, *scenario;
	_cleanup_free_ char *image = NULL;
	char exe[PATH_MAX], exe_dir[PATH_MAX], root[] = "/tmp/qpod-bench.XXXXXX";
	bool warmup_set = false, runs_set = false, duration_set = false, baseline_set = false;
	struct qp_consolidate_opts cons = { .pods = 4, .duration = 5 };
	int pods_set = 0;
	const char *accel = "none";
	const char *targets_arg = "host,container,vm", *tests_arg = NULL;
	const char *targets[8] = { NULL }, *tests[32] = { NULL };
	struct qp_workload_opts w = { .targets = targets, .tests = tests, .duration = 2 };
	struct qp_cri_opts cri = { 0 };
	bool cri_opts = false, memory_set = false, vcpus_set = false;
	sigset_t old;
	int c, ret = -1;
	int64_t mem;

	(void)cli;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			fputs(usage, stdout);
			exit(0);
		case 'm': mode = optarg; break;
		case 'A':
			if (cli_set_accel(optarg, "bench", err) < 0)
				return -1;
			break;
		case 'n':
			if (parse_int(optarg, "--runs", 1, RUNS_MAX, &o.runs, err) < 0)
				return -1;
			runs_set = true;
			break;
		case 'T': targets_arg = optarg; break;
		case 't': tests_arg = optarg; break;
		case 'd': {
			char *end;
			w.duration = strtod(optarg, &end);
			if (!*optarg || *end || !(w.duration > 0) || w.duration > 3600)
				return qp_error_set(err, QP_E_INVALID, 0, "--duration must be a number of seconds in (0, 3600], not \"%s\"",
						    optarg);
			cons.duration = w.duration;
			duration_set = true;
			break;
		}
		case 'P': {
			if (parse_int(optarg, "--pods", 1, 64, &cons.pods, err) < 0)
				return -1;
			pods_set = 1;
			break;
		}
		case 'w':
			if (parse_int(optarg, "--warmup", 0, RUNS_MAX, &o.warmup, err) < 0)
				return -1;
			warmup_set = true;
			break;
		case 'i': o.image = optarg; break;
		case 'M':
			if (cli_parse_size(optarg, "--memory", &mem, err) < 0)
				return -1;
			if (mem < (16 << 20))
				return qp_error_set(err, QP_E_INVALID, 0, "--memory must be at least 16M");
			if ((double)mem > (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE))
				return qp_error_set(err, QP_E_INVALID, 0,
						    "--memory %s is more than this host's RAM", optarg);
			o.memory = optarg;
			o.memory_bytes = mem;
			memory_set = true;
			break;
		case 'c':
			if (parse_int(optarg, "--vcpus", 1, 255, &o.vcpus, err) < 0)
				return -1;
			vcpus_set = true;
			break;
		case 'b': o.baseline = baseline_set = true; break;
		case 'L': o.libvirt_uri = optarg; break;
		case 'S': cri.socket = optarg; cri_opts = true; break;
		case 'H':
			if (check_handlers(optarg, err) < 0)
				return -1;
			cri.handlers = optarg;
			cri_opts = true;
			break;
		case 'p':
			if (parse_int(optarg, "--parallel", 1, 100, &cri.parallel, err) < 0)
				return -1;
			cri_opts = true;
			break;
		case 's':
			if (parse_int(optarg, "--spares", 1, 32, &cri.spares, err) < 0)
				return -1;
			cri_opts = true;
			break;
		case 'f': format = optarg; break;
		case 'o': output = optarg; break;
		default:
			return qp_error_set(err, QP_E_INVALID, 0, "bench: unknown option \"%s\" (see qpod bench --help)",
					    argv[optind - 1]);
		}
	}
	if (optind != argc - 1)
		return qp_error_set(err, QP_E_INVALID, 0,
				    "bench: give one of start, replace, memory, workload, consolidate, cri (see qpod bench --help)");
	scenario = argv[optind];
	if (strcmp(scenario, "start") && strcmp(scenario, "replace") && strcmp(scenario, "memory") &&
	    strcmp(scenario, "workload") && strcmp(scenario, "consolidate") && strcmp(scenario, "cri"))
		return qp_error_set(err, QP_E_INVALID, 0,
				    "bench: unknown scenario \"%s\" (start, replace, memory, workload, consolidate, cri)",
				    scenario);
	bool consolidate = !strcmp(scenario, "consolidate"), is_cri = !strcmp(scenario, "cri");
	if (cri_opts && !is_cri)
		return qp_error_set(err, QP_E_INVALID, 0, "bench: --cri-socket, --handlers, --parallel and --spares are for bench cri");
	if (is_cri && (mode || baseline_set || memory_set || vcpus_set || o.libvirt_uri))
		return qp_error_set(err, QP_E_INVALID, 0,
				    "bench cri: no --mode, --baseline, --memory, --vcpus or --libvirt-uri (the handlers decide the pods)");
	if (is_cri) {
		mode = "both";
		if (cri.parallel && !runs_set)
			o.runs = 1;
		/* the memory step: 3 pods of each shape (fewer in a short serial run) */
		cri.mem_pods = cri.parallel || o.runs >= 3 ? 3 : o.runs;
	}
	if (duration_set && !consolidate && strcmp(scenario, "workload"))
		return qp_error_set(err, QP_E_INVALID, 0, "bench: --duration is for bench workload and consolidate");
	if (pods_set && !consolidate)
		return qp_error_set(err, QP_E_INVALID, 0, "bench: --pods is for bench consolidate");
	if (!strcmp(scenario, "workload") && warmup_set)
		return qp_error_set(err, QP_E_INVALID, 0, "bench workload: no --warmup (every run is measured)");
	if (consolidate && (runs_set || warmup_set || baseline_set))
		return qp_error_set(err, QP_E_INVALID, 0,
				    "bench consolidate: no --runs, --warmup or --baseline (one measurement per number of pods)");
	if (!strcmp(scenario, "workload")) {
		static const char *const all_targets[] = { "host", "runc", "crun", "runsc", "container", "vm", "vm-netns",
							   NULL };
		/* --baseline: the peers after the host, unless --targets names them */
		if (baseline_set && !strcmp(targets_arg, "host,container,vm"))
			targets_arg = "host,runc,crun,runsc,container,vm";
		if (split_list(targets_arg, all_targets, targets, 7, "--targets", err) < 0)
			return -1;
		if (!tests_arg || !strcmp(tests_arg, "all")) {
			for (int i = 0; qp_workload_tests[i] && i < 31; i++)
				tests[i] = qp_workload_tests[i];
		} else if (split_list(tests_arg, qp_workload_tests, tests, 31, "--tests", err) < 0) {
			return -1;
		}
		o.container = o.vm = false;
		for (int i = 0; targets[i]; i++) {
			o.container |= !strcmp(targets[i], "container");
			o.vm |= !strcmp(targets[i], "vm") || !strcmp(targets[i], "vm-netns");
		}
		mode = "both";
		if (!runs_set)
			o.runs = 3;
	} else if (tests_arg || strcmp(targets_arg, "host,container,vm")) {
		return qp_error_set(err, QP_E_INVALID, 0, "bench: --targets and --tests are for bench workload");
	}
	if (o.libvirt_uri && strcmp(scenario, "start"))
		return qp_error_set(err, QP_E_INVALID, 0, "bench: --libvirt-uri is for bench start");
	if (!qp_bench_one_of(format, formats))
		return qp_error_set(err, QP_E_INVALID, 0, "bench: --format must be table, markdown, csv or json, not \"%s\"",
				    format);
	if (!mode)
		mode = strcmp(scenario, "start") && !consolidate ? "vm" : "both";
	if (strcmp(mode, "container") && strcmp(mode, "vm") && strcmp(mode, "both"))
		return qp_error_set(err, QP_E_INVALID, 0, "bench: --mode must be container, vm or both, not \"%s\"", mode);
	if (strcmp(scenario, "workload")) {
		o.container = strcmp(mode, "vm") != 0;
		o.vm = strcmp(mode, "container") != 0;
	}
	/* --baseline means something to start, workload, and container memory */
	if (baseline_set && (!strcmp(scenario, "replace") || (!strcmp(scenario, "memory") && !o.container)))
		return qp_error_set(err, QP_E_INVALID, 0,
				    "bench %s: --baseline is for start, workload and memory --mode container or both "
				    "(the peers run containers)", scenario);
	if (!strcmp(scenario, "memory") && !warmup_set)
		o.warmup = 0;
	if (!strcmp(scenario, "workload"))
		o.warmup = 0;
	if (consolidate) {
		o.runs = 1;
		o.warmup = 0;
		cons.reserve = qp_density_default_reserve((int64_t)sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGESIZE));
	}
	if (cli_resolve_rootfs(o.image ? o.image : DEFAULT_IMAGE, &image, err) < 0)
		return qp_error_prefix(err, "bench: --image");
	o.image = image;
	if (o.vm && driver_default_accel("vm", &accel, err) < 0)
		return qp_error_prefix(err, "bench");
	if (!realpath("/proc/self/exe", exe))
		return qp_fail(err, errno, "bench: own path");
	snprintf(exe_dir, sizeof(exe_dir), "%s", exe);
	o.qpod = exe;
	o.exe_dir = dirname(exe_dir);
	o.progress = isatty(2);
	if (!mkdtemp(root))
		return qp_fail(err, errno, "bench: mkdtemp");
	o.root = root;

	if (qp_bench_report_new(scenario, mode, o.vm ? accel : "none", &r, err) < 0 ||
	    qp_bench_host_describe(&r->host, err) < 0 || qp_bench_param_num(r, "runs", o.runs, err) < 0 ||
	    qp_bench_param_num(r, "warmup", o.warmup, err) < 0 ||
	    qp_bench_param_str(r, "image", o.image, err) < 0 ||
	    qp_bench_param_str(r, "memory", o.memory ? o.memory : "default", err) < 0 ||
	    qp_bench_param_num(r, "vcpus", o.vcpus > 0 ? o.vcpus : 1, err) < 0 ||
	    qp_bench_param_str(r, "baseline", o.baseline ? "yes" : "no", err) < 0 ||
	    (o.libvirt_uri && qp_bench_param_str(r, "libvirt_uri", o.libvirt_uri, err) < 0))
		goto out;
	if ((consolidate || !strcmp(scenario, "workload")) &&
	    qp_bench_param_num(r, "duration", consolidate ? cons.duration : w.duration, err) < 0)
		goto out;
	if (is_cri && (qp_bench_param_str(r, "cri_socket", cri.socket ? cri.socket : "private containerd", err) < 0 ||
		       qp_bench_param_num(r, "parallel", cri.parallel ? cri.parallel : 1, err) < 0 ||
		       qp_bench_param_num(r, "mem_pods", cri.mem_pods, err) < 0 ||
		       qp_bench_param_num(r, "spares", cri.spares, err) < 0))
		goto out;
	if (consolidate && (qp_bench_param_num(r, "pods", cons.pods, err) < 0 ||
			    qp_bench_param_num(r, "reserve_mb", (double)(cons.reserve >> 20), err) < 0))
		goto out;
	/* Ctrl-C and SIGTERM stop the scenario between runs, so its cleanup runs */
	qp_bench_hold_signals(&old);
	if (!strcmp(scenario, "start"))
		ret = qp_bench_start(&o, r, err);
	else if (!strcmp(scenario, "replace"))
		ret = qp_bench_replace(&o, r, err);
	else if (!strcmp(scenario, "workload"))
		ret = qp_bench_workload(&o, &w, r, err);
	else if (consolidate)
		ret = qp_bench_consolidate(&o, &cons, r, err);
	else if (is_cri)
		ret = qp_bench_cri(&o, &cri, r, err);
	else
		ret = qp_bench_memory(&o, r, err);
	if (o.progress)
		fputs("\r\033[K", stderr);
	qp_bench_release_signals(&old);
	/* what was measured is written even when the scenario stopped early */
	if (r->partial || ret == 0) {
		qp_error *werr = NULL;
		if (qp_report_write_one(r, format, output, "qpod bench", ret == 0 ? err : &werr) < 0 && ret == 0)
			ret = -1;
		qp_error_free(&werr);
	}
out:
	qp_bench_report_free(r);
	nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	return ret < 0 ? qp_error_prefix(err, "bench %s", scenario) : 0;
}
