/* runtime/host/cgroup/devrules.c — the device rules emulator (devrules.h):
 * linux.resources.devices plus the default devices -> "default + ordered
 * exceptions", devices.list parsing, and the minimal v1 transition. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/cgroup/devrules.h"

#define R(t, maj, min, acc) { .allow = true, .type = t, .major = maj, .minor = min, .access = acc }

const struct qp_dev_rule qp_dev_defaults[] = {
	R('c', QP_DEV_ANY, QP_DEV_ANY, QP_DEV_MKNOD), /* mknod of any node; opening needs a rule */
	R('b', QP_DEV_ANY, QP_DEV_ANY, QP_DEV_MKNOD),
	R('c', 1, 3, QP_DEV_RWM),   /* /dev/null */
	R('c', 1, 8, QP_DEV_RWM),   /* /dev/random */
	R('c', 1, 7, QP_DEV_RWM),   /* /dev/full */
	R('c', 5, 0, QP_DEV_RWM),   /* /dev/tty */
	R('c', 1, 5, QP_DEV_RWM),   /* /dev/zero */
	R('c', 1, 9, QP_DEV_RWM),   /* /dev/urandom */
	R('c', 136, QP_DEV_ANY, QP_DEV_RWM), /* /dev/pts/N */
	R('c', 5, 2, QP_DEV_RWM),   /* /dev/ptmx */
	R('c', 10, 200, QP_DEV_RWM), /* /dev/net/tun (runc keeps it for compatibility) */
};
const size_t qp_dev_n_defaults = sizeof(qp_dev_defaults) / sizeof(qp_dev_defaults[0]);

static struct qp_dev_exc *find(const struct qp_dev_state *st, char type, int64_t major,
			       int64_t minor)
{
	for (size_t i = 0; i < st->n; i++)
		if (st->exc[i].type == type && st->exc[i].major == major && st->exc[i].minor == minor)
			return &st->exc[i];
	return NULL;
}

static int add(struct qp_dev_state *st, const struct qp_dev_rule *r, qp_error **err)
{
	struct qp_dev_exc *e = find(st, r->type, r->major, r->minor);

	if (e) {
		e->access |= r->access;
		return 0;
	}
	if (st->n == st->cap) {
		size_t cap = st->cap ? st->cap * 2 : 16;
		struct qp_dev_exc *v = realloc(st->exc, cap * sizeof(*v));
		if (!v)
			return qp_fail(err, ENOMEM, "device rules");
		st->exc = v;
		st->cap = cap;
	}
	st->exc[st->n++] = (struct qp_dev_exc){ r->type, r->major, r->minor, r->access };
	return 0;
}

/* Remove access from the exact exception; refuse when a wildcard exception
 * overlapping it keeps that access (v1 would silently keep it). */
static int rm(struct qp_dev_state *st, const struct qp_dev_rule *r, qp_error **err)
{
	const int64_t partial[3][2] = { { QP_DEV_ANY, r->minor },
					{ r->major, QP_DEV_ANY },
					{ QP_DEV_ANY, QP_DEV_ANY } };
	struct qp_dev_exc *e;

	for (size_t i = 0; i < 3; i++) {
		if (partial[i][0] == r->major && partial[i][1] == r->minor)
			continue;
		e = find(st, r->type, partial[i][0], partial[i][1]);
		if (e && (e->access & r->access)) {
			struct qp_dev_rule w = { true, e->type, e->major, e->minor, e->access };
			char a[QP_DEV_RULE_STR], b[QP_DEV_RULE_STR];
			return qp_error_set(err, QP_E_INVALID, 0,
					    "\"%s\" cannot punch a hole into the wildcard rule \"%s\" "
					    "(cgroup v1 would ignore it)",
					    qp_dev_rule_str(r, a), qp_dev_rule_str(&w, b));
		}
	}
	e = find(st, r->type, r->major, r->minor);
	if (e && !(e->access &= ~r->access))
		*e = st->exc[--st->n];
	return 0;
}

int qp_dev_state_apply(struct qp_dev_state *st, const struct qp_dev_rule *r, qp_error **err)
{
	if (r->type == 'a') { /* a new default, no exceptions */
		st->default_allow = r->allow;
		st->n = 0;
		return 0;
	}
	if (r->type != 'c' && r->type != 'b')
		return qp_error_set(err, QP_E_INVALID, 0, "type '%c' is not a, c or b", r->type);
	if (!r->access || (r->access & ~QP_DEV_RWM))
		return qp_error_set(err, QP_E_INVALID, 0, "access must be one or more of r, w, m");
	if ((r->major < 0 && r->major != QP_DEV_ANY) || r->major > UINT32_MAX ||
	    (r->minor < 0 && r->minor != QP_DEV_ANY) || r->minor > UINT32_MAX)
		return qp_error_set(err, QP_E_INVALID, 0, "major/minor out of range");
	/* an allow in allow-all mode removes a deny exception, and so on */
	return r->allow == st->default_allow ? rm(st, r, err) : add(st, r, err);
}

int qp_dev_state_build(const struct qp_dev_rule *rules, size_t n, struct qp_dev_state *st,
		       qp_error **err)
{
	*st = (struct qp_dev_state){ .default_allow = false };
	for (size_t i = 0; i < n; i++)
		if (qp_dev_state_apply(st, &rules[i], err) < 0)
			return qp_error_prefix(err, "linux.resources.devices[%zu]", i);
	for (size_t i = 0; i < qp_dev_n_defaults; i++)
		if (qp_dev_state_apply(st, &qp_dev_defaults[i], err) < 0)
			return qp_error_prefix(err, "the default devices");
	return 0; /* in the listed order: v1's devices.list shows them so */
}

