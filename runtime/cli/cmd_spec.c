/* runtime/cli/cmd_spec.c — `qpod spec` (the default config.json) and
 * `qpod features` (what this build supports, the OCI features document). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "container/caps.h"
#include "container/seccomp.h"
#include "spec/spec.h"
#include "util/json.h"

const struct option cli_opts_spec[] = { { "rootless", no_argument, NULL, 'r' },
				      { "help", no_argument, NULL, 'h' }, { 0 } };

int cmd_spec(struct qp_cli *cli, int argc, char **argv, qp_error **err)
{
	const struct option *opts = cli_opts_spec;
	bool rootless = false;
	struct pod_spec *spec;
	char *text = NULL;
	int c, r;

	while ((c = getopt_long(argc, argv, "+rh", opts, NULL)) != -1) {
		if (c == 'h') {
			printf("Usage: qpod spec [--rootless]\n"
			       "Print a default OCI config.json on stdout (process.args [\"sh\"],\n"
			       "root.path \"rootfs\", the default capabilities and seccomp profile).\n"
			       "  -r, --rootless  add a user namespace mapping the caller's uid/gid to root\n");
			return 0;
		}
		if (c != 'r')
			return qp_error_set(err, QP_E_INVALID, 0, "usage: qpod spec [--rootless]");
		rootless = true;
	}
	if (optind < argc)
		return qp_error_set(err, QP_E_INVALID, 0, "spec: unexpected argument \"%s\"", argv[optind]);
	spec = spec_default();
	if (!spec)
		return qp_fail(err, ENOMEM, "spec");
	if (rootless) {
		spec->ns[QP_NS_USER].enabled = true;
		spec->uid_mappings = calloc(1, sizeof(*spec->uid_mappings));
		spec->gid_mappings = calloc(1, sizeof(*spec->gid_mappings));
		if (!spec->uid_mappings || !spec->gid_mappings) {
			spec_free(spec);
			return qp_fail(err, ENOMEM, "spec");
		}
		spec->uid_mappings[0] = (struct qp_idmap){ 0, (uint32_t)getuid(), 1 };
		spec->gid_mappings[0] = (struct qp_idmap){ 0, (uint32_t)getgid(), 1 };
		spec->n_uid_mappings = spec->n_gid_mappings = 1;
	}
	r = spec_write(spec, &text, NULL, err);
	if (r == 0)
		printf("%s\n", text);
	free(text);
	spec_free(spec);
	return r < 0 ? qp_error_prefix(err, "spec") : 0;
}

static void strings(yajl_gen g, const char *key, const char *const *v)
{
	qp_json_key(g, key);
	yajl_gen_array_open(g);
	for (; *v; v++)
		qp_json_str(g, *v);
	yajl_gen_array_close(g);
}

static void put_annotation(void *g, const char *key, const char *help)
{
	qp_json_kstr(g, key, help);
}

int cmd_features(struct qp_cli *cli, int argc, char **argv, qp_error **err)
{
	static const char *const mount_opts[] = {
		"async", "atime", "bind", "defaults", "dev", "diratime", "dirsync", "exec",
		"lazytime", "mand", "noatime", "nodev", "nodiratime", "noexec", "nolazytime",
		"nomand", "norelatime", "nostrictatime", "nosuid", "private", "rbind", "relatime",
		"remount", "ro", "rprivate", "rro", "rshared", "rslave", "runbindable", "rw", "shared",
		"slave", "strictatime", "suid", "sync", "tmpcopyup", "unbindable", NULL
	};
	/* "time" last: listed only where the kernel has time namespaces */
	const char *namespaces[] = { "cgroup", "ipc", "mount", "network", "pid", "user", "uts", "time", NULL };
	char *text = NULL;
	int r;

	if (argc > 1) {
		if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
			printf("Usage: qpod features\nPrint the OCI features document as JSON.\n");
			return 0;
		}
		return qp_error_set(err, QP_E_INVALID, 0, "features: unexpected argument \"%s\"", argv[1]);
	}
	yajl_gen g = qp_json_gen_new(true);
	yajl_gen_map_open(g);
	qp_json_kstr(g, "ociVersionMin", "1.0.0");
	qp_json_kstr(g, "ociVersionMax", "1.2.0");
	/* every kind runs in container pods; vm pods refuse the two that
	 * would run inside the guest (createContainer, startContainer) */
	qp_json_key(g, "hooks");
	yajl_gen_array_open(g);
	for (int k = 0; k < QP_HOOK_COUNT; k++)
		qp_json_str(g, qp_hook_name(k));
	yajl_gen_array_close(g);
	strings(g, "mountOptions", mount_opts);
	qp_json_key(g, "linux");
	yajl_gen_map_open(g);
	if (access("/proc/self/ns/time", F_OK) < 0)
		namespaces[sizeof(namespaces) / sizeof(namespaces[0]) - 2] = NULL;
	strings(g, "namespaces", namespaces);
	qp_json_key(g, "capabilities");
	yajl_gen_array_open(g);
	for (int cap = 0; cap <= qp_cap_last_cap(); cap++)
		if (qp_cap_name(cap))
			qp_json_str(g, qp_cap_name(cap));
	yajl_gen_array_close(g);
	qp_json_key(g, "cgroup");
	yajl_gen_map_open(g);
	qp_json_kbool(g, "v1", true);
	qp_json_kbool(g, "v2", true);
	qp_json_kbool(g, "systemd", false);
	qp_json_kbool(g, "systemdUser", false);
	yajl_gen_map_close(g);
	qp_json_key(g, "seccomp");
	yajl_gen_map_open(g);
	qp_json_kbool(g, "enabled", true);
	strings(g, "actions", qp_seccomp_action_names);
	strings(g, "operators", qp_seccomp_op_names);
	strings(g, "archs", qp_seccomp_arch_names);
	yajl_gen_map_close(g);
	/* as runc's: qpod can apply them (container/lsm.c); whether this host
	 * has the module is checked at create */
	qp_json_key(g, "apparmor");
	yajl_gen_map_open(g);
	qp_json_kbool(g, "enabled", true);
	yajl_gen_map_close(g);
	qp_json_key(g, "selinux");
	yajl_gen_map_open(g);
	qp_json_kbool(g, "enabled", true);
	yajl_gen_map_close(g);
	yajl_gen_map_close(g);
	qp_json_key(g, "annotations");
	yajl_gen_map_open(g);
	spec_opts_describe(put_annotation, g);
	yajl_gen_map_close(g);
	/* every qpod.* annotation changes how the pod runs (mode, network,
	 * firmware): a client must not pass them through from untrusted users */
	qp_json_key(g, "potentiallyUnsafeConfigAnnotations");
	yajl_gen_array_open(g);
	yajl_gen_string(g, (const unsigned char *)"qpod.", 5);
	yajl_gen_array_close(g);
	yajl_gen_map_close(g);
	r = qp_json_gen_finish(g, &text, NULL, err);
	if (r == 0)
		printf("%s\n", text);
	free(text);
	return r;
}
