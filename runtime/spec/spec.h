/* runtime/spec/spec.h — struct pod_spec: what a pod is, independent of the driver.
 *
 * Filled from an OCI bundle's config.json (spec/parse.c, yajl), from the
 * friendly `qpod run ROOTFS -- CMD` flags on top of spec_default(), and
 * written back as config.json by spec/write.c (`qpod spec`, and the copy kept
 * in the state directory).  Every string is heap-owned by the spec;
 * spec_free() releases everything.  Limits on sizes (QP_SPEC_MAX_*) bound
 * what hostile input can make us allocate.
 */
#ifndef QPOD_SPEC_H
#define QPOD_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/error.h"

#define QP_SPEC_MAX_FILE (4u << 20)  /* config.json larger than 4 MiB is refused */
#define QP_SPEC_MAX_ITEMS 4096       /* args, env, mounts, syscalls, ... each */
#define QP_ID_MAX 255                /* pod ID length bound (bytes): a file name (NAME_MAX) */

enum qp_mode { QP_MODE_CONTAINER = 0, QP_MODE_VM };

struct pod_spec;

/* namespace kinds, in the order they are joined by exec */
enum qp_ns {
	QP_NS_USER = 0,
	QP_NS_PID,
	QP_NS_NET,
	QP_NS_IPC,
	QP_NS_UTS,
	QP_NS_MOUNT,
	QP_NS_CGROUP,
	QP_NS_TIME,
	QP_NS_COUNT
};

struct qp_namespace {
	bool enabled;   /* listed in linux.namespaces */
	char *path;     /* join this existing namespace instead of creating one */
};

struct qp_idmap {
	uint32_t container_id, host_id, size;
};

/* linux.timeOffsets.{monotonic,boottime}: the clocks' offsets in a new
 * time namespace */
enum qp_time_clock { QP_TIME_MONOTONIC = 0, QP_TIME_BOOTTIME, QP_TIME_COUNT };
struct qp_time_offset {
	bool set;
	int64_t secs;
	uint32_t nanosecs; /* < 1e9 */
};

struct qp_mount {
	char *destination;
	char *type;       /* NULL for bind mounts */
	char *source;
	char **options;   /* NULL-terminated */
	size_t n_options;
};

struct qp_rlimit {
	int resource;     /* RLIMIT_* */
	char *type;       /* "RLIMIT_NOFILE" as written */
	uint64_t soft, hard;
};

/* capability sets; each is a NULL-terminated array of "CAP_..." names */
struct qp_caps {
	bool present;     /* process.capabilities given at all */
	char **bounding, **effective, **inheritable, **permitted, **ambient;
};

struct qp_seccomp_arg {
	unsigned index;
	uint64_t value, value_two;
	char *op;         /* "SCMP_CMP_EQ", ... */
};

struct qp_seccomp_rule {
	char **names;     /* NULL-terminated */
	char *action;     /* "SCMP_ACT_ERRNO", ... */
	bool has_errno_ret;
	uint32_t errno_ret;
	struct qp_seccomp_arg *args;
	size_t n_args;
};

struct qp_seccomp {
	char *default_action;
	bool has_default_errno_ret;
	uint32_t default_errno_ret;
	char **architectures;  /* NULL-terminated, "SCMP_ARCH_X86_64", ... */
	char **flags;          /* NULL-terminated, "SECCOMP_FILTER_FLAG_LOG", ... */
	struct qp_seccomp_rule *rules;
	size_t n_rules;
};

struct qp_device {
	char *path;
	char type;        /* 'c', 'b', 'u', 'p' */
	int64_t major, minor;
	bool has_mode;
	uint32_t mode;
	bool has_uid, has_gid;
	uint32_t uid, gid;
};

/* One linux.resources.devices rule (cgroup device access), applied in
 * order as runc does (host/cgroup/devrules.h). */
#define QP_DEV_READ 1u
#define QP_DEV_WRITE 2u
#define QP_DEV_MKNOD 4u
#define QP_DEV_RWM (QP_DEV_READ | QP_DEV_WRITE | QP_DEV_MKNOD)
#define QP_DEV_ANY (-1)   /* major or minor '*' */

