/* runtime/cli/cli.h — what every `qpod` command shares: the global options,
 * the command table, and the exit-code convention.
 *
 * Exit codes: a qpod failure exits 125 with one line "qpod: ACTION: REASON"
 * on stderr; a workload that could not be executed 126 (not executable) or
 * 127 (not found); otherwise run/exec exit with the workload's status
 * (128+N when a signal N killed it) — the docker/podman convention, so
 * scripts can tell qpod's failures from the workload's. */
#ifndef QPOD_CLI_H
#define QPOD_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "spec/spec.h"
#include "util/error.h"

#define QP_EXIT_FAILURE 125

struct qp_cli {
	const char *root;   /* --root */
	int rootfd;         /* opened lazily by cli_root() */
	bool debug;
	char **argv;        /* qpod's whole command line (a handoff re-executes it) */
	bool handed_off;    /* this is qpod-libvirt, run by a static qpod's handoff */
};

struct qp_command {
	const char *name;
	const char *summary;
	int (*fn)(struct qp_cli *cli, int argc, char **argv, qp_error **err);
	bool enters_pod;    /* re-exec through util/exe_guard.h first */
	bool runc_status;   /* a failure exits 1, as runc's command does (else 125) */
	const struct option *opts; /* the long options it parses (NULL: none);
				    * its --help names each (tests/unit/test_cli_help.c) */
};

extern const struct qp_command qp_commands[];
const struct qp_command *cli_find_command(const char *name);
/* "Usage: qpod ..." with every command and the global options */
void cli_usage(FILE *f);

/* the option tables of the commands (commands.c points at them) */
extern const struct option cli_opts_run[], cli_opts_help_only[], cli_opts_kill[],
	cli_opts_delete[], cli_opts_exec[], cli_opts_ps[], cli_opts_pause[], cli_opts_update[],
	cli_opts_events[], cli_opts_list[], cli_opts_spec[], cli_opts_replace[], cli_opts_template[], cli_opts_spares[], cli_opts_report[],
	cli_opts_bench[], cli_opts_density[];

int cli_root(struct qp_cli *cli, qp_error **err);
/* Exit code for a failed command (125, or 126/127 for exec failures). */
int cli_exit_code(const qp_error *err);
/* "TERM", "SIGTERM", "15" -> 15; -1 if unknown. */
int cli_parse_signal(const char *s);
/* "64M", "1G", "512k", "1048576" -> bytes; error for junk, 0, or > 1 PiB - 1. */
int cli_parse_size(const char *s, const char *what, int64_t *out, qp_error **err);
/* Decimal integers, the whole string: "-1", "512"; what names the value in
 * the error. */
int cli_parse_i64(const char *s, const char *what, int64_t *out, qp_error **err);
int cli_parse_u64(const char *s, const char *what, uint64_t *out, qp_error **err);
/* A Go duration as runc takes it: "5s", "250ms", "1m30s", "1.5h" (units
 * ns us µs ms s m h, each number with its unit) -> nanoseconds >= 0. */
int cli_parse_duration(const char *s, const char *what, int64_t *ns, qp_error **err);
/* One `qpod update` flag (NAME without "--": memory, memory-swap,
 * cpu-shares or cpu-share, cpu-quota, cpu-period, cpuset-cpus, cpuset-mems,
 * pids-limit) into res; runc's other update flags are refused by name. */
int cli_update_flag(const char *name, const char *value, struct qp_resources *res, qp_error **err);
/* A required single positional ID after options. */
int cli_one_id(int argc, char **argv, int optind_, const char **id, qp_error **err);

/* --format table|json -> *json */
int cli_parse_format(const char *arg, bool *json, qp_error **err);
/* The options that shape a VM (template create, spares fill): getopt's c
 * 'M' --memory, 'c' --vcpus, 'A' --accel, 'f' --firmware, set in spec as
 * run's flags would.  1 if c was one (and applied), 0 if not, -1 error. */
int cli_vm_shape_opt(int c, const char *arg, struct pod_spec *spec, qp_error **err);

/* "UID[:GID]" (numeric) -> uid, gid (gid = uid when omitted). */
int cli_parse_user(const char *s, uint32_t *uid, uint32_t *gid, qp_error **err);
/* Add or replace "K=V" in a NULL-terminated, heap-owned env vector. -1 on ENOMEM. */
int cli_env_set(char ***env, const char *kv);
/* Absolute, symlink-free rootfs path (malloc'ed); never the host's "/". */
int cli_resolve_rootfs(const char *path, char **out, qp_error **err);

/* the commands */
int cmd_create(struct qp_cli *, int, char **, qp_error **);
int cmd_start(struct qp_cli *, int, char **, qp_error **);
int cmd_state(struct qp_cli *, int, char **, qp_error **);
int cmd_kill(struct qp_cli *, int, char **, qp_error **);
int cmd_delete(struct qp_cli *, int, char **, qp_error **);
int cmd_run(struct qp_cli *, int, char **, qp_error **);
int cmd_exec(struct qp_cli *, int, char **, qp_error **);
int cmd_ps(struct qp_cli *, int, char **, qp_error **);
int cmd_list(struct qp_cli *, int, char **, qp_error **);
int cmd_spec(struct qp_cli *, int, char **, qp_error **);
int cmd_features(struct qp_cli *, int, char **, qp_error **);
int cmd_gc(struct qp_cli *, int, char **, qp_error **);
int cmd_replace(struct qp_cli *, int, char **, qp_error **);
int cmd_template(struct qp_cli *, int, char **, qp_error **);
int cmd_spares(struct qp_cli *, int, char **, qp_error **);
int cmd_stats(struct qp_cli *, int, char **, qp_error **);
int cmd_bench(struct qp_cli *, int, char **, qp_error **);
int cmd_density(struct qp_cli *, int, char **, qp_error **);
int cmd_report(struct qp_cli *, int, char **, qp_error **);
int cmd_help(struct qp_cli *, int, char **, qp_error **);
int cmd_version(struct qp_cli *, int, char **, qp_error **);
/* --accel auto|kvm|tcg of bench and density: every VM pod they start (and
 * their own report) uses it; it is passed on as QPOD_ACCEL, which
 * `auto` resolution honours (unset for auto: the probe decides). */
int cli_set_accel(const char *arg, const char *cmd, qp_error **err);

int cmd_pause(struct qp_cli *, int, char **, qp_error **);
int cmd_resume(struct qp_cli *, int, char **, qp_error **);
int cmd_update(struct qp_cli *, int, char **, qp_error **);
int cmd_events(struct qp_cli *, int, char **, qp_error **);

#endif
