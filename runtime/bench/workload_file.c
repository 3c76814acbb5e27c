/* runtime/bench/workload_file.c — the file I/O tests of `bench workload`
 * (UnixBench's file write/read/copy and the thesis's "hard disk access"),
 * tools/bench/fileio in a directory of
 *   file_*   the pod's root: /bench-io in the image copy (a VM pod reaches
 *            its root over 9p; a container's is the host directory itself)
 *   vol_*    a scratch volume: the host directory ROOT/.bench-vol bind-mounted
 *            at /scratch (a VM pod: one more 9p share).  The friendly run
 *            form has no volume flag, so this pod is an OCI bundle the bench
 *            writes (qpod's default spec, the mount, the qpod.* annotations).
 * The peers (runc, crun, runsc) run the same bundle for vol_*.
 * The host runs fileio in the same directories.  write, read, copy: MB/s of
 * FILE_MIB MiB files in 64 KiB blocks, fsync'd; create: 4 KiB files/s, each
 * created and deleted. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench/peers.h"
#include "bench/workload.h"
#include "spec/spec.h"
#include "util/strv.h"

#define FILE_MIB "16"
#define PAGE_BYTES 4096 /* the static page of the http test */
#define VOL_POD "bench-vol"

bool wl_is_file(const char *test)
{
	return !strncmp(test, "file_", 5) || !strncmp(test, "vol_", 4);
}

static int make_dir(const char *path, qp_error **err)
{
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		return qp_fail(err, errno, "mkdir \"%s\"", path);
	return 0;
}

int wl_prepare_dirs(struct wl *b, qp_error **err)
{
	char path[4300], page[PAGE_BYTES + 1];
	FILE *f;

	snprintf(path, sizeof(path), "%s/bench-io", b->img);
	if (make_dir(path, err) < 0)
		return -1;
	snprintf(b->vol, sizeof(b->vol), "%s/.bench-vol", b->o->root);
	if (make_dir(b->vol, err) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/www", b->img);
	if (make_dir(path, err) < 0)
		return -1;
	/* a static page of PAGE_BYTES: markup around filler text */
	int n = snprintf(page, sizeof(page), "<!DOCTYPE html><html><head><title>qpod</title></head><body><p>");
	const char *tail = "</p></body></html>\n";
	for (; n < PAGE_BYTES - (int)strlen(tail); n++)
		page[n] = "qpod bench "[n % 11];
	snprintf(page + n, sizeof(page) - (size_t)n, "%s", tail);
	snprintf(path, sizeof(path), "%s/www/index.html", b->img);
	if (!(f = fopen(path, "we")) || fputs(page, f) < 0 || fclose(f) != 0)
		return qp_fail(err, errno, "write \"%s\"", path);
	return 0;
}

/* ROOT/.bench-bundle/config.json: fileio ARGS in the image, the volume at /scratch. */
static int write_bundle(const struct wl *b, const char *target, const char *const *args, char *dir,
			size_t size, qp_error **err)
{
	struct pod_spec *s = spec_default();
	char vcpus[16];
	int r = -1;

	snprintf(dir, size, "%s/.bench-bundle", b->o->root);
	if (!s)
		return qp_fail(err, ENOMEM, "bench: spec");
	if (make_dir(dir, err) < 0)
		goto out;
	struct qp_mount *m = realloc(s->mounts, (s->n_mounts + 1) * sizeof(*m));
	if (!m)
		goto nomem;
	s->mounts = m;
	m = &s->mounts[s->n_mounts++];
	*m = (struct qp_mount){ .destination = strdup("/scratch"), .type = strdup("bind"),
				.source = strdup(b->vol), .options = qp_strv_dup((char *const[]){ "rbind", "rw", NULL }),
				.n_options = 2 };
	qp_strv_free(s->process.args);
	s->process.args = qp_strv_dup((char *const *)args);
	free(s->root_path);
	s->root_path = strdup(b->img);
	s->process.terminal = false;
	if (!m->destination || !m->type || !m->source || !m->options || !s->process.args || !s->root_path)
		goto nomem;
	if (wl_is_peer(target)) { /* beside qpod's pods, as every peer's run (peers.h) */
		free(s->cgroups_path);
		if (!(s->cgroups_path = strdup(QP_PEER_CGROUP)))
			goto nomem;
	}
	if (!strcmp(target, "vm")) {
		s->resources.has_memory_limit = true;
		s->resources.memory_limit = b->o->memory ? b->o->memory_bytes : WL_VM_MEMORY;
		snprintf(vcpus, sizeof(vcpus), "%d", b->o->vcpus > 0 ? b->o->vcpus : 1);
		if (spec_opt_set(s, "qpod.mode", "vm", err) < 0 || spec_opt_set(s, "qpod.vcpus", vcpus, err) < 0)
			goto out;
	}
	r = spec_write_bundle(s, dir, err);
	goto out;
nomem:
	qp_fail(err, ENOMEM, "bench: spec");
out:
	spec_free(s);
	return r;
}

int wl_run_file(const struct wl *b, const char *target, const char *test, struct wl_values *vals,
		qp_error **err)
{
	bool vol = !strncmp(test, "vol_", 4), host = !strcmp(target, "host");
	const char *op = strchr(test, '_') + 1;
	char tool[4300], dir[4300], bundle[4300];

	if (host)
		snprintf(dir, sizeof(dir), "%s%s", vol ? b->vol : b->img, vol ? "" : "/bench-io");
	else
		snprintf(dir, sizeof(dir), "%s", vol ? "/scratch" : "/bench-io");
	const char *fargv[] = { wl_tool_path(b, target, "fileio", tool, sizeof(tool)), "--test", op, "--dir", dir,
				"--size", FILE_MIB, "--duration", b->dur, NULL };
	if (vol && !host) {
		if (write_bundle(b, target, fargv, bundle, sizeof(bundle), err) < 0)
			return -1;
		if (wl_is_peer(target))
			return wl_run_peer_bundle(b, target, bundle, test, vals, err);
		const char *rargv[] = { b->o->qpod, "--root", b->o->root, "run", VOL_POD, "--bundle", bundle, NULL };
		int r = wl_run_tool(rargv, test, NULL, vals, err);
		wl_delete_pod(b, VOL_POD);
		return r;
	}
	return wl_run_in(b, target, fargv, test, vals, err);
}
