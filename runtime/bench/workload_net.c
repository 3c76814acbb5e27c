/* runtime/bench/workload_net.c — the `bench workload` tests with a server in
 * the pod (on qpod's bridge; vm-netns: in a namespace with a veth,
 * workload_netns.c) and the client on the host, in the bench's own
 * network namespace; the host's own figure is loopback:
 *   tcp_rr, tcp_stream   netbench (netperf TCP_RR / TCP_SENDFILE style)
 *   tcp_stream_out       the other way: netbench's server on the host (the
 *                        bridge's address), its client in the pod (exec),
 *                        so the pod sends (OpenVZ's "from the container")
 *   rr_idle              tcp_rr's median and p99 round trip, idle host
 *   rr_busy_host         the same while another pod burns every CPU (one
 *                        intbench per online CPU in a container pod)
 *   rr_busy_pod          the same, and an intbench beside the server in the
 *                        measured pod too (OpenVZ's "Response Time" page)
 *   http                 busybox httpd (the image's) serving /www/index.html,
 *                        httpbench with HTTP_CLIENTS clients: requests/s
 *                        and the response time's median and p99 (Siege) */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/workload.h"
#include "net/link_info.h"
#include "util/cleanup.h"

#define NET_PORT "12867"
#define OUT_PORT "12868" /* tcp_stream_out's server, on the host side */
#define HTTP_PORT "8080"
#define HTTP_CLIENTS "4"
#define NET_READY_TRIES 150 /* x 200 ms for the pod's server to listen (a VM boots) */
#define BURN_POD "bench-burn"
#define SERVER_POD "bench-net"
#define BURN_SECONDS "86400" /* the eaters run until their pod is deleted */

bool wl_is_net(const char *test)
{
	return !strncmp(test, "tcp_", 4) || !strncmp(test, "rr_", 3) || !strcmp(test, "http");
}

