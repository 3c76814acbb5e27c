/* runtime/spec/opts.c — qpod's own pod options (struct qp_pod_opts), typed
 * once.  One table holds every option: its annotation (how a bundle carries
 * it), its flag (how the CLI sets it), what values it takes, and its parser.
 * A bundle's "qpod.*" annotations go through spec_opts_parse(); flags go
 * through spec_opt_set(), which parses the same way and records the
 * annotation, so the pod's saved config.json reproduces the pod.  An unknown
 * "qpod.*" annotation is refused: a typo must not be silently ignored.
 * Adding an option is one row here plus a field in spec.h. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spec/spec.h"

struct opt_def {
	const char *key;    /* annotation */
	const char *flag;   /* CLI flag, for messages and help */
	const char *values; /* "must be ..." */
	const char *help;   /* `qpod features` */
	/* 0, or -1 if v is not one of the values (ENOMEM: errno set, -2) */
	int (*set)(struct pod_spec *s, const char *v);
	int only;           /* the one mode the option means something to, or ANY_MODE */
};
#define ANY_MODE (-1)

static int dup_into(char **field, const char *v)
{
	char *c = strdup(v);

	if (!c)
		return -2;
	free(*field);
	*field = c;
	return 0;
}

/* the index of v in words (NULL-terminated), or -1 */
static int word_index(const char *v, const char *const *words)
{
	for (int i = 0; words[i]; i++)
		if (!strcmp(v, words[i]))
			return i;
	return -1;
}

static const char *const mode_words[] = { [QP_MODE_CONTAINER] = "container", [QP_MODE_VM] = "vm", NULL };
static const char *const accel_words[] = { [QP_ACCEL_AUTO] = "auto", [QP_ACCEL_KVM] = "kvm",
					   [QP_ACCEL_TCG] = "tcg", NULL };
static const char *const boot_words[] = { [QP_BOOT_AUTO] = "auto", [QP_BOOT_TEMPLATE] = "template",
					  [QP_BOOT_COLD] = "cold", NULL };
static const char *const backend_words[] = { [QP_VM_BACKEND_QEMU] = "qemu",
					     [QP_VM_BACKEND_LIBVIRT] = "libvirt", NULL };

int qp_mode_parse(const char *v, enum qp_mode *m)
{
	int i = word_index(v, mode_words);

	return i < 0 ? -1 : (*m = (enum qp_mode)i, 0);
}

const char *qp_mode_name(enum qp_mode m)
{
	return mode_words[m == QP_MODE_VM ? QP_MODE_VM : QP_MODE_CONTAINER];
}

int qp_accel_parse(const char *v, enum qp_accel *a)
{
	int i = word_index(v, accel_words);

	return i < 0 ? -1 : (*a = (enum qp_accel)i, 0);
}

const char *qp_accel_name(enum qp_accel a)
{
	return a == QP_ACCEL_KVM || a == QP_ACCEL_TCG ? accel_words[a] : accel_words[QP_ACCEL_AUTO];
}

int qp_boot_parse(const char *v, enum qp_boot *b)
{
	int i = word_index(v, boot_words);

	return i < 0 ? -1 : (*b = (enum qp_boot)i, 0);
}

static int set_boot(struct pod_spec *s, const char *v)
{
	return qp_boot_parse(v, &s->opts.boot);
}

static int set_backend(struct pod_spec *s, const char *v)
{
	int i = word_index(v, backend_words);

	return i < 0 ? -1 : (s->opts.vm_backend = (enum qp_vm_backend)i, 0);
}

const char *qp_vm_backend_name(enum qp_vm_backend b)
{
	return backend_words[b == QP_VM_BACKEND_LIBVIRT ? QP_VM_BACKEND_LIBVIRT : QP_VM_BACKEND_QEMU];
}

