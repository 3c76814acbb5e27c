/* runtime/host/cgroup/cgroup_stats.c — a container pod's usage from its cgroup,
 * in runc's terms (stats.h), for v1 and v2:
 *   cpu     v2 cpu.stat usage/user/system_usec, nr_periods, nr_throttled,
 *           throttled_usec; v1 cpuacct.usage, cpuacct.stat (ticks),
 *           cpuacct.usage_percpu and cpu.stat
 *   memory  v2 memory.current/max/peak/events "max", memory.swap.*;
 *           v1 memory.usage_in_bytes/max_usage_in_bytes/limit_in_bytes/
 *           failcnt and memory.memsw.*; memory.stat as "raw" in both
 *   pids    pids.current, pids.max ("max" -> 0, runc's "no limit")
 * A controller that is not there leaves its part out. */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/cgroup/cgroup.h"

/* a value or "max" (-> max_value); false if missing or junk */
static bool read_limit(int fd, const char *file, uint64_t max_value, uint64_t *v)
{
	char buf[64];

	if (qp_cg_read(fd, file, buf, sizeof(buf), NULL) < 0)
		return false;
	if (!strcmp(buf, "max")) {
		*v = max_value;
		return true;
	}
	return qp_cg_read_u64(fd, file, v, NULL) == 0;
}

static bool read_u64(int fd, const char *file, uint64_t *v)
{
	return qp_cg_read_u64(fd, file, v, NULL) == 0;
}

static bool read_key(int fd, const char *file, const char *key, uint64_t *v)
{
	return qp_cg_read_key(fd, file, key, v, NULL) == 0;
}

/* "KEY N" lines of memory.stat into st->raw (bounded) */
static void read_raw(int fd, struct qp_stats *st)
{
	char buf[8192];

	if (qp_cg_read(fd, "memory.stat", buf, sizeof(buf), NULL) < 0)
		return;
	for (char *line = buf, *next; line && *line && st->n_raw < QP_STATS_MAX_RAW; line = next) {
		char *sp = strchr(line, ' '), *end;
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (!sp || (size_t)(sp - line) >= QP_STATS_KEY_MAX || !isdigit((unsigned char)sp[1]))
			continue;
		errno = 0;
		unsigned long long v = strtoull(sp + 1, &end, 10);
		if (errno || *end)
			continue;
		memcpy(st->raw[st->n_raw].key, line, (size_t)(sp - line));
		st->raw[st->n_raw].key[sp - line] = '\0';
		st->raw[st->n_raw++].value = v;
	}
}

static uint64_t raw_value(const struct qp_stats *st, const char *key)
{
	for (size_t i = 0; i < st->n_raw; i++)
		if (!strcmp(st->raw[i].key, key))
			return st->raw[i].value;
	return 0;
}

static void percpu_v1(int fd, struct qp_stats *st)
{
	char buf[QP_STATS_MAX_CPUS * 21 + 1];
	size_t n = 0;

	if (qp_cg_read(fd, "cpuacct.usage_percpu", buf, sizeof(buf), NULL) < 0 ||
	    !(st->percpu = calloc(QP_STATS_MAX_CPUS, sizeof(*st->percpu))))
		return;
	for (char *p = buf, *end; *p && n < QP_STATS_MAX_CPUS; p = end) {
		while (*p == ' ')
			p++;
		if (!isdigit((unsigned char)*p))
			break;
		st->percpu[n++] = strtoull(p, &end, 10);
	}
	st->n_percpu = n;
}

