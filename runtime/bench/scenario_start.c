/* runtime/bench/scenario_start.c — `qpod bench start`: N starts of
 * /bin/true per mode (containers: `qpod run --bundle B`, the bundle the
 * peers run; VM pods: `qpod run --rm IMAGE -- /bin/true`), each with its start latency
 * (the run's own timeline: request to the workload exec'd), its run-to-exit
 * wall time and the per-phase averages; with --baseline, interleaved in
 * the same loop: runc, crun and gVisor's runsc on the same bundle
 * (containers; bench/peers.c: a peer that is missing, or fails on this
 * host, is a row with its reason and runs no more), and for microVMs
 * cold boots of the same pod with Debian's qboot.rom (--firmware qboot) and
 * SeaBIOS (--firmware seabios, "without qboot") beside qpod's own firmware
 * (qpod-vm-cold), and the traditional VM (QEMU -M pc, SeaBIOS, Debian's
 * cloud kernel: tools/qpod-tradvm); with --libvirt-uri, the cold boot
 * through the libvirt backend beside the direct one (qpod-vm-libvirt);
 * and a pod that takes a spare (qpod-vm-spare: a clone started ahead,
 * vm/snapshot/spare.c), one made before each of its runs and not timed, where
 * spares can be made (QEMU's jail is on).
 * The phases are per variant: qpod's firmware has vmm_init and firmware
 * (its markers), the others vmm_firmware (QEMU and the firmware in one). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench/bench.h"
#include "bench/peers.h"
#include "spec/spec.h"
#include "state.h"
#include "util/cleanup.h"
#include "util/paths.h"
#include "util/strv.h"
#include "vm/qemu/qemu.h"
#include "vm/vm.h"

#define MAX_ARGS 32

/* a cold boot's phases (with qpod's firmware, or another), then a template
 * clone's (restore, resume) and a spare's (take, resume) */
static const char *const vm_phases[] = { "prepare", "network", "vmm_spawn", "vmm_init", "firmware",
					 "vmm_firmware", "kernel", "init", "restore", "take", "resume",
					 "workload", NULL };
#define MAX_VARIANT_PHASES 13
static const char *const ct_phases[] = { "prepare", "namespaces", "workload", NULL };

struct variant {
	const char *name;
	const char *argv[MAX_ARGS];
	const char *prep[MAX_ARGS];     /* run before each run, not timed (none: NULL) */
	bool timeline;                  /* a qpod run: start_ms and phases */
	const char *const *phases;
	struct qp_bench_result *start, *exit;
	const struct qp_peer *peer;     /* a peer runtime (NULL: qpod or a VM baseline) */
	char *bin, *peer_root;          /* its binary (argv[0]), its --root (ROOT/.bench-NAME) */
	const char *id;                 /* its container ID */
	char *reason;                   /* a peer that is out: why (and no more runs) */
	double phase_sum[MAX_VARIANT_PHASES];
	int phase_n[MAX_VARIANT_PHASES];
};

