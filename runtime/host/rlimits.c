/* runtime/host/rlimits.c — process.rlimits: names, validation, setrlimit.
 * Declared in caps.h.  A hard limit can only be raised with CAP_SYS_RESOURCE,
 * so this runs before qp_process_drop_privileges(). */
#include <errno.h>
#include <string.h>
#include <sys/resource.h>

#include "host/caps.h"
#include "util/cleanup.h"

static const struct {
	const char *name;
	int resource;
} rlimit_names[] = {
	{ "RLIMIT_CPU", RLIMIT_CPU },
	{ "RLIMIT_FSIZE", RLIMIT_FSIZE },
	{ "RLIMIT_DATA", RLIMIT_DATA },
	{ "RLIMIT_STACK", RLIMIT_STACK },
	{ "RLIMIT_CORE", RLIMIT_CORE },
	{ "RLIMIT_RSS", RLIMIT_RSS },
	{ "RLIMIT_NPROC", RLIMIT_NPROC },
	{ "RLIMIT_NOFILE", RLIMIT_NOFILE },
	{ "RLIMIT_MEMLOCK", RLIMIT_MEMLOCK },
	{ "RLIMIT_AS", RLIMIT_AS },
	{ "RLIMIT_LOCKS", RLIMIT_LOCKS },
	{ "RLIMIT_SIGPENDING", RLIMIT_SIGPENDING },
	{ "RLIMIT_MSGQUEUE", RLIMIT_MSGQUEUE },
	{ "RLIMIT_NICE", RLIMIT_NICE },
	{ "RLIMIT_RTPRIO", RLIMIT_RTPRIO },
	{ "RLIMIT_RTTIME", RLIMIT_RTTIME },
};

#define QP_RLIMIT_NAME_MAX 32

int qp_rlimit_from_name(const char *name)
{
	if (!name || strnlen(name, QP_RLIMIT_NAME_MAX) >= QP_RLIMIT_NAME_MAX)
		return -1;
	for (size_t i = 0; i < QP_ARRAY_SIZE(rlimit_names); i++)
		if (strcmp(name, rlimit_names[i].name) == 0)
			return rlimit_names[i].resource;
	return -1;
}

const char *qp_rlimit_name(int resource)
{
	for (size_t i = 0; i < QP_ARRAY_SIZE(rlimit_names); i++)
		if (rlimit_names[i].resource == resource)
			return rlimit_names[i].name;
	return NULL;
}

/* The resource an entry means: its type name when present, else .resource. */
static int entry_resource(const struct qp_rlimit *r, size_t i, qp_error **err)
{
	int res = r->type ? qp_rlimit_from_name(r->type) : r->resource;

	if (r->type && res < 0)
		return qp_error_set(err, QP_E_INVALID, 0, "process.rlimits[%zu].type: unknown rlimit \"%.*s\"",
				    i, QP_RLIMIT_NAME_MAX, r->type);
	if (!qp_rlimit_name(res))
		return qp_error_set(err, QP_E_INVALID, 0, "process.rlimits[%zu]: unknown resource %d", i, res);
	return res;
}

int qp_rlimits_validate(const struct qp_rlimit *r, size_t n, qp_error **err)
{
	uint64_t seen = 0;

	if (n > QP_SPEC_MAX_ITEMS)
		return qp_error_set(err, QP_E_INVALID, 0, "process.rlimits: more than %u entries",
				    QP_SPEC_MAX_ITEMS);
	for (size_t i = 0; i < n; i++) {
		int res = entry_resource(&r[i], i, err);

		if (res < 0)
			return -1;
		if (res < 64 && (seen & (UINT64_C(1) << res)))
			return qp_error_set(err, QP_E_INVALID, 0, "process.rlimits[%zu]: duplicate %s", i,
					    qp_rlimit_name(res));
		if (res < 64)
			seen |= UINT64_C(1) << res;
		if (r[i].soft > r[i].hard)
			return qp_error_set(err, QP_E_INVALID, 0,
					    "process.rlimits[%zu]: %s soft limit %llu is above the hard limit %llu",
					    i, qp_rlimit_name(res), (unsigned long long)r[i].soft,
					    (unsigned long long)r[i].hard);
	}
	return 0;
}

static rlim_t to_rlim(uint64_t v)
{
	return v >= (uint64_t)RLIM_INFINITY ? RLIM_INFINITY : (rlim_t)v;
}

int qp_rlimits_apply(const struct qp_rlimit *r, size_t n, qp_error **err)
{
	if (qp_rlimits_validate(r, n, err) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		int res = entry_resource(&r[i], i, err);
		struct rlimit rl = { .rlim_cur = to_rlim(r[i].soft), .rlim_max = to_rlim(r[i].hard) };

		if (setrlimit((__rlimit_resource_t)res, &rl) < 0)
			return qp_fail(err, errno, "setrlimit %s (soft %llu, hard %llu)", qp_rlimit_name(res),
				       (unsigned long long)r[i].soft, (unsigned long long)r[i].hard);
	}
	return 0;
}
