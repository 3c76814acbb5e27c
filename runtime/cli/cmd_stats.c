/* runtime/cli/cmd_stats.c — `qpod stats POD`: the pod's memory as one JSON
 * object.  container pods: the cgroup's memory usage (v2 memory.current, v1
 * memory.usage_in_bytes) as {"cgroup":{"usage_kb"}}.  vm pods: the guest's /proc/meminfo through guest-init (total,
 * free, available, buffers, cached, and used = total - free - buffers -
 * cached, `free`'s arithmetic) and the VMM process's RSS, PSS and VSZ
 * (/proc/PID/status and smaps_rollup).  All sizes in kB.  These are the
 * figures `qpod bench memory` aggregates. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "container/cgroup.h"
#include "pod.h"
#include "vm/vm.h"

/* "Key:   123 kB" of a /proc file; -1 if absent. */
static long long proc_kb(pid_t pid, const char *file, const char *key)
{
	char path[64], line[256];
	size_t klen = strlen(key);
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	if (!(f = fopen(path, "re")))
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, klen) && line[klen] == ':') {
			v = strtoll(line + klen + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

int cmd_stats(struct qp_cli *cli, int argc, char **argv, qp_error **err)
{
	struct qp_msg req = { .type = QP_MSG_MEMINFO_REQ }, m;
	struct pod *pod = NULL;
	const char *id;
	pid_t pid;

	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		puts("Usage: qpod stats POD\nMemory of a running pod as JSON (kB): vm: guest meminfo and the VMM's RSS/PSS/VSZ;\ncontainer: the cgroup's usage.");
		return 0;
	}
	if (cli_one_id(argc, argv, 1, &id, err) < 0 || cli_root(cli, err) < 0 ||
	    pod_open(cli->rootfd, cli->root, id, false, &pod, err) < 0)
		return qp_error_prefix(err, "stats");
	if (pod_status(pod) == QP_STATUS_STOPPED) {
		qp_error_set(err, QP_E_STATE, 0, "stats: pod \"%s\" is not running", id);
		pod_free(pod);
		return -1;
	}
	if (pod->state->mode == QP_MODE_CONTAINER) {
		struct qp_cgroup *cg = NULL;
		uint64_t bytes = 0;
		int r = -1;

		if (!pod->state->cgroup)
			qp_error_set(err, QP_E_STATE, 0, "pod \"%s\" has no cgroup of its own (rootless)", id);
		else if (qp_cgroup_open(pod->state->cgroup, &cg, err) == 0 &&
			 qp_cgroup_memory_usage(cg, &bytes, err) == 0) {
			printf("{\"id\":\"%s\",\"cgroup\":{\"usage_kb\":%llu}}\n", id,
			       (unsigned long long)(bytes / 1024));
			r = 0;
		}
		qp_cgroup_free(cg);
		pod_free(pod);
		return r < 0 ? qp_error_prefix(err, "stats") : 0;
	}
	pid = pod->state->pid;
	if (vm_ctl_call(pod->dirfd, &req, &m, NULL, 10000, err) < 0) {
		pod_free(pod);
		return qp_error_prefix(err, "stats");
	}
	unsigned long long used = m.u.meminfo.total_kb - m.u.meminfo.free_kb - m.u.meminfo.buffers_kb -
				  m.u.meminfo.cached_kb;
	printf("{\"id\":\"%s\",\"guest\":{\"total_kb\":%llu,\"free_kb\":%llu,\"available_kb\":%llu,"
	       "\"buffers_kb\":%llu,\"cached_kb\":%llu,\"used_kb\":%llu},"
	       "\"vmm\":{\"pid\":%d,\"rss_kb\":%lld,\"pss_kb\":%lld,\"vsz_kb\":%lld}}\n",
	       id, (unsigned long long)m.u.meminfo.total_kb, (unsigned long long)m.u.meminfo.free_kb,
	       (unsigned long long)m.u.meminfo.available_kb, (unsigned long long)m.u.meminfo.buffers_kb,
	       (unsigned long long)m.u.meminfo.cached_kb, used, (int)pid, proc_kb(pid, "status", "VmRSS"),
	       proc_kb(pid, "smaps_rollup", "Pss"), proc_kb(pid, "status", "VmSize"));
	pod_free(pod);
	return 0;
}
