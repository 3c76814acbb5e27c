/* runtime/cli/cmd_exec.c — `qpod exec ID [OPTIONS] -- CMD ARGS...`: run one
 * more process in a running pod, with the pod's environment, capabilities
 * and seccomp profile unless told otherwise; exits with its status. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "pod.h"
#include "util/cleanup.h"
#include "util/strv.h"

static const char exec_usage[] =
	"Usage: qpod exec [OPTIONS] ID -- CMD [ARGS...]\n"
	"  -e, --env K=V        add or replace an environment variable (repeatable)\n"
	"  -w, --cwd DIR        working directory (default: the pod's)\n"
	"  -u, --user UID[:GID] run as this user (default: the pod's)\n";

static int exec_opt(int c, const char *arg, char ***envs, size_t *n_env, const char **cwd,
		    const char **user, qp_error **err)
{
	char **nv;

	switch (c) {
	case 'h':
		fputs(exec_usage, stdout);
		return 0;
	case 'e':
		if (!strchr(arg, '=') || arg[0] == '=')
			return qp_error_set(err, QP_E_INVALID, 0, "--env \"%s\": expected K=V", arg);
		nv = realloc(*envs, (*n_env + 1) * sizeof(*nv));
		if (!nv)
			return qp_fail(err, ENOMEM, "exec");
		*envs = nv;
		nv[(*n_env)++] = (char *)arg;
		return 0;
	case 'w':
		*cwd = arg;
		return 0;
	case 'u':
		*user = arg;
		return 0;
	default:
		return qp_error_set(err, QP_E_INVALID, 0, "unknown or incomplete option (see qpod exec --help)");
	}
}

int cmd_exec(struct qp_cli *cli, int argc, char **argv, qp_error **err)
{
	static const struct option opts[] = {
		{ "env", required_argument, NULL, 'e' }, { "cwd", required_argument, NULL, 'w' },
		{ "user", required_argument, NULL, 'u' }, { "help", no_argument, NULL, 'h' }, { 0 },
	};
	struct pod *pod = NULL;
	struct qp_process *p;
	const char *cwd = NULL, *user = NULL, *id = NULL;
	char **envs = NULL;
	size_t n_env = 0;
	int c, status = -1;

	/* options may come before and after the ID (runc puts them before,
	 * people after); the command starts at "--" or the next non-option */
	for (int pass = 0; pass < 2; pass++) {
		while ((c = getopt_long(argc, argv, "+e:w:u:h", opts, NULL)) != -1) {
			if (exec_opt(c, optarg, &envs, &n_env, &cwd, &user, err) < 0)
				goto out;
			if (c == 'h') {
				free(envs);
				return 0;
			}
		}
		if (pass == 0) {
			if (optind >= argc) {
				qp_error_set(err, QP_E_INVALID, 0, "missing pod ID");
				goto out;
			}
			id = argv[optind];
			/* continue after the ID: getopt resumes from optind */
			optind++;
		}
	}
	if (optind < argc && !strcmp(argv[optind], "--"))
		optind++;
	if (optind >= argc) {
		qp_error_set(err, QP_E_INVALID, 0, "missing command (qpod exec ID -- CMD ARGS...)");
		goto out;
	}
	if (cli_root(cli, err) < 0 || pod_open(cli->rootfd, cli->root, id, false, &pod, err) < 0)
		goto out;
	p = &pod->spec->process;
	qp_strv_free(p->args);
	if (!(p->args = qp_strv_dup(argv + optind))) {
		qp_fail(err, ENOMEM, "exec");
		goto out;
	}
	for (size_t i = 0; i < n_env; i++)
		if (cli_env_set(&p->env, envs[i]) < 0) {
			qp_fail(err, ENOMEM, "exec");
			goto out;
		}
	if (cwd) {
		if (cwd[0] != '/') {
			qp_error_set(err, QP_E_INVALID, 0, "--cwd \"%s\": must be absolute", cwd);
			goto out;
		}
		free(p->cwd);
		p->cwd = strdup(cwd);
	}
	if (user && cli_parse_user(user, &p->uid, &p->gid, err) < 0)
		goto out;
	if (pod->drv->exec(pod, p, &status, err) < 0)
		status = -1;
out:
	if (status < 0)
		qp_error_prefix(err, "exec");
	free(envs);
	pod_free(pod);
	return status;
}
