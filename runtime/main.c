/* runtime/main.c — `qpod`: global options, command dispatch, and the one
 * place that turns an error into "qpod: ..." and an exit code. */
#include <errno.h>
#include <stdbool.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/timeline.h"
#include "cli/cli.h"
#include "state.h"
#include "util/log.h"
#include "util/exe_guard.h"
#include "vm/libvirt/libvirt.h"

int main(int argc, char **argv)
{
	struct qp_cli cli = { .root = QP_DEFAULT_ROOT, .rootfd = -1, .argv = argv };
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
			cli_usage(stdout);
			return 0;
		}
		if (!strcmp(a, "--version") || !strcmp(a, "-v")) {
			return cmd_version(&cli, 1, argv + i, NULL);
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
		cli_usage(stderr);
		return QP_EXIT_FAILURE;
	}
	if (!(cmd = cli_find_command(argv[i]))) {
		fprintf(stderr, "qpod: unknown command \"%s\" (see qpod --help)\n", argv[i]);
		return QP_EXIT_FAILURE;
	}
	/* the re-executed qpod cannot find its own directory: the files qpod
	 * ships (guest-init, kernel: util/paths.h) are found beside the
	 * original binary; its path is the guard's too */
	char exe[PATH_MAX], dir[PATH_MAX];
	const char *self = !qp_exe_guarded() && realpath("/proc/self/exe", exe) ? exe : NULL;
	/* the helper of a static qpod (vm/libvirt/libvirt.h): QPOD_EXE_DIR is
	 * qpod's already; the mark goes through the guard's re-exec and is
	 * dropped before the command runs */
	cli.handed_off = getenv(QP_LV_HANDOFF_ENV) != NULL;
	if (!cli.handed_off && self)
		setenv("QPOD_EXE_DIR", dirname(strcpy(dir, self)), 1);
	/* the state root made first (as runc makes its root): on a kernel
	 * that takes overlay layers by path only, the guard's empty layer is
	 * that directory, and a root not made yet sent a fresh root's first
	 * command to the memfd fallback */
	if (cmd->enters_pod && (cli_root(&cli, &err) < 0 || qp_exe_guard_reexec(argv, self, cli.root, &err) < 0))
		return qp_error_print(err), QP_EXIT_FAILURE;

	unsetenv(QP_LV_HANDOFF_ENV); /* not for qpod's own children */
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
