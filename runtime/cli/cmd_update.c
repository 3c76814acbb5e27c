/* runtime/cli/cmd_update.c — `qpod update` (runc's command): change the
 * limits of a live pod, from runc's flags or from an OCI LinuxResources
 * JSON object (--resources FILE, or - for stdin, as containerd's shim sends
 * it).  The changes are merged into the pod's resources, validated as a
 * config.json's would be, applied by the driver and kept in the pod's
 * config.json.  Whatever cannot be applied is refused, never skipped:
 * unknown or unsupported JSON fields and flags, vm pods' limits.  Failures
 * exit 1, as runc's do. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "pod.h"
#include "spec/resources.h"
#include "util/cleanup.h"
#include "util/io.h"

static const char usage[] =
	"Usage: qpod update [--resources FILE|-] [--memory N] [--memory-swap N]\n"
	"                   [--cpu-shares N] [--cpu-quota N] [--cpu-period N]\n"
	"                   [--cpuset-cpus LIST] [--cpuset-mems LIST] [--pids-limit N]\n"
	"                   [--memory-reservation N] [--blkio-weight N] ID\n"
	"Change the limits of a created, running or paused pod (runc's flags and meaning).\n"
	"  --resources FILE|-  an OCI LinuxResources JSON object (- = stdin), alone;\n"
	"                      unknown fields, and fields qpod cannot apply\n"
	"                      (hugepageLimits, network, ...), are refused;\n"
	"                      device rules stay as created (as with runc)\n"
	"  --memory N          memory limit: bytes or 64M, 1G...; -1 = unlimited\n"
	"  --memory-swap N     memory + swap limit, the same way\n"
	"  --memory-reservation N  soft limit (v1 soft_limit_in_bytes, v2 memory.low)\n"
	"  --cpu-shares N      relative weight 2..262144 (--cpu-share as runc spells it)\n"
	"  --cpu-quota N       CPU time per period, µs (>= 1000; -1 = unlimited)\n"
	"  --cpu-period N      the period, µs (1000..1000000)\n"
	"  --cpuset-cpus LIST  CPUs, such as 0-1,3\n"
	"  --cpuset-mems LIST  memory nodes\n"
	"  --pids-limit N      most processes (-1 or 0 = unlimited)\n"
	"  --blkio-weight N    block I/O weight 10..1000 (v1 blkio[.bfq].weight, v2\n"
	"                      io.bfq.weight or io.weight)\n"
	"runc's --cpu-rt-period, --cpu-rt-runtime, --cpu-burst,\n"
	"--cpu-idle, --kernel-memory, --kernel-memory-tcp, --l3-cache-schema and\n"
	"--mem-bw-schema are refused by name: qpod cannot apply them.\n"
	"vm pods: nothing can change while the VM runs (no memory balloon, vCPUs fixed\n"
	"at boot), so only an update that changes nothing succeeds.  Exit status 1 on\n"
	"failure, as runc.\n";

/* runc's update flags that qpod has no writer for */
static const char *const unsupported[] = {
	"cpu-rt-period", "cpu-rt-runtime", "cpu-burst", "cpu-idle",
	"kernel-memory", "kernel-memory-tcp", "l3-cache-schema",
	"mem-bw-schema",
};

/* runc's flags and where they go */
enum flag_kind { F_MEMORY, F_U64, F_I64, F_STR };
#define R(f) offsetof(struct qp_resources, f)
static const struct {
	const char *name;
	enum flag_kind kind;
	size_t off, has_off;
} flags[] = {
	{ "memory", F_MEMORY, R(memory_limit), R(has_memory_limit) },
	{ "memory-swap", F_MEMORY, R(memory_swap), R(has_memory_swap) },
	{ "memory-reservation", F_MEMORY, R(memory_reservation), R(has_memory_reservation) },
	{ "cpu-shares", F_U64, R(cpu_shares), R(has_cpu_shares) },
	{ "cpu-share", F_U64, R(cpu_shares), R(has_cpu_shares) },
	{ "cpu-quota", F_I64, R(cpu_quota), R(has_cpu_quota) },
	{ "cpu-period", F_U64, R(cpu_period), R(has_cpu_period) },
	{ "pids-limit", F_I64, R(pids_limit), R(has_pids_limit) },
	{ "blkio-weight", F_U64, R(blkio_weight), R(has_blkio_weight) },
	{ "cpuset-cpus", F_STR, R(cpuset_cpus), 0 },
	{ "cpuset-mems", F_STR, R(cpuset_mems), 0 },
};

/* a memory size, or -1 for unlimited */
static int memory_value(const char *v, const char *what, int64_t *out, qp_error **err)
{
	if (!strcmp(v, "-1")) {
		*out = -1;
		return 0;
	}
	if (v[0] == '-')
		return qp_error_set(err, QP_E_INVALID, 0, "%s \"%s\": a size (64M, 1G...) or -1 (unlimited)",
				    what, v);
	return cli_parse_size(v, what, out, err);
}