/* "rwm" <-> QP_DEV_* bits: parse gives 0 for "" or a letter not r, w, m;
 * the string is written in r, w, m order into buf[4] */
unsigned qp_dev_access_parse(const char *s);
const char *qp_dev_access_str(unsigned access, char buf[4]);

struct qp_dev_rule {
	bool allow;
	char type;            /* 'a' (all), 'c' or 'b' */
	int64_t major, minor; /* QP_DEV_ANY or 0..UINT32_MAX */
	unsigned access;      /* QP_DEV_* bits */
};

/* linux.resources.blockIO: one device's weight (value; leaf 0 = none) or
 * throttle rate (value: bytes or operations per second) */
struct qp_blkio_dev {
	int64_t major, minor;   /* 0..UINT32_MAX */
	uint64_t value, leaf;
};
enum qp_blkio_throttle { QP_BLKIO_READ_BPS, QP_BLKIO_WRITE_BPS, QP_BLKIO_READ_IOPS, QP_BLKIO_WRITE_IOPS,
			 QP_BLKIO_THROTTLES };
/* their OCI names: throttleReadBpsDevice ... (spec/resources.c) */
extern const char *const qp_blkio_throttle_keys[QP_BLKIO_THROTTLES];

struct qp_kv {
	char *key, *value;
};

struct qp_resources {
	bool has_memory_limit;
	int64_t memory_limit;          /* bytes; -1 = unlimited */
	bool has_memory_swap;
	int64_t memory_swap;
	bool memory_check_before_update; /* refuse a limit below the usage (update) */
	bool has_memory_reservation;
	int64_t memory_reservation;    /* soft limit, bytes (v1 soft_limit_in_bytes, v2 memory.low) */
	bool has_memory_swappiness;
	uint64_t memory_swappiness;    /* 0..100 (v1 only) */
	bool memory_disable_oom_killer; /* v1 memory.oom_control (no v2 equivalent) */
	bool has_cpu_shares;
	uint64_t cpu_shares;
	bool has_cpu_quota;
	int64_t cpu_quota;             /* microseconds per period; -1 = unlimited */
	bool has_cpu_period;
	uint64_t cpu_period;
	char *cpuset_cpus, *cpuset_mems;
	bool has_pids_limit;
	int64_t pids_limit;            /* -1 / 0 = unlimited */
	bool has_blkio_weight;
	uint64_t blkio_weight;         /* 10..1000 (v1 blkio[.bfq].weight, v2 io[.bfq].weight) */
	bool has_blkio_leaf_weight;
	uint64_t blkio_leaf_weight;    /* 10..1000 (v1 blkio.leaf_weight only) */
	struct qp_blkio_dev *blkio_weight_dev;
	size_t n_blkio_weight_dev;
	struct qp_blkio_dev *blkio_throttle[QP_BLKIO_THROTTLES];
	size_t n_blkio_throttle[QP_BLKIO_THROTTLES];
	struct qp_kv *unified;         /* linux.resources.unified: v2 file -> value */
	size_t n_unified;
	struct qp_dev_rule *dev_rules; /* linux.resources.devices, in order */
	size_t n_dev_rules;
	/* runc's SkipDevices: leave device access alone (a VMM's cgroup: QEMU
	 * is a host process that needs /dev/kvm, vhost, tun).  False, the
	 * default, enforces "deny all + dev_rules + the standard devices"
	 * even when dev_rules is empty. */
	bool skip_devices;
};

struct qp_process {
	bool terminal;
	uint32_t uid, gid;
	uint32_t *additional_gids;
	size_t n_additional_gids;
	uint32_t umask;
	bool has_umask;
	char **args;      /* NULL-terminated, at least one */
	char **env;       /* NULL-terminated, "K=V" */
	char *cwd;        /* absolute */
	struct qp_caps caps;
	struct qp_rlimit *rlimits;
	size_t n_rlimits;
	bool no_new_privileges;
	char *apparmor_profile;  /* process.apparmorProfile (container/lsm.h) */
	char *selinux_label;     /* process.selinuxLabel */
	int oom_score_adj;
	bool has_oom_score_adj;
};

/* OCI hooks (config.md "POSIX-platform Hooks"), in the order of the
 * lifecycle; runtime/hooks.h runs them. */
