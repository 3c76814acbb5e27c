/* runtime/pod.c — driver-independent pod lifecycle (see pod.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "hooks.h"
#include "net/net.h"
#include "pod.h"
#include "vm/member/member.h"
#include "spec/resources.h"
#include "util/cleanup.h"
#include "util/timeline.h"

#define CONFIG_COPY "config.json"

static struct pod *pod_alloc(int rootfd, const char *root, const char *id)
{
	struct pod *pod = calloc(1, sizeof(*pod));
	if (!pod)
		return NULL;
	pod->id = strdup(id);
	pod->rootfd = rootfd;
	pod->root = root;
	pod->dirfd = -1;
	pod->sync_fd = -1;
	pod->wait_fd = -1;
	pod->tty.master = pod->tty.in = -1;
	if (!pod->id) {
		free(pod);
		return NULL;
	}
	return pod;
}

void pod_free(struct pod *pod)
{
	if (!pod)
		return;
	if (pod->dirfd >= 0)
		close(pod->dirfd);
	if (pod->sync_fd >= 0)
		close(pod->sync_fd);
	if (pod->wait_fd >= 0)
		close(pod->wait_fd);
	qp_tty_relay_end(&pod->tty);
	spec_free(pod->spec);
	state_free(pod->state);
	free(pod->bundle);
	free(pod->rootfs);
	free(pod->id);
	free(pod);
}

static char *now_rfc3339(void)
{
	struct timespec ts;
	struct tm tm;
	char *s = NULL;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	if (asprintf(&s, "%04d-%02d-%02dT%02d:%02d:%02d.%09ldZ", tm.tm_year + 1900, tm.tm_mon + 1,
		     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec) < 0)
		return NULL;
	return s;
}

static int copy_annotations(struct pod_state *st, const struct pod_spec *spec)
{
	if (!spec->n_annotations)
		return 0;
	st->annotations = calloc(spec->n_annotations, sizeof(*st->annotations));
	if (!st->annotations)
		return -1;
	for (size_t i = 0; i < spec->n_annotations; i++) {
		st->annotations[i].key = strdup(spec->annotations[i].key);
		st->annotations[i].value = strdup(spec->annotations[i].value);
		st->n_annotations++;
		if (!st->annotations[i].key || !st->annotations[i].value)
			return -1;
	}
	return 0;
}

int pod_create(int rootfd, const char *root, const char *id, struct pod_spec *spec, const char *bundle,
	       const char *rootfs, const struct pod_io *io, struct pod **out, qp_error **err)
{
	struct pod *pod = NULL;
	_cleanup_free_ char *config = NULL;
	size_t config_len;
	bool claimed = false;

	if (spec_validate(spec, err) < 0)
		return -1;
	pod = pod_alloc(rootfd, root, id);
	if (!pod)
		return qp_fail(err, ENOMEM, "create");
	pod->spec = spec; /* owned by the pod from here on */
	pod->io = *io;
	if ((bundle && !(pod->bundle = strdup(bundle))) || !(pod->rootfs = strdup(rootfs)))
		goto oom;
	if (!(pod->drv = driver_for_pod(spec->opts.mode, spec->opts.in_pod, err)))
		goto fail;
	if ((pod->dirfd = state_claim(rootfd, id, err)) < 0)
		goto fail;
	claimed = true;
	pod->creator = true;
	pod->lock = QP_LOCK_EXCLUSIVE;

	pod->state = calloc(1, sizeof(*pod->state));
	if (!pod->state || !(pod->state->id = strdup(id)) || !(pod->state->rootfs = strdup(rootfs)) ||
	    (bundle && !(pod->state->bundle = strdup(bundle))) ||
	    !(pod->state->created = now_rfc3339()) || copy_annotations(pod->state, spec) < 0 ||
	    asprintf(&pod->state->owner, "%u", (unsigned)getuid()) < 0)
		goto oom;
	pod->state->mode = spec->opts.mode;
	if (spec->opts.in_pod && spec->opts.mode == QP_MODE_VM && !(pod->state->sandbox = strdup(spec->opts.in_pod)))
		goto oom;
	pod->state->status = QP_STATUS_CREATING;
	/* the spec is kept for exec and for the driver after create */
	if (spec_write(spec, &config, &config_len, err) < 0 ||
	    state_write_file(pod->dirfd, CONFIG_COPY, config, config_len, err) < 0 ||
	    state_save(pod->dirfd, pod->state, err) < 0)
		goto fail;
	pod->t_create = qp_now_ns();
	if (pod->drv->create(pod, err) < 0)
		goto fail_stopped;
	pod->t_created = qp_now_ns();
	pod->state->status = QP_STATUS_CREATED;
	pod->creator = false;
	if (state_save(pod->dirfd, pod->state, err) < 0)
		goto fail_destroy;
	if (io->pid_file && pod_write_pid_file(io->pid_file, pod->state->pid, err) < 0)
		goto fail_destroy;
	*out = pod;
	return 0;

oom:
	qp_fail(err, ENOMEM, "create");
	goto fail;
fail_destroy:
	pod->drv->destroy(pod, NULL);
