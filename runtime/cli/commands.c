/* runtime/cli/commands.c — the command table (name, one-line summary,
 * function, the options it parses), the top-level usage, and the two
 * commands about qpod itself: `help [COMMAND]` and `version`. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "state.h"

const struct qp_command qp_commands[] = {
	{ "create", "create a pod from an OCI bundle (it waits for start)", cmd_create, true, false, cli_opts_run },
	{ "start", "start the workload of a created pod", cmd_start, false, false, cli_opts_help_only },
	{ "state", "print the OCI state of a pod as JSON", cmd_state, false, false, cli_opts_help_only },
	{ "kill", "send a signal to a pod (default SIGTERM)", cmd_kill, false, false, cli_opts_kill },
	{ "delete", "delete a stopped pod (--force: any pod)", cmd_delete, false, false, cli_opts_delete },
	{ "run", "run a pod: OCI bundle (ID --bundle DIR) or ROOTFS -- CMD", cmd_run, true, false, cli_opts_run },
	{ "exec", "run another process in a running pod", cmd_exec, true, false, cli_opts_exec },
	{ "ps", "list the processes of a pod", cmd_ps, false, false, cli_opts_ps },
	{ "pause", "suspend every process of a pod", cmd_pause, false, true, cli_opts_pause },
	{ "resume", "resume a paused pod", cmd_resume, false, true, cli_opts_pause },
	{ "update", "change the limits of a live pod (runc's flags, --resources)", cmd_update, false, true, cli_opts_update },
	{ "events", "the pod's usage as runc's JSON events (--stats: once)", cmd_events, false, true, cli_opts_events },
	{ "list", "list pods", cmd_list, false, false, cli_opts_list },
	{ "spec", "print a default config.json", cmd_spec, false, false, cli_opts_spec },
	{ "features", "print what this qpod supports, as JSON", cmd_features, false, false, NULL },
	{ "gc", "remove what crashed qpod processes left behind", cmd_gc, false, false, NULL },
	{ "replace", "give a running pod a new workload (vm: in the running VM)", cmd_replace, true, false, cli_opts_replace },
	{ "stats", "memory of a running pod (vm: guest and VMM; container: cgroup), JSON", cmd_stats, false, false, NULL },
	{ "template", "vm templates: list, create, rm (vm pods clone them)", cmd_template, false, false, cli_opts_template },
	{ "spares", "vm pods started ahead: fill, list, drain (vm pods take them)", cmd_spares, false, false, cli_opts_spares },
	{ "report", "render result files: table, markdown, csv, svg, html", cmd_report, false, false, cli_opts_report },
	{ "bench", "measure: start, replace, memory, workload, consolidate, cri (qpod bench --help)", cmd_bench, false, false, cli_opts_bench },
	{ "density", "start pods until memory or the network runs out; report", cmd_density, true, false, cli_opts_density },
	{ "help", "print the help of qpod or of COMMAND (qpod help COMMAND)", cmd_help, false, false, NULL },
	{ "version", "print qpod's version and the OCI spec version", cmd_version, false, false, NULL },
	{ NULL, NULL, NULL, false, false, NULL },
};

void cli_usage(FILE *f)
{
	fprintf(f, "Usage: qpod [GLOBAL OPTIONS] COMMAND [ARGS...]\n\n"
		   "A pod runtime: containers and microVMs, with measurements built in.\n\n"
		   "Commands:\n");
	for (const struct qp_command *c = qp_commands; c->name; c++)
		fprintf(f, "  %-10s %s\n", c->name, c->summary);
	fprintf(f, "\nGlobal options:\n"
		   "  --root DIR              state directory (default " QP_DEFAULT_ROOT ";\n"
		   "                          unprivileged: $XDG_RUNTIME_DIR/qpod or /tmp/qpod-UID)\n"
		   "  --log FILE              also write log lines to FILE\n"
		   "  --log-format text|json  format of --log lines (default text)\n"
		   "  --debug                 log debug messages\n"
		   "  --help, --version       the same as qpod help, qpod version\n\n"
		   "Run 'qpod help COMMAND' (or 'qpod COMMAND --help') for a command's options.\n"
		   "Exit status: 125 qpod failed, 126 command not executable, 127 command\n"
		   "not found, otherwise the workload's own status (128+N if killed by signal N);\n"
		   "pause, resume, update and events exit 1 on failure, as runc's.\n");
}

const struct qp_command *cli_find_command(const char *name)
{
	for (const struct qp_command *c = qp_commands; c->name; c++)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

int cmd_help(struct qp_cli *cli, int argc, char **argv, qp_error **err)
{
	const struct qp_command *c;
	char *help_argv[] = { NULL, "--help", NULL };

	if (argc < 2) {
		cli_usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		printf("Usage: qpod help [COMMAND]\nPrint qpod's commands and global options, or COMMAND's\n"
		       "help (the same as qpod COMMAND --help).\n");
		return 0;
	}
	if (argc > 2)
		return qp_error_set(err, QP_E_INVALID, 0, "help: unexpected argument \"%s\"", argv[2]);
	if (!(c = cli_find_command(argv[1])))
		return qp_error_set(err, QP_E_INVALID, 0, "help: unknown command \"%s\" (see qpod --help)",
				    argv[1]);
	help_argv[0] = (char *)c->name;
	return c->fn(cli, 2, help_argv, err);
}

int cmd_version(struct qp_cli *cli, int argc, char **argv, qp_error **err)
{
	(void)cli;
	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("Usage: qpod version\nPrint qpod's version and the OCI runtime spec version it\n"
		       "implements (the same as the global option).\n");
		return 0;
	}
	if (argc > 1)
		return qp_error_set(err, QP_E_INVALID, 0, "version: unexpected argument \"%s\"", argv[1]);
	printf("qpod version %s\nspec: 1.2.0\n", PACKAGE_VERSION);
	return 0;
}
