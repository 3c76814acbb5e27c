/* runtime/pod_info.c — what the drivers and hooks read of a pod (pod.h):
 * its OCI state, its status, its network settings; and the pid file they
 * write.  Apart from pod.c's lifecycle, which calls the drivers: these are
 * called by them. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "net/net.h"
#include "pod.h"
#include "util/cleanup.h"

struct qp_oci_state pod_oci_state(const struct pod *pod, enum qp_status status, pid_t pid)
{
	const struct pod_state *st = pod->state;

	/* the friendly form has no bundle: its rootfs stands for it */
	return (struct qp_oci_state){ .id = pod->id, .status = status, .pid = pid,
				      .bundle = st->bundle ? st->bundle : st->rootfs,
				      .annotations = st->annotations, .n_annotations = st->n_annotations };
}

int pod_write_pid_file(const char *path, pid_t pid, qp_error **err)
{
	char tmp[4096], buf[32];
	int n = snprintf(buf, sizeof(buf), "%d", (int)pid);
	_cleanup_close_ int fd = -1;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.qpod-tmp", path) >= sizeof(tmp))
		return qp_error_set(err, QP_E_INVALID, 0, "pid file path too long");
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0 || write(fd, buf, (size_t)n) != n || rename(tmp, path) < 0) {
		int e = errno;
		unlink(tmp);
		return qp_fail(err, e, "write pid file \"%s\"", path);
	}
	return 0;
}

enum qp_status pod_status(struct pod *pod)
{
	/* creating while its creator holds the lock; a creation whose
	 * creator is gone (we hold the lock, or nobody does) has ended, and
	 * every command says so alike: stopped */
	if (pod->state->status == QP_STATUS_CREATING) {
		bool creating = pod->creator ||
				(pod->lock == QP_LOCK_NONE && state_lock_busy(pod->dirfd));
		return creating ? QP_STATUS_CREATING : QP_STATUS_STOPPED;
	}
	return pod->drv->status(pod);
}

bool pod_net_config(const struct pod *pod, struct qp_net_config *cfg, const char **ip)
{
	const struct pod_spec *spec = pod->spec;

	*cfg = (struct qp_net_config){
		.root = pod->root,
		.bridge_prefix = spec->opts.net_bridge,
		.subnet = spec->opts.net_subnet,
	};
	if (ip)
		*ip = spec->opts.net_ip;
	return spec->opts.net && !strcmp(spec->opts.net, "bridge");
}
