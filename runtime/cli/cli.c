/* runtime/cli/cli.c — shared CLI helpers (see cli.h). */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli/cli.h"
#include "state.h"
#include "util/cleanup.h"
#include "util/strv.h"

int cli_root(struct qp_cli *cli, qp_error **err)
{
	if (cli->rootfd < 0)
		cli->rootfd = state_root_open(cli->root, err);
	return cli->rootfd;
}

int cli_exit_code(const qp_error *err)
{
	if (err && err->code == QP_E_EXEC)
		return err->errnum == ENOENT ? 127 : 126;
	/* clients (containerd's shim, podman) match runc's status and text */
	if (err && err->code == QP_E_NOTRUNNING)
		return 1;
	return QP_EXIT_FAILURE;
}

static const struct {
	const char *name;
	int sig;
} signals[] = {
	{ "HUP", SIGHUP },   { "INT", SIGINT },     { "QUIT", SIGQUIT }, { "ILL", SIGILL },
	{ "TRAP", SIGTRAP }, { "ABRT", SIGABRT },   { "BUS", SIGBUS },   { "FPE", SIGFPE },
	{ "KILL", SIGKILL }, { "USR1", SIGUSR1 },   { "SEGV", SIGSEGV }, { "USR2", SIGUSR2 },
	{ "PIPE", SIGPIPE }, { "ALRM", SIGALRM },   { "TERM", SIGTERM }, { "STKFLT", SIGSTKFLT },
	{ "CHLD", SIGCHLD }, { "CONT", SIGCONT },   { "STOP", SIGSTOP }, { "TSTP", SIGTSTP },
	{ "TTIN", SIGTTIN }, { "TTOU", SIGTTOU },   { "URG", SIGURG },   { "XCPU", SIGXCPU },
	{ "XFSZ", SIGXFSZ }, { "VTALRM", SIGVTALRM }, { "PROF", SIGPROF }, { "WINCH", SIGWINCH },
	{ "IO", SIGIO },     { "PWR", SIGPWR },     { "SYS", SIGSYS },
};

int cli_parse_signal(const char *s)
{
	char *end;
	long n;

	if (!s || !*s)
		return -1;
	if (isdigit((unsigned char)*s)) {
		errno = 0;
		n = strtol(s, &end, 10);
		return (*end || errno || n < 1 || n >= NSIG) ? -1 : (int)n;
	}
	if (!strncasecmp(s, "SIG", 3))
		s += 3;
	for (size_t i = 0; i < QP_ARRAY_SIZE(signals); i++)
		if (!strcasecmp(s, signals[i].name))
			return signals[i].sig;
	if (!strncasecmp(s, "RTMIN+", 6) || !strncasecmp(s, "RTMAX-", 6)) {
		n = strtol(s + 6, &end, 10);
		int sig = toupper((unsigned char)s[3]) == 'I' ? SIGRTMIN + (int)n : SIGRTMAX - (int)n;
		return (*end || n < 0 || sig < SIGRTMIN || sig > SIGRTMAX) ? -1 : sig;
	}
	return -1;
}

int cli_parse_size(const char *s, const char *what, int64_t *out, qp_error **err)
{
	char *end;
	unsigned long long v;
	unsigned shift = 0;

	if (!s || !isdigit((unsigned char)*s))
		goto bad;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		goto bad;
	switch (toupper((unsigned char)*end)) {
	case '\0': break;
	case 'K': shift = 10; end++; break;
	case 'M': shift = 20; end++; break;
	case 'G': shift = 30; end++; break;
	case 'T': shift = 40; end++; break;
	case 'P': shift = 50; end++; break;
	default: goto bad;
	}
	if (*end == 'i' || *end == 'I')
		end++;
	if (*end == 'b' || *end == 'B')
		end++;
	if (*end)
		goto bad;
	if (v == 0)
		return qp_error_set(err, QP_E_INVALID, 0, "%s: must be greater than 0", what);
	if (v > ((1ULL << 50) - 1) >> shift)
		return qp_error_set(err, QP_E_INVALID, 0, "%s \"%s\": too large (at most 1P - 1)", what, s);
	*out = (int64_t)(v << shift);
	return 0;
bad:
	return qp_error_set(err, QP_E_INVALID, 0,
			    "%s \"%s\": not a size (a number with an optional K, M, G, T suffix)", what,
			    s ? s : "");
}

int cli_parse_i64(const char *s, const char *what, int64_t *out, qp_error **err)
{
	char *end;
	long long v;

	if (!s || !(isdigit((unsigned char)s[0]) || (s[0] == '-' && isdigit((unsigned char)s[1]))))
		goto bad;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end)
		goto bad;
	*out = v;
	return 0;
bad:
	return qp_error_set(err, QP_E_INVALID, 0, "%s \"%s\": not an integer", what, s ? s : "");
}

int cli_parse_u64(const char *s, const char *what, uint64_t *out, qp_error **err)
{
	char *end;
	unsigned long long v;

	if (!s || !isdigit((unsigned char)*s))
		return qp_error_set(err, QP_E_INVALID, 0, "%s \"%s\": not a non-negative integer", what,
				    s ? s : "");
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return qp_error_set(err, QP_E_INVALID, 0, "%s \"%s\": not a non-negative integer", what, s);
	*out = v;
	return 0;
}

static const struct {
	const char *name;
	double ns;
} duration_units[] = {
	{ "ns", 1 }, { "us", 1e3 }, { "\xc2\xb5s", 1e3 }, { "\xce\xbcs", 1e3 }, { "ms", 1e6 },
	{ "s", 1e9 }, { "m", 60e9 }, { "h", 3600e9 },
};

