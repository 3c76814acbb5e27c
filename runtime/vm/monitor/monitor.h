/* runtime/vm/monitor/monitor.h — the monitor's private state and the seams between
 * its parts (the monitor's public face is in vm.h).  The monitor of one VM
 * pod is split by job:
 *   monitor.c      the core: QEMU's lifecycle and stop reason, pause,
 *                  signals, the serve loop, teardown
 *   mon_boot.c     boot (network, initrd, QEMU, channel, HELLO, ctl.sock)
 *                  and RUN
 *   mon_ctl.c      the ctl.sock server: clients and their requests
 *   mon_guest.c    the guest-message relay (STARTED, EXITED, output...)
 *   mon_replace.c  warm replace: a new workload in the running VM
 *   mon_out.c      the workload's output to our stdout/stderr, credited
 *   mon_tty.c      the terminal (process.terminal)
 *   mon_net.c      a network namespace joined by path, mirrored into the
 *                  guest (net/mirror.h), and RUN's network fields
 * Everything from the guest is hostile (channel.c bounds and checks every
 * frame; a bad one ends the pod with the reason).  Clients are other qpod
 * processes of users allowed into the state dir; they are still checked
 * (which messages, bounded frames) and a broken client only loses its own
 * connection. */
#ifndef QPOD_VM_MONITOR_H
#define QPOD_VM_MONITOR_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <termios.h>

#include "qboot/qpod_abi.h"
#include "vm/timeline.h"
#include "vm/qemu/qemu.h"
#include "net/mirror.h"
#include "vm/vm.h"

#define CONNECT_TIMEOUT_MS 5000
#define HELLO_TIMEOUT_TCG_MS 30000
#define HELLO_TIMEOUT_KVM_MS 10000
#define MAX_CLIENTS 16
#define DEFAULT_MEM_MIB 256
#define MIN_MEM_MIB 16
#define MAX_MEM_MIB (1024ULL * 1024)

struct vm_mon;

struct vm_client {
	struct vm_mon *mon;     /* whose client it is */
	struct qp_chan *ch;     /* NULL = free slot */
	uint32_t exec_id;       /* its exec in the guest, 0 = none */
	uint32_t stdin_credit;  /* EXEC_STDIN its exec may still take (protocol.h) */
	uint32_t out_owed, out_owed_frames; /* EXEC_OUT bytes and messages relayed to it
					     * and not credited back */
	bool want_start, want_meminfo;
	char want_ctr_stats[QP_PROTO_MAX_TAG + 1]; /* CTR_STATS_REQ's name, "" = none */
};

struct vm_lv;

/* one of the workload's output streams on its way out (mon_out.c) */
struct vm_out {
	int fd;                 /* where it goes (-1: gone, what comes is dropped) */
	bool own, sock;         /* fd is our reopened one; a socket (MSG_DONTWAIT) */
	uint8_t *buf;           /* what its reader has not taken yet: buf[off..len) */
	size_t off, len, cap;
};

/* the firmware's marker pipe (mon_fwmark.c) */
struct vm_fwmark {
	int fd;                 /* its read end, -1: none (or at its end) */
	bool in_error;          /* inside an error line */
	size_t error_len;
	char error[MARK_ERROR_MAX + 1];
};

