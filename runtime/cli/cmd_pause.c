/* runtime/cli/cmd_pause.c — `qpod pause ID` and `qpod resume ID` (runc's
 * commands): freeze every process of a pod where it is and let it go on.
 * Container pods use the cgroup freezer, vm pods stop the VM's vCPUs
 * (QEMU "stop"/"cont").  Failures exit 1, as runc's do. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "pod.h"

const struct option cli_opts_pause[] = { { "help", no_argument, NULL, 'h' }, { 0 } };

static int pause_or_resume(struct qp_cli *cli, int argc, char **argv, bool pause, qp_error **err)
{
	const struct option *opts = cli_opts_pause;
	const char *name = pause ? "pause" : "resume";
	struct pod *pod = NULL;
	const char *id;
	int c, r;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c != 'h')
			return qp_error_set(err, QP_E_INVALID, 0, "usage: qpod %s ID", name);
		printf("Usage: qpod %s ID\n%s\n", name,
		       pause ? "Suspend every process of a pod: the cgroup freezer (container pods) or\n"
			       "the VM's vCPUs (vm pods).  `qpod state` then says \"paused\".  Exit status 1\n"
			       "on failure, as runc."
			     : "Let the processes of a paused pod run again.  Exit status 1 on failure,\n"
			       "as runc.");
		exit(0);
	}
	if (cli_one_id(argc, argv, optind, &id, err) < 0 || cli_root(cli, err) < 0 ||
	    pod_open(cli->rootfd, cli->root, id, true, &pod, err) < 0)
		return qp_error_prefix(err, "%s", name);
	r = pause ? pod_pause(pod, err) : pod_resume(pod, err);
	pod_free(pod);
	return r < 0 ? qp_error_prefix(err, "%s", name) : 0;
}

int cmd_pause(struct qp_cli *cli, int argc, char **argv, qp_error **err)
{
	return pause_or_resume(cli, argc, argv, true, err);
}

int cmd_resume(struct qp_cli *cli, int argc, char **argv, qp_error **err)
{
	return pause_or_resume(cli, argc, argv, false, err);
}
