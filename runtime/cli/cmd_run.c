/* runtime/cli/cmd_run.c — `qpod create` and `qpod run`, in both forms:
 *   OCI:      create ID --bundle DIR [--pid-file F] [--console-socket S]
 *             run ID --bundle DIR [--detach] [--pid-file F] [--console-socket S]
 *   friendly: run [OPTIONS] ROOTFS -- CMD ARGS...
 * The friendly form builds a spec from spec_default() plus its flags. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "cli/cli.h"
#include "pod.h"
#include "util/cleanup.h"
#include "util/strv.h"
#include "vm/libvirt/libvirt.h"

struct run_opts {
	const char *bundle, *name, *workdir, *hostname, *user, *mode;
	const char *net, *ip, *subnet, *bridge, *firmware, *accel, *vcpus, *boot;
	const char *vm_backend, *libvirt_uri, *pod;
	bool sandbox;
	bool rm, detach, init, memory_set, cpus_set, pids_set, read_only, timeline, tty;
	int64_t memory;
	double cpus;
	long pids;
	char **env;  /* -e K=V, in order */
	size_t n_env;
	struct pod_io io;
};

enum { OPT_PIDFILE = 256, OPT_CONSOLE, OPT_RM, OPT_MEMORY, OPT_CPUS, OPT_PIDS, OPT_HOSTNAME,
       OPT_MODE, OPT_NAME, OPT_USER, OPT_READONLY, OPT_NO_PIVOT, OPT_NO_NEW_KEYRING,
       OPT_PRESERVE_FDS, OPT_NET, OPT_IP, OPT_SUBNET, OPT_BRIDGE, OPT_FIRMWARE, OPT_ACCEL, OPT_BOOT,
       OPT_VCPUS, OPT_TIMELINE, OPT_INIT, OPT_VM_BACKEND, OPT_LIBVIRT_URI, OPT_SANDBOX, OPT_POD };

