/* runtime/container/features.c — the "linux" object of `qpod features`
 * (the OCI features document): the namespaces, capabilities, cgroup
 * versions, seccomp actions/operators/architectures and LSMs that container
 * pods apply.  The driver's features op; cli/cmd_spec.c writes the rest. */
#include <unistd.h>

#include "host/caps.h"
#include "container/container.h"
#include "container/seccomp.h"
#include "util/json.h"

void qp_container_features(void *gen)
{
	yajl_gen g = gen;
	/* "time" last: listed only where the kernel has time namespaces */
	const char *namespaces[] = { "cgroup", "ipc", "mount", "network", "pid", "user", "uts", "time", NULL };

	qp_json_key(g, "linux");
	yajl_gen_map_open(g);
	if (access("/proc/self/ns/time", F_OK) < 0)
		namespaces[sizeof(namespaces) / sizeof(namespaces[0]) - 2] = NULL;
	qp_json_kstrv(g, "namespaces", namespaces);
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
	qp_json_kstrv(g, "actions", qp_seccomp_action_names);
	qp_json_kstrv(g, "operators", qp_seccomp_op_names);
	qp_json_kstrv(g, "archs", qp_seccomp_arch_names);
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
}