static void cpu_stats(const struct qp_cg_leaves *l, struct qp_stats *st)
{
	int acct = l->fd[QP_CG_CPUACCT], cpu = l->fd[QP_CG_CPU];

	if (l->mode == QP_CGROUP_V2) {
		uint64_t us;
		if (acct >= 0 && read_key(acct, "cpu.stat", "usage_usec", &us)) {
			st->has_cpu = true;
			st->cpu_total = us * 1000;
			if (read_key(acct, "cpu.stat", "user_usec", &us))
				st->cpu_user = us * 1000;
			if (read_key(acct, "cpu.stat", "system_usec", &us))
				st->cpu_kernel = us * 1000;
		}
		if (cpu >= 0 && read_key(cpu, "cpu.stat", "nr_periods", &st->periods)) {
			st->has_throttling = true;
			read_key(cpu, "cpu.stat", "nr_throttled", &st->throttled_periods);
			if (read_key(cpu, "cpu.stat", "throttled_usec", &us))
				st->throttled_time = us * 1000;
		}
		return;
	}
	if (acct >= 0 && read_u64(acct, "cpuacct.usage", &st->cpu_total)) {
		long hz = sysconf(_SC_CLK_TCK);
		uint64_t ticks, ns_per_tick = hz > 0 ? 1000000000ULL / (uint64_t)hz : 10000000ULL;
		st->has_cpu = true;
		if (read_key(acct, "cpuacct.stat", "user", &ticks))
			st->cpu_user = ticks * ns_per_tick;
		if (read_key(acct, "cpuacct.stat", "system", &ticks))
			st->cpu_kernel = ticks * ns_per_tick;
		percpu_v1(acct, st);
	}
	if (cpu >= 0 && read_key(cpu, "cpu.stat", "nr_periods", &st->periods)) {
		st->has_throttling = true;
		read_key(cpu, "cpu.stat", "nr_throttled", &st->throttled_periods);
		read_key(cpu, "cpu.stat", "throttled_time", &st->throttled_time);
	}
}

static void memory_stats(const struct qp_cg_leaves *l, struct qp_stats *st)
{
	int fd = l->fd[QP_CG_MEMORY];
	struct qp_stats_mem_entry *u = &st->usage, *s = &st->swap;

	if (fd < 0)
		return;
	if (l->mode == QP_CGROUP_V2) {
		if (!read_u64(fd, "memory.current", &u->usage))
			return;
		u->has = true;
		read_limit(fd, "memory.max", UINT64_MAX, &u->limit);
		read_u64(fd, "memory.peak", &u->max);
		read_key(fd, "memory.events", "max", &u->failcnt);
		if (read_u64(fd, "memory.swap.current", &s->usage)) {
			s->has = true;
			read_limit(fd, "memory.swap.max", UINT64_MAX, &s->limit);
			read_key(fd, "memory.swap.events", "max", &s->failcnt);
		}
		read_raw(fd, st);
		st->cache = raw_value(st, "file");
	} else {
		if (!read_u64(fd, "memory.usage_in_bytes", &u->usage))
			return;
		u->has = true;
		read_u64(fd, "memory.limit_in_bytes", &u->limit);
		read_u64(fd, "memory.max_usage_in_bytes", &u->max);
		read_u64(fd, "memory.failcnt", &u->failcnt);
		/* runc reports memory+swap (memsw) as "swap" on v1 */
		if (read_u64(fd, "memory.memsw.usage_in_bytes", &s->usage)) {
			s->has = true;
			read_u64(fd, "memory.memsw.limit_in_bytes", &s->limit);
			read_u64(fd, "memory.memsw.max_usage_in_bytes", &s->max);
			read_u64(fd, "memory.memsw.failcnt", &s->failcnt);
		}
		read_raw(fd, st);
		st->cache = raw_value(st, "cache");
	}
	st->has_memory = true;
	st->has_oom_kills = l->mode == QP_CGROUP_V2 ? read_key(fd, "memory.events", "oom_kill", &st->oom_kills)
						     : read_key(fd, "memory.oom_control", "oom_kill", &st->oom_kills);
}

int qp_cgroup_stats(struct qp_cgroup *cg, struct qp_stats *st, qp_error **err)
{
	struct qp_cg_leaves l = QP_CG_LEAVES_INIT;
	int pids;

	memset(st, 0, sizeof(*st));
	if (cg->ops->leaves(cg, &l, err) < 0)
		return qp_error_prefix(err, "cgroup \"%s\"", cg->path);
	cpu_stats(&l, st);
	memory_stats(&l, st);
	pids = l.fd[QP_CG_PIDS];
	if (pids >= 0 && read_u64(pids, "pids.current", &st->pids_current)) {
		st->has_pids = true;
		read_limit(pids, "pids.max", 0, &st->pids_limit);
	}
	qp_cg_leaves_close(&l);
	return 0;
}