int wl_pod_addr(const struct wl *b, const char *id, char *addr, size_t size, qp_error **err)
{
	char path[4200], line[1200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/.net/ipam", b->o->root);
	if (!(f = fopen(path, "re")))
		return qp_fail(err, errno, "open \"%s\"", path);
	while (fgets(line, sizeof(line), f)) {
		char a[32], i[1100];
		if (sscanf(line, "%31s %1099s", a, i) == 2 && !strcmp(i, id) && strlen(a) < size) {
			strcpy(addr, a);
			fclose(f);
			return 0;
		}
	}
	fclose(f);
	return qp_error_set(err, QP_E_NOTFOUND, 0, "no address for pod %s", id);
}

/* A container pod with one CPU eater per online CPU: the busy host. */
static int start_burner(const struct wl *b, qp_error **err)
{
	char script[256];
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	const char *argv[] = { b->o->qpod, "--root", b->o->root, "run", "-d", "--name", BURN_POD, b->img, "--",
			       "/bin/sh", "-c", script, NULL };
	double ms;
	int status;

	snprintf(script, sizeof(script),
		 "i=0; while [ $i -lt %ld ]; do /bench/intbench --duration " BURN_SECONDS
		 " >/dev/null 2>&1 & i=$((i+1)); done; wait",
		 cpus > 0 ? cpus : 1);
	if (qp_bench_child((char *const *)argv, &ms, &status, NULL, err) < 0)
		return -1;
	if (status != 0)
		return qp_error_set(err, QP_E_GENERIC, 0, "the pod that keeps the host busy did not start (status %d)",
				    status);
	return 0;
}

/* The server's argv into argv (NULL-terminated). */
static void server_argv(const struct wl *b, const char *target, const char *test, const char **argv, char *path,
			size_t psize, char *www, size_t wsize)
{
	bool host = !strcmp(target, "host");
	size_t n = 0;

	if (!host && !strcmp(test, "rr_busy_pod")) {
		/* an eater beside the server, in the same pod */
		argv[n++] = "/bin/sh";
		argv[n++] = "-c";
		argv[n++] = "/bench/intbench --duration " BURN_SECONDS " >/dev/null 2>&1 & exec \"$0\" \"$@\"";
	}
	if (!strcmp(test, "http")) {
		snprintf(path, psize, "%s/bin/busybox", host ? b->img : "");
		snprintf(www, wsize, "%s/www", host ? b->img : "");
		argv[n++] = path;
		argv[n++] = "httpd";
		argv[n++] = "-f";
		argv[n++] = "-p";
		argv[n++] = host ? "127.0.0.1:" HTTP_PORT : HTTP_PORT;
		argv[n++] = "-h";
		argv[n++] = www;
	} else {
		argv[n++] = wl_tool_path(b, target, "netbench", path, psize);
		argv[n++] = "server";
		argv[n++] = "--port";
		argv[n++] = NET_PORT;
		if (host) {
			argv[n++] = "--bind";
			argv[n++] = "127.0.0.1";
		}
	}
	argv[n] = NULL;
}

/* The pod SERVER_POD running cmd (NULL-terminated) in target, detached,
 * and its address: on qpod's bridge (IPAM's), or in the namespace *ns
 * made for it (vm-netns, and a peer's pod: wl_netns_make). */
static int start_pod(const struct wl *b, const char *target, const char *const *cmd, struct wl_netns *ns,
		     char *addr, size_t size, qp_error **err)
{
	const char *argv[64];
	double ms;
	int status;

	if (wl_is_netns(target) || wl_is_peer(target)) {
		if (wl_netns_make(ns, err) < 0 ||
		    (wl_is_peer(target) ? wl_peer_serve(b, target, ns, SERVER_POD, cmd, err)
					: wl_netns_pod(b, ns, SERVER_POD, cmd, err)) < 0)
			return -1;
		snprintf(addr, size, "%s", WL_NETNS_POD_ADDR);
		return 0;
	}
	size_t n = wl_target_prefix(b, target, argv, true, SERVER_POD);
	for (size_t i = 0; cmd[i] && n < QP_ARRAY_SIZE(argv) - 1; i++)
		argv[n++] = cmd[i];
	argv[n] = NULL;
	if (qp_bench_child((char *const *)argv, &ms, &status, NULL, err) < 0)
		return -1;
	if (status != 0)
		return qp_error_set(err, QP_E_GENERIC, 0, "the %s pod with the server did not start (status %d)", target,
				    status);
	return wl_pod_addr(b, SERVER_POD, addr, size, err);
}

/* SERVER_POD deleted, and the namespace made for it (if any) removed. */
static void stop_pod(const struct wl *b, const char *target, struct wl_netns *ns)
{
	if (wl_is_peer(target))
		wl_peer_unserve(b, target, SERVER_POD);
	else
		wl_delete_pod(b, SERVER_POD);
	wl_netns_remove(ns);
}

/* Param "nic.TARGET": SERVER_POD's NIC backend as its state names it (a
 * VM's; a container has none). */
static void name_nic(const struct wl *b, const char *target)
{
	const char *argv[] = { b->o->qpod, "--root", b->o->root, "state", SERVER_POD, NULL };
	struct qp_child_out out = { 0 };
	yajl_val st = NULL;
	double ms;
	int status;
	char key[96];

	if (qp_bench_child((char *const *)argv, &ms, &status, &out, NULL) == 0 && status == 0 && out.out &&
	    qp_json_parse(out.out, "state", &st, NULL) == 0 && qp_json_get_str(st, "nic")) {
		snprintf(key, sizeof(key), "nic.%s", target);
		qp_bench_param_str(b->r, key, qp_json_get_str(st, "nic"), NULL);
	}
	yajl_tree_free(st);
	qp_child_out_free(&out);
}

/* The first time target's pod ran a network test: the settings of the
 * links its traffic crossed, as params "net.TARGET.DRIVER" (the bench's
 * namespace: the bridge, the pod's tap or veth, vm-netns's client veth)
 * and "net.TARGET.pod-DRIVER" (vm-netns: the pod's namespace, its veth
 * and qpod's tap).  Nothing is fatal here: the figures stand without. */
static void name_links(const struct wl *b, const char *target, const struct wl_netns *ns)
{
	struct qp_link_info li[8];
	char key[96];
	int n;

	snprintf(key, sizeof(key), "net.%s.", target);
	for (size_t i = 0; i < b->r->n_params; i++)
		if (!strncmp(b->r->params[i].key, key, strlen(key)))
			return;
	name_nic(b, target);
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 1 && ns->holder <= 0)
			break;
		n = pass ? qp_net_links_info_at(ns->path, li, 8, NULL) : qp_net_links_info(li, 8, NULL);
		for (int i = 0; i < n; i++) {
			snprintf(key, sizeof(key), "net.%s.%s%s", target, pass ? "pod-" : "", li[i].driver);
			qp_bench_param_str(b->r, key, li[i].text, NULL);
		}
	}
}

