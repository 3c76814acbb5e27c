/* runtime/cli/cmd_stats.c — `qpod stats POD`: the pod's memory as one JSON
 * object (bench/podmem.h says what each figure is), in kB:
 *   vm:        {"id","guest":{total_kb,free_kb,available_kb,buffers_kb,
 *               cached_kb,used_kb},"vmm":{pid,rss_kb,pss_kb,vsz_kb}}
 *   container: {"id","cgroup":{"usage_kb"}}
 * These are the figures `qpod bench memory` and `qpod density` aggregate. */
#include <stdio.h>
#include <string.h>

#include "bench/podmem.h"
#include "cli/cli.h"
#include "pod.h"

int cmd_stats(struct qp_cli *cli, int argc, char **argv, qp_error **err)
{
	struct pod *pod = NULL;
	struct qp_pod_mem m;
	const char *id;
	int r;

	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		puts("Usage: qpod stats POD\nMemory of a running pod as JSON (kB): vm: guest meminfo and the VMM's RSS/PSS/VSZ;\ncontainer: the cgroup's usage.");
		return 0;
	}
	if (cli_one_id(argc, argv, 1, &id, err) < 0 || cli_root(cli, err) < 0 ||
	    pod_open(cli->rootfd, cli->root, id, false, &pod, err) < 0)
		return qp_error_prefix(err, "stats");
	r = qp_pod_mem(pod, &m, err);
	if (r == 0 && m.vm)
		printf("{\"id\":\"%s\",\"guest\":{\"total_kb\":%lld,\"free_kb\":%lld,\"available_kb\":%lld,"
		       "\"buffers_kb\":%lld,\"cached_kb\":%lld,\"used_kb\":%lld},"
		       "\"vmm\":{\"pid\":%lld,\"rss_kb\":%lld,\"pss_kb\":%lld,\"vsz_kb\":%lld}}\n",
		       id, m.guest_total, m.guest_free, m.guest_available, m.guest_buffers, m.guest_cached,
		       m.guest_used, m.vmm_pid, m.vmm_rss, m.vmm_pss, m.vmm_vsz);
	else if (r == 0)
		printf("{\"id\":\"%s\",\"cgroup\":{\"usage_kb\":%lld}}\n", id, m.cgroup_usage);
	pod_free(pod);
	return r < 0 ? qp_error_prefix(err, "stats") : 0;
}
