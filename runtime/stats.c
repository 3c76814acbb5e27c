/* runtime/stats.c — struct qp_stats (stats.h) as the JSON of runc's
 * `events`: {"type":"stats","id":ID,"data":{"cpu":...,"memory":...,
 * "pids":...}} with runc's field names (types.Stats), its omitempty
 * choices (a zero count is left out, limit and failcnt are always there),
 * and UINT64_MAX for an unlimited memory limit, as runc reports v2's "max". */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"
#include "util/json.h"

void qp_stats_free(struct qp_stats *st)
{
	free(st->percpu);
	st->percpu = NULL;
	st->n_percpu = 0;
}

/* omitempty */
static void ku64_nz(yajl_gen g, const char *key, uint64_t v)
{
	if (v)
		qp_json_ku64(g, key, v);
}

static void mem_entry(yajl_gen g, const char *key, const struct qp_stats_mem_entry *e)
{
	if (!e->has)
		return;
	qp_json_key(g, key);
	yajl_gen_map_open(g);
	qp_json_ku64(g, "limit", e->limit);
	ku64_nz(g, "usage", e->usage);
	ku64_nz(g, "max", e->max);
	qp_json_ku64(g, "failcnt", e->failcnt);
	yajl_gen_map_close(g);
}

static void cpu(yajl_gen g, const struct qp_stats *st)
{
	qp_json_key(g, "cpu");
	yajl_gen_map_open(g);
	if (st->has_cpu) {
		qp_json_key(g, "usage");
		yajl_gen_map_open(g);
		ku64_nz(g, "total", st->cpu_total);
		if (st->n_percpu) {
			qp_json_key(g, "percpu");
			yajl_gen_array_open(g);
			for (size_t i = 0; i < st->n_percpu; i++)
				qp_json_u64(g, st->percpu[i]);
			yajl_gen_array_close(g);
		}
		qp_json_ku64(g, "kernel", st->cpu_kernel);
		qp_json_ku64(g, "user", st->cpu_user);
		yajl_gen_map_close(g);
	}
	if (st->has_throttling && (st->periods || st->throttled_periods || st->throttled_time)) {
		qp_json_key(g, "throttling");
		yajl_gen_map_open(g);
		ku64_nz(g, "periods", st->periods);
		ku64_nz(g, "throttledPeriods", st->throttled_periods);
		ku64_nz(g, "throttledTime", st->throttled_time);
		yajl_gen_map_close(g);
	}
	yajl_gen_map_close(g);
}

static void memory(yajl_gen g, const struct qp_stats *st)
{
	qp_json_key(g, "memory");
	yajl_gen_map_open(g);
	if (st->has_memory) {
		ku64_nz(g, "cache", st->cache);
		mem_entry(g, "usage", &st->usage);
		mem_entry(g, "swap", &st->swap);
		if (st->n_raw) {
			qp_json_key(g, "raw");
			yajl_gen_map_open(g);
			for (size_t i = 0; i < st->n_raw; i++)
				qp_json_ku64(g, st->raw[i].key, st->raw[i].value);
			yajl_gen_map_close(g);
		}
	}
	yajl_gen_map_close(g);
}

int qp_stats_event_json(const char *type, const char *id, const struct qp_stats *st, char **out,
			qp_error **err)
{
	yajl_gen g = qp_json_gen_new(false);

	if (!g)
		return qp_fail(err, ENOMEM, "events");
	yajl_gen_map_open(g);
	qp_json_kstr(g, "type", type);
	qp_json_kstr(g, "id", id);
	if (st) {
		qp_json_key(g, "data");
		yajl_gen_map_open(g);
		cpu(g, st);
		memory(g, st);
		qp_json_key(g, "pids");
		yajl_gen_map_open(g);
		if (st->has_pids) {
			ku64_nz(g, "current", st->pids_current);
			ku64_nz(g, "limit", st->pids_limit);
		}
		yajl_gen_map_close(g);
		yajl_gen_map_close(g);
	}
	yajl_gen_map_close(g);
	return qp_json_gen_finish(g, out, NULL, err);
}

long long qp_proc_kb(const char *path, const char *key)
{
	char line[256];
	size_t klen = strlen(key);
	long long v = -1;
	FILE *f = fopen(path, "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, klen) && line[klen] == ':') {
			v = strtoll(line + klen + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}