struct vm_mon {
	struct pod *pod;
	struct vm_lv *lv;       /* the libvirt backend's domain; NULL: QEMU is our child */
	char statedir[PATH_MAX];
	struct vm_mounts mounts;   /* the spec's own mounts (mounts.c) */
	char uts_hostname[QP_PROTO_MAX_HOSTNAME + 1]; /* of a UTS namespace joined by path */
	pid_t qemu;
	int qemu_pidfd;
	int ready_fd;           /* vm_mon_poll_fd's eventfd, -1 until asked for */
	bool kvm, qemu_reaped;
	int qemu_status;
	struct qp_chan *chan;
	int listen_fd;
	struct vm_client cl[MAX_CLIENTS];
	bool has_net;
	struct qp_net_config net;
	struct qp_net_lease lease;
	/* a network namespace joined by path, wired to the NIC (mon_net.c) */
	bool mirrored;
	struct qp_net_mirror mirror;
	char route_text[QP_NET_MIRROR_ROUTES][QP_PROTO_MAX_ROUTE];
	const char *routes[QP_NET_MIRROR_ROUTES + 1];
	char addr6_text[QP_NET_MIRROR_ADDRS6][QP_PROTO_MAX_ROUTE];
	const char *addrs6[QP_NET_MIRROR_ADDRS6 + 1];
	bool run_sent, started, exited, over, stopping;
	int exit_code;
	long long stop_deadline;
	long long start_deadline; /* RUN sent: STARTED (or an error) by then */
	uint32_t next_exec;
	qp_error *exec_err;     /* the workload could not be executed */
	char reason[256];       /* why the VM stopped, once known */
	struct vm_timeline tl;
	struct vm_fwmark fw;
	struct vm_qmp *qmp;     /* connected at the first pause */
	bool paused;
	/* where QEMU's sockets and log are: -1, the pod's dir; a taken
	 * spare's dir otherwise (mon_vmdir) */
	int vmdir;
	/* QEMU is not our child: libvirtd's, or a taken spare's (its holder
	 * reports its end on holder_fd: "exit STATUS") */
	bool qemu_foreign;
	int holder_fd;
	/* a taken spare: the rootfs is its share's QP_PROTO_SUBDIR; its dir
	 * (spare_name in the spares dir spares_fd) goes at the end */
	bool spare;
	int spares_fd;
	char spare_name[16];
	char tpl_key[17];       /* the template cloned ("" for a cold boot) */
	char nic[VM_NIC_BACKEND_MAX]; /* the NIC's backend and why ("": no NIC) */
	bool clone_sent;        /* a CLONE went: its HELLO must confirm it (clone.h) */
	uint32_t clone_check;   /* of the seed it carried */
	/* the workload's stdin, relayed from ours (fd 0) when it is not
	 * /dev/null: -1 when not (or at its end); credit: STDIN bytes the
	 * guest may still take (protocol.h, STDIN_CREDIT) */
	int stdin_fd;
	uint32_t stdin_credit;
	/* the workload's STDOUT and STDERR (mon_out.c): bytes the guest has
	 * out (sent, not credited back) and of them those passed on */
	struct vm_out out[2];
	uint32_t out_inflight, out_due;
	/* process.terminal: fd 0 and 1 are the terminal (mon_tty.c); the
	 * size last sent; qpod's own terminal's settings to restore */
	bool tty, tty_restore;
	bool tty_veof;          /* an EOF typed before ours went raw: send VEOF */
	uint16_t tty_rows, tty_cols;
	struct termios tty_saved;
	/* a replace in progress (CTL_REPLACE) */
	bool replacing;
	struct vm_client *rep_client; /* NULL if it went away meanwhile */
	char **rep_argv;        /* NULL: the pod's process again */
	long long rep_request, rep_exit, rep_kill_at;
};

/* mon_net.c: a VM pod whose spec joins a network namespace by path (and
 * has no qpod.net): its interface wired to a tap there, *tap its fd (-1:
 * nothing to wire); what is not wired is named in a warning.  Refused
 * (QP_E_INVALID) when the namespace cannot be mirrored. */
int mon_net_mirror(struct vm_mon *m, int *tap, qp_error **err);
/* A monitor whose VM's NIC is wired to the pod's network namespace enters
 * it once the VM is up (templates and QEMU were made from where qpod
 * runs): /proc/PID/ns/net of the pod's pid is then the pod's namespace, as
 * a container pod's is, and what joins it by that path (a CRI container of
 * the pod) finds it wired. */
int mon_net_enter(struct vm_mon *m, qp_error **err);
/* A taken spare's tap (vm_spare_tap_name of spare, in its holder's network
 * namespace; sd the spares dir) moved into the pod's network namespace in
 * place of the one mon_net_mirror made, and wired. */
int mon_net_adopt_spare(struct vm_mon *m, int sd, const char *spare, qp_error **err);
/* RUN's network fields (address, MAC, gateway, MTU, routes) for the NIC. */
void mon_net_run(struct vm_mon *m, struct qp_run *r);

/* the monitor core (monitor.c): QEMU's lifecycle, stop reasons, pause, signals, the serve loop */
/* The dir of QEMU's sockets and log (the pod's, or a taken spare's). */
int mon_vmdir(const struct vm_mon *m);
/* A spare's holder letting go of a booted VM: QMP and ctl.sock closed,
 * everything freed but QEMU (its child still) and the guest channel,
 * whose fd is returned (-1 if there is none). */
int mon_release(struct vm_mon *m);
/* Stop serving ctl.sock (a spare has no clients). */
void mon_ctl_close(struct vm_mon *m);
void mon_begin_stop(struct vm_mon *m);
/* Kill and reap QEMU and drop its channel and QMP connection, so that the
 * boot can start QEMU again (a clone that could not be restored). */