/* any non-empty URI without control characters: libvirt parses it at connect */
static int set_libvirt_uri(struct pod_spec *s, const char *v)
{
	if (!*v || strlen(v) > 1024)
		return -1;
	for (const char *c = v; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			return -1;
	return dup_into(&s->opts.libvirt_uri, v);
}

static int set_mode(struct pod_spec *s, const char *v)
{
	return qp_mode_parse(v, &s->opts.mode);
}

static int set_vcpus(struct pod_spec *s, const char *v)
{
	char *end;
	long n;

	if (!isdigit((unsigned char)v[0]))
		return -1;
	errno = 0;
	n = strtol(v, &end, 10);
	if (errno || *end || n < 1 || n > QP_VCPUS_MAX)
		return -1;
	s->opts.vcpus = (int)n;
	return 0;
}

static int set_net(struct pod_spec *s, const char *v)
{
	if (strcmp(v, "none") && strcmp(v, "bridge") && strcmp(v, "host"))
		return -1;
	/* the host's network: whatever linux.namespaces says, no new one */
	if (!strcmp(v, "host") && !s->ns[QP_NS_NET].path)
		s->ns[QP_NS_NET].enabled = false;
	return dup_into(&s->opts.net, v);
}

static int set_ip(struct pod_spec *s, const char *v)
{
	struct in_addr a;

	return inet_pton(AF_INET, v, &a) == 1 ? dup_into(&s->opts.net_ip, v) : -1;
}

/* syntax only; the host bits and prefix ranges are the network code's
 * (qp_net_config_validate, at create) */
static int set_subnet(struct pod_spec *s, const char *v)
{
	char addr[INET_ADDRSTRLEN];
	const char *slash = strchr(v, '/');
	struct in_addr a;
	char *end;
	long n;

	if (!slash || (size_t)(slash - v) >= sizeof(addr) || !isdigit((unsigned char)slash[1]))
		return -1;
	memcpy(addr, v, (size_t)(slash - v));
	addr[slash - v] = '\0';
	errno = 0;
	n = strtol(slash + 1, &end, 10);
	if (inet_pton(AF_INET, addr, &a) != 1 || errno || *end || n < 0 || n > 32)
		return -1;
	return dup_into(&s->opts.net_subnet, v);
}

static int set_bridge(struct pod_spec *s, const char *v)
{
	size_t n = strlen(v);

	if (n < 1 || n > 15)
		return -1;
	return dup_into(&s->opts.net_bridge, v);
}

static int set_firmware(struct pod_spec *s, const char *v)
{
	if (strcmp(v, "qpod") && strcmp(v, "qboot") && strcmp(v, "seabios") && v[0] != '/')
		return -1;
	return dup_into(&s->opts.firmware, v);
}

static int set_accel(struct pod_spec *s, const char *v)
{
	return qp_accel_parse(v, &s->opts.accel);
}

static int set_init(struct pod_spec *s, const char *v)
{
	if (strcmp(v, "true") && strcmp(v, "false"))
		return -1;
	s->opts.init = !strcmp(v, "true");
	return 0;
}

static int set_sandbox(struct pod_spec *s, const char *v)
{
	if (strcmp(v, "true") && strcmp(v, "false") && strcmp(v, "pause"))
		return -1;
	s->opts.sandbox = strcmp(v, "false") != 0;
	s->opts.sandbox_pause = !strcmp(v, "pause");
	return 0;
}

static int set_in_pod(struct pod_spec *s, const char *v)
{
	if (spec_validate_pod_id(v, NULL) < 0)
		return -1;
	return dup_into(&s->opts.in_pod, v);
}

static const struct opt_def defs[] = {
	{ "qpod.mode", "--mode", "container or vm", "container|vm: the pod driver", set_mode, ANY_MODE },
	{ "qpod.vcpus", "--vcpus", "a number in 1..255", "1..255: vCPUs of a vm pod", set_vcpus, QP_MODE_VM },
	{ "qpod.net", "--net", "none, bridge or host", "none|bridge|host: the pod's network", set_net, ANY_MODE },
	{ "qpod.net.ip", "--ip", "an IPv4 address", "IPv4 address on the bridge (default: next free)",
	  set_ip, ANY_MODE },
	{ "qpod.net.subnet", "--subnet", "an IPv4 subnet A.B.C.D/N",
	  "pod subnet, CIDR (default 10.213.0.0/16)", set_subnet, ANY_MODE },
	{ "qpod.net.bridge", "--bridge", "a name prefix of 1..15 bytes", "bridge name prefix (default qpod)",
	  set_bridge, ANY_MODE },
	{ "qpod.vm.firmware", "--firmware", "qpod, qboot, seabios or an absolute path",
	  "qpod|qboot|seabios|/path: firmware of a vm pod (default qpod: qpod's own, qboot/)", set_firmware,
	  QP_MODE_VM },
	{ "qpod.vm.accel", "--accel", "auto, kvm or tcg",
	  "auto|kvm|tcg: accelerator of a vm pod (default auto)", set_accel, QP_MODE_VM },
	{ "qpod.vm.boot", "--boot", "auto, template or cold",
	  "auto|template|cold: a vm pod as a clone of a booted template, or a kernel boot (default auto: "
	  "a template when one exists or can be made)", set_boot, QP_MODE_VM },
	{ "qpod.vm.backend", "--vm-backend", "qemu or libvirt",
	  "qemu|libvirt: who runs a vm pod's QEMU: qpod itself, or libvirtd as a transient domain "
	  "(default qemu)", set_backend, QP_MODE_VM },
	{ "qpod.vm.libvirt.uri", "--libvirt-uri", "a libvirt URI of 1..1024 printable bytes",
	  "the libvirt connection of a vm pod with backend libvirt (default $QPOD_LIBVIRT_URI, else "
	  "qemu:///system)", set_libvirt_uri, QP_MODE_VM },
	{ "qpod.init", "--init", "true or false",
	  "true|false: a tiny init as PID 1 of a container pod (default false)", set_init, QP_MODE_CONTAINER },
	{ "qpod.sandbox", "--sandbox", "true, false or pause",
	  "true|false|pause: a vm pod whose VM holds the containers later created into it with qpod.pod (a "
	  "CRI sandbox of a vm pod is one; pause: its own workload is the guest's pause, not process.args; "
	  "default false)", set_sandbox, QP_MODE_VM },
	{ "qpod.pod", "--pod", "the ID of a vm pod made with qpod.sandbox",
	  "ID: this container runs inside that vm pod's VM (a CRI container of a vm pod names its sandbox "
	  "with io.kubernetes.cri.sandbox-id)", set_in_pod, QP_MODE_VM },
};
#define NDEFS (sizeof(defs) / sizeof(defs[0]))

static const struct opt_def *find(const char *key)
{
	for (size_t i = 0; i < NDEFS; i++)
		if (!strcmp(defs[i].key, key))
			return &defs[i];
	return NULL;
}

static int apply(struct pod_spec *s, const struct opt_def *d, const char *v, bool from_flag,
		 qp_error **err)
{
	char sbuf[QP_SHOWN_MAX];
	int r = d->set(s, v);

	if (r == -2)
		return qp_fail(err, ENOMEM, "%s", d->key);
	if (r < 0) {
		if (from_flag)
			return qp_error_set(err, QP_E_INVALID, 0, "%s must be %s, not \"%s\"", d->flag,
					    d->values, qp_shown(v, sbuf));
		return qp_error_set(err, QP_E_INVALID, 0, "config.json: annotations: %s must be %s, not \"%s\"",
				    d->key, d->values, qp_shown(v, sbuf));
	}
	return 0;
}

static const char *annotation(const struct pod_spec *s, const char *key)
{
	for (size_t i = 0; i < s->n_annotations; i++)
		if (!strcmp(s->annotations[i].key, key))
			return s->annotations[i].value;
	return NULL;
}

/* containerd's CRI (and podman, with CRI-O's keys) names each container's
 * kind and its sandbox: in a vm pod the sandbox holds the pod's containers,
 * one VM per pod (docs/DECISIONS.md, "One VM per pod").  Container pods
 * share namespaces by path instead: nothing to do for them. */
static int cri_pod_opts(struct pod_spec *s, qp_error **err)
{
	const char *type = annotation(s, "io.kubernetes.cri.container-type");
	const char *sb = annotation(s, "io.kubernetes.cri.sandbox-id");

	/* podman (CRI-O's keys): a pod's container names its infra container */
	if (!type) {
		type = annotation(s, "io.kubernetes.cri-o.ContainerType");
		sb = annotation(s, "io.kubernetes.cri-o.SandboxID");
	}
	char shown[QP_SHOWN_MAX];

	if (s->opts.mode != QP_MODE_VM || !type)
		return 0;
	if (!strcmp(type, "sandbox"))
		s->opts.sandbox = true;
	else if (!strcmp(type, "container") && sb && !s->opts.in_pod) {
		if (spec_validate_pod_id(sb, NULL) < 0)
			return qp_error_set(err, QP_E_INVALID, 0,
					    "config.json: annotations: the sandbox ID \"%s\" is not a pod ID",
					    qp_shown(sb, shown));
		if (!(s->opts.in_pod = strdup(sb)))
			return qp_fail(err, ENOMEM, "annotations");
	}
	return 0;
}

int spec_opts_parse(struct pod_spec *s, qp_error **err)
{
	char sbuf[QP_SHOWN_MAX];

	for (size_t i = 0; i < s->n_annotations; i++) {
		const char *key = s->annotations[i].key;
		const struct opt_def *d;

		if (strncmp(key, "qpod.", 5))
			continue;
		if (!(d = find(key)))
			return qp_error_set(err, QP_E_INVALID, 0,
					    "config.json: annotations: unknown qpod option \"%s\" (qpod features lists them)",
					    qp_shown(key, sbuf));
		if (apply(s, d, s->annotations[i].value, false, err) < 0)
			return -1;
	}
	return cri_pod_opts(s, err);
}

int spec_opt_set(struct pod_spec *s, const char *key, const char *value, qp_error **err)
{
	const struct opt_def *d = find(key);

	if (!d)
		return qp_error_set(err, QP_E_GENERIC, 0, "unknown qpod option \"%s\"", key);
	if (apply(s, d, value, true, err) < 0)
		return -1;
	if (spec_set_annotation(s, key, value) < 0)
		return qp_fail(err, ENOMEM, "%s", key);
	return 0;
}

const char *spec_opts_misplaced(const struct pod_spec *s)
{
	for (size_t i = 0; i < s->n_annotations; i++) {
		const struct opt_def *d = find(s->annotations[i].key);
		if (d && d->only != ANY_MODE && d->only != (int)s->opts.mode)
			return d->key;
	}
	return NULL;
}

void spec_opts_describe(void (*put)(void *ctx, const char *key, const char *help), void *ctx)
{
	for (size_t i = 0; i < NDEFS; i++)
		put(ctx, defs[i].key, defs[i].help);
}

void spec_opts_free(struct qp_pod_opts *o)
{
	free(o->net);
	free(o->net_ip);
	free(o->net_subnet);
	free(o->net_bridge);
	free(o->firmware);
	free(o->libvirt_uri);
	free(o->in_pod);
}
