/* runtime/cli/cmd_events.c — `qpod events [--stats] [--interval D] ID`
 * (runc's command): with --stats one JSON line {"type":"stats","id":ID,
 * "data":{...}} with runc's field names (stats.c), as containerd's shim and
 * podman read it; without, such a line at once and then every interval
 * (default 5s), plus {"type":"oom","id":ID} when the OOM killer struck,
 * until the pod stops.  The pod's lock is not held while streaming, so
 * kill, delete and the rest go on.  Failures exit 1, as runc's do. */
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cli/cli.h"
#include "pod.h"
#include "util/cleanup.h"

#define DEFAULT_INTERVAL_NS 5000000000LL

static int emit(const char *type, const char *id, const struct qp_stats *st, qp_error **err)
{
	char *line = NULL;

	if (qp_stats_event_json(type, id, st, &line, err) < 0)
		return -1;
	printf("%s\n", line);
	fflush(stdout);
	free(line);
	return 0;
}

static int one_stats(struct pod *pod, uint64_t *ooms, bool *has_ooms, qp_error **err)
{
	struct qp_stats st;
	int r = pod_stats(pod, &st, err);

	if (r == 0 && ooms) {
		if (*has_ooms && st.has_oom_kills && st.oom_kills > *ooms)
			r = emit("oom", pod->id, NULL, err);
		*has_ooms = st.has_oom_kills;
		*ooms = st.oom_kills;
	}
	if (r == 0)
		r = emit("stats", pod->id, &st, err);
	qp_stats_free(&st);
	return r;
}

/* Every interval until the pod's process (init or VMM) is gone. */
static int stream(struct pod *pod, long long interval_ns, qp_error **err)
{
	_cleanup_close_ int pidfd = (int)syscall(SYS_pidfd_open, pod->state->pid, 0);
	int timeout = interval_ns / 1000000 > 0x7fffffff ? 0x7fffffff : (int)(interval_ns / 1000000);
	uint64_t ooms = 0;
	bool has_ooms = false;

	if (timeout < 1)
		timeout = 1;
	for (;;) {
		struct pollfd p = { .fd = pidfd, .events = POLLIN };
		qp_error *e = NULL;

		if (pod_status(pod) == QP_STATUS_STOPPED)
			return 0;
		if (one_stats(pod, &ooms, &has_ooms, &e) < 0) {
			if (pod_status(pod) == QP_STATUS_STOPPED) {
				qp_error_free(&e);
				return 0;
			}
			qp_error_prefix(&e, "events"); /* runc logs and goes on */
			qp_error_print(e);
			qp_error_free(&e);
		}
		if (poll(&p, pidfd >= 0 ? 1 : 0, timeout) > 0)
			return 0; /* the pod's process ended */
	}
	(void)err;
}

const struct option cli_opts_events[] = { { "stats", no_argument, NULL, 's' },
				      { "interval", required_argument, NULL, 'i' },
				      { "help", no_argument, NULL, 'h' }, { 0 } };

int cmd_events(struct qp_cli *cli, int argc, char **argv, qp_error **err)
{
	const struct option *opts = cli_opts_events;
	int64_t interval = DEFAULT_INTERVAL_NS;
	struct pod *pod = NULL;
	bool stats = false;
	const char *id;
	int c, r;

	while ((c = getopt_long(argc, argv, "si:h", opts, NULL)) != -1) {
		if (c == 'h') {
			printf("Usage: qpod events [--stats] [--interval D] ID\n"
			       "The pod's usage as runc's JSON events, one per line:\n"
			       "{\"type\":\"stats\",\"id\":ID,\"data\":{\"cpu\":{\"usage\":{\"total\",...}},"
			       "\"memory\":{\"usage\":{\"usage\",\"limit\",...}},\"pids\":{\"current\",...}}}\n"
			       "  -s, --stats   print one stats event and exit\n"
			       "  -i, --interval D  otherwise, one every D (default 5s; 500ms, 1m...) until the pod\n"
			       "                stops; an {\"type\":\"oom\"} event when the OOM killer struck\n"
			       "vm pods: cpu is the VMM's CPU time, memory the guest's (not while paused).\n"
			       "Exit status 1 on failure, as runc.\n");
			exit(0);
		}
		if (c == 's')
			stats = true;
		else if (c != 'i' || cli_parse_duration(optarg, "--interval", &interval, err) < 0)
			return err && *err ? qp_error_prefix(err, "events")
					   : qp_error_set(err, QP_E_INVALID, 0,
							  "events: bad option (see qpod events --help)");
	}
	if (interval <= 0)
		return qp_error_set(err, QP_E_INVALID, 0, "events: duration interval must be greater than 0");
	if (cli_one_id(argc, argv, optind, &id, err) < 0 || cli_root(cli, err) < 0 ||
	    pod_open(cli->rootfd, cli->root, id, false, &pod, err) < 0)
		return qp_error_prefix(err, "events");
	if (pod_status(pod) == QP_STATUS_STOPPED) {
		pod_free(pod);
		return qp_error_set(err, QP_E_STATE, 0, "events: container with id %s is not running", id);
	}
	if (stats) {
		r = one_stats(pod, NULL, NULL, err);
	} else {
		flock(pod->dirfd, LOCK_UN);
		r = stream(pod, interval, err);
	}
	pod_free(pod);
	return r < 0 ? qp_error_prefix(err, "events") : 0;
}