int cli_update_flag(const char *name, const char *value, struct qp_resources *res, qp_error **err)
{
	char *base = (char *)res, what[48];
	size_t i = 0;

	snprintf(what, sizeof(what), "--%s", name);
	for (size_t k = 0; k < QP_ARRAY_SIZE(unsupported); k++)
		if (!strcmp(name, unsupported[k]))
			return qp_error_set(err, QP_E_INVALID, 0, "%s is not supported by qpod", what);
	while (i < QP_ARRAY_SIZE(flags) && strcmp(flags[i].name, name))
		i++;
	if (i == QP_ARRAY_SIZE(flags))
		return qp_error_set(err, QP_E_INVALID, 0, "unknown option %s", what);
	if (flags[i].kind != F_STR)
		*(bool *)(base + flags[i].has_off) = true;
	switch (flags[i].kind) {
	case F_MEMORY:
		return memory_value(value, what, (int64_t *)(base + flags[i].off), err);
	case F_U64:
		return cli_parse_u64(value, what, (uint64_t *)(base + flags[i].off), err);
	case F_I64:
		return cli_parse_i64(value, what, (int64_t *)(base + flags[i].off), err);
	case F_STR: {
		char **s = (char **)(base + flags[i].off);
		free(*s);
		if (!(*s = strdup(value)))
			return qp_fail(err, ENOMEM, "%s", what);
		return 0;
	}
	}
	return 0;
}

static int read_resources(const char *src, struct qp_resources *res, qp_error **err)
{
	_cleanup_close_ int fd = strcmp(src, "-") ? open(src, O_RDONLY | O_CLOEXEC) : -1;
	_cleanup_free_ char *text = NULL;
	size_t len;

	if (strcmp(src, "-") && fd < 0)
		return qp_fail(err, errno, "--resources \"%s\"", src);
	if (qp_read_all(fd >= 0 ? fd : 0, QP_SPEC_MAX_FILE, &text, &len) < 0)
		return qp_fail(err, errno, "read --resources \"%s\"", src);
	return spec_resources_parse_text(text, len, "--resources", res, err);
}

const struct option cli_opts_update[] = {
	{ "resources", required_argument, NULL, 'r' },
	{ "memory", required_argument, NULL, 'F' },
	{ "memory-swap", required_argument, NULL, 'F' },
	{ "cpu-shares", required_argument, NULL, 'F' },
	{ "cpu-share", required_argument, NULL, 'F' },
	{ "cpu-quota", required_argument, NULL, 'F' },
	{ "cpu-period", required_argument, NULL, 'F' },
	{ "cpuset-cpus", required_argument, NULL, 'F' },
	{ "cpuset-mems", required_argument, NULL, 'F' },
	{ "pids-limit", required_argument, NULL, 'F' },
	{ "blkio-weight", required_argument, NULL, 'F' },
	{ "cpu-rt-period", required_argument, NULL, 'F' },
	{ "cpu-rt-runtime", required_argument, NULL, 'F' },
	{ "cpu-burst", required_argument, NULL, 'F' },
	{ "cpu-idle", required_argument, NULL, 'F' },
	{ "memory-reservation", required_argument, NULL, 'F' },
	{ "kernel-memory", required_argument, NULL, 'F' },
	{ "kernel-memory-tcp", required_argument, NULL, 'F' },
	{ "l3-cache-schema", required_argument, NULL, 'F' },
	{ "mem-bw-schema", required_argument, NULL, 'F' },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

int cmd_update(struct qp_cli *cli, int argc, char **argv, qp_error **err)
{
	const struct option *opts = cli_opts_update;
	struct qp_resources res = { 0 };
	const char *resources = NULL, *id;
	struct pod *pod = NULL;
	int c, idx = 0, n_flags = 0, r = -1;

	while ((c = getopt_long(argc, argv, "r:h", opts, &idx)) != -1) {
		if (c == 'h') {
			fputs(usage, stdout);
			exit(0);
		}
		if (c == 'r')
			resources = optarg;
		else if (c != 'F') {
			qp_error_set(err, QP_E_INVALID, 0, "bad option \"%s\" (see qpod update --help)",
				     argv[optind - 1]);
			goto out;
		} else if (n_flags++, cli_update_flag(opts[idx].name, optarg, &res, err) < 0)
			goto out;
	}
	if (resources && n_flags) {
		/* runc ignores the flags then; qpod says so instead */
		qp_error_set(err, QP_E_INVALID, 0, "--resources cannot be combined with other options");
		goto out;
	}
	if (cli_one_id(argc, argv, optind, &id, err) < 0 ||
	    (resources && read_resources(resources, &res, err) < 0) || cli_root(cli, err) < 0 ||
	    pod_open(cli->rootfd, cli->root, id, true, &pod, err) < 0)
		goto out;
	r = pod_update(pod, &res, err);
out:
	pod_free(pod);
	spec_resources_clear(&res);
	return r < 0 ? qp_error_prefix(err, "update") : 0;
}