enum qp_hook_kind {
	QP_HOOK_PRESTART = 0,     /* deprecated; runtime namespace, as createRuntime */
	QP_HOOK_CREATE_RUNTIME,   /* create, runtime namespace, before pivot_root */
	QP_HOOK_CREATE_CONTAINER, /* create, container's mount namespace, before pivot_root */
	QP_HOOK_START_CONTAINER,  /* start, in the container, before the workload's exec */
	QP_HOOK_POSTSTART,        /* start, runtime namespace, after the exec */
	QP_HOOK_POSTSTOP,         /* delete, runtime namespace, after the pod is gone */
	QP_HOOK_COUNT
};

struct qp_hook {
	char *path;       /* absolute */
	char **args;      /* NULL-terminated argv; NULL or empty: { path } */
	char **env;       /* NULL-terminated; NULL: the runtime's (startContainer: process.env) */
	int timeout;      /* seconds; 0 = none */
};

/* qpod-specific settings that have no OCI field (annotations "qpod.*" carry
 * them through bundles; spec/opts.c is the one parser of both forms) */
#define QP_VCPUS_MAX 255

enum qp_accel { QP_ACCEL_AUTO = 0, QP_ACCEL_KVM, QP_ACCEL_TCG };
/* how a VM pod's guest comes up: a clone of a booted template when one
 * exists or can be made (auto), always (template), or a kernel boot (cold) */
enum qp_boot { QP_BOOT_AUTO = 0, QP_BOOT_TEMPLATE, QP_BOOT_COLD };
/* who runs a VM pod's QEMU: qpod (qemu) or libvirtd (runtime/vm/libvirt*.c) */
enum qp_vm_backend { QP_VM_BACKEND_QEMU = 0, QP_VM_BACKEND_LIBVIRT };

struct qp_pod_opts {
	enum qp_mode mode;     /* qpod.mode, --mode */
	int vcpus;             /* qpod.vcpus: VM only; 0 = default */
	char *net;             /* qpod.net: "none", "bridge", "host"; NULL = from namespaces */
	char *net_ip;          /* qpod.net.ip: NULL = the next free address */
	char *net_subnet;      /* qpod.net.subnet: NULL = the default */
	char *net_bridge;      /* qpod.net.bridge: the bridge name prefix; NULL = "qpod" */
	char *firmware;        /* qpod.vm.firmware: "qpod", "qboot", "seabios", /path; NULL = default (qpod) */
	enum qp_accel accel;   /* qpod.vm.accel */
	enum qp_boot boot;     /* qpod.vm.boot */
	enum qp_vm_backend vm_backend; /* qpod.vm.backend */
	char *libvirt_uri;     /* qpod.vm.libvirt.uri; NULL = $QPOD_LIBVIRT_URI or the default */
	bool init;             /* qpod.init=true: a tiny init is PID 1 (container pods) */
	bool sandbox;          /* qpod.sandbox=true (or a CRI sandbox): a vm pod that
				* holds the containers later created into it */
	bool sandbox_pause;    /* qpod.sandbox=pause: and its own workload is the
				* guest's pause (process.args not run) */
	char *in_pod;          /* qpod.pod (or a CRI container's sandbox-id): the vm
				* pod whose VM this container runs in; NULL = none */
	bool spare_nic;        /* `spares fill --nic` only (no annotation): spares with a NIC */
};

/* The qpod.* annotations of s -> s->opts (spec_parse calls it); an unknown
 * qpod.* key or a bad value is an error naming the annotation. */
int spec_opts_parse(struct pod_spec *s, qp_error **err);
/* Set option `key` (its annotation name) from a flag's value: parsed as the
 * annotation would be (errors name the flag), then recorded as the
 * annotation so the pod's config.json carries it. */
int spec_opt_set(struct pod_spec *s, const char *key, const char *value, qp_error **err);
/* Every option's annotation and a one-line description (`qpod features`). */
void spec_opts_describe(void (*put)(void *ctx, const char *key, const char *help), void *ctx);
/* The first qpod option set (an annotation) that means nothing to a pod of
 * s's mode (qpod.vm.* and qpod.vcpus for a container, qpod.init for a vm
 * pod), or NULL: such a setting is refused, never ignored. */
