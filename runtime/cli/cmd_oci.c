/* runtime/cli/cmd_oci.c — the small OCI lifecycle commands that take one pod
 * ID: start, state, kill, delete, ps.  (create, run, exec, list, spec and
 * features have files of their own.) */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "oci_state.h"
#include "pod.h"
#include "util/json.h"

/* Parse --help and the options in `longopts` (before or after the ID:
 * getopt permutes), then the one ID. */
static int open_one(struct qp_cli *cli, int argc, char **argv, int lock, const char *usage,
		    const char *about, const struct option *longopts, const char *shortopts,
		    int (*on_opt)(int c, const char *arg, void *ctx, qp_error **err), void *ctx,
		    struct pod **pod, qp_error **err)
{
	const char *id;
	int c;

	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		if (c == 'h') {
			printf("Usage: qpod %s\n%s", usage, about);
			exit(0);
		}
		if (c == '?' || !on_opt || on_opt(c, optarg, ctx, err) < 0)
			return err && *err ? -1
					   : qp_error_set(err, QP_E_INVALID, 0, "usage: qpod %s", usage);
	}
	if (cli_one_id(argc, argv, optind, &id, err) < 0 || cli_root(cli, err) < 0)
		return -1;
	return pod_open(cli->rootfd, cli->root, id, lock, pod, err);
}

/* the --help texts after the usage line */
static const char start_about[] =
	"Start the workload of a created pod (the process `qpod create` left waiting).\n";
static const char state_about[] =
	"Print the OCI state of a pod as JSON (ociVersion, id, status, pid, bundle,\n"
	"annotations), plus created, mode, accel, nic (a vm pod with a NIC: its\n"
	"backend, \"vhost-net\" or \"userspace: REASON\"), vmm_pid (vm pods), rootfs,\n"
	"cgroup, pod (a container inside a vm pod's VM: that pod's ID), stop_reason\n"
	"and the start's timeline (phases in ms).\n";
static const char kill_about[] =
	"Send SIGNAL (default TERM; a name such as KILL or SIGKILL, or a number) to the\n"
	"pod's process (vm: the workload in the guest).\n"
	"  -a, --all   every process of the pod; succeeds on a stopped pod (else\n"
	"              \"container not running\", exit status 1, as runc)\n";
static const char delete_about[] =
	"Delete a stopped pod: its state, cgroup, network and (vm) its VM.\n"
	"  -f, --force  kill a pod that still runs first; a pod that does not exist\n"
	"               is no error then (as runc)\n";
static const char ps_about[] =
	"List the host pids of a pod's processes (vm: its monitor and QEMU).\n"
	"  -f, --format table|json  one pid per line (default), or a JSON array\n";

const struct option cli_opts_help_only[] = { { "help", no_argument, NULL, 'h' }, { 0 } };

int cmd_start(struct qp_cli *cli, int argc, char **argv, qp_error **err)
{
	struct pod *pod = NULL;
	int r = open_one(cli, argc, argv, true, "start ID", start_about, cli_opts_help_only, "h", NULL, NULL, &pod, err);

	if (r == 0)
		r = pod_start(pod, err);
	pod_free(pod);
	return r < 0 ? qp_error_prefix(err, "start") : 0;
}

/* "timeline": the start's phases in ms (timeline.json, written by the
 * pod's start), when there is one */
static void put_timeline(yajl_gen g, int dirfd)
{
	char *text = NULL;
	size_t len;
	yajl_val tree = NULL;

	if (state_read_file(dirfd, QP_TIMELINE_FILE, 4096, &text, &len, NULL) < 0)
		return;
	if (qp_json_parse(text, QP_TIMELINE_FILE, &tree, NULL) == 0 && YAJL_IS_OBJECT(tree)) {
		qp_json_key(g, "timeline");
		yajl_gen_map_open(g);
		for (size_t i = 0; i < tree->u.object.len; i++)
			if (YAJL_IS_NUMBER(tree->u.object.values[i]))
				qp_json_kms(g, tree->u.object.keys[i],
						YAJL_GET_DOUBLE(tree->u.object.values[i]));
		yajl_gen_map_close(g);
	}
	yajl_tree_free(tree);
	free(text);
}