static bool have_file(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* The container row: qpod run --timeline --bundle BUNDLE ID, the bundle
 * the peers run (the same config.json, cgroupsPath and memory limit) */
static void qpod_bundle_argv(const struct qp_bench_opts *o, struct variant *v, const char *bundle)
{
	static char id[40]; /* this bench's own: another bench may share the root */
	snprintf(id, sizeof(id), "qpod-bench-ct-%d", (int)getpid());
	const char *a[] = { o->qpod, "--root", o->root, "run", "--timeline", "--bundle", bundle, id, NULL };

	memcpy(v->argv, a, sizeof(a));
	v->timeline = true;
	v->phases = ct_phases;
}

/* qpod run --rm [--timeline] [mode options] IMAGE -- /bin/true; boot:
 * vm pods' --boot (NULL: the default, auto) */
static void qpod_run_argv(const struct qp_bench_opts *o, struct variant *v, bool vm,
			  const char *firmware, const char *boot)
{
	static char vcpus[16];
	size_t n = 0;

	v->argv[n++] = o->qpod;
	v->argv[n++] = "--root";
	v->argv[n++] = o->root;
	v->argv[n++] = "run";
	v->argv[n++] = "--rm";
	v->argv[n++] = "--timeline";
	if (vm) {
		v->argv[n++] = "--mode";
		v->argv[n++] = "vm";
		if (o->vcpus > 0) {
			snprintf(vcpus, sizeof(vcpus), "%d", o->vcpus);
			v->argv[n++] = "--vcpus";
			v->argv[n++] = vcpus;
		}
	}
	if (firmware) {
		v->argv[n++] = "--firmware";
		v->argv[n++] = firmware;
	}
	if (boot) {
		v->argv[n++] = "--boot";
		v->argv[n++] = boot;
	}
	if (o->memory) {
		v->argv[n++] = "--memory";
		v->argv[n++] = o->memory;
	}
	v->argv[n++] = o->image;
	v->argv[n++] = "--";
	v->argv[n++] = "/bin/true";
	v->argv[n] = NULL;
	v->timeline = true;
	v->phases = vm ? vm_phases : ct_phases;
}

/* v's prep: one spare of the shape v's pod has (memory, vCPUs), no refill */
static void spare_prep(const struct qp_bench_opts *o, struct variant *v)
{
	static char vcpus[16];
	size_t n = 0;

	v->prep[n++] = o->qpod;
	v->prep[n++] = "--root";
	v->prep[n++] = o->root;
	v->prep[n++] = "spares";
	v->prep[n++] = "fill";
	v->prep[n++] = "--no-refill";
	if (o->vcpus > 0) {
		snprintf(vcpus, sizeof(vcpus), "%d", o->vcpus);
		v->prep[n++] = "--vcpus";
		v->prep[n++] = vcpus;
	}
	if (o->memory) {
		v->prep[n++] = "--memory";
		v->prep[n++] = o->memory;
	}
	v->prep[n] = NULL;
}

/* a vm pod of v through the libvirt backend at uri (its options go after
 * "run --rm --timeline") */
static void via_libvirt(struct variant *v, const char *uri)
{
	static const size_t at = 6;
	size_t n = 0;

	while (v->argv[n])
		n++;
	memmove(&v->argv[at + 4], &v->argv[at], (n - at + 1) * sizeof(v->argv[0]));
	v->argv[at] = "--vm-backend";
	v->argv[at + 1] = "libvirt";
	v->argv[at + 2] = "--libvirt-uri";
	v->argv[at + 3] = uri;
}

static int add_results(struct qp_bench_report *r, struct variant *v, qp_error **err)
{
	if (v->timeline && qp_bench_result_add(r, v->name, "start_ms", "ms", &v->start, err) < 0)
		return -1;
	return qp_bench_result_add(r, v->name, "run_to_exit_ms", "ms", &v->exit, err);
}

/* The last line of text, bounded, for an error message. */
static const char *last_line(char *text)
{
	size_t n = strlen(text);
	char *p;

	while (n && (text[n - 1] == '\n' || text[n - 1] == '\r'))
		text[--n] = '\0';
	p = strrchr(text, '\n');
	p = p ? p + 1 : text;
	if (strlen(p) > 300)
		p[300] = '\0';
	return p;
}

/* v, a peer, failed with status: its reason, and what the run left is
 * deleted */
static int peer_out(struct variant *v, int status, char *err_text, qp_error **err)
{
	const char *line = last_line(err_text);
	size_t n = 0;

	while (v->argv[n])
		n++;
	if (asprintf(&v->reason, "exited with status %d: %s", status,
		     *line ? line : "(nothing on stderr)") < 0) {
		v->reason = NULL;
		return qp_fail(err, ENOMEM, "bench");
	}
	qp_peer_delete(v->peer, v->argv[0], v->peer_root, v->id);
	return 0;
}

static int run_once(struct variant *v, bool record, qp_error **err)
{
	if (v->reason)
		return 0; /* a peer that is out */

	struct qp_child_out out = { 0 };
	double ms, tl;
	int status;

	if (v->prep[0]) {
		if (qp_bench_child((char *const *)v->prep, &ms, &status, &out, err) < 0)
			return -1;
		if (status != 0) {
			qp_error_set(err, QP_E_GENERIC, 0, "%s: %s exited with status %d: %s", v->name, v->prep[0],
				     status, last_line(out.err));
			qp_child_out_free(&out);
			return -1;
		}
		qp_child_out_free(&out);
	}
	if (qp_bench_child((char *const *)v->argv, &ms, &status, &out, err) < 0)
		return -1;
	if (status != 0 && v->peer) {
		/* a peer that refuses this host is reported, not fatal */
		int r = peer_out(v, status, out.err, err);
		qp_child_out_free(&out);
		return r;
	}
	if (status != 0) {
		qp_error_set(err, QP_E_GENERIC, 0, "%s: %s exited with status %d: %s", v->name,
			     v->argv[0], status, last_line(out.err));
		qp_child_out_free(&out);
		return -1;
	}
	if (record) {
		if (qp_bench_sample(v->exit, ms, err) < 0)
			goto fail;
		if (v->timeline) {
			yajl_val tl_obj = qp_bench_json_line(out.err, "qpod-timeline: ");
			int r = !tl_obj || !qp_bench_json_number(tl_obj, NULL, "start_total", &tl)
					? qp_error_set(err, QP_E_GENERIC, 0, "%s: no start timeline in its output", v->name)
					: qp_bench_sample(v->start, tl, err);
			for (int i = 0; r == 0 && v->phases[i]; i++)
				if (qp_bench_json_number(tl_obj, NULL, v->phases[i], &tl)) {
					v->phase_sum[i] += tl;
					v->phase_n[i]++;
				}
			yajl_tree_free(tl_obj);
			if (r < 0)
				goto fail;
		}
	}
	qp_child_out_free(&out);
	return 0;
fail:
	qp_child_out_free(&out);
	return -1;
}

/* v: peer p on bundle, with its own --root; one not installed is a row
 * with that reason (runsc: its platform goes into the params) */
static int add_peer(const struct qp_bench_opts *o, struct qp_bench_report *r, struct variant *v,
		    const struct qp_peer *p, const char *bundle, qp_error **err)
{
	char *bin = qp_peer_find(p);

	v->name = p->name;
	v->peer = p;
	v->id = p->name; /* each peer has its own root: the name is unique there */
	if (asprintf(&v->peer_root, "%s/.bench-%s", o->root, p->name) < 0) {
		v->peer_root = NULL;
		free(bin);
		return qp_fail(err, ENOMEM, "bench");
	}
	if (!bin) {
		v->argv[0] = p->name;
		if (asprintf(&v->reason, "not installed (Debian package %s; tools/deps.sh installs it)",
			     p->package) < 0) {
			v->reason = NULL;
			return qp_fail(err, ENOMEM, "bench");
		}
		return 0;
	}
	qp_peer_run_argv(p, bin, v->peer_root, bundle, v->id, v->argv);
	v->bin = bin;
	if (!strcmp(p->name, "runsc")) {
		char platform[64];
		qp_runsc_default_platform(bin, platform, sizeof(platform));
		if (qp_bench_param_str(r, "runsc_platform", platform, err) < 0 ||
		    qp_bench_param_str(r, "runsc_network", "none", err) < 0)
			return -1;
	}
	return 0;
}

int qp_bench_start(const struct qp_bench_opts *o, struct qp_bench_report *r, qp_error **err)
{
	struct variant v[10];
	_cleanup_free_ char *tradvm = NULL, *bundle = NULL;
	_cleanup_free_ char *tv_kernel = NULL, *tv_modules = NULL;
	bool both = o->container && o->vm;
	size_t nv = 0;
	int ret = -1;

	memset(v, 0, sizeof(v));
	if (o->container) {
		static const char *const args[] = { "/bin/true", NULL };
		if (asprintf(&bundle, "%s/.bench-bundle", o->root) < 0)
			return qp_fail(err, ENOMEM, "bench");
		if (qp_peer_write_bundle(bundle, o->image, args, QP_PEER_CGROUP, NULL, o->memory_bytes, err) < 0)
			return -1;
		if (qp_bench_param_str(r, "container_form", "qpod run --bundle: the bundle the peers run", err) < 0)
			goto out;
		v[nv].name = both ? "qpod-container" : "qpod";
		qpod_bundle_argv(o, &v[nv++], bundle);
		if (o->baseline) {
			for (const struct qp_peer *p = qp_peers; p->name; p++)
				if (add_peer(o, r, &v[nv++], p, bundle, err) < 0)
					goto out;
		}
	}
	if (o->vm) {
		/* the default (boot auto: a clone of the template, made in the
		 * warm-up) beside a cold boot of the same pod */
		v[nv].name = both ? "qpod-vm" : "qpod";
		qpod_run_argv(o, &v[nv++], true, NULL, NULL);
		v[nv].name = "qpod-vm-cold";
		qpod_run_argv(o, &v[nv++], true, NULL, "cold");
		bool jail = false;
		if (vm_jail_wanted(&jail, NULL) == 0 && jail && !o->libvirt_uri) {
			v[nv].name = "qpod-vm-spare";
			qpod_run_argv(o, &v[nv], true, NULL, NULL);
			spare_prep(o, &v[nv++]);
		}
		if (o->libvirt_uri) {
			v[nv].name = "qpod-vm-libvirt";
			qpod_run_argv(o, &v[nv], true, NULL, "cold");
			via_libvirt(&v[nv++], o->libvirt_uri);
		}
		if (o->baseline) {
			v[nv].name = "qboot";
			qpod_run_argv(o, &v[nv++], true, "qboot", "cold");
			v[nv].name = "seabios";
			qpod_run_argv(o, &v[nv++], true, "seabios", "cold");
			/* the build's tools/qpod-tradvm, or the installed one */
			tradvm = qp_find_shipped("tools/qpod-tradvm", "qpod-tradvm", NULL);
			/* Debian's cloud kernel, unpacked by tools/baseline-kernel.sh
			 * into the cache */
			if (asprintf(&tv_kernel, "%s/baseline-kernel/current/vmlinuz", qp_cache_dir()) < 0 ||
			    asprintf(&tv_modules, "%s/baseline-kernel/current/modules", qp_cache_dir()) < 0)
				goto nomem;
			if (!have_file(tv_kernel) || !tradvm || access(tradvm, X_OK) != 0) {
				qp_error_set(err, QP_E_NOTFOUND, 0,
					     "--baseline: the traditional VM needs %s (tools/baseline-kernel.sh) and "
					     "qpod-tradvm (make, or make install)", tv_kernel);
				goto out;
			}
			/* the same memory, vCPUs and accel (auto, resolved the same
			 * way, QPOD_ACCEL included) as the qpod pods beside it */
			static char cpus[16];
			snprintf(cpus, sizeof(cpus), "%d", o->vcpus > 0 ? o->vcpus : 1);
			v[nv].name = "traditional-vm";
			const char *a[] = { tradvm, "-n", "1", "-r", o->image, "-c", cpus,
					    "-M", o->memory ? o->memory : "256M",
					    "-k", tv_kernel, "-m", tv_modules, NULL };
			memcpy(v[nv].argv, a, sizeof(a));
			nv++;
		}
	}
	for (size_t i = 0; i < nv; i++)
		if (add_results(r, &v[i], err) < 0)
			goto out;
	/* interleaved: every round runs each variant once, so drift in the
	 * machine's load hits them all alike */
	for (int round = 0; round < o->warmup + o->runs; round++) {
		qp_bench_round_progress(o, "bench start", round, o->warmup, o->runs);
		for (size_t i = 0; i < nv; i++)
			if (qp_bench_interrupted(err) || run_once(&v[i], round >= o->warmup, err) < 0) {
				r->partial = true;
				goto out;
			}
	}
	ret = 0;
out:
	for (size_t i = 0; i < nv; i++)
		for (int k = 0; v[i].timeline && v[i].phases[k]; k++)
			if (v[i].phase_n[k] &&
			    qp_bench_phase(r, v[i].name, v[i].phases[k], v[i].phase_sum[k] / v[i].phase_n[k],
					   NULL) < 0)
				break;
	for (size_t i = 0; i < nv; i++)
		if (v[i].peer) {
			if (v[i].reason && v[i].exit && qp_bench_set(&v[i].exit->reason, v[i].reason, err) < 0)
				ret = -1;
			free(v[i].reason);
			if (v[i].peer_root)
				rmdir(v[i].peer_root);
			free(v[i].peer_root);
			free(v[i].bin);
		}
	if (bundle)
		qp_peer_remove_bundle(bundle);
	for (size_t i = 0; i < nv; i++)
		if (v[i].prep[0]) { /* a spare made and not taken (an interrupted round) */
			const char *drain[] = { o->qpod, "--root", o->root, "spares", "drain", NULL };
			struct qp_child_out out = { 0 };
			double ms;
			int status;
			if (qp_bench_child((char *const *)drain, &ms, &status, &out, NULL) == 0)
				qp_child_out_free(&out);
			break;
		}
	return ret;
nomem:
	qp_fail(err, ENOMEM, "bench");
	goto out;
}
