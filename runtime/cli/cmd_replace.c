/* runtime/cli/cmd_replace.c — `qpod replace [--cold] [--image ROOTFS] POD
 * [-- CMD ARGS...]`: give a running pod a new workload, keeping its ID,
 * address and (warm) its VM and tap.
 *
 * warm (vm pods, same image): the pod's monitor stops the workload (SIGTERM,
 *      SIGKILL after 5 s) and guest-init starts the new one in the running
 *      VM; this is Hyper's fast replace.
 * cold (--cold, container pods, or a new --image): the pod is deleted and
 *      created and started again from its saved spec, asking IPAM for the
 *      same address.  Decision: a new image takes the cold path, because
 *      the VM's 9p share is fixed when QEMU starts.
 * Output: one JSON line {"id","mode":"warm|cold","replace_ms","stop_ms",
 * "gap_ms"}: the request to the new workload's exec, the request to the old
 * one's end, and the gap in which neither ran. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "net/net.h"
#include "pod.h"
#include "util/cleanup.h"
#include "util/strv.h"
#include "util/timeline.h"


static const char usage[] =
	"Usage: qpod replace [--cold] [--image ROOTFS] POD [-- CMD [ARGS...]]\n"
	"Give a running pod a new workload: CMD (default: the pod's own process again).\n"
	"  --cold           tear the pod down and start it anew (default for container\n"
	"                   pods and with --image); vm pods otherwise reuse the running VM\n"
	"  --image ROOTFS   the new workload's root filesystem (cold)\n"
	"Prints one JSON line: id, mode (warm|cold), replace_ms (request to the new\n"
	"workload exec'd), stop_ms (request to the old one gone), gap_ms (neither ran).\n";

static double ms_since(long long t0)
{
	return qp_ms_between(t0, qp_now_ns());
}

static int cold(struct qp_cli *cli, struct pod *pod, char **cmd, const char *image, qp_error **err)
{
	struct pod_io io = { .foreground = false };
	struct qp_net_config net;
	struct pod_spec *spec = pod->spec;
	struct pod *fresh = NULL;
	_cleanup_free_ char *rootfs = NULL, *bundle = NULL, *id = NULL;
	char addr[16];
	long long t0 = qp_now_ns();
	double stop_ms;

	if (pod_status(pod) != QP_STATUS_RUNNING)
		return qp_error_set(err, QP_E_STATE, 0, "pod \"%s\" is not running", pod->id);
	if (!(id = strdup(pod->id)) || (pod->bundle && !(bundle = strdup(pod->bundle))))
		return qp_fail(err, ENOMEM, "replace");
	if (image ? cli_resolve_rootfs(image, &rootfs, err) < 0 : !(rootfs = strdup(pod->rootfs)))
		return image ? -1 : qp_fail(err, ENOMEM, "replace");
	if (cmd) {
		qp_strv_free(spec->process.args);
		if (!(spec->process.args = qp_strv_dup(cmd)))
			return qp_fail(err, ENOMEM, "replace");
	}
	/* the same address: the lease is released by delete and asked for again */
	if (pod_net_config(pod, &net, NULL)) {
		int r = qp_net_lease_addr(&net, pod->id, addr, err);
		if (r < 0 || (r > 0 && spec_opt_set(spec, "qpod.net.ip", addr, err) < 0))
			return -1;
	}
	if (pod_delete(pod, true, err) < 0)
		return -1;
	stop_ms = ms_since(t0);
	long long t1 = qp_now_ns();
	pod->spec = NULL; /* handed to the new pod */
	if (pod_create(cli->rootfd, cli->root, id, spec, bundle, rootfs, &io, &fresh, err) < 0) {
		spec_free(spec);
		return qp_error_prefix(err, "create the new pod (the old one is gone)");
	}
	int r = pod_start(fresh, err);
	double gap = ms_since(t1);
	pod_free(fresh);
	if (r < 0)
		return -1;
	const struct qp_phase ph[] = { { "replace_ms", ms_since(t0) }, { "stop_ms", stop_ms }, { "gap_ms", gap } };
	_cleanup_free_ char *text = NULL;
	if (qp_timeline_json(ph, 3, &text, NULL) < 0)
		return qp_fail(err, ENOMEM, "replace");
	printf("{\"id\":\"%s\",\"mode\":\"cold\",%s\n", id, text + 1);
	return 0;
}

const struct option cli_opts_replace[] = { { "cold", no_argument, NULL, 'c' },
				      { "image", required_argument, NULL, 'i' },
				      { "help", no_argument, NULL, 'h' }, { 0 } };

int cmd_replace(struct qp_cli *cli, int argc, char **argv, qp_error **err)
{
	const struct option *opts = cli_opts_replace;
	const char *image = NULL, *id;
	bool want_cold = false;
	struct pod *pod = NULL;
	char **cmd = NULL;
	int c, r;

	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			fputs(usage, stdout);
			exit(0);
		case 'c': want_cold = true; break;
		case 'i': image = optarg; break;
		default:
			return qp_error_set(err, QP_E_INVALID, 0, "replace: see qpod replace --help");
		}
	}
	if (optind >= argc)
		return qp_error_set(err, QP_E_INVALID, 0, "replace: missing POD (see qpod replace --help)");
	id = argv[optind++];
	if (optind < argc && !strcmp(argv[optind], "--"))
		optind++;
	if (optind < argc)
		cmd = argv + optind;
	if (state_validate_id(id, err) < 0 || cli_root(cli, err) < 0 ||
	    pod_open(cli->rootfd, cli->root, id, true, &pod, err) < 0)
		return qp_error_prefix(err, "replace");
	if (cmd && !cmd[0][0]) {
		pod_free(pod);
		return qp_error_set(err, QP_E_INVALID, 0, "replace: empty command");
	}
	if (!want_cold && !image && pod->drv->replace)
		r = pod->drv->replace(pod, cmd, err);
	else
		r = cold(cli, pod, cmd, image, err);
	pod_free(pod);
	return r < 0 ? qp_error_prefix(err, "replace") : 0;
}
