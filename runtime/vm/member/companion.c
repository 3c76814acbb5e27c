/* runtime/vm/member/companion.c — podman's pods as one VM: podman's infra
 * container is a container pod (podman gives it no annotation of ours), and
 * the pod's other containers name it (CRI-O's SandboxID key) and join its
 * namespaces by path.  The first vm container of such a pod makes the
 * infra's companion, ID ".vm" after the infra's: a vm pod that holds
 * containers, whose own workload is the guest's pause (qpod.sandbox=pause),
 * with the infra's rootfs, mounts and hostname and the infra's network
 * namespace mirrored into it; the pod's vm containers run in it.  Deleting
 * the infra deletes its companion (pod.c). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "vm/member/member.h"

#define COMPANION_WAIT_MS 60000 /* another create is making it: until it runs */

int vm_companion_id(const char *infra, char *out, size_t size)
{
	return (size_t)snprintf(out, size, "%s" VM_COMPANION_SUFFIX, infra) >= size ? -1 : 0;
}

/* The companion's spec: the infra's, as a vm pod holding containers. */
static int companion_spec(const struct pod *infra, struct pod_spec **out, qp_error **err)
{
	_cleanup_free_ char *json = NULL, *path = NULL;
	struct pod_spec *s = NULL;
	size_t len;

	if (spec_write(infra->spec, &json, &len, err) < 0 || spec_parse(json, len, &s, err) < 0)
		return -1;
	/* the infra's cgroup and hooks are the infra's own */
	free(s->cgroups_path);
	s->cgroups_path = NULL;
	spec_hooks_clear(s);
	s->process.terminal = false;
	if (asprintf(&path, "/proc/%d/ns/net", (int)infra->state->pid) < 0) {
		spec_free(s);
		return qp_fail(err, ENOMEM, "the pod's VM");
	}
	free(s->ns[QP_NS_NET].path);
	s->ns[QP_NS_NET].enabled = true;
	s->ns[QP_NS_NET].path = path;
	path = NULL;
	if (spec_opt_set(s, "qpod.mode", "vm", err) < 0 || spec_opt_set(s, "qpod.sandbox", "pause", err) < 0) {
		spec_free(s);
		return -1;
	}
	*out = s;
	return 0;
}

/* Create and start it; its monitor keeps no stdio of ours (a client reads
 * create's output to its end). */
static int make_companion(struct pod *infra, const char *id, struct pod **out, qp_error **err)
{
	struct pod_io io = { 0 };
	struct pod_spec *spec = NULL;
	int saved[3] = { -1, -1, -1 }, null = open("/dev/null", O_RDWR | O_CLOEXEC), r = -1;

	if (null < 0)
		return qp_fail(err, errno, "/dev/null");
	if (companion_spec(infra, &spec, err) < 0)
		goto out;
	for (int fd = 0; fd < 3; fd++)
		if ((saved[fd] = fcntl(fd, F_DUPFD_CLOEXEC, 3)) < 0 || dup2(null, fd) < 0) {
			qp_fail(err, errno, "the pod's VM: stdio");
			goto restore;
		}
	if (pod_create(infra->rootfd, infra->root, id, spec, NULL, infra->rootfs, &io, out, err) < 0) {
		spec_free(spec);
		goto restore;
	}
	r = pod_start(*out, err);
	if (r < 0) {
		pod_delete(*out, true, NULL);
		pod_free(*out);
		*out = NULL;
	}
restore:
	for (int fd = 0; fd < 3; fd++)
		if (saved[fd] >= 0) {
			dup2(saved[fd], fd);
			close(saved[fd]);
		}
out:
	close(null);
	return r < 0 ? qp_error_prefix(err, "the VM of podman's pod \"%s\"", infra->id) : 0;
}

int vm_companion_open(struct pod *infra, struct pod **out, qp_error **err)
{
	char id[QP_ID_MAX + 8];
	qp_error *e = NULL;

	if (vm_companion_id(infra->id, id, sizeof(id)) < 0 || strlen(id) > QP_ID_MAX)
		return qp_error_set(err, QP_E_INVALID, 0, "pod \"%s\": an ID too long for its VM's", infra->id);
	if (infra->state->mode != QP_MODE_CONTAINER || infra->state->sandbox || !state_pid_alive(infra->state))
		return qp_error_set(err, QP_E_INVALID, 0, "pod \"%s\" does not hold containers (a vm pod made with "
				    "qpod.sandbox=true, a CRI sandbox, or podman's running infra container does)",
				    infra->id);
	for (int waited = 0;; waited += 100) {
		if (pod_open(infra->rootfd, infra->root, id, QP_LOCK_SHARED, out, &e) == 0) {
			if (pod_status(*out) == QP_STATUS_RUNNING)
				return 0;
			pod_free(*out);
			*out = NULL;
		} else if (e && e->code == QP_E_NOTFOUND) {
			qp_error_free(&e);
			if (make_companion(infra, id, out, &e) == 0)
				return 0;
			if (!e || e->code != QP_E_EXISTS) { /* made by another create meanwhile: wait */
				if (err)
					*err = e;
				else
					qp_error_free(&e);
				return -1;
			}
		}
		qp_error_free(&e);
		if (waited >= COMPANION_WAIT_MS)
			return qp_error_set(err, QP_E_TIMEOUT, 0, "the VM of podman's pod \"%s\" did not run within %d s",
					    infra->id, COMPANION_WAIT_MS / 1000);
		usleep(100000);
	}
}

void vm_companion_delete(int rootfd, const char *root, const char *infra)
{
	char id[QP_ID_MAX + 8];
	struct pod *c = NULL;

	if (vm_companion_id(infra, id, sizeof(id)) < 0 || pod_open(rootfd, root, id, QP_LOCK_EXCLUSIVE, &c, NULL) < 0)
		return;
	pod_delete(c, true, NULL);
	pod_free(c);
}