int cmd_state(struct qp_cli *cli, int argc, char **argv, qp_error **err)
{
	struct pod *pod = NULL;
	char *text = NULL;
	int r = open_one(cli, argc, argv, QP_LOCK_NONE, "state ID", state_about, cli_opts_help_only, "h", NULL, NULL, &pod, err);

	if (r < 0)
		return qp_error_prefix(err, "state");
	enum qp_status s = pod_status(pod);
	yajl_gen g = qp_json_gen_new(true);
	yajl_gen_map_open(g);
	/* runc's: a pod still being created (its hooks asking) is "created" */
	struct qp_oci_state oci = pod_oci_state(pod, s == QP_STATUS_CREATING ? QP_STATUS_CREATED : s,
						s == QP_STATUS_STOPPED ? 0 : pod->state->pid);
	qp_oci_state_put(g, &oci, false);
	qp_json_kstr(g, "created", pod->state->created);
	qp_json_kstr(g, "mode", qp_mode_name(pod->state->mode));
	qp_json_kstr(g, "accel", pod->state->accel ? pod->state->accel : "none");
	/* vm with a NIC: vhost-net, or userspace and why */
	if (pod->state->nic)
		qp_json_kstr(g, "nic", pod->state->nic);
	/* vm: "pid" is the pod's monitor (its exit is the workload's); QEMU */
	if (pod->state->vmm_pid)
		qp_json_kint(g, "vmm_pid", state_vmm_alive(pod->state) ? pod->state->vmm_pid : 0);
	qp_json_kstr(g, "rootfs", pod->state->rootfs);
	qp_json_kstr(g, "cgroup", pod->state->cgroup);
	/* a container inside a vm pod's VM: that pod */
	if (pod->state->sandbox)
		qp_json_kstr(g, "pod", pod->state->sandbox);
	if (s == QP_STATUS_STOPPED && pod->state->stop_reason)
		qp_json_kstr(g, "stop_reason", pod->state->stop_reason);
	put_timeline(g, pod->dirfd);
	yajl_gen_map_close(g);
	r = qp_json_gen_finish(g, &text, NULL, err);
	if (r == 0)
		printf("%s\n", text);
	free(text);
	pod_free(pod);
	return r < 0 ? qp_error_prefix(err, "state") : 0;
}

struct kill_opts {
	bool all;
};

static int kill_opt(int c, const char *arg, void *ctx, qp_error **err)
{
	((struct kill_opts *)ctx)->all = (c == 'a');
	return c == 'a' ? 0 : -1;
}

const struct option cli_opts_kill[] = { { "all", no_argument, NULL, 'a' },
				      { "help", no_argument, NULL, 'h' }, { 0 } };

int cmd_kill(struct qp_cli *cli, int argc, char **argv, qp_error **err)
{
	const struct option *opts = cli_opts_kill;
	struct kill_opts ko = { 0 };
	struct pod *pod = NULL;
	int sig = SIGTERM, r;

	/* the signal is an optional second positional: peel it off first */
	if (argc >= 3 && argv[argc - 1][0] != '-' && argv[argc - 2][0] != '-') {
		sig = cli_parse_signal(argv[argc - 1]);
		if (sig < 0)
			return qp_error_set(err, QP_E_INVALID, 0, "kill: unknown signal \"%s\"",
					    argv[argc - 1]);
		argc--;
	}
	r = open_one(cli, argc, argv, false, "kill [--all] ID [SIGNAL]", kill_about, opts, "ah", kill_opt, &ko, &pod,
		     err);
	if (r == 0)
		r = pod_kill(pod, sig, ko.all, err);
	pod_free(pod);
	return r < 0 ? qp_error_prefix(err, "kill") : 0;
}

static int delete_opt(int c, const char *arg, void *ctx, qp_error **err)
{
	*(bool *)ctx = true;
	return c == 'f' ? 0 : -1;
}

const struct option cli_opts_delete[] = { { "force", no_argument, NULL, 'f' },
				      { "help", no_argument, NULL, 'h' }, { 0 } };

int cmd_delete(struct qp_cli *cli, int argc, char **argv, qp_error **err)
{
	const struct option *opts = cli_opts_delete;
	bool force = false;
	struct pod *pod = NULL;
	int r = open_one(cli, argc, argv, true, "delete [--force] ID", delete_about, opts, "fh", delete_opt, &force,
			 &pod, err);

	/* runc: `delete --force` of a pod that does not exist succeeds
	 * silently (podman runs it after every failed create) */
	if (r < 0 && force && *err && (*err)->code == QP_E_NOTFOUND) {
		qp_error_free(err);
		return 0;
	}
	if (r == 0)
		r = pod_delete(pod, force, err);
	pod_free(pod);
	return r < 0 ? qp_error_prefix(err, "delete") : 0;
}

static int format_opt(int c, const char *arg, void *ctx, qp_error **err)
{
	return c == 'f' ? cli_parse_format(arg, ctx, err) : -1;
}

const struct option cli_opts_ps[] = { { "format", required_argument, NULL, 'f' },
				      { "help", no_argument, NULL, 'h' }, { 0 } };

int cmd_ps(struct qp_cli *cli, int argc, char **argv, qp_error **err)
{
	const struct option *opts = cli_opts_ps;
	bool json = false;
	struct pod *pod = NULL;
	pid_t *pids = NULL;
	size_t n = 0;
	int r = open_one(cli, argc, argv, false, "ps [--format table|json] ID", ps_about, opts, "f:h", format_opt,
			 &json, &pod, err);

	if (r == 0)
		r = pod->drv->pids(pod, &pids, &n, err);
	if (r == 0) {
		if (json)
			putchar('[');
		for (size_t i = 0; i < n; i++)
			printf(json ? "%s%d" : "%s%d\n", json && i ? "," : "", (int)pids[i]);
		if (json)
			printf("]\n");
	}
	free(pids);
	pod_free(pod);
	return r < 0 ? qp_error_prefix(err, "ps") : 0;
}