const char *spec_opts_misplaced(const struct pod_spec *s);
void spec_opts_free(struct qp_pod_opts *o);

int qp_mode_parse(const char *v, enum qp_mode *m);
const char *qp_mode_name(enum qp_mode m);
int qp_accel_parse(const char *v, enum qp_accel *a);
const char *qp_accel_name(enum qp_accel a);
int qp_boot_parse(const char *v, enum qp_boot *b);
const char *qp_vm_backend_name(enum qp_vm_backend b);

struct pod_spec {
	char *oci_version;
	char *root_path;       /* as written; relative to the bundle */
	bool root_readonly;
	char *hostname;
	char *domainname;
	struct qp_process process;
	struct qp_mount *mounts;
	size_t n_mounts;
	struct qp_kv *annotations;
	size_t n_annotations;

	struct qp_namespace ns[QP_NS_COUNT];
	struct qp_time_offset time_offsets[QP_TIME_COUNT];
	struct qp_idmap *uid_mappings, *gid_mappings;
	size_t n_uid_mappings, n_gid_mappings;
	struct qp_resources resources;
	char *cgroups_path;
	struct qp_kv *sysctl;
	size_t n_sysctl;
	struct qp_seccomp *seccomp;   /* NULL: no filter */
	char *rootfs_propagation;
	char *mount_label;            /* linux.mountLabel (SELinux context of the pod's mounts) */
	char **masked_paths;          /* NULL-terminated */
	char **readonly_paths;        /* NULL-terminated */
	struct qp_device *devices;
	size_t n_devices;
	struct qp_hook *hooks[QP_HOOK_COUNT];
	size_t n_hooks[QP_HOOK_COUNT];

	struct qp_pod_opts opts;
};

/* The OCI default spec (what `qpod spec` prints), with the default seccomp
 * profile.  Returns NULL only on allocation failure. */
struct pod_spec *spec_default(void);
/* The default seccomp profile alone (see seccomp_profile.c). */
struct qp_seccomp *spec_default_seccomp(void);

/* Parse config.json text / a bundle's config.json. Validates types, required
 * fields, ociVersion and bounds; errors name the JSON path ("process.args"). */
int spec_parse(const char *json, size_t len, struct pod_spec **out, qp_error **err);
int spec_load_bundle(const char *bundle_dir, struct pod_spec **out, qp_error **err);
/* Semantic validation shared by every source of a spec (bundle or flags). */
int spec_validate(const struct pod_spec *spec, qp_error **err);
/* The linux.resources part of spec_validate (also for `qpod update`). */
int spec_validate_resources(const struct qp_resources *r, qp_error **err);
/* Serialise to config.json text (malloc'd, NUL-terminated). */
int spec_write(const struct pod_spec *spec, char **out, size_t *len, qp_error **err);
/* spec_write into DIR/config.json (a bundle the bench tools make). */
int spec_write_bundle(const struct pod_spec *spec, const char *dir, qp_error **err);

void spec_free(struct pod_spec *spec);
/* A pod ID: 1..QP_ID_MAX bytes of [A-Za-z0-9_.+-:@], not starting with
 * '.' or '-' (pod_id.c; state_validate_id is this). */
int spec_validate_pod_id(const char *id, qp_error **err);
/* Every hook of spec dropped (a pod made from another pod's spec). */
void spec_hooks_clear(struct pod_spec *spec);
/* Free a seccomp profile not (or no longer) owned by a spec. */
void spec_seccomp_free(struct qp_seccomp *sc);

/* Lookup helpers */
const char *spec_annotation(const struct pod_spec *spec, const char *key);
/* Add or replace an annotation; -1 on ENOMEM. */
int spec_set_annotation(struct pod_spec *spec, const char *key, const char *value);
const char *qp_ns_name(enum qp_ns ns);     /* "pid", "network", ... OCI names */
const char *qp_hook_name(enum qp_hook_kind k); /* "prestart", "createRuntime", ... */
int qp_ns_from_name(const char *name);     /* -1 if unknown */
extern const char *const qp_time_clock_names[QP_TIME_COUNT]; /* "monotonic", "boottime" */

#endif