fail_stopped:
	/* runtime.md: a create that fails once the pod exists (a prestart,
	 * createRuntime or createContainer hook among others) ends as a
	 * delete does, with the pod gone and then the poststop hooks (runc's
	 * destroy); one refused before that runs none */
	if (pod->building)
		pod_hooks_warn(pod, QP_HOOK_POSTSTOP, QP_STATUS_STOPPED, 0);
fail:
	if (claimed)
		state_remove(rootfd, id, NULL);
	pod->spec = NULL; /* the caller still owns it on failure */
	pod_free(pod);
	return -1;
}

int pod_open(int rootfd, const char *root, const char *id, int lock, struct pod **out,
	     qp_error **err)
{
	struct pod *pod = pod_alloc(rootfd, root, id);
	_cleanup_free_ char *config = NULL;
	size_t len;

	if (!pod)
		return qp_fail(err, ENOMEM, "open pod");
	pod->lock = lock;
	if ((pod->dirfd = state_open(rootfd, id, lock, err)) < 0 ||
	    state_load(pod->dirfd, &pod->state, err) < 0)
		goto fail;
	if (!(pod->drv = driver_for_pod(pod->state->mode, pod->state->sandbox, err)))
		goto fail;
	if (pod->state->rootfs && !(pod->rootfs = strdup(pod->state->rootfs)))
		goto oom;
	if (state_read_file(pod->dirfd, CONFIG_COPY, QP_SPEC_MAX_FILE, &config, &len, err) < 0 ||
	    spec_parse(config, len, &pod->spec, err) < 0 || pod_check_identity(pod, err) < 0)
		goto fail;
	*out = pod;
	return 0;
oom:
	qp_fail(err, ENOMEM, "open pod");
fail:
	pod_free(pod);
	return -1;
}

int pod_start(struct pod *pod, qp_error **err)
{
	enum qp_status s = pod_status(pod);

	if (s != QP_STATUS_CREATED)
		return qp_error_set(err, QP_E_STATE, 0, "pod \"%s\" is %s, not created", pod->id,
				    qp_status_name(s));
	if (pod->drv->start(pod, err) < 0) {
		pod->state->status = pod_status(pod);
		state_save(pod->dirfd, pod->state, NULL);
		return -1;
	}
	pod->state->status = QP_STATUS_RUNNING;
	if (state_save(pod->dirfd, pod->state, err) < 0) {
		/* it runs, but its state cannot say so (a full file system):
		 * stopped, so that the failure start reports is the truth */
		pod->drv->kill(pod, SIGKILL, true, NULL);
		return qp_error_prefix(err, "pod \"%s\" stopped: its state could not be recorded",
				       pod->id);
	}
	/* runtime-spec 1.2: a failed poststart hook is a warning */
	pod_hooks_warn(pod, QP_HOOK_POSTSTART, QP_STATUS_RUNNING, pod->state->pid);
	return 0;
}

int pod_kill(struct pod *pod, int sig, bool all, qp_error **err)
{
	enum qp_status s = pod_status(pod);

	/* runc's semantics, which containerd's shim relies on when it stops a
	 * pod: `kill --all` of a stopped pod signals whatever is left and
	 * succeeds; a plain kill fails with runc's text and status */
	if (s == QP_STATUS_STOPPED && all) {
		pod->drv->kill(pod, sig, all, NULL);
		return 0;
	}
	if (s != QP_STATUS_CREATED && s != QP_STATUS_RUNNING && s != QP_STATUS_PAUSED)
		return qp_error_set(err, QP_E_NOTRUNNING, 0, "container not running");
	if (pod->drv->kill(pod, sig, all, err) < 0)
		return -1;
	/* a paused pod gets other signals when resumed; SIGKILL now (runc) */
	if (s == QP_STATUS_PAUSED && sig == SIGKILL)
		pod->drv->resume(pod, NULL);
	return 0;
}

int pod_pause(struct pod *pod, qp_error **err)
{
	enum qp_status s = pod_status(pod);

	/* runc's words, which its clients know */
	if (s != QP_STATUS_CREATED && s != QP_STATUS_RUNNING)
		return qp_error_set(err, QP_E_STATE, 0, "container not running (pod \"%s\" is %s)", pod->id,
				    qp_status_name(s));
	return pod->drv->pause(pod, err);
}

int pod_resume(struct pod *pod, qp_error **err)
{
	enum qp_status s = pod_status(pod);

	if (s != QP_STATUS_PAUSED)
		return qp_error_set(err, QP_E_STATE, 0, "container not paused (pod \"%s\" is %s)", pod->id,
				    qp_status_name(s));
	return pod->drv->resume(pod, err);
}

