/* runtime/cli/cmd_gc.c — `qpod gc`: clean up after crashed qpod processes.
 * Only directories that carry qpod's mark (written at the claim, see
 * state_claim) are ever removed; anything else in the root is left alone.
 * A pod directory whose creation was abandoned (qpod killed mid-create: no
 * state file, or status "creating" with no live process, and nobody holding
 * its lock) is destroyed like `delete --force`; then every network link,
 * address and IPAM lease whose pod no longer exists is removed, and the
 * directory of every spare whose holder is gone (vm/snapshot/spare.c).  Pods that
 * exist — running or stopped — are left alone, and so is a pod whose state
 * cannot be read (damaged, oversized, a symlink): gc cannot tell what it
 * runs, so it kills nothing of it and keeps its dir, its cgroup and its
 * leases; it names it on stdout instead. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "cli/cli.h"
#include "host/cgroup/cgroup.h"
#include "net/net.h"
#include "pod.h"
#include "util/cleanup.h"
#include "util/strv.h"

enum verdict {
	KEEP,        /* a pod, or being worked on, or not qpod's */
	NO_STATE,    /* claimed, but its creator died before the first state
		      * write: nothing else of it can exist yet (the cgroup
		      * path is saved before the cgroup is made) */
	ABANDONED,   /* status "creating", no live process, nobody on it */
	UNREADABLE,  /* a state file that cannot be read: left alone */
};

static enum verdict judge(int rootfd, const char *id, qp_error **why)
{
	_cleanup_close_ int fd = openat(rootfd, id, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	struct pod *pod = NULL;
	enum verdict v;

	if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) < 0)
		return KEEP; /* gone, or a qpod process is working on it */
	/* only what qpod provably made: its mark, written at the claim */
	if (faccessat(fd, QP_POD_MARKER, F_OK, AT_SYMLINK_NOFOLLOW) < 0)
		return KEEP;
	if (faccessat(fd, "state.json", F_OK, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT)
		return NO_STATE;
	/* the whole pod as every command reads it (state, config, identity) */
	if (pod_open(rootfd, NULL, id, QP_LOCK_NONE, &pod, why) < 0)
		return UNREADABLE;
	v = pod->state->status == QP_STATUS_CREATING && !state_pid_alive(pod->state) ? ABANDONED
										   : KEEP;
	pod_free(pod);
	return v;
}

static int remove_abandoned(struct qp_cli *cli, const char *id, enum verdict v, qp_error **err)
{
	struct pod *pod = NULL;

	if (v == ABANDONED) {
		if (pod_open(cli->rootfd, cli->root, id, true, &pod, err) < 0)
			return -1;
		int r = pod->drv->destroy(pod, err);
		pod_free(pod);
		if (r < 0)
			return -1;
	}
	return state_remove(cli->rootfd, id, err);
}

int cmd_gc(struct qp_cli *cli, int argc, char **argv, qp_error **err)
{
	struct qp_net_config net = { 0 };
	_cleanup_close_ int dfd = -1;
	DIR *d;
	struct dirent *de;
	char **live = NULL;
	size_t n_live = 0;
	int removed_pods = 0, removed_net = 0, removed_spares = 0, r = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			printf("Usage: qpod gc\nRemove what crashed qpod processes left behind: "
			       "abandoned pod directories,\ntheir cgroups, network links and "
			       "leases of pods that no longer exist, and the\ndirectories of spares "
			       "whose holder died (qpod spares).\n");
			return 0;
		}
		return qp_error_set(err, QP_E_INVALID, 0, "gc: unexpected argument \"%s\"", argv[i]);
	}
	if (cli_root(cli, err) < 0)
		return qp_error_prefix(err, "gc");
	dfd = openat(cli->rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 || !(d = fdopendir(dfd)))
		return qp_fail(err, errno, "gc: read state root");
	dfd = -1;
	live = calloc(1, sizeof(*live));
	while (live && (de = readdir(d))) {
		if (de->d_type == DT_DIR && state_remove_stale_claim(cli->rootfd, de->d_name)) {
			removed_pods++;
			continue;
		}
		if (de->d_type != DT_DIR || state_validate_id(de->d_name, NULL) < 0)
			continue;
		qp_error *why = NULL;
		enum verdict v = judge(cli->rootfd, de->d_name, &why);
		if (v == UNREADABLE)
			printf("left alone: pod \"%s\": %s\n", de->d_name, why ? why->msg : "unreadable");
		qp_error_free(&why);
		if (v == NO_STATE || v == ABANDONED) {
			if (remove_abandoned(cli, de->d_name, v, err) < 0) {
				r = -1;
				break;
			}
			removed_pods++;
			continue;
		}
		char **nv = realloc(live, (n_live + 2) * sizeof(*nv));
		if (!nv || !(nv[n_live] = strdup(de->d_name))) {
			live = nv ? nv : live;
			r = qp_fail(err, ENOMEM, "gc");
			break;
		}
		live = nv;
		live[++n_live] = NULL;
	}
	closedir(d);
	if (!live)
		return qp_fail(err, ENOMEM, "gc");
	if (r == 0) {
		net.root = cli->root;
		r = qp_net_gc(&net, live, &removed_net, err);
	}
	qp_strv_free(live);
	/* what spares whose holder died left (their QEMU died with it) */
	const struct pod_driver *vm = driver_by_name("vm", NULL);
	if (r == 0 && vm && vm->spares_gc)
		r = vm->spares_gc(cli->rootfd, &removed_spares, err);
	if (r < 0)
		return qp_error_prefix(err, "gc");
	printf("removed %d abandoned pod(s), %d network lease(s)/link(s), %d dead spare(s)\n", removed_pods,
	       removed_net, removed_spares);
	return 0;
}