int wl_net_client(const struct wl *b, const char *test, const char *addr, struct wl_values *vals,
		  qp_error **err)
{
	static const char *const pct[] = { "p50_us", "p99_us", NULL };
	char tool[4300];
	bool http = !strcmp(test, "http"), rr = !strncmp(test, "rr_", 3);
	const char *nargv[] = { tool, "client", "--host", addr, "--port", NET_PORT, "--test",
				!strcmp(test, "tcp_stream") ? "stream" : "rr", "--duration", b->dur, NULL };
	const char *hargv[] = { tool, "--host", addr, "--port", HTTP_PORT, "--path", "/index.html",
				"--clients", HTTP_CLIENTS, "--duration", b->dur, NULL };

	snprintf(tool, sizeof(tool), "%s/%s", b->tools, http ? "httpbench" : "netbench");
	for (int i = 0; i < NET_READY_TRIES; i++) {
		qp_error *e = NULL;
		if (wl_run_tool(http ? hargv : nargv, test, strncmp(test, "tcp_", 4) ? pct : NULL, vals, &e) == 0) {
			if (rr) {
				memmove(&vals->v[0], &vals->v[1], sizeof(vals->v[0]) * (size_t)(vals->n - 1));
				vals->n--;
			}
			return 0;
		}
		if (i == NET_READY_TRIES - 1 || qp_bench_interrupted(NULL)) {
			*err = e;
			return -1;
		}
		qp_error_free(&e);
		usleep(200000);
	}
	return -1;
}

/* The host's address towards the pod at addr (the bridge's): the source
 * address of a UDP socket connected to it. */
static int host_side(const char *addr, char *out, size_t size, qp_error **err)
{
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(9) }, me;
	socklen_t len = sizeof(me);
	int sk = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), r = -1;

	if (sk < 0)
		return qp_fail(err, errno, "socket");
	if (inet_pton(AF_INET, addr, &to.sin_addr) != 1)
		qp_error_set(err, QP_E_INVALID, 0, "pod address \"%s\"", addr);
	else if (connect(sk, (struct sockaddr *)&to, sizeof(to)) < 0 || getsockname(sk, (struct sockaddr *)&me, &len) < 0)
		qp_fail(err, errno, "the host's address towards %s", addr);
	else if (inet_ntop(AF_INET, &me.sin_addr, out, (socklen_t)size))
		r = 0;
	close(sk);
	return r;
}

/* tcp_stream_out: the pod (its client, exec'd) sends to a server on the
 * host side; the host target's figure is loopback, as tcp_stream's. */
