/* runtime/cli/cmd_list.c — `qpod list [--format table|json]`.  No pod's
 * lock is taken (list never waits for a slow create or start); a pod whose
 * state cannot be read (damaged, oversized, a symlink) is listed as
 * "broken", with the reason in the JSON form's "error", never left out. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "pod.h"
#include "util/json.h"
#include "util/strv.h"

static void list_broken(yajl_gen g, bool quiet, const char *id, const char *why)
{
	if (g) {
		yajl_gen_map_open(g);
		qp_json_kstr(g, "id", id);
		qp_json_kint(g, "pid", 0);
		qp_json_kstr(g, "status", "broken");
		qp_json_kstr(g, "error", why);
		yajl_gen_map_close(g);
	} else if (quiet) {
		printf("%s\n", id);
	} else {
		printf("%-24s %-8d %-9s %-10s %s\n", id, 0, "broken", "-", "-");
	}
}

const struct option cli_opts_list[] = { { "format", required_argument, NULL, 'f' },
				      { "quiet", no_argument, NULL, 'q' },
				      { "help", no_argument, NULL, 'h' }, { 0 } };

int cmd_list(struct qp_cli *cli, int argc, char **argv, qp_error **err)
{
	const struct option *opts = cli_opts_list;
	bool json = false, quiet = false;
	char **ids = NULL;
	yajl_gen g = NULL;
	int c, r = 0;

	while ((c = getopt_long(argc, argv, "+f:qh", opts, NULL)) != -1) {
		if (c == 'h') {
			printf("Usage: qpod list [--format table|json] [--quiet]\n"
			       "List the pods in the state directory: ID, PID, STATUS, MODE and CREATED.\n"
			       "  -f, --format table|json  columns (default), or a JSON array of objects\n"
			       "                           (id, pid, status, mode, bundle, rootfs, created, owner)\n"
			       "  -q, --quiet              only the IDs, one per line\n");
			return 0;
		}
		if (c == 'q')
			quiet = true;
		else if (c != 'f' || cli_parse_format(optarg, &json, err) < 0)
			return err && *err ? qp_error_prefix(err, "list")
					   : qp_error_set(err, QP_E_INVALID, 0, "list: bad option");
	}
	if (optind < argc)
		return qp_error_set(err, QP_E_INVALID, 0, "list: unexpected argument \"%s\"", argv[optind]);
	if (cli_root(cli, err) < 0 || state_list(cli->rootfd, &ids, err) < 0)
		return qp_error_prefix(err, "list");
	if (json) {
		g = qp_json_gen_new(false);
		yajl_gen_array_open(g);
	} else if (!quiet) {
		printf("%-24s %-8s %-9s %-10s %s\n", "ID", "PID", "STATUS", "MODE", "CREATED");
	}
	for (size_t i = 0; ids[i]; i++) {
		struct pod *pod = NULL;
		qp_error *why = NULL;
		if (pod_open(cli->rootfd, cli->root, ids[i], QP_LOCK_NONE, &pod, &why) < 0) {
			if (why && why->code != QP_E_NOTFOUND) /* else: deleted meanwhile */
				list_broken(g, quiet, ids[i], why->msg);
			qp_error_free(&why);
			continue;
		}
		enum qp_status s = pod_status(pod);
		pid_t pid = s == QP_STATUS_STOPPED ? 0 : pod->state->pid;
		if (json) {
			yajl_gen_map_open(g);
			qp_json_kstr(g, "id", pod->id);
			qp_json_kint(g, "pid", pid);
			qp_json_kstr(g, "status", qp_status_name(s));
			qp_json_kstr(g, "mode", qp_mode_name(pod->state->mode));
			qp_json_kstr(g, "bundle", pod->state->bundle);
			qp_json_kstr(g, "rootfs", pod->state->rootfs);
			qp_json_kstr(g, "created", pod->state->created);
			qp_json_kstr(g, "owner", pod->state->owner);
			yajl_gen_map_close(g);
		} else if (quiet) {
			printf("%s\n", pod->id);
		} else {
			printf("%-24s %-8d %-9s %-10s %s\n", pod->id, (int)pid, qp_status_name(s),
			       qp_mode_name(pod->state->mode), pod->state->created ? pod->state->created : "");
		}
		pod_free(pod);
	}
	if (json) {
		char *text = NULL;
		yajl_gen_array_close(g);
		r = qp_json_gen_finish(g, &text, NULL, err);
		if (r == 0)
			printf("%s\n", text);
		free(text);
	}
	qp_strv_free(ids);
	return r;
}