const struct option cli_opts_run[] = {
	{ "bundle", required_argument, NULL, 'b' },
	{ "pid-file", required_argument, NULL, OPT_PIDFILE },
	{ "console-socket", required_argument, NULL, OPT_CONSOLE },
	{ "detach", no_argument, NULL, 'd' },
	{ "tty", no_argument, NULL, 't' },
	{ "name", required_argument, NULL, OPT_NAME },
	{ "rm", no_argument, NULL, OPT_RM },
	{ "memory", required_argument, NULL, OPT_MEMORY },
	{ "cpus", required_argument, NULL, OPT_CPUS },
	{ "pids", required_argument, NULL, OPT_PIDS },
	{ "env", required_argument, NULL, 'e' },
	{ "workdir", required_argument, NULL, 'w' },
	{ "hostname", required_argument, NULL, OPT_HOSTNAME },
	{ "user", required_argument, NULL, 'u' },
	{ "mode", required_argument, NULL, OPT_MODE },
	{ "read-only", no_argument, NULL, OPT_READONLY },
	{ "net", required_argument, NULL, OPT_NET },
	{ "ip", required_argument, NULL, OPT_IP },
	{ "subnet", required_argument, NULL, OPT_SUBNET },
	{ "bridge", required_argument, NULL, OPT_BRIDGE },
	{ "firmware", required_argument, NULL, OPT_FIRMWARE },
	{ "accel", required_argument, NULL, OPT_ACCEL },
	{ "boot", required_argument, NULL, OPT_BOOT },
	{ "vcpus", required_argument, NULL, OPT_VCPUS },
	{ "vm-backend", required_argument, NULL, OPT_VM_BACKEND },
	{ "libvirt-uri", required_argument, NULL, OPT_LIBVIRT_URI },
	{ "timeline", no_argument, NULL, OPT_TIMELINE },
	{ "init", no_argument, NULL, OPT_INIT },
	{ "sandbox", no_argument, NULL, OPT_SANDBOX },
	{ "pod", required_argument, NULL, OPT_POD },
	/* accepted for runc compatibility (containerd passes them) */
	{ "no-pivot", no_argument, NULL, OPT_NO_PIVOT },
	{ "no-new-keyring", no_argument, NULL, OPT_NO_NEW_KEYRING },
	{ "preserve-fds", required_argument, NULL, OPT_PRESERVE_FDS },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

static const char run_usage[] =
	"Usage: qpod run [OPTIONS] ROOTFS -- CMD [ARGS...]\n"
	"       qpod run [OPTIONS] ID --bundle DIR\n\n"
	"Run a pod in the foreground (create, start, wait; the OCI form deletes it at\n"
	"the end unless --detach).\n\n"
	"Options of both forms:\n"
	"  -d, --detach         return once the workload runs (the pod stays; ROOTFS\n"
	"                       form: not with --rm)\n"
	"  --pid-file F         write the pod's pid (the workload; vm: its monitor)\n"
	"  --timeline           when the pod ends, print its start timeline (phases in\n"
	"                       ms) as one line \"qpod-timeline: {JSON}\" on stderr\n"
	"                       (not with --detach)\n"
	"  --mode container|vm  pod driver (default container; a bundle: qpod.mode)\n"
	"  --init               container pods: a tiny init is PID 1 and forks the\n"
	"                       workload (reaps zombies, forwards signals); default:\n"
	"                       the workload is PID 1, as under runc (annotation\n"
	"                       qpod.init=true in a bundle)\n"
	"  --no-pivot           MS_MOVE + chroot instead of pivot_root\n"
	"  --no-new-keyring     keep the caller's session keyring\n"
	"  --preserve-fds N     pass fds 3..3+N-1 to the workload (container pods)\n"
	"Options of the OCI form:\n"
	"  -b, --bundle DIR     the bundle (config.json and the rootfs)\n"
	"  --console-socket S   unix socket that receives the terminal's master fd\n"
	"                       (process.terminal true)\n"
	"Options of the ROOTFS form:\n"
	"  --name ID            pod ID (default: qpod-<random>)\n"
	"  --rm                 delete the pod when it exits\n"
	"  --memory SIZE        memory limit, e.g. 64M, 1G\n"
	"  --cpus N             CPU limit, e.g. 0.5 (CFS quota)\n"
	"  --pids N             maximum number of processes\n"
	"  -t, --tty            the workload runs on a terminal of its own, relayed to\n"
	"                       qpod's (stdin and stdout must be one; raw while it\n"
	"                       runs, then restored; its window size followed), as\n"
	"                       podman run -t (both modes; not with --detach)\n"
	"  -e, --env K=V        set an environment variable (repeatable)\n"
	"  -w, --workdir DIR    working directory inside the pod\n"
	"  --hostname H         hostname of the pod\n"
	"  -u, --user UID[:GID] run the workload as this user\n"
	"  --read-only          mount the rootfs read-only\n"
	"  --net none|bridge|host  network: loopback only (default), a veth on the\n"
	"                       qpod bridge, or the host's network namespace\n"
	"  --ip ADDR            address on the bridge (default: the next free one)\n"
	"  --subnet CIDR        pod subnet (default 10.213.0.0/16, one /22 per bridge)\n"
	"  --bridge PREFIX      bridge name prefix (default qpod: qpod0, qpod1, ...)\n"
	"Options of vm pods (both forms; annotations qpod.vm.firmware, qpod.vm.accel,\n"
	"qpod.vm.boot, qpod.vcpus in a bundle):\n"
	"  --firmware qpod|qboot|seabios|PATH  firmware (default qpod: qpod's own,\n"
	"                       qboot/; qboot: Debian's qboot.rom; seabios: QEMU's)\n"
	"  --accel auto|kvm|tcg  accelerator (default auto: KVM if /dev/kvm is usable)\n"
	"  --boot auto|template|cold  a clone of a booted VM template, or a kernel\n"
	"                       boot (default auto: a template when one exists or can\n"
	"                       be made; see qpod template --help)\n"
	"  --vcpus N            virtual CPUs (default 1); --memory sets the VM's RAM\n"
	"                       (default 256M)\n"
	"  --vm-backend qemu|libvirt  who runs QEMU: qpod (default), or libvirtd as a\n"
	"                       transient domain named after the pod (cold boot only;\n"
	"                       annotation qpod.vm.backend; see docs/LIBVIRT.md)\n"
	"  --libvirt-uri URI    the libvirt connection (default $QPOD_LIBVIRT_URI, else\n"
	"                       qemu:///system; annotation qpod.vm.libvirt.uri)\n"
	"One VM per pod (vm pods of the ROOTFS form; a bundle: qpod.sandbox, qpod.pod):\n"
	"  --sandbox            this vm pod holds the containers later run into it\n"
	"  --pod ID             run this container inside vm pod ID's VM (made with\n"
	"                       --sandbox, running): its own root, PID and mount\n"
	"                       namespaces and limits, the pod's network, IPC and\n"
	"                       hostname (--hostname: a hostname of its own)\n"
	"The exit status is the workload's (see qpod --help).\n";

/* --mode/--init/--firmware/--accel/--boot/--vcpus -> the spec's options (and their
 * annotations), parsed by the spec code like those of a bundle */
static int apply_pod_opts(const struct run_opts *o, struct pod_spec *spec, qp_error **err)
{
	if ((o->mode && spec_opt_set(spec, "qpod.mode", o->mode, err) < 0) ||
	    (o->init && spec_opt_set(spec, "qpod.init", "true", err) < 0) ||
	    (o->firmware && spec_opt_set(spec, "qpod.vm.firmware", o->firmware, err) < 0) ||
	    (o->accel && spec_opt_set(spec, "qpod.vm.accel", o->accel, err) < 0) ||
	    (o->boot && spec_opt_set(spec, "qpod.vm.boot", o->boot, err) < 0) ||
	    (o->vcpus && spec_opt_set(spec, "qpod.vcpus", o->vcpus, err) < 0) ||
	    (o->vm_backend && spec_opt_set(spec, "qpod.vm.backend", o->vm_backend, err) < 0) ||
	    (o->libvirt_uri && spec_opt_set(spec, "qpod.vm.libvirt.uri", o->libvirt_uri, err) < 0) ||
	    (o->sandbox && spec_opt_set(spec, "qpod.sandbox", "true", err) < 0) ||
	    (o->pod && spec_opt_set(spec, "qpod.pod", o->pod, err) < 0))
		return -1;
	return 0;
}

/* --pod: a container of that vm pod's VM, with the pod's network, IPC and
 * hostname (the ROOTFS form's own are dropped; --hostname keeps a UTS
 * namespace of its own) and its own PID and mount namespaces. */
static int member_of_pod(const struct run_opts *o, struct pod_spec *spec, qp_error **err)
{
	if (o->net || o->ip || o->subnet || o->bridge)
		return qp_error_set(err, QP_E_INVALID, 0, "--pod: a container inside a vm pod has its pod's "
				    "network (--net, --ip, --subnet, --bridge are the pod's)");
	if (o->mode && strcmp(o->mode, "vm"))
		return qp_error_set(err, QP_E_INVALID, 0, "--pod: a container inside a vm pod is of mode vm");
	if (!o->mode && spec_opt_set(spec, "qpod.mode", "vm", err) < 0)
		return -1;
	spec->ns[QP_NS_NET].enabled = spec->ns[QP_NS_IPC].enabled = false;
	if (!o->hostname) {
		spec->ns[QP_NS_UTS].enabled = false;
		free(spec->hostname);
		spec->hostname = NULL;
	}
	return 0;
}

static const char create_usage[] =
	"Usage: qpod create ID --bundle DIR [OPTIONS]\n\n"
	"Create a pod from an OCI bundle: its process exists (vm: the VM is booted)\n"
	"and waits for `qpod start ID`.\n\n"
	"  -b, --bundle DIR     the bundle (config.json and the rootfs; default .)\n"
	"  --pid-file F         write the pod's pid (the workload; vm: its monitor)\n"
	"  --console-socket S   unix socket that receives the terminal's master fd\n"
	"                       (process.terminal)\n"
	"  --preserve-fds N     pass fds 3..3+N-1 to the workload (container pods)\n"
	"  --no-pivot           MS_MOVE + chroot instead of pivot_root\n"
	"  --no-new-keyring     keep the caller's session keyring\n"
	"  --mode container|vm  override the bundle's qpod.mode\n"
	"  --init               a tiny init as PID 1 (qpod.init=true)\n"
	"  --firmware, --accel, --boot, --vcpus, --vm-backend, --libvirt-uri,\n"
	"  --sandbox, --pod ID  vm pods: see qpod run --help\n"
	"Refused, with a message: --detach and --timeline (qpod run's), and the\n"
	"settings of run's ROOTFS form (--name, --rm, --tty, --memory, --cpus, --pids,\n"
	"--env, --workdir, --hostname, --user, --read-only, --net, --ip, --subnet,\n"
	"--bridge): a bundle's config.json and qpod.* annotations say those\n"
	"(a terminal: process.terminal, its master to --console-socket).\n";

static int parse_opts(int argc, char **argv, struct run_opts *o, bool create_only, qp_error **err)
{
	int c;
	char *end;

	while ((c = getopt_long(argc, argv, "b:de:tw:u:h", cli_opts_run, NULL)) != -1) {
		switch (c) {
		case 'h':
			fputs(create_only ? create_usage : run_usage, stdout);
			exit(0);
		case 'b': o->bundle = optarg; break;
		case 'd': o->detach = true; break;
		case 't': o->tty = true; break;
		case OPT_PIDFILE: o->io.pid_file = optarg; break;
		case OPT_CONSOLE: o->io.console_socket = optarg; break;
		case OPT_NAME: o->name = optarg; break;
		case OPT_SANDBOX: o->sandbox = true; break;
		case OPT_POD: o->pod = optarg; break;
		case OPT_RM: o->rm = true; break;
		case 'w': o->workdir = optarg; break;
		case OPT_HOSTNAME: o->hostname = optarg; break;
		case 'u': o->user = optarg; break;
		case OPT_MODE: o->mode = optarg; break;
		case OPT_READONLY: o->read_only = true; break;
		case OPT_NET: o->net = optarg; break;
		case OPT_IP: o->ip = optarg; break;
		case OPT_SUBNET: o->subnet = optarg; break;
		case OPT_BRIDGE: o->bridge = optarg; break;
		case OPT_FIRMWARE: o->firmware = optarg; break;
		case OPT_ACCEL: o->accel = optarg; break;
		case OPT_BOOT: o->boot = optarg; break;
		case OPT_VCPUS: o->vcpus = optarg; break;
		case OPT_VM_BACKEND: o->vm_backend = optarg; break;
		case OPT_LIBVIRT_URI: o->libvirt_uri = optarg; break;
		case OPT_TIMELINE: o->timeline = true; break;
		case OPT_INIT: o->init = true; break;
		case OPT_NO_PIVOT: o->io.no_pivot = true; break;
		case OPT_NO_NEW_KEYRING: o->io.no_new_keyring = true; break;
		case OPT_PRESERVE_FDS:
			errno = 0;
			o->io.preserve_fds = (int)strtol(optarg, &end, 10);
			if (errno || *end || !*optarg || o->io.preserve_fds < 0 || o->io.preserve_fds > 1024)
				return qp_error_set(err, QP_E_INVALID, 0,
						    "--preserve-fds \"%s\": a number from 0 to 1024", optarg);
			break;
		case OPT_MEMORY:
			if (cli_parse_size(optarg, "--memory", &o->memory, err) < 0)
				return -1;
			o->memory_set = true;
			break;
		case OPT_CPUS:
			errno = 0;
			o->cpus = strtod(optarg, &end);
			if (errno || *end || !(o->cpus >= 0.01 && o->cpus <= 1024))
				return qp_error_set(err, QP_E_INVALID, 0,
						    "--cpus \"%s\": a number from 0.01 to 1024", optarg);
			o->cpus_set = true;
			break;
		case OPT_PIDS:
			errno = 0;
			o->pids = strtol(optarg, &end, 10);
			if (errno || *end || o->pids < 1 || o->pids > 4194304)
				return qp_error_set(err, QP_E_INVALID, 0,
						    "--pids \"%s\": a number from 1 to 4194304", optarg);
			o->pids_set = true;
			break;
		case 'e': {
			if (!strchr(optarg, '=') || optarg[0] == '=')
				return qp_error_set(err, QP_E_INVALID, 0, "--env \"%s\": expected K=V", optarg);
			char **nv = realloc(o->env, (o->n_env + 2) * sizeof(*nv));
			if (!nv)
				return qp_fail(err, ENOMEM, "--env");
			o->env = nv;
			o->env[o->n_env++] = optarg;
			o->env[o->n_env] = NULL;
			break;
		}
		default: {
			/* an unknown letter of a group ("-rf") is named itself:
			 * argv[optind - 1] may be the word before the group */
			const char *cmd = create_only ? "create" : "run";
			if (optopt > 0 && optopt < 128 && strchr("b:de:tw:u:h", optopt))
				return qp_error_set(err, QP_E_INVALID, 0, "option -%c needs a value (see qpod %s --help)",
						    optopt, cmd);
			if (optopt > 0 && optopt < 128 && isgraph(optopt))
				return qp_error_set(err, QP_E_INVALID, 0, "unknown option \"-%c\" (see qpod %s --help)",
						    optopt, cmd);
			return qp_error_set(err, QP_E_INVALID, 0, "unknown option \"%s\" (see qpod %s --help)",
					    argv[optind - 1], cmd);
		}
		}
	}
	return 0;
}

static int load_bundle(const char *bundle, struct pod_spec **spec, char **abs_bundle,
		       char **rootfs, qp_error **err)
{
	_cleanup_free_ char *root = NULL;

	*abs_bundle = realpath(bundle, NULL);
	if (!*abs_bundle)
		return qp_fail(err, errno, "bundle \"%s\"", bundle);
	if (spec_load_bundle(*abs_bundle, spec, err) < 0)
		return -1;
	if ((*spec)->root_path[0] == '/')
		root = strdup((*spec)->root_path);
	else if (asprintf(&root, "%s/%s", *abs_bundle, (*spec)->root_path) < 0)
		root = NULL;
	if (!root)
		return qp_fail(err, ENOMEM, "bundle");
	return cli_resolve_rootfs(root, rootfs, err);
}

/* --net/--ip/--subnet/--bridge -> the spec's network options (they travel
 * with the spec as qpod.net.* annotations, so delete and gc find them again) */
static int apply_net_opts(const struct run_opts *o, struct pod_spec *spec, qp_error **err)
{
	const char *net = o->net ? o->net : ((o->ip || o->subnet || o->bridge) ? "bridge" : NULL);

	if (!net)
		return 0;
	if (spec_opt_set(spec, "qpod.net", net, err) < 0)
		return -1;
	if (strcmp(net, "bridge") && (o->ip || o->subnet || o->bridge))
		return qp_error_set(err, QP_E_INVALID, 0, "--ip, --subnet and --bridge need --net bridge");
	if ((o->ip && spec_opt_set(spec, "qpod.net.ip", o->ip, err) < 0) ||
	    (o->subnet && spec_opt_set(spec, "qpod.net.subnet", o->subnet, err) < 0) ||
	    (o->bridge && spec_opt_set(spec, "qpod.net.bridge", o->bridge, err) < 0))
		return -1;
	return 0;
}

static int friendly_spec(const struct run_opts *o, char **cmd, struct pod_spec **out, qp_error **err)
{
	struct pod_spec *spec = spec_default();
	struct qp_resources *res;

	if (!spec)
		return qp_fail(err, ENOMEM, "spec");
	qp_strv_free(spec->process.args);
	spec->process.args = qp_strv_dup(cmd);
	if (!spec->process.args)
		goto oom;
	for (size_t i = 0; i < o->n_env; i++)
		if (cli_env_set(&spec->process.env, o->env[i]) < 0)
			goto oom;
	if (o->workdir) {
		if (o->workdir[0] != '/') {
			qp_error_set(err, QP_E_INVALID, 0, "--workdir \"%s\": must be absolute", o->workdir);
			goto fail;
		}
		free(spec->process.cwd);
		if (!(spec->process.cwd = strdup(o->workdir)))
			goto oom;
	}
	if (o->hostname) {
		free(spec->hostname);
		if (!(spec->hostname = strdup(o->hostname)))
			goto oom;
	}
	if (o->user && cli_parse_user(o->user, &spec->process.uid, &spec->process.gid, err) < 0)
		goto fail;
	spec->root_readonly = o->read_only;
	spec->process.terminal = o->tty;
	if ((o->pod && member_of_pod(o, spec, err) < 0) || apply_net_opts(o, spec, err) < 0 ||
	    apply_pod_opts(o, spec, err) < 0)
		goto fail;
	res = &spec->resources;
	if (o->memory_set) {
		res->has_memory_limit = true;
		res->memory_limit = o->memory;
		/* no swap beyond the limit: a limit that swaps is no limit */
		res->has_memory_swap = true;
		res->memory_swap = o->memory;
	}
	if (o->cpus_set) {
		res->has_cpu_period = res->has_cpu_quota = true;
		res->cpu_period = 100000;
		res->cpu_quota = (int64_t)(o->cpus * 100000 + 0.5);
	}
	if (o->pids_set) {
		res->has_pids_limit = true;
		res->pids_limit = o->pids;
	}
	*out = spec;
	return 0;
oom:
	qp_fail(err, ENOMEM, "spec");
fail:
	spec_free(spec);
	return -1;
}

static int random_id(char *buf, size_t len)
{
	unsigned char r[6];
	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
		return -1;
	snprintf(buf, len, "qpod-%02x%02x%02x%02x%02x%02x", r[0], r[1], r[2], r[3], r[4], r[5]);
	return 0;
}

/* create (+ start + wait [+ delete]) */
static int do_run(struct qp_cli *cli, int argc, char **argv, bool create_only, qp_error **err)
{
	struct run_opts o = { 0 };
	struct pod_spec *spec = NULL;
	struct pod *pod = NULL;
	_cleanup_free_ char *bundle = NULL, *rootfs = NULL;
	char idbuf[32];
	const char *id = NULL;
	bool oci, delete_after;
	int code = -1;

	if (parse_opts(argc, argv, &o, create_only, err) < 0)
		goto out;
	oci = create_only || o.bundle;
	/* settings with no effect where they are given: refused, never ignored */
	if (create_only && (o.detach || o.timeline)) {
		qp_error_set(err, QP_E_INVALID, 0, "%s belongs to qpod run, not create",
			     o.detach ? "--detach" : "--timeline");
		goto out;
	}
	if (o.detach && (o.timeline || o.rm || o.tty)) {
		qp_error_set(err, QP_E_INVALID, 0, "%s needs a foreground run (not --detach)",
			     o.timeline ? "--timeline" : o.rm ? "--rm" : "--tty");
		goto out;
	}
	if (oci && o.tty) {
		qp_error_set(err, QP_E_INVALID, 0,
			     "--tty belongs to the ROOTFS form; a bundle says process.terminal and its "
			     "master goes to --console-socket");
		goto out;
	}
	o.io.tty_stdin = o.tty;
	if (!oci && o.io.console_socket) {
		qp_error_set(err, QP_E_INVALID, 0,
			     "--console-socket belongs to the OCI form (a bundle with process.terminal)");
		goto out;
	}
	if (oci) {
		if (cli_one_id(argc, argv, optind, &id, err) < 0)
			goto out;
		if (load_bundle(o.bundle ? o.bundle : ".", &spec, &bundle, &rootfs, err) < 0)
			goto out;
		/* the friendly form's settings have no place in a bundle's pod:
		 * refused, never ignored (the bundle's config.json says it) */
		const char *only_friendly = o.name ? "--name" : o.rm ? "--rm" : o.memory_set ? "--memory"
			: o.cpus_set ? "--cpus" : o.pids_set ? "--pids" : o.n_env ? "--env" : o.workdir ? "--workdir"
			: o.hostname ? "--hostname" : o.user ? "--user" : o.read_only ? "--read-only"
			: o.net ? "--net" : o.ip ? "--ip" : o.subnet ? "--subnet" : o.bridge ? "--bridge" : NULL;
		if (only_friendly) {
			qp_error_set(err, QP_E_INVALID, 0,
				     "%s belongs to the ROOTFS form; with a bundle, set it in config.json "
				     "(or its qpod.* annotations)", only_friendly);
			goto out;
		}
		if (apply_pod_opts(&o, spec, err) < 0)
			goto out;
		delete_after = !create_only && !o.detach;
	} else {
		/* ROOTFS -- CMD...: getopt moved the options before ROOTFS and
		 * stopped at "--" (which it consumed), so ROOTFS is at optind
		 * and the command follows it */
		if (optind >= argc) {
			qp_error_set(err, QP_E_INVALID, 0, "missing ROOTFS (see qpod run --help)");
			goto out;
		}
		const char *rootfs_arg = argv[optind++];
		if (optind < argc && !strcmp(argv[optind], "--"))
			optind++;
		if (optind >= argc) {
			qp_error_set(err, QP_E_INVALID, 0, "missing command after ROOTFS (ROOTFS -- CMD ARGS...)");
			goto out;
		}
		if (cli_resolve_rootfs(rootfs_arg, &rootfs, err) < 0 ||
		    friendly_spec(&o, argv + optind, &spec, err) < 0)
			goto out;
		free(spec->root_path);
		if (!(spec->root_path = strdup(rootfs))) {
			qp_fail(err, ENOMEM, "run");
			goto out;
		}
		if (o.name) {
			id = o.name;
		} else {
			if (random_id(idbuf, sizeof(idbuf)) < 0) {
				qp_fail(err, errno, "generate a pod ID");
				goto out;
			}
			id = idbuf;
		}
		delete_after = o.rm;
	}
	/* a static qpod cannot load libvirt: its helper runs this command */
	if (spec->opts.vm_backend == QP_VM_BACKEND_LIBVIRT && vm_lv_handoff(cli->argv, cli->handed_off, err) < 0)
		goto out;
	if (state_validate_id(id, err) < 0 || cli_root(cli, err) < 0)
		goto out;
	o.io.foreground = !create_only && !o.detach;
	if (o.io.foreground) {
		sigset_t ignored;
		pod_hold_signals(&ignored);
	}
	if (pod_create(cli->rootfd, cli->root, id, spec, bundle, rootfs, &o.io, &pod, err) < 0)
		goto out;
	spec = NULL; /* the pod owns it */
	if (create_only) {
		code = 0;
		goto out;
	}
	if (pod_start(pod, err) < 0) {
		pod_delete(pod, true, NULL);
		goto out;
	}
	if (o.detach) {
		code = 0;
		goto out;
	}
	code = pod_wait(pod, err);
	if (o.timeline) {
		_cleanup_free_ char *tl = NULL;
		size_t len;
		if (state_read_file(pod->dirfd, QP_TIMELINE_FILE, 4096, &tl, &len, NULL) == 0)
			fprintf(stderr, "qpod-timeline: %s\n", tl);
	}
	/* the stopped state is recorded for a pod that stays; one deleted next
	 * needs it only if the delete fails (its status is its process's, and
	 * the file would be removed a moment later) */
	if (code >= 0)
		pod->state->status = QP_STATUS_STOPPED;
	if (code >= 0 && !delete_after)
		state_save(pod->dirfd, pod->state, NULL);
	if (delete_after && pod_delete(pod, true, code < 0 ? NULL : err) < 0 && code >= 0) {
		state_save(pod->dirfd, pod->state, NULL);
		code = -1;
	}
out:
	if (code < 0)
		qp_error_prefix(err, create_only ? "create" : "run");
	spec_free(spec);
	pod_free(pod);
	free(o.env);
	return code;
}

int cmd_create(struct qp_cli *cli, int argc, char **argv, qp_error **err)
{
	return do_run(cli, argc, argv, true, err);
}

int cmd_run(struct qp_cli *cli, int argc, char **argv, qp_error **err)
{
	return do_run(cli, argc, argv, false, err);
}
