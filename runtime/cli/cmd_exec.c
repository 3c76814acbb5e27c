/* runtime/cli/cmd_exec.c — `qpod exec ID [OPTIONS] -- CMD ARGS...`: run one
 * more process in a running pod, with the pod's environment, capabilities
 * and seccomp profile unless told otherwise; exits with its status. */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
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
	"       qpod exec [OPTIONS] --process FILE ID\n"
	"  -p, --process FILE   the process as OCI process JSON (args, env, cwd, user, caps...)\n"
	"  -d, --detach         return once it runs; --pid-file F gets its host pid\n"
	"  -i, --interactive    the process reads qpod's stdin: always so (both\n"
	"                       modes), as with runc, unless it is /dev/null\n"
	"  -t, --tty            a terminal (both modes): its master goes to\n"
	"                       --console-socket S, as with runc; without one,\n"
	"                       qpod's own terminal is the process's (raw while\n"
	"                       it runs; not with --detach)\n"
	"  --console-socket S   unix socket that receives the terminal's master fd\n"
	"  -e, --env K=V        add or replace an environment variable (repeatable)\n"
	"  -w, --cwd DIR        working directory (default: the pod's)\n"
	"  -u, --user UID[:GID] run as this user (default: the pod's)\n";

/* --process FILE: an OCI "process" object.  It is parsed by the one spec
 * parser, wrapped into a minimal config, so the same bounds and checks
 * apply; the pod's process is replaced by it. */
static int load_process(const char *path, struct qp_process *into, qp_error **err)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	_cleanup_free_ char *buf = NULL, *doc = NULL;
	struct pod_spec *tmp = NULL;
	struct stat st;
	ssize_t n;
	int len;

	if (fd < 0 || fstat(fd, &st) < 0)
		return qp_fail(err, errno, "--process \"%s\"", path);
	if (!S_ISREG(st.st_mode) || st.st_size > (off_t)QP_SPEC_MAX_FILE)
		return qp_error_set(err, QP_E_INVALID, 0, "--process \"%s\": not a regular file under 4 MiB",
				    path);
	if (!(buf = malloc((size_t)st.st_size + 1)))
		return qp_fail(err, ENOMEM, "--process");
	n = read(fd, buf, (size_t)st.st_size);
	if (n < 0)
		return qp_fail(err, errno, "read \"%s\"", path);
	buf[n] = '\0';
	len = asprintf(&doc, "{\"ociVersion\":\"1.0.2\",\"root\":{\"path\":\"/\"},\"process\":%s}", buf);
	if (len < 0)
		return qp_fail(err, ENOMEM, "--process");
	if (spec_parse(doc, (size_t)len, &tmp, err) < 0)
		return qp_error_prefix(err, "--process \"%s\"", path);
	/* swap: the pod gets the new process, tmp takes the old one away */
	struct qp_process old = *into;
	*into = tmp->process;
	tmp->process = old;
	/* no capabilities in the file: the pod's, never qpod's own full set */
	if (!into->caps.present) {
		struct qp_caps c = into->caps;
		into->caps = tmp->process.caps;
		tmp->process.caps = c;
	}
	/* no LSM label in the file: the pod's (runc's exec does the same) */
	if (!into->apparmor_profile)
		into->apparmor_profile = steal_ptr(&tmp->process.apparmor_profile);
	if (!into->selinux_label)
		into->selinux_label = steal_ptr(&tmp->process.selinux_label);
	spec_free(tmp);
	return 0;
}

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
	case 'p': case 'd': case 'P': case 't': case 'C': case 'i':
		return 0; /* handled by the caller */
	default:
		return qp_error_set(err, QP_E_INVALID, 0, "unknown or incomplete option (see qpod exec --help)");
	}
}

const struct option cli_opts_exec[] = {
	{ "env", required_argument, NULL, 'e' }, { "cwd", required_argument, NULL, 'w' },
	{ "user", required_argument, NULL, 'u' }, { "help", no_argument, NULL, 'h' },
	{ "process", required_argument, NULL, 'p' }, { "detach", no_argument, NULL, 'd' },
	{ "pid-file", required_argument, NULL, 'P' }, { "tty", no_argument, NULL, 't' },
	{ "console-socket", required_argument, NULL, 'C' }, { "interactive", no_argument, NULL, 'i' },
	{ 0 },
};

int cmd_exec(struct qp_cli *cli, int argc, char **argv, qp_error **err)
{
	const struct option *opts = cli_opts_exec;
	struct pod *pod = NULL;
	struct qp_process *p;
	const char *cwd = NULL, *user = NULL, *id = NULL, *process_file = NULL, *pid_file = NULL;
	const char *console = NULL;
	bool detach = false, tty = false;
	char **envs = NULL;
	size_t n_env = 0;
	int c, status = -1;

	/* options may come before and after the ID (runc puts them before,
	 * people after); the command starts at "--" or the next non-option */
	for (int pass = 0; pass < 2; pass++) {
		while ((c = getopt_long(argc, argv, "+e:w:u:hp:dti", opts, NULL)) != -1) {
			if (exec_opt(c, optarg, &envs, &n_env, &cwd, &user, err) < 0)
				goto out;
			if (c == 'p')
				process_file = optarg;
			else if (c == 'd')
				detach = true;
			else if (c == 'P')
				pid_file = optarg;
			else if (c == 't')
				tty = true;
			else if (c == 'C')
				console = optarg;
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
	if (optind >= argc && !process_file) {
		qp_error_set(err, QP_E_INVALID, 0, "missing command (qpod exec ID -- CMD ARGS...)");
		goto out;
	}
	if (optind < argc && process_file) {
		qp_error_set(err, QP_E_INVALID, 0, "give either --process or a command, not both");
		goto out;
	}
	if (cli_root(cli, err) < 0 || pod_open(cli->rootfd, cli->root, id, false, &pod, err) < 0)
		goto out;
	pod->io.foreground = !detach;
	pod->io.pid_file = pid_file;
	pod->io.console_socket = console;
	p = &pod->spec->process;
	if (process_file) {
		if (load_process(process_file, p, err) < 0)
			goto out;
	} else {
		qp_strv_free(p->args);
		if (!(p->args = qp_strv_dup(argv + optind))) {
			qp_fail(err, ENOMEM, "exec");
			goto out;
		}
		/* as runc exec: a terminal only with --tty, whatever the pod's
		 * own process has */
		p->terminal = false;
	}
	if (tty)
		p->terminal = true;
	/* a terminal without the socket that takes its master (runc's way) is
	 * qpod's own, relayed while it waits: a person's `exec -t`; the
	 * socket is only for a terminal */
	if (p->terminal && !console && detach) {
		qp_error_set(err, QP_E_INVALID, 0,
			     "a terminal (--tty or process.terminal) with --detach needs --console-socket");
		goto out;
	}
	if (p->terminal && !console && (!isatty(0) || !isatty(1))) {
		qp_error_set(err, QP_E_INVALID, 0,
			     "a terminal (--tty or process.terminal) needs --console-socket, or qpod's stdin and stdout to be one");
		goto out;
	}
	if (console && !p->terminal) {
		qp_error_set(err, QP_E_INVALID, 0, "--console-socket needs a terminal (--tty or process.terminal)");
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
