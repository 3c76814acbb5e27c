/* runtime/main.c — `qpod`: global options, command dispatch, and the one
 * place that turns an error into "qpod: ..." and an exit code. */
#include <errno.h>
#include <stdbool.h>
#include <getopt.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vm/timeline.h"
#include "cli/cli.h"
#include "state.h"
#include "util/log.h"
#include "util/memfd_exec.h"

const struct qp_command qp_commands[] = {
	{ "create", "create a pod from an OCI bundle (it waits for start)", cmd_create, true },
	{ "start", "start the workload of a created pod", cmd_start, false },
	{ "state", "print the OCI state of a pod as JSON", cmd_state, false },
	{ "kill", "send a signal to a pod (default SIGTERM)", cmd_kill, false },
	{ "delete", "delete a stopped pod (--force: any pod)", cmd_delete, false },
	{ "run", "run a pod: OCI bundle (ID --bundle DIR) or ROOTFS -- CMD", cmd_run, true },
	{ "exec", "run another process in a running pod", cmd_exec, true },
	{ "ps", "list the processes of a pod", cmd_ps, false },
	{ "pause", "suspend every process of a pod", cmd_pause, false, true },
	{ "resume", "resume a paused pod", cmd_resume, false, true },
	{ "update", "change the limits of a live pod (runc's flags, --resources)", cmd_update, false, true },
	{ "events", "the pod's usage as runc's JSON events (--stats: once)", cmd_events, false, true },
	{ "list", "list pods", cmd_list, false },
	{ "spec", "print a default config.json", cmd_spec, false },
	{ "features", "print what this qpod supports, as JSON", cmd_features, false },
	{ "gc", "remove what crashed qpod processes left behind", cmd_gc, false },
	{ "replace", "give a running pod a new workload (vm: in the running VM)", cmd_replace, true },
	{ "stats", "memory of a running pod (vm: guest and VMM; container: cgroup), JSON", cmd_stats, false },
	{ "report", "render result files: table, markdown, csv, svg, html", cmd_report, false },
	{ "bench", "measure: start, replace, memory (see qpod bench --help)", cmd_bench, false },
	{ "density", "start pods until memory or the network runs out; report", cmd_density, true },
	{ NULL, NULL, NULL, false, false },
};

static void usage(FILE *f)
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
		   "  --help, --version\n\n"
		   "Run 'qpod COMMAND --help' for a command's options.\n"
		   "Exit status: 125 qpod failed, 126 command not executable, 127 command\n"
		   "not found, otherwise the workload's own status (128+N if killed by signal N);\n"
		   "pause, resume, update and events exit 1 on failure, as runc's.\n");
}

int main(int argc, char **argv)
{
	struct qp_cli cli = { .root = QP_DEFAULT_ROOT, .rootfd = -1 };
	const char *log_path = NULL, *log_format = "text";
	const struct qp_command *cmd = NULL;
	qp_error *err = NULL;
	bool root_given = false;
	int i, ret;

	qp_request_ns = qp_now_ns(); /* "request received": the start timeline's zero */

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		const char *a = argv[i];
		const char *val = NULL;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return 0;
		}
		if (!strcmp(a, "--version") || !strcmp(a, "-v")) {
			printf("qpod version %s\nspec: 1.2.0\n", PACKAGE_VERSION);
			return 0;
		}
		if (!strcmp(a, "--debug")) {
			cli.debug = true;
			continue;
		}
		/* --opt VALUE and --opt=VALUE */
		const char *names[] = { "--root", "--log", "--log-format" };
		size_t k;
		for (k = 0; k < 3; k++) {
			size_t n = strlen(names[k]);
			if (!strncmp(a, names[k], n) && (a[n] == '=' || a[n] == '\0')) {
				val = a[n] == '=' ? a + n + 1 : (i + 1 < argc ? argv[++i] : NULL);
				break;
			}
		}
		if (k == 3) {
			/* runc-compatible no-ops containerd may pass */
			if (!strcmp(a, "--systemd-cgroup"))
				continue;
			fprintf(stderr, "qpod: unknown global option \"%s\" (see qpod --help)\n", a);
			return QP_EXIT_FAILURE;
		}
		if (!val || !*val) {
			fprintf(stderr, "qpod: %s needs a value\n", names[k]);
			return QP_EXIT_FAILURE;
		}
		if (k == 0) {
			cli.root = val;
			root_given = true;
		}
		else if (k == 1)
			log_path = val;
		else
			log_format = val;
	}
	/* an unprivileged user cannot write /run/qpod: default to the user's
	 * runtime dir, as runc does */
	char user_root[4096];
	if (!root_given && geteuid() != 0) {
		const char *xdg = getenv("XDG_RUNTIME_DIR");
		if (xdg && *xdg == '/')
			snprintf(user_root, sizeof(user_root), "%s/qpod", xdg);
		else
			snprintf(user_root, sizeof(user_root), "/tmp/qpod-%u", (unsigned)geteuid());
		cli.root = user_root;
	}
	/* resolved once, absolutely: a VM pod's monitor chdir("/")s, and its
	 * state and its lease must not end up under two different roots */
	char abs_root[4096];
	if (cli.root[0] != '/') {
		char cwd[4096];
		if (!getcwd(cwd, sizeof(cwd)) ||
		    (size_t)snprintf(abs_root, sizeof(abs_root), "%s/%s", cwd, cli.root) >= sizeof(abs_root)) {
			fprintf(stderr, "qpod: --root \"%s\": cannot make it absolute\n", cli.root);
			return QP_EXIT_FAILURE;
		}
		cli.root = abs_root;
	}
	if (strcmp(log_format, "text") && strcmp(log_format, "json")) {
		fprintf(stderr, "qpod: --log-format must be text or json\n");
		return QP_EXIT_FAILURE;
	}
	if (qp_log_init(log_path, !strcmp(log_format, "json"), cli.debug) < 0) {
		fprintf(stderr, "qpod: open log \"%s\": %s\n", log_path, strerror(errno));
		return QP_EXIT_FAILURE;
	}
	if (i >= argc) {
		usage(stderr);
		return QP_EXIT_FAILURE;
	}
	for (const struct qp_command *c = qp_commands; c->name; c++)
		if (!strcmp(c->name, argv[i]))
			cmd = c;
	if (!cmd) {
		fprintf(stderr, "qpod: unknown command \"%s\" (see qpod --help)\n", argv[i]);
		return QP_EXIT_FAILURE;
	}
	/* the re-executed copy cannot find its own directory: the VM driver
	 * looks for guest-init/qpod-init next to the original binary */
	char exe[4096];
	if (cmd->enters_pod && !qp_running_sealed() && realpath("/proc/self/exe", exe))
		setenv("QPOD_EXE_DIR", dirname(exe), 1);
	if (cmd->enters_pod && qp_memfd_reexec(argv, &err) < 0)
		return qp_error_print(err), QP_EXIT_FAILURE;

	optind = 1; /* each command parses from its own argv[0] */
	opterr = 0; /* commands report bad options themselves, on one line */
	ret = cmd->fn(&cli, argc - i, argv + i, &err);
	if (ret < 0) {
		qp_error_print(err);
		ret = cmd->runc_status ? 1 : cli_exit_code(err);
		qp_error_free(&err);
	}
	if (cli.rootfd >= 0)
		close(cli.rootfd);
	return ret;
}