static int parse_num(const char *s, int64_t *out)
{
	char *end;
	unsigned long long v;

	if (!strcmp(s, "*")) {
		*out = QP_DEV_ANY;
		return 0;
	}
	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v > UINT32_MAX)
		return -1;
	*out = (int64_t)v;
	return 0;
}

/* one devices.list line: "c 1:3 rwm" */
static int parse_line(const char *line, struct qp_dev_rule *r)
{
	char type, maj[16], min[16], acc[8];

	if (sscanf(line, "%c %15[0-9*]:%15[0-9*] %7s", &type, maj, min, acc) != 4 ||
	    parse_num(maj, &r->major) < 0 || parse_num(min, &r->minor) < 0)
		return -1;
	r->allow = true;
	r->type = type;
	r->access = qp_dev_access_parse(acc);
	return r->access ? 0 : -1;
}

int qp_dev_state_from_list(const char *list, struct qp_dev_state *st, qp_error **err)
{
	*st = (struct qp_dev_state){ .default_allow = false };
	for (const char *line = list; line && *line;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		char buf[64];
		struct qp_dev_rule r;

		if (len >= sizeof(buf))
			return qp_error_set(err, QP_E_GENERIC, 0, "devices.list: line too long");
		memcpy(buf, line, len);
		buf[len] = '\0';
		line = nl ? nl + 1 : line + len;
		if (!len)
			continue;
		if (parse_line(buf, &r) < 0)
			return qp_error_set(err, QP_E_GENERIC, 0, "devices.list: bad line \"%.40s\"", buf);
		/* devices.list lists what is allowed; "a" means allow-all mode */
		if (qp_dev_state_apply(st, &r, err) < 0)
			return qp_error_prefix(err, "devices.list");
	}
	return 0;
}

/* the same default and exceptions, in any order (one per type:major:minor) */
bool qp_dev_state_equal(const struct qp_dev_state *a, const struct qp_dev_state *b)
{
	if (a->default_allow != b->default_allow || a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++) {
		const struct qp_dev_exc *e = find(b, a->exc[i].type, a->exc[i].major, a->exc[i].minor);
		if (!e || e->access != a->exc[i].access)
			return false;
	}
	return true;
}

static int push(struct qp_dev_rule **v, size_t *n, struct qp_dev_rule r, qp_error **err)
{
	struct qp_dev_rule *nv = realloc(*v, (*n + 1) * sizeof(**v));

	if (!nv)
		return qp_fail(err, ENOMEM, "device rules");
	nv[(*n)++] = r;
	*v = nv;
	return 0;
}

int qp_dev_state_transition(const struct qp_dev_state *from, const struct qp_dev_state *to,
			    struct qp_dev_rule **out, size_t *n, qp_error **err)
{
	/* devices.list cannot show the denies of an allow-all cgroup: start over */
	bool reset = from->default_allow || from->default_allow != to->default_allow;
	struct qp_dev_rule *v = NULL;
	size_t k = 0;

	if (reset && push(&v, &k, (struct qp_dev_rule){ to->default_allow, 'a', QP_DEV_ANY, QP_DEV_ANY,
							   QP_DEV_RWM }, err) < 0)
		goto fail;
	/* access the old exceptions had and the new ones do not: taken back */
	for (size_t i = 0; !reset && i < from->n; i++) {
		const struct qp_dev_exc *o = &from->exc[i];
		const struct qp_dev_exc *t = find(to, o->type, o->major, o->minor);
		unsigned dropped = o->access & ~(t ? t->access : 0);
		if (dropped && push(&v, &k, (struct qp_dev_rule){ to->default_allow, o->type, o->major,
								  o->minor, dropped }, err) < 0)
			goto fail;
	}
	for (size_t i = 0; i < to->n; i++) {
		const struct qp_dev_exc *t = &to->exc[i];
		const struct qp_dev_exc *o = reset ? NULL : find(from, t->type, t->major, t->minor);
		unsigned gained = t->access & ~(o ? o->access : 0);
		if (gained && push(&v, &k, (struct qp_dev_rule){ !to->default_allow, t->type, t->major,
								 t->minor, gained }, err) < 0)
			goto fail;
	}
	*out = v;
	*n = k;
	return 0;
fail:
	free(v);
	return -1;
}

void qp_dev_state_free(struct qp_dev_state *st)
{
	free(st->exc);
	*st = (struct qp_dev_state){ 0 };
}

static void num_str(int64_t v, char *buf, size_t len)
{
	if (v == QP_DEV_ANY)
		snprintf(buf, len, "*");
	else
		snprintf(buf, len, "%" PRId64, v);
}

const char *qp_dev_rule_str(const struct qp_dev_rule *r, char buf[QP_DEV_RULE_STR])
{
	char maj[16], min[16], acc[4];

	if (r->type == 'a') {
		snprintf(buf, QP_DEV_RULE_STR, "a *:* rwm");
		return buf;
	}
	num_str(r->major, maj, sizeof(maj));
	num_str(r->minor, min, sizeof(min));
	snprintf(buf, QP_DEV_RULE_STR, "%c %s:%s %s", r->type, maj, min, qp_dev_access_str(r->access, acc));
	return buf;
}
