/* runtime/bench/bench.h — the `qpod bench` scenarios (start, replace,
 * memory, workload, consolidate, cri).  Each one drives this same qpod binary (and the baselines) as
 * child processes against a private state root, the way a user or a script
 * would, and fills a result report (result/result.h).  Measurement
 * definitions: ../shared/DESIGN.md and docs/REPORTS.md. */
#ifndef QPOD_BENCH_H
#define QPOD_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <sys/types.h>

#include "result/result.h"
#include "util/error.h"
#include "util/json.h"

struct qp_bench_opts {
	bool container, vm;       /* --mode */
	int runs, warmup;
	const char *image;        /* absolute rootfs */
	const char *memory;       /* --memory as given (e.g. "256M"), NULL = default */
	long long memory_bytes;   /* the same in bytes (0 when memory is NULL) */
	int vcpus;                /* 0 = default */
	bool baseline;
	const char *libvirt_uri;  /* start: a vm row via libvirt at this URI; NULL: none */
	const char *root;         /* private --root for the pods (made by the caller) */
	const char *qpod;         /* this binary */
	const char *exe_dir;      /* its build dir (tools/qpod-tradvm) */
	bool progress;            /* a \r progress line on stderr */
};

/* One child process: argv, stdin /dev/null, stdout and stderr captured
 * (the first 64 KiB of each, through memfds) unless o is NULL (then
 * /dev/null).  *ms = wall time from fork to its exit, *status =
 * its exit code (128+N for signal N).  -1 only if it could not be run. */
struct qp_child_out {
	char *out, *err;          /* malloc'ed, NUL-terminated */
};
int qp_bench_child(char *const argv[], double *ms, int *status, struct qp_child_out *o,
		   qp_error **err);
void qp_child_out_free(struct qp_child_out *o);
/* The same in two halves, for children that run side by side: start one
 * (capture: stdout and stderr into memfds, else /dev/null), then wait for
 * it and collect what it wrote (o may be NULL).  finish must follow a
 * successful start. */
struct qp_child_run {
	pid_t pid;
	int fo, fe;
	double t0;
};
int qp_bench_child_start(char *const argv[], struct qp_child_run *run, bool capture, qp_error **err);
int qp_bench_child_finish(struct qp_child_run *run, double *ms, int *status, struct qp_child_out *o,
			  qp_error **err);

/* The JSON object on the first line of text that starts with prefix
 * (NULL: the first line), parsed (util/json.h bounds); NULL if there is
 * none or it is not an object.  Free with yajl_tree_free. */
yajl_val qp_bench_json_line(const char *text, const char *prefix);
/* obj[section][key] (section NULL: obj[key]) if it is a number. */
bool qp_bench_json_number(yajl_val obj, const char *section, const char *key, double *out);

/* SIGINT/SIGTERM are blocked while a bench runs (cmd_bench.c); true, with
 * an error, once one is pending: the scenario stops and cleans up. */
bool qp_bench_interrupted(qp_error **err);
/* Block (and un-ignore) SIGINT/SIGTERM for the run; then consume what is
 * pending and restore *old. */
void qp_bench_hold_signals(sigset_t *old);
void qp_bench_release_signals(const sigset_t *old);

void qp_bench_progress(const struct qp_bench_opts *o, const char *what, int i, int n);
/* The progress of run i (0-based) of warmup unmeasured then runs measured
 * ones: "WHAT: warm-up 1/1", then "WHAT: round 1/20" (the warm-up is not a
 * round); _text formats it into buf. */
void qp_bench_round_progress(const struct qp_bench_opts *o, const char *what, int i, int warmup,
			     int runs);
void qp_bench_round_progress_text(char *buf, size_t size, const char *what, int i, int warmup,
				  int runs);

int qp_bench_start(const struct qp_bench_opts *o, struct qp_bench_report *r, qp_error **err);
int qp_bench_replace(const struct qp_bench_opts *o, struct qp_bench_report *r, qp_error **err);
int qp_bench_memory(const struct qp_bench_opts *o, struct qp_bench_report *r, qp_error **err);

/* `qpod bench workload` (scenario_workload.c) */
struct qp_workload_opts {
	const char *const *targets; /* "host", "container", "vm", "runc", "crun", "runsc"; NULL-terminated */
	const char *const *tests;   /* from qp_workload_tests */
	double duration;            /* seconds per run of a tool */
};
extern const char *const qp_workload_tests[]; /* every test, NULL-terminated */
int qp_bench_workload(const struct qp_bench_opts *o, const struct qp_workload_opts *w,
		      struct qp_bench_report *r, qp_error **err);

/* `qpod bench consolidate` (scenario_consolidate.c): N = 1..pods pods of
 * each mode running the same mixed workload at once. */
struct qp_consolidate_opts {
	int pods;        /* the largest N */
	double duration; /* seconds of each step's load */
	long long reserve; /* bytes of MemAvailable that must remain (density's rule) */
};
int qp_bench_consolidate(const struct qp_bench_opts *o, const struct qp_consolidate_opts *c,
			 struct qp_bench_report *r, qp_error **err);

/* `qpod bench cri` (scenario_cri.c): pods through a CRI endpoint, per
 * runtime handler. */
struct qp_cri_opts {
	const char *socket;   /* --cri-socket; NULL: a private containerd */
	const char *handlers; /* "a,b" as given; NULL: every one configured */
	int parallel;         /* pods started at once per round; 0: serial */
	int mem_pods;         /* pods per handler and shape in the memory step */
	int spares;           /* the private qpod-vm handler's spares (0: none) */
};
int qp_bench_cri(const struct qp_bench_opts *o, const struct qp_cri_opts *c, struct qp_bench_report *r,
		 qp_error **err);

#endif