int cli_parse_duration(const char *s, const char *what, int64_t *ns, qp_error **err)
{
	const char *p = s;
	double total = 0;

	if (!s || !*s)
		goto bad;
	if (!strcmp(s, "0")) { /* Go takes a bare 0 */
		*ns = 0;
		return 0;
	}
	while (*p) {
		double v = 0, scale = 1, unit = 0;
		bool digits = false;
		size_t best = 0;

		for (; isdigit((unsigned char)*p); p++, digits = true)
			v = v * 10 + (*p - '0');
		if (*p == '.')
			for (p++; isdigit((unsigned char)*p); p++, digits = true)
				v += (*p - '0') * (scale /= 10);
		if (!digits)
			goto bad;
		for (size_t k = 0; k < QP_ARRAY_SIZE(duration_units); k++) {
			size_t n = strlen(duration_units[k].name);
			if (!strncmp(p, duration_units[k].name, n) && n > best) {
				best = n;
				unit = duration_units[k].ns;
			}
		}
		if (!best)
			goto bad;
		total += v * unit;
		p += best;
		if (total > 9.2e18)
			return qp_error_set(err, QP_E_INVALID, 0, "%s \"%s\": too long", what, s);
	}
	*ns = (int64_t)total;
	return 0;
bad:
	return qp_error_set(err, QP_E_INVALID, 0,
			    "%s \"%s\": not a duration (such as 5s, 500ms, 1m30s)", what, s ? s : "");
}

int cli_one_id(int argc, char **argv, int optind_, const char **id, qp_error **err)
{
	if (optind_ >= argc)
		return qp_error_set(err, QP_E_INVALID, 0, "missing pod ID");
	if (optind_ + 1 < argc)
		return qp_error_set(err, QP_E_INVALID, 0, "unexpected argument \"%s\"", argv[optind_ + 1]);
	*id = argv[optind_];
	return state_validate_id(*id, err);
}

int cli_vm_shape_opt(int c, const char *arg, struct pod_spec *spec, qp_error **err)
{
	int64_t bytes;

	switch (c) {
	case 'M':
		if (cli_parse_size(arg, "--memory", &bytes, err) < 0)
			return -1;
		spec->resources.has_memory_limit = true;
		spec->resources.memory_limit = bytes;
		return 1;
	case 'c':
		return spec_opt_set(spec, "qpod.vcpus", arg, err) < 0 ? -1 : 1;
	case 'A':
		return spec_opt_set(spec, "qpod.vm.accel", arg, err) < 0 ? -1 : 1;
	case 'f':
		return spec_opt_set(spec, "qpod.vm.firmware", arg, err) < 0 ? -1 : 1;
	default:
		return 0;
	}
}

int cli_parse_format(const char *arg, bool *json, qp_error **err)
{
	if (strcmp(arg, "table") && strcmp(arg, "json"))
		return qp_error_set(err, QP_E_INVALID, 0, "--format must be table or json, not \"%s\"",
				    arg);
	*json = !strcmp(arg, "json");
	return 0;
}

int cli_parse_user(const char *s, uint32_t *uid, uint32_t *gid, qp_error **err)
{
	char *end;
	unsigned long u, g;

	errno = 0;
	u = g = strtoul(s, &end, 10);
	if (!errno && *end == ':' && end[1])
		g = strtoul(end + 1, &end, 10);
	if (errno || *end || end == s || !isdigit((unsigned char)*s) || u > 0xfffffffeUL ||
	    g > 0xfffffffeUL)
		return qp_error_set(err, QP_E_INVALID, 0, "--user \"%s\": expected UID[:GID]", s);
	*uid = (uint32_t)u;
	*gid = (uint32_t)g;
	return 0;
}

int cli_env_set(char ***env, const char *kv)
{
	size_t klen = (size_t)(strchr(kv, '=') - kv) + 1, n = qp_strv_len(*env);
	char *copy = strdup(kv);
	char **nv;

	if (!copy)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (!strncmp((*env)[i], kv, klen)) {
			free((*env)[i]);
			(*env)[i] = copy;
			return 0;
		}
	nv = realloc(*env, (n + 2) * sizeof(*nv));
	if (!nv) {
		free(copy);
		return -1;
	}
	nv[n] = copy;
	nv[n + 1] = NULL;
	*env = nv;
	return 0;
}

int cli_resolve_rootfs(const char *path, char **out, qp_error **err)
{
	char *real = realpath(path, NULL);

	if (!real)
		return qp_fail(err, errno, "rootfs \"%s\"", path);
	if (!strcmp(real, "/")) {
		free(real);
		return qp_error_set(err, QP_E_INVALID, 0, "rootfs \"%s\" resolves to the host's /", path);
	}
	int fd = open(real, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		free(real);
		return qp_fail(err, e, "rootfs \"%s\"", path);
	}
	close(fd);
	*out = real;
	return 0;
}

int cli_set_accel(const char *arg, const char *cmd, qp_error **err)
{
	enum qp_accel a;

	if (qp_accel_parse(arg, &a) < 0)
		return qp_error_set(err, QP_E_INVALID, 0, "%s: --accel must be auto, kvm or tcg, not \"%s\"",
				    cmd, arg);
	if (a == QP_ACCEL_AUTO)
		return unsetenv("QPOD_ACCEL") < 0 ? qp_fail(err, errno, "%s: --accel", cmd) : 0;
	return setenv("QPOD_ACCEL", arg, 1) < 0 ? qp_fail(err, errno, "%s: --accel", cmd) : 0;
}