int pod_update(struct pod *pod, const struct qp_resources *upd, qp_error **err)
{
	enum qp_status s = pod_status(pod);
	struct qp_resources merged = { 0 };
	_cleanup_free_ char *config = NULL;
	size_t len;
	int r = -1;

	if (s == QP_STATUS_STOPPED || s == QP_STATUS_CREATING)
		return qp_error_set(err, QP_E_STATE, 0, "container not running (pod \"%s\" is %s)", pod->id,
				    qp_status_name(s));
	/* the pod's resources with the changes: applied whole, like runc's Set */
	if (spec_resources_merge(&merged, &pod->spec->resources) < 0 ||
	    spec_resources_merge(&merged, upd) < 0) {
		qp_fail(err, ENOMEM, "update");
		goto out;
	}
	if (spec_validate_resources(&merged, err) < 0 || pod->drv->update(pod, &merged, err) < 0)
		goto out;
	/* remembered in the pod's config.json for later updates and execs */
	merged.memory_check_before_update = false;
	spec_resources_clear(&pod->spec->resources);
	pod->spec->resources = merged;
	merged = (struct qp_resources){ 0 };
	if (spec_write(pod->spec, &config, &len, err) < 0 ||
	    state_write_file(pod->dirfd, CONFIG_COPY, config, len, err) < 0)
		goto out;
	r = 0;
out:
	spec_resources_clear(&merged);
	return r;
}

int pod_stats(struct pod *pod, struct qp_stats *st, qp_error **err)
{
	enum qp_status s = pod_status(pod);

	memset(st, 0, sizeof(*st));
	if (s == QP_STATUS_STOPPED || s == QP_STATUS_CREATING)
		return qp_error_set(err, QP_E_STATE, 0, "container with id %s is not running", pod->id);
	return pod->drv->stats(pod, st, err);
}

int pod_delete(struct pod *pod, bool force, qp_error **err)
{
	enum qp_status s = pod_status(pod);

	/* OCI: deleting a pod that is not stopped is an error (--force: kill it) */
	if ((s == QP_STATUS_RUNNING || s == QP_STATUS_CREATED || s == QP_STATUS_PAUSED) && !force)
		return qp_error_set(err, QP_E_STATE, 0,
				    "pod \"%s\" is %s: stop it first or use --force", pod->id,
				    qp_status_name(s));
	if (pod->drv->destroy(pod, err) < 0)
		return -1;
	/* podman's infra container: the VM of its pod's vm containers goes too */
	if (pod->state->mode == QP_MODE_CONTAINER)
		vm_companion_delete(pod->rootfd, pod->root, pod->id);
	/* the pod is gone, its state not yet: a failure is a warning */
	pod_hooks_warn(pod, QP_HOOK_POSTSTOP, QP_STATUS_STOPPED, 0);
	return state_remove(pod->rootfd, pod->id, err);
}

/* The signals `qpod run` passes on to the pod rather than dying of. */
static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH };

void pod_hold_signals(sigset_t *old)
{
	sigset_t set;

	sigemptyset(&set);
	for (size_t i = 0; i < QP_ARRAY_SIZE(forwarded); i++)
		sigaddset(&set, forwarded[i]);
	sigprocmask(SIG_BLOCK, &set, old);
	/* an ignored signal is discarded, never queued: a shell starts
	 * background jobs with SIGINT ignored, and those must reach the pod too */
	for (size_t i = 0; i < QP_ARRAY_SIZE(forwarded); i++)
		signal(forwarded[i], SIG_DFL);
}

int pod_wait(struct pod *pod, qp_error **err)
{
	sigset_t set, old;
	_cleanup_close_ int sfd = -1;
	int wfd, code = 0;

	pod_hold_signals(&old);
	sigemptyset(&set);
	for (size_t i = 0; i < QP_ARRAY_SIZE(forwarded); i++)
		sigaddset(&set, forwarded[i]);
	sfd = signalfd(-1, &set, SFD_CLOEXEC);
	if (sfd < 0) {
		qp_fail(err, errno, "signalfd");
		goto out;
	}
	if ((wfd = pod->drv->wait_fd(pod, err)) < 0)
		goto out;
	/* unlocked while the pod runs: state, kill, exec, ps and even a
	 * delete --force from elsewhere must not wait for it to end */
	flock(pod->dirfd, LOCK_UN);
	for (;;) {
		struct pollfd p[4] = { { .fd = wfd, .events = POLLIN }, { .fd = sfd, .events = POLLIN } };
		int timeout = qp_tty_relay_pollfds(&pod->tty, p + 2);
		if (poll(p, 4, timeout) < 0) {
			if (errno == EINTR)
				continue;
			qp_fail(err, errno, "poll");
			goto out;
		}
		if (p[1].revents & POLLIN) {
			struct signalfd_siginfo si;
			if (read(sfd, &si, sizeof(si)) == sizeof(si))
				pod->drv->kill(pod, (int)si.ssi_signo, 0, NULL);
		}
		qp_tty_relay_handle(&pod->tty, p + 2);
		if (p[0].revents) {
			qp_tty_relay_end(&pod->tty);
			if (pod->drv->reap(pod, &code, err) < 0 ||
			    state_lock(pod->dirfd, pod->id, true, err) < 0)
				goto out;
			pod->exit_status = code;
			sigprocmask(SIG_SETMASK, &old, NULL);
			return code;
		}
	}
out:
	sigprocmask(SIG_SETMASK, &old, NULL);
	return -1;
}