void mon_qemu_discard(struct vm_mon *m);
void mon_set_reason(struct vm_mon *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void mon_qemu_reason(struct vm_mon *m);
bool mon_qemu_gone(struct vm_mon *m);
int mon_with_qemu_log(struct vm_mon *m, qp_error **err);

/* boot and RUN (mon_boot.c) */
int mon_send_run(struct vm_mon *m, char **argv, qp_error **err);
/* Our stdin readable and credit left: send a chunk as STDIN (its end: an
 * empty STDIN).  -1 when the channel failed. */
int mon_stdin_input(struct vm_mon *m, qp_error **err);

/* the terminal (mon_tty.c).  setup: at boot, with process.terminal, the
 * pty to --console-socket (or qpod's own, raw); run: RUN's terminal flag
 * and first size; poll: a size change to the guest, returns the poll
 * timeout it needs (-1: none); restore: qpod's terminal as it was. */
int mon_tty_setup(struct vm_mon *m, qp_error **err);
void mon_tty_run(struct vm_mon *m, struct qp_run *r);
int mon_tty_poll(struct vm_mon *m);
void mon_tty_restore(struct vm_mon *m);

/* the workload's output (mon_out.c).  open: at boot, after the terminal's
 * setup, the writers of fd 1 and 2 (non-blocking where they can be);
 * put: a STDOUT (stream 1) or STDERR (2) chunk, written or held, -1 when
 * the guest went beyond its window; pollfd: the fd of stream i (0, 1)
 * to poll for POLLOUT (-1: nothing held); flush: write what stream i
 * holds; drain: after the pod's end, until written, gone, or its reader
 * took nothing for QP_VM_OUT_DRAIN_MS; close: free it all. */
void mon_out_open(struct vm_mon *m);
int mon_out_put(struct vm_mon *m, int stream, const uint8_t *data, uint32_t len, qp_error **err);
int mon_out_pollfd(const struct vm_mon *m, int i);
void mon_out_flush(struct vm_mon *m, int i);
void mon_out_drain(struct vm_mon *m);
void mon_out_close(struct vm_mon *m);

/* the firmware's markers (mon_fwmark.c).  open: the pipe, its write end
 * into o (the caller closes it once QEMU has it); wait: poll fd (-1: none)
 * up to timeout_ms, the markers read and timestamped meanwhile, 1 if fd
 * turned readable; error: after QEMU's end, -1 with the firmware's error
 * line in *err (replacing what was there) if it wrote one, else 0. */
int mon_fwmark_open(struct vm_mon *m, struct vm_qemu_opts *o, qp_error **err);
int mon_fwmark_wait(struct vm_mon *m, int fd, int timeout_ms);
int mon_fwmark_error(struct vm_mon *m, qp_error **err);
void mon_fwmark_close(struct vm_mon *m);

/* the ctl.sock server (mon_ctl.c) */
struct vm_client *mon_exec_client(struct vm_mon *m, uint32_t id);
void mon_client_close(struct vm_client *c);
void mon_client_send(struct vm_client *c, const struct qp_msg *msg);
/* EXEC_OUT_CREDIT of bytes in frames messages for exec id to the guest:
 * output passed on or dropped (a client gone). */
void mon_exec_out_credit(struct vm_mon *m, uint32_t id, uint32_t bytes, uint32_t frames);
void mon_client_reply(struct vm_client *c, int status, int errnum, const char *text);
void mon_client_input(struct vm_mon *m, struct vm_client *c);
void mon_client_reply_err(struct vm_client *c, qp_error *e);
void mon_client_accept(struct vm_mon *m);

/* the guest-message relay (mon_guest.c) */
int mon_guest_input(struct vm_mon *m, qp_error **err);
/* Answer the clients waiting for the start: done, or the error E. */
void mon_answer_start(struct vm_mon *m, qp_error *e);

/* How long the guest may take to answer RUN with STARTED: hello's bound,
 * or $QPOD_VM_START_TIMEOUT_MS (tests) (mon_boot.c). */
int mon_start_timeout_ms(const struct vm_mon *m);

/* warm replace (mon_replace.c) */
int mon_replace_begin(struct vm_mon *m, struct vm_client *c, const struct qp_msg *msg, qp_error **err);
void mon_replace_free(struct vm_mon *m);
void mon_replace_done(struct vm_mon *m, qp_error *e);
void mon_replace_exit(struct vm_mon *m);

/* A sandbox (qpod.sandbox: it holds containers) can be made here. */
int mon_sandbox_ok(const struct pod_spec *spec, qp_error **err);

#endif