static int run_stream_out(const struct wl *b, const char *target, struct wl_values *vals, qp_error **err)
{
	static const char *const sleeper[] = { "/bin/sleep", BURN_SECONDS, NULL };
	const char *argv[64];
	char nb[4300], pnb[4300], addr[32], host[INET_ADDRSTRLEN] = "127.0.0.1";
	bool is_host = !strcmp(target, "host");
	struct qp_child_run server = { .pid = -1 };
	struct wl_netns ns = { .holder = -1 };
	int r = -1;

	if (!is_host && (start_pod(b, target, sleeper, &ns, addr, sizeof(addr), err) < 0 ||
			 host_side(addr, host, sizeof(host), err) < 0)) {
		qp_error_prefix(err, "tcp_stream_out");
		goto out;
	}
	const char *sargv[] = { wl_tool_path(b, "host", "netbench", nb, sizeof(nb)), "server", "--port", OUT_PORT,
				"--bind", host, NULL };
	if (qp_bench_child_start((char *const *)sargv, &server, false, err) < 0)
		goto out;
	size_t n = 0;
	if (wl_is_peer(target)) {
		n = wl_peer_exec_prefix(b, target, SERVER_POD, argv);
	} else if (!is_host) {
		argv[n++] = b->o->qpod;
		argv[n++] = "--root";
		argv[n++] = b->o->root;
		argv[n++] = "exec";
		argv[n++] = SERVER_POD;
		argv[n++] = "--";
	}
	const char *cargv[] = { wl_tool_path(b, target, "netbench", pnb, sizeof(pnb)), "client", "--host", host,
				"--port", OUT_PORT, "--test", "stream", "--duration", b->dur, NULL };
	for (size_t i = 0; i < QP_ARRAY_SIZE(cargv); i++)
		argv[n++] = cargv[i];
	for (int i = 0; i < NET_READY_TRIES; i++) {
		qp_error *e = NULL;
		if (wl_run_tool(argv, "tcp_stream_out", NULL, vals, &e) == 0) {
			r = 0;
			if (!is_host)
				name_links(b, target, &ns);
			break;
		}
		if (i == NET_READY_TRIES - 1 || qp_bench_interrupted(NULL)) {
			*err = e;
			break;
		}
		qp_error_free(&e);
		usleep(200000);
	}
out:
	wl_stop(&server);
	if (!is_host)
		stop_pod(b, target, &ns);
	return r;
}

int wl_run_net(const struct wl *b, const char *target, const char *test, struct wl_values *vals,
	       qp_error **err)
{
	const char *argv[64];
	char path[4300], www[4300], addr[32] = "127.0.0.1";
	bool host = !strcmp(target, "host"), burn = !strncmp(test, "rr_busy_", 8);
	struct qp_child_run server = { .pid = -1 }, eater = { .pid = -1 };
	struct wl_netns ns = { .holder = -1 };
	int r = -1;

	if (!strcmp(test, "tcp_stream_out"))
		return run_stream_out(b, target, vals, err);
	if (burn && start_burner(b, err) < 0)
		goto out;
	server_argv(b, target, test, argv, path, sizeof(path), www, sizeof(www));
	if (host) {
		if (qp_bench_child_start((char *const *)argv, &server, false, err) < 0)
			goto out;
		if (!strcmp(test, "rr_busy_pod")) {
			char eat[4300];
			const char *eargv[] = { wl_tool_path(b, target, "intbench", eat, sizeof(eat)), "--duration",
						BURN_SECONDS, NULL };
			if (qp_bench_child_start((char *const *)eargv, &eater, false, err) < 0)
				goto out;
		}
	} else if (start_pod(b, target, argv, &ns, addr, sizeof(addr), err) < 0) {
		qp_error_prefix(err, "%s", test);
		goto out;
	}
	r = wl_net_client(b, test, addr, vals, err);
	if (r == 0 && !host)
		name_links(b, target, &ns);
out:
	wl_stop(&server);
	wl_stop(&eater);
	if (!host)
		stop_pod(b, target, &ns);
	if (burn)
		wl_delete_pod(b, BURN_POD);
	return r;
}
