/* runtime/result/result.h — the stable result format of `qpod bench …` and
 * `qpod density`: an in-memory model, its JSON writer and reader, the
 * statistics, and the host description.  docs/REPORTS.md describes every
 * field of the JSON.
 *
 * Building a report (the bench scenarios):
 *
 *     struct qp_bench_report *r;
 *     struct qp_bench_result *res;
 *     qp_bench_report_new("start", "vm", "tcg", &r, err);
 *     qp_bench_host_describe(&r->host, err);
 *     qp_bench_param_num(r, "runs", 20, err);
 *     qp_bench_result_add(r, "qpod", "start_ms", "ms", &res, err);
 *     qp_bench_sample(res, 12.5, err);               ... once per run
 *     qp_bench_phase(r, "qpod", "kernel", 8.1, err);
 *     qp_bench_report_write_json(r, stdout, err);
 *     qp_bench_report_free(r);
 *
 * The statistics (n, min, max, avg, median) are never stored: the writer
 * computes them from the samples, and the reader checks that the file's
 * "n" equals the number of samples and recomputes the rest.  All functions
 * that can fail follow util/error.h (return -1, fill *err). */
#ifndef QPOD_BENCH_RESULT_H
#define QPOD_BENCH_RESULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "util/error.h"

#define QP_BENCH_MAX_FILE (16u << 20) /* the reader refuses larger files */
#define QP_BENCH_MAX_NAME 256         /* names, metrics, units, keys, host strings */
#define QP_BENCH_MAX_TEXT (64u << 10) /* "definitions", "stop_reason" */

struct qp_bench_stats {
	double min, max, avg, median; /* median of an even n: mean of the middle two */
};

struct qp_bench_host {
	char *cpu;    /* /proc/cpuinfo "model name"; NULL if unknown */
	long cores;   /* online CPUs */
	long mem_mb;  /* /proc/meminfo MemTotal */
	char *kernel; /* uname -r */
	char *qemu;   /* first line of `qemu-system-x86_64 --version`; NULL if absent */
};

enum qp_bench_param_type { QP_BENCH_PARAM_STR, QP_BENCH_PARAM_NUM };

struct qp_bench_param {
	char *key;
	enum qp_bench_param_type type;
	char *str;  /* QP_BENCH_PARAM_STR */
	double num; /* QP_BENCH_PARAM_NUM */
};

struct qp_bench_result {
	char *name;   /* "qpod", "runc", "seabios", "traditional-vm", ... */
	char *metric; /* "start_ms", "run_to_exit_ms", "replace_ms", "rss_mb", ... */
	char *unit;   /* "ms", "MB", ... */
	char *target; /* optional: "host", "container", "vm", a peer (workload) */
	char *test;   /* optional: the workload test's name */
	char *reason; /* optional: why this peer was not measured, or stopped
		       * (bench/peers.c); its samples are what ran before */
	double *samples; /* in run order (density: in pod order) */
	size_t n, cap;
};

struct qp_bench_phase {
	char *name;  /* a result name */
	char *phase; /* "prepare", "network", "vmm", "firmware", "kernel", ... */
	double avg_ms;
};

struct qp_bench_report {
	char *version; /* qpod's version (PACKAGE_VERSION when built here) */
	char *scenario; /* start | replace | memory | density | workload | consolidate | cri */
	char *mode;     /* container | vm | both */
	char *accel;    /* kvm | tcg | none */
	struct qp_bench_host host;
	struct qp_bench_param *params; /* in insertion (file) order */
	size_t n_params;
	struct qp_bench_result **results; /* in insertion (file) order */
	size_t n_results;
	struct qp_bench_phase *phases; /* grouped by name on output, first-seen order */
	size_t n_phases;
	bool partial;       /* interrupted: the samples are what was measured */
	bool has_count;     /* density: "count" (pods started) present */
	long long count;
	char *stop_reason;  /* density: why it stopped; optional */
	char *definitions;  /* the measurement definitions text; optional */
};

/* n == 0 -> -1 (QP_E_INVALID). */
int qp_bench_stats(const double *samples, size_t n, struct qp_bench_stats *out, qp_error **err);
/* Shortest "%.15g"/"%.17g" text that reads back as v (JSON, CSV). */
void qp_bench_num_str(double v, char buf[32]);

/* scenario, mode and accel must be among the values listed above. */
int qp_bench_report_new(const char *scenario, const char *mode, const char *accel,
			struct qp_bench_report **out, qp_error **err);
void qp_bench_report_free(struct qp_bench_report *r);
/* Replace the string *field with a copy of value (NULL clears it). */
int qp_bench_set(char **field, const char *value, qp_error **err);
/* Add or replace a parameter. */
int qp_bench_param_str(struct qp_bench_report *r, const char *key, const char *value, qp_error **err);
int qp_bench_param_num(struct qp_bench_report *r, const char *key, double value, qp_error **err);
/* A new, empty result; *out stays owned by r. */
int qp_bench_result_add(struct qp_bench_report *r, const char *name, const char *metric,
			const char *unit, struct qp_bench_result **out, qp_error **err);
/* Set the optional target and test (either may be NULL). */
int qp_bench_result_tag(struct qp_bench_result *res, const char *target, const char *test,
			qp_error **err);
/* Append a finite sample. */
int qp_bench_sample(struct qp_bench_result *res, double value, qp_error **err);
/* Add or replace the average of one phase of result `name`. */
int qp_bench_phase(struct qp_bench_report *r, const char *name, const char *phase, double avg_ms,
		   qp_error **err);
/* The first result with this name and metric, or NULL. */
struct qp_bench_result *qp_bench_result_find(const struct qp_bench_report *r, const char *name,
					     const char *metric);
/* true if s is one of the NULL-terminated list */
bool qp_bench_one_of(const char *s, const char *const *list);
extern const char *const qp_bench_scenarios[], *const qp_bench_modes[], *const qp_bench_accels[];

/* Fill *host for this machine (host.c); frees what *host held.  Fails only
 * on allocation failure: what cannot be read stays NULL / 0. */
int qp_bench_host_describe(struct qp_bench_host *host, qp_error **err);
void qp_bench_host_clear(struct qp_bench_host *host);

/* Write the report as one pretty-printed JSON object and a newline. */
int qp_bench_report_write_json(const struct qp_bench_report *r, FILE *f, qp_error **err);
/* Parse JSON text (hostile input: every field's type and bound is checked;
 * a missing or wrong field is an error naming it, e.g. "results[2].unit"). */
int qp_bench_report_parse(const char *text, size_t len, struct qp_bench_report **out,
			  qp_error **err);
/* Read and parse a regular file of at most QP_BENCH_MAX_FILE bytes; errors
 * start with the path. */
int qp_bench_report_read_json(const char *path, struct qp_bench_report **out, qp_error **err);

#endif
