/* runtime/spec/seccomp_profile.c — qpod's default seccomp profile, as data.
 *
 * A deny-list in the spirit of Docker's default: everything is allowed
 * except syscalls that reach kernel-global state, load code into the kernel,
 * or create/enter namespaces (the usual first step of container escapes).
 * Denied calls fail with EPERM, so programs see "not permitted" rather than
 * dying.  clone3 fails with ENOSYS instead: its flags live in a struct that
 * seccomp cannot inspect, and ENOSYS makes glibc fall back to clone(), whose
 * flags we can check.
 *
 * personality(2) is allowed: a deny-list cannot express Docker's allow-set
 * of personas (libseccomp takes one comparison per argument), and the
 * personas it would block (READ_IMPLIES_EXEC, ADDR_NO_RANDOMIZE) only weaken
 * the calling process itself.
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "spec/spec.h"
#include "util/cleanup.h"
#include "util/strv.h"

#ifndef CLONE_NEWCGROUP
#define CLONE_NEWCGROUP 0x02000000
#endif

#define EPERM_RET 1   /* EPERM */
#define ENOSYS_RET 38 /* ENOSYS */

static const char *const architectures[] = {
	"SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32",
};

/* Denied with EPERM, with the reason each one is here. */
static const char *const eperm_syscalls[] = {
	"kexec_load",        /* replace the running kernel */
	"kexec_file_load",   /* same, from a file */
	"init_module",       /* load kernel code */
	"finit_module",      /* same, from an fd */
	"delete_module",     /* unload kernel code */
	"keyctl",            /* the kernel keyring is not namespaced */
	"add_key",           /* same */
	"request_key",       /* same */
	"bpf",               /* kernel programs; large attack surface */
	"perf_event_open",   /* leaks host activity; large attack surface */
	"ptrace",            /* inspecting processes; historic seccomp bypasses */
	"mount",             /* the runtime set up the mounts; keep them */
	"umount2",           /* would reveal what maskedPaths hides */
	"pivot_root",        /* mount namespace manipulation */
	"move_mount",        /* new mount API (5.2+), same as mount */
	"fsopen",            /* same */
	"fsmount",           /* same */
	"fspick",            /* same */
	"open_tree",         /* same: can clone host-visible mounts */
	"swapon",            /* host-global swap */
	"swapoff",           /* same */
	"reboot",            /* reboots the host outside a pid namespace */
	"open_by_handle_at", /* "shocker": opens host files by handle */
	"name_to_handle_at", /* its companion */
	"unshare",           /* new namespaces: kernel attack surface */
	"setns",             /* joining other namespaces */
	"acct",              /* host-global process accounting */
	"settimeofday",      /* the clock is not namespaced */
	"clock_settime",     /* same */
	"clock_adjtime",     /* same */
	"adjtimex",          /* same */
	"iopl",              /* raw I/O port access */
	"ioperm",            /* same */
	"lookup_dcookie",    /* profiling interface, leaks host paths */
	"quotactl",          /* host filesystem quotas */
	"userfaultfd",       /* widens kernel race windows for exploits */
	"vhangup",           /* hangs up the host's terminal */
	"syslog",            /* kernel log: leaks addresses, can clear it */
	"uselib",            /* obsolete, old exploit vector */
};

/* clone() flags that create a namespace: one rule each, arg0 masked-equal.
 * CLONE_NEWTIME (0x80) is absent: clone() reads those bits as the exit
 * signal, only clone3/unshare can create a time namespace. */
static const unsigned long clone_ns_flags[] = {
	CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC,
	CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET,
};

static char **strv_from(const char *const *v, size_t n)
{
	char **out = calloc(n + 1, sizeof(*out));
	for (size_t i = 0; out && i < n; i++)
		if (!(out[i] = strdup(v[i]))) {
			qp_strv_free(out);
			return NULL;
		}
	return out;
}

static int set_rule(struct qp_seccomp_rule *r, const char *const *names, size_t n, uint32_t errno_ret)
{
	r->names = strv_from(names, n);
	r->action = strdup("SCMP_ACT_ERRNO");
	r->has_errno_ret = true;
	r->errno_ret = errno_ret;
	return r->names && r->action ? 0 : -1;
}

struct qp_seccomp *spec_default_seccomp(void)
{
	static const char *const clone_name[] = { "clone" }, *const clone3_name[] = { "clone3" };
	size_t n_rules = 2 + QP_ARRAY_SIZE(clone_ns_flags), k = 0;
	struct qp_seccomp *sc = calloc(1, sizeof(*sc));

	if (!sc)
		return NULL;
	sc->default_action = strdup("SCMP_ACT_ALLOW");
	sc->architectures = strv_from(architectures, QP_ARRAY_SIZE(architectures));
	sc->rules = calloc(n_rules, sizeof(*sc->rules));
	if (!sc->default_action || !sc->architectures || !sc->rules)
		goto oom;
	sc->n_rules = n_rules;
	if (set_rule(&sc->rules[k++], eperm_syscalls, QP_ARRAY_SIZE(eperm_syscalls), EPERM_RET) < 0 ||
	    set_rule(&sc->rules[k++], clone3_name, 1, ENOSYS_RET) < 0)
		goto oom;
	for (size_t i = 0; i < QP_ARRAY_SIZE(clone_ns_flags); i++) {
		struct qp_seccomp_rule *r = &sc->rules[k++];

		if (set_rule(r, clone_name, 1, EPERM_RET) < 0 || !(r->args = calloc(1, sizeof(*r->args))))
			goto oom;
		r->n_args = 1;
		r->args[0] = (struct qp_seccomp_arg){
			.index = 0, .value = clone_ns_flags[i], .value_two = clone_ns_flags[i],
		};
		if (!(r->args[0].op = strdup("SCMP_CMP_MASKED_EQ")))
			goto oom;
	}
	return sc;
oom:
	spec_seccomp_free(sc);
	return NULL;
}
