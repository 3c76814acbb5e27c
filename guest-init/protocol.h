/* guest-init/protocol.h — the host<->guest control-channel protocol of a
 * microVM pod.  This header is the one definition of it: the host runtime and
 * guest-init both include it, and guest-init/channel.[ch] is the only code
 * that turns messages into bytes and back.
 *
 * Transport: a virtio-serial port named "qpod.0" (guest: /dev/virtio-ports/
 * qpod.0, fallback /dev/hvc1), a byte stream.  Every message is one frame:
 *
 *   offset 0  u32 magic    QP_PROTO_MAGIC ("QPOD" on the wire)
 *          4  u16 version  QP_PROTO_VERSION; any other version is refused
 *          6  u16 type     enum qp_msg_type
 *          8  u32 length   payload bytes that follow, <= QP_PROTO_MAX_PAYLOAD
 *         12  payload
 *
 * All integers are little-endian.  Payload field types:
 *   u8/u16/u32/u64, i32  fixed width, little-endian
 *   str    u32 byte count + bytes; no NUL byte inside, no terminator
 *   strv   u32 entry count (<= QP_PROTO_MAX_STRV) + that many str
 *   ip4    4 bytes, network order (a.b.c.d as they read)
 * A payload must be consumed exactly: trailing bytes are an error.
 *
 * Payloads (direction: G = guest->host, H = host->guest):
 *   HELLO       G  u16 version, u16 flags (QP_HELLO_F_*), u32 seed_check,
 *                  u64 init_ns (CLOCK_BOOTTIME when init started),
 *                  u64 hello_ns (CLOCK_BOOTTIME when HELLO was sent).
 *                  flags and seed_check are 0 except in the HELLO that
 *                  answers a CLONE, which reports what the guest did with
 *                  it: QP_HELLO_F_SEEDED (the seed added with RNDADDENTROPY,
 *                  credited), QP_HELLO_F_RESEEDED (then the CRNG reseeded
 *                  with RNDRESEEDCRNG), QP_HELLO_F_CLOCK (the clock set to
 *                  realtime_ns); seed_check is qp_seed_check() of the bytes
 *                  handed to RNDADDENTROPY, so the host knows they were the
 *                  seed it sent
 *   RUN         H  u32 flags (QP_RUN_F_*), u32 uid, u32 gid,
 *                  u8 rootfs (QP_ROOTFS_*: the initramfs, a 9p share, or a
 *                  9p share's QP_PROTO_SUBDIR), str rootfs_tag (9p mount tag),
 *                  str cwd ("" = "/"), str hostname ("" = keep),
 *                  strv argv (>= 1 entry), strv env (each "NAME=value"),
 *                  ip4 ip, u8 prefix (0 = no address: eth0 stays down),
 *                  ip4 gateway (0.0.0.0 = no default route), u8 mac[6]
 *                  (all zero = keep the NIC's address),
 *                  strv mounts (<= QP_PROTO_MAX_MOUNTS; EXEC: none), each
 *                  "KIND\tSOURCE\tDEST\tFLAGS", applied in the workload's
 *                  root by the first RUN only:
 *                    9p      SOURCE a 9p tag, mounted on DEST (a directory)
 *                    9pfile  SOURCE "tag/name": the file `name` of that share,
 *                            bind-mounted on DEST (a file)
 *                    tmpfs   SOURCE the tmpfs options ("size=1m,mode=755" or "")
 *                  DEST absolute, without ".." or tabs; FLAGS a comma list
 *                  of ro, nosuid, nodev, noexec (or ""),
 *                    pod     SOURCE a path relative to the pod share (below),
 *                            of 1..3 components without "." or "..": that
 *                            directory or file bound on DEST (CONTAINER
 *                            EXECs, and a RUN with a podshare entry)
 *                    podshare SOURCE a 9p tag, DEST QP_PROTO_POD_DEST: the
 *                            pod share, mounted aside (outside the
 *                            workload's root) before the root is entered,
 *                            for the pod's containers (RUN only); the
 *                            rootfs tag with QP_ROOTFS_9P_SUBDIR: that
 *                            share (a spare's), kept mounted
 *                  u16 rows, u16 cols (the terminal's first window size,
 *                  with QP_RUN_F_TERMINAL; 0 0 = the pty's default; without
 *                  the flag both must be 0),
 *                  strv cgroup (<= QP_PROTO_MAX_CGROUP; CONTAINER only, else
 *                  none), each "FILE=VALUE": a limit written to the
 *                  container's own cgroup in the guest; FILE one of
 *                  memory.max, memory.swap.max, pids.max, cpu.max,
 *                  cpu.weight, cpuset.cpus, cpuset.mems, VALUE 1..64
 *                  printable bytes
 *                  u16 mtu (eth0's MTU, 68..65535; 0 = keep), strv routes
 *                  (<= QP_PROTO_MAX_ROUTES, each only with an address of
 *                  its family; EXEC: none), each "DST/PREFIX GATEWAY",
 *                  both dotted IPv4 (GATEWAY 0.0.0.0: on eth0's link) or
 *                  both IPv6 (GATEWAY ::, on the link; ::/0 is IPv6's
 *                  default route), added after the IPv4 default route:
 *                  the routes of a mirrored network namespace
 *                  (docs/DECISIONS.md, "Issue 30"),
 *                  strv addrs6 (<= QP_PROTO_MAX_ADDRS6; EXEC: none), each
 *                  "ADDR/PREFIX": eth0's global IPv6 addresses, added
 *                  without duplicate address detection (the namespace's
 *                  interface did it); with addrs6 and no IPv4 address
 *                  (prefix 0) eth0 still comes up, IPv6 only
 *                  With QP_RUN_F_TERMINAL (needs QP_RUN_F_STDIN) the process
 *                  runs on a pty of the guest's, as session leader with it
 *                  as its controlling terminal; STDOUT carries the pty's
 *                  output (bytes as the pty's line discipline made them, no
 *                  STDERR), STDIN its input, within the same credit.
 *   STARTED     G  u32 pid, u64 spawn_ns (fork), u64 exec_ns (exec done)
 *   STDOUT      G  raw bytes (length 1..QP_PROTO_MAX_PAYLOAD)
 *   STDERR      G  raw bytes (length 1..QP_PROTO_MAX_PAYLOAD)
 *                  Flow control: the guest has at most QP_PROTO_OUT_WINDOW
 *                  bytes of STDOUT and STDERR together out that the host has
 *                  not credited back (OUT_CREDIT); more is a protocol error.
 *                  The window is the guest's for its whole life (a replace's
 *                  workload inherits what is in flight).  So the host never
 *                  stops reading the channel for a reader of its stdout that
 *                  does not read (a terminal's client): the workload blocks
 *                  on its full pipe or pty instead, as on a real terminal.
 *                  After the workload's exit the guest drains its output
 *                  while it has credit (1 s, for leftovers holding the
 *                  pipes) and waits for credit at most 10 s; the rest is
 *                  dropped.
 *   STDIN       H  raw bytes; length 0 means end of input (stdin closed;
 *                  with QP_RUN_F_TERMINAL, the terminal's hangup: the guest
 *                  closes its pty's master, so the session's leader and
 *                  foreground group get SIGHUP, as on a real terminal).
 *                  Flow control: the host has at most QP_PROTO_STDIN_WINDOW
 *                  bytes of STDIN out that the guest has not credited back
 *                  (STDIN_CREDIT); more is a protocol error.  So the guest
 *                  never stops reading the channel for a workload that does
 *                  not read its stdin (signals and execs still get through).
 *   STDIN_CREDIT G u32 bytes (1..QP_PROTO_STDIN_WINDOW): that many bytes of
 *                  STDIN are passed on (written to the workload's stdin, or
 *                  dropped once it closed it): the host may send that many more
 *   SIGNAL      H  u32 signo (1..QP_PROTO_MAX_SIGNAL), to the workload
 *   WINSIZE     H  u32 id (0 = the workload, else an exec's id), u16 rows,
 *                  u16 cols (each >= 1): the terminal's new size, set on the
 *                  guest's pty (TIOCSWINSZ: its foreground group gets
 *                  SIGWINCH); for a process without a terminal: STATE
 *   EXIT        G  i32 code (0..255: exit status; 128+N: killed by signal N),
 *                  u64 exit_ns.  Sent after all STDOUT/STDERR of the workload
 *   MEMINFO_REQ H  empty; answered by MEMINFO at any time after HELLO
 *   MEMINFO     G  u64 total, free, available, buffers, cached (kB, as in
 *                  /proc/meminfo)
 *   SHUTDOWN    H  empty; the guest syncs and powers off
 *   ERROR       G/H u32 code (QP_PERR_*), i32 errnum (Linux errno or 0),
 *                  str text (<= QP_PROTO_MAX_TEXT bytes, one line)
 *   EXEC        H  u32 id (!= 0, unique among running execs), then the RUN
 *                  payload; rootfs must be INITRAMFS with an empty tag and
 *                  prefix/gateway/mac zero: the process joins the pod's root
 *                  and network as they are.  stdin is /dev/null, or with
 *                  QP_RUN_F_STDIN comes from EXEC_STDIN; QP_RUN_F_TERMINAL
 *                  as for RUN (its output is EXEC_OUT stream 1).
 *                  With QP_RUN_F_CONTAINER the process is a container of
 *                  the pod (one VM per pod): rootfs is 9P_SUBDIR and
 *                  rootfs_tag the container's directory in the pod share
 *                  (one path component); its root is that directory's
 *                  root/, in a mount namespace of its own (/proc, /sys,
 *                  /dev and a /tmp tmpfs as a pod's, then its own mounts:
 *                  tmpfs and pod kinds), hostname set when NEW_UTS, a
 *                  cgroup of its own named rootfs_tag with the cgroup
 *                  entries, the NEW_* namespaces of its own, the others
 *                  the pod's.  A container's end kills what is left in
 *                  its cgroup.  With QP_RUN_F_PAUSE (RUN only) the workload
 *                  is guest-init's own pause (a VM that only holds its pod's
 *                  containers: argv is not exec'd).  With QP_RUN_F_JOIN (not with CONTAINER)
 *                  the process joins the running container rootfs_tag:
 *                  its mount, PID, IPC, UTS, network and cgroup
 *                  namespaces and its cgroup.
 *   EXEC_SIGNAL H  u32 id, u32 signo (1..QP_PROTO_MAX_SIGNAL): to that
 *                  exec's process (a container's: its init)
 *   CTR_STATS_REQ H str name (a container's, as CONTAINER's rootfs_tag):
 *                  its usage, answered by CTR_STATS
 *   CTR_STATS   G  str name, u8 found (0: no such container running; the
 *                  rest 0), u64 cpu_usec, cpu_user_usec, cpu_system_usec
 *                  (cpu.stat), u64 memory (memory.current, bytes), u64
 *                  memory_max (0 = max), u64 pids, u64 pids_max (0 = max),
 *                  u64 oom_kills (memory.events oom_kill)
 *   CTR_UPDATE  H  str name, strv cgroup (1..QP_PROTO_MAX_CGROUP, as EXEC's):
 *                  new limits for that running container's cgroup, written
 *                  in order; answered by CTR_UPDATED
 *   CTR_UPDATED G  str name, i32 errnum (0: all written), str text (the
 *                  entry that failed, or "")
 *   EXEC_STDIN  H  u32 id, raw bytes; no bytes means end of input (with a
 *                  terminal its hangup, as for STDIN).  The STDIN window
 *                  per exec, credited back by EXEC_CREDIT
 *   EXEC_CREDIT G  u32 id, u32 bytes (1..QP_PROTO_STDIN_WINDOW): as
 *                  STDIN_CREDIT, for that exec's EXEC_STDIN
 *   EXEC_OUT_CREDIT H u32 id, u32 bytes (1..QP_PROTO_EXEC_OUT_WINDOW), u32
 *                  frames (1..QP_PROTO_EXEC_OUT_FRAMES, <= bytes): that
 *                  many bytes in that many EXEC_OUT messages of that exec
 *                  are passed on (by its client, or dropped by the monitor
 *                  once the client is gone): the guest may send as many
 *                  more.  A credit for an exec that ended is the race with
 *                  its end: ignored
 *   OUT_CREDIT  H  u32 bytes (1..QP_PROTO_OUT_WINDOW): that many bytes of
 *                  STDOUT/STDERR are passed on (written to the host's
 *                  stdout/stderr, or dropped once that is gone): the guest
 *                  may send that many more
 *   CLONE       H  u64 realtime_ns (the host's CLOCK_REALTIME), u8 seed[32]
 *                  (from the host's getrandom): sent to a VM restored from a
 *                  template (vm/snapshot/template.c) before RUN, so that it is unique:
 *                  the seed is mixed into the guest's RNG, which is reseeded,
 *                  and the clock set.  The guest answers with a new HELLO
 *                  that says so (its flags and seed_check, above).
 *   WARM        H  str tag (a 9p mount tag): sent to a spare (vm/snapshot/spare.c)
 *                  before RUN, so that the code a pod's start runs is
 *                  translated (TCG) before a pod asks: in a child with a
 *                  mount namespace of its own, the guest enters the share's
 *                  QP_PROTO_SUBDIR as RUN with QP_ROOTFS_9P_SUBDIR would,
 *                  runs its QP_PROTO_WARM_PROG there (a copy of guest-init,
 *                  which exits at once as QP_PROTO_WARM_ARGV0), and answers
 *                  with a HELLO once that child is gone.
 *   EXEC_STARTED G u32 id, u32 pid
 *   EXEC_OUT    G  u32 id, u8 stream (1 stdout, 2 stderr), raw bytes (>= 1)
 *                  Flow control: at most QP_PROTO_EXEC_OUT_WINDOW bytes in
 *                  at most QP_PROTO_EXEC_OUT_FRAMES messages of an exec's
 *                  EXEC_OUT not credited back (EXEC_OUT_CREDIT); more is a
 *                  protocol error.  Both bounds keep what is in flight
 *                  within a client socket's buffer (the kernel counts a
 *                  small message's overhead too), so the monitor never
 *                  waits on a client that does not read: the exec waits
 *   EXEC_EXIT   G  u32 id, i32 code (0..255), i32 errnum (!= 0: it could not
 *                  be executed; code is then 126 or 127), str text (why)
 *
 * Local control messages (CTL: between qpod processes on the host and the
 * pod's monitor over ctl.sock, never to or from a guest; the monitor accepts
 * from a client CTL_START, CTL_PAUSE, CTL_RESUME, SIGNAL, EXEC, MEMINFO_REQ,
 * CTR_STATS_REQ, CTR_UPDATE and SHUTDOWN, and for the client's exec EXEC_STDIN, EXEC_SIGNAL,
 * EXEC_OUT_CREDIT and WINSIZE (their id
 * is the monitor's to set), and answers with CTL_REPLY, MEMINFO, or the
 * EXEC_* of that client's exec, EXEC_CREDIT included):
 *   CTL_START   C  empty: send the pod's RUN (OCI start)
 *   CTL_REPLY   C  i32 status (0 = done, else a util/error.h QP_E_* code),
 *                  i32 errnum, str text (the error, or ""; after a replace a
 *                  JSON object of its timings)
 *   CTL_REPLACE C  u32 flags (0), strv argv (0 entries = the same process):
 *                  stop the workload (SIGTERM, SIGKILL after a timeout) and
 *                  start the new one in the running VM
 *   CTL_PAUSE   C  empty: stop the VM's vCPUs (QEMU "stop" over QMP; OCI pause)
 *   CTL_RESUME  C  empty: let them run again (QEMU "cont"; OCI resume)
 *
 * Replace in the guest: a RUN sent with QP_RUN_F_WAIT_SHUTDOWN leaves the
 * guest serving after EXIT; a further RUN then starts a new workload in the
 * same root, network and hostname (those fields of the later RUN are
 * ignored).
 *
 * A clone of a template: (the template's guest said HELLO and waits for RUN)
 * host CLONE -> guest HELLO -> host RUN -> as below.
 * Conversation: guest HELLO -> host RUN -> guest STARTED -> STDOUT/STDERR...
 * -> EXIT -> guest powers off (or, with QP_RUN_F_WAIT_SHUTDOWN, waits for
 * SHUTDOWN).  MEMINFO_REQ and SHUTDOWN may come at any time after HELLO,
 * SIGNAL and STDIN after RUN.  A guest ERROR with code PROTOCOL or SYSCALL
 * is the guest's last message: it powers off next.  EXEC is followed by
 * EXIT 127 (not found) or 126; STATE (e.g. SIGNAL with no workload) changes nothing.
 * Timestamps are CLOCK_BOOTTIME of the guest (ns since its kernel started).
 *
 * Everything received is hostile: codec.c checks every bound above before
 * it copies a byte, and never allocates more than one fixed-size store.
 */
#ifndef QPOD_PROTOCOL_H
#define QPOD_PROTOCOL_H

#include <stdint.h>

#define QP_PROTO_MAGIC 0x444f5051u /* bytes 'Q' 'P' 'O' 'D' */
#define QP_PROTO_VERSION 6
#define QP_PROTO_HDR_SIZE 12
#define QP_PROTO_MAX_PAYLOAD 65536
#define QP_PROTO_FRAME_MAX (QP_PROTO_HDR_SIZE + QP_PROTO_MAX_PAYLOAD)
#define QP_PROTO_MAX_STRV 4096 /* argv and env entries, each */
#define QP_PROTO_MAX_TEXT 4096 /* ERROR text */
#define QP_PROTO_MAX_TAG 64    /* 9p mount tag */
#define QP_PROTO_MAX_HOSTNAME 64
#define QP_PROTO_MAX_SIGNAL 64
#define QP_PROTO_MAX_MOUNTS 16 /* RUN mounts */
#define QP_PROTO_MAX_CGROUP 8  /* RUN cgroup entries (a container's limits) */
#define QP_PROTO_POD_DEST "/.pod" /* a podshare entry's DEST (mounted aside) */
#define QP_PROTO_MAX_ROUTES 16 /* RUN routes */
#define QP_PROTO_MAX_ROUTE 96  /* two IPv6 addresses of INET6_ADDRSTRLEN, "/128", " " */
#define QP_PROTO_MAX_ADDRS6 8  /* RUN addrs6 */
#define QP_PROTO_PORT_NAME "qpod.0" /* virtio-serial port name */
#define QP_PROTO_SEED_SIZE 32 /* CLONE's RNG seed, bytes */

/* HELLO flags: what the guest did with a CLONE (all three, or the clone is
 * not unique) */
#define QP_HELLO_F_SEEDED 0x1u   /* the seed added to the RNG, credited */
#define QP_HELLO_F_RESEEDED 0x2u /* the CRNG reseeded after that */
#define QP_HELLO_F_CLOCK 0x4u    /* the clock set to the host's */
#define QP_HELLO_F_CLONED (QP_HELLO_F_SEEDED | QP_HELLO_F_RESEEDED | QP_HELLO_F_CLOCK)
#define QP_PROTO_STDIN_WINDOW 65536 /* STDIN bytes in flight, at most (STDIN_CREDIT) */
#define QP_PROTO_EXEC_OUT_WINDOW 131072 /* an exec's EXEC_OUT bytes in flight (EXEC_OUT_CREDIT) */
#define QP_PROTO_EXEC_OUT_FRAMES 16     /* and its EXEC_OUT messages in flight */
#define QP_PROTO_OUT_WINDOW 262144  /* STDOUT+STDERR bytes in flight, at most (OUT_CREDIT) */

enum qp_msg_type {
	QP_MSG_HELLO = 1,
	QP_MSG_RUN = 2,
	QP_MSG_STARTED = 3,
	QP_MSG_STDOUT = 4,
	QP_MSG_STDERR = 5,
	QP_MSG_STDIN = 6,
	QP_MSG_SIGNAL = 7,
	QP_MSG_EXIT = 8,
	QP_MSG_MEMINFO_REQ = 9,
	QP_MSG_MEMINFO = 10,
	QP_MSG_SHUTDOWN = 11,
	QP_MSG_ERROR = 12,
	QP_MSG_EXEC = 13,
	QP_MSG_EXEC_STARTED = 14,
	QP_MSG_EXEC_OUT = 15,
	QP_MSG_EXEC_EXIT = 16,
	QP_MSG_CTL_START = 17,
	QP_MSG_CTL_REPLY = 18,
	QP_MSG_CTL_REPLACE = 19,
	QP_MSG_CTL_PAUSE = 20,
	QP_MSG_CTL_RESUME = 21,
	QP_MSG_CLONE = 22,
	QP_MSG_WARM = 23,
	QP_MSG_STDIN_CREDIT = 24,
	QP_MSG_WINSIZE = 25,
	QP_MSG_EXEC_STDIN = 26,
	QP_MSG_EXEC_CREDIT = 27,
	QP_MSG_EXEC_SIGNAL = 28,
	QP_MSG_CTR_STATS_REQ = 29,
	QP_MSG_CTR_STATS = 30,
	QP_MSG_OUT_CREDIT = 31,
	QP_MSG_CTR_UPDATE = 32,
	QP_MSG_CTR_UPDATED = 33,
	QP_MSG_EXEC_OUT_CREDIT = 34,
	QP_MSG_TYPE_MAX = QP_MSG_EXEC_OUT_CREDIT,
};

/* who may send a type: a receiver refuses a message from the wrong side
 * (a bit mask; CTL = local control between qpod processes) */
enum qp_sender { QP_SENDER_GUEST = 1, QP_SENDER_HOST = 2, QP_SENDER_CTL = 4 };

/* RUN flags; unknown bits are refused */
enum {
	QP_RUN_F_STDIN = 1u << 0,         /* stdin comes from STDIN messages, else /dev/null */
	QP_RUN_F_ROOTFS_RO = 1u << 1,     /* mount the 9p rootfs read-only */
	QP_RUN_F_WAIT_SHUTDOWN = 1u << 2, /* after EXIT keep serving until SHUTDOWN */
	QP_RUN_F_TERMINAL = 1u << 3,      /* a pty of the guest's as stdio (needs STDIN) */
	QP_RUN_F_CONTAINER = 1u << 4,     /* EXEC: a container of the pod (its own root) */
	QP_RUN_F_NEW_PID = 1u << 5,       /* CONTAINER: a PID namespace of its own */
	QP_RUN_F_NEW_IPC = 1u << 6,       /* CONTAINER: an IPC namespace of its own */
	QP_RUN_F_NEW_UTS = 1u << 7,       /* CONTAINER: a UTS namespace (hostname) of its own */
	QP_RUN_F_NEW_NET = 1u << 8,       /* CONTAINER: a network namespace of its own */
	QP_RUN_F_NEW_CGROUP = 1u << 9,    /* CONTAINER: a cgroup namespace of its own */
	QP_RUN_F_JOIN = 1u << 10,         /* EXEC: into the running container rootfs_tag */
	QP_RUN_F_PAUSE = 1u << 11,        /* RUN: the workload only waits for a signal (no exec) */
	QP_RUN_F_ALL = (1u << 12) - 1,
	QP_RUN_F_NEW_NS = QP_RUN_F_NEW_PID | QP_RUN_F_NEW_IPC | QP_RUN_F_NEW_UTS | QP_RUN_F_NEW_NET |
			  QP_RUN_F_NEW_CGROUP,
};

enum qp_rootfs {
	QP_ROOTFS_INITRAMFS = 0, /* stay in the initramfs (the image is in it) */
	QP_ROOTFS_9P = 1,        /* mount 9p tag rootfs_tag, move into it */
	QP_ROOTFS_9P_SUBDIR = 2, /* mount 9p tag rootfs_tag, move into its QP_PROTO_SUBDIR */
};
/* the directory of a 9p share that QP_ROOTFS_9P_SUBDIR enters (a spare's
 * share: the pod's rootfs is bound there when a pod takes it) */
#define QP_PROTO_SUBDIR "root"
/* WARM: the program in the share's QP_PROTO_SUBDIR that the warm-up runs
 * (hidden by the pod's rootfs later), and the argv[0] that makes
 * guest-init exit at once */
#define QP_PROTO_WARM_PROG ".qpod-warm"
#define QP_PROTO_WARM_ARGV0 "qpod-warm"

/* ERROR codes */
enum qp_proto_err {
	QP_PERR_PROTOCOL = 1, /* a malformed or unexpected message was received */
	QP_PERR_SYSCALL = 2,  /* a guest setup step failed (mount, ioctl, ...) */
	QP_PERR_EXEC = 3,     /* the workload could not be executed */
	QP_PERR_STATE = 4,    /* valid message at the wrong time */
	QP_PERR_MAX = QP_PERR_STATE,
};

/* The header as decoded (host byte order). */
struct qp_msg_hdr {
	uint32_t magic;
	uint16_t version;
	uint16_t type;
	uint32_t length;
};

struct qp_run {
	uint32_t id;             /* EXEC only */
	uint32_t flags;
	uint32_t uid, gid;
	uint8_t rootfs;
	const char *rootfs_tag, *cwd, *hostname;
	uint32_t argc, envc;
	const char *const *argv; /* NULL-terminated */
	const char *const *env;  /* NULL-terminated */
	uint8_t ip[4], prefix, gateway[4], mac[6];
	uint32_t mountc;
	const char *const *mounts; /* "KIND\tSOURCE\tDEST\tFLAGS", NULL-terminated */
	uint16_t rows, cols;       /* QP_RUN_F_TERMINAL's first window size */
	uint32_t cgroupc;
	const char *const *cgroup; /* "FILE=VALUE", NULL-terminated */
	uint16_t mtu;              /* eth0's MTU, 0 = keep */
	uint32_t routec;
	const char *const *routes; /* "DST/PREFIX GATEWAY", NULL-terminated */
	uint32_t addr6c;
	const char *const *addrs6; /* "ADDR/PREFIX" (IPv6), NULL-terminated */
};

/* A message, decoded or to be encoded.  Decoded pointers point into a
 * struct qp_msg_store and live until that store is reused. */
struct qp_msg {
	uint16_t type;
	union {
		struct {
			uint16_t version, flags; /* QP_HELLO_F_* */
			uint32_t seed_check;     /* qp_seed_check() of the seed added */
			uint64_t init_ns, hello_ns;
		} hello;
		struct qp_run run;
		struct {
			uint32_t pid;
			uint64_t spawn_ns, exec_ns;
		} started;
		struct {
			const uint8_t *data;
			uint32_t len;
		} data; /* STDOUT, STDERR, STDIN */
		struct {
			uint32_t signo;
		} signal;
		struct {
			int32_t code;
			uint64_t exit_ns;
		} exit;
		struct {
			uint64_t total_kb, free_kb, available_kb, buffers_kb, cached_kb;
		} meminfo;
		struct {
			uint32_t code;
			int32_t errnum;
			const char *text;
		} error;
		struct {
			uint32_t id, pid;
		} exec_started;
		struct {
			uint32_t id;
			uint8_t stream; /* 1 stdout, 2 stderr */
			const uint8_t *data;
			uint32_t len;
		} exec_out;
		struct {
			uint32_t id;
			int32_t code, errnum;
			const char *text;
		} exec_exit;
		struct {
			int32_t status, errnum;
			const char *text;
		} reply;
		struct {
			uint32_t flags, argc;
			const char *const *argv; /* NULL-terminated */
		} replace;
		struct {
			uint64_t realtime_ns;
			uint8_t seed[QP_PROTO_SEED_SIZE];
		} clone;
		struct {
			const char *tag;
		} warm;
		struct {
			uint32_t bytes;
		} credit;
		struct {
			uint32_t id;
			uint16_t rows, cols;
		} winsize;
		struct {
			uint32_t id;
			const uint8_t *data;
			uint32_t len;
		} exec_stdin;
		struct {
			uint32_t id, bytes;
		} exec_credit;
		struct {
			uint32_t id, bytes, frames;
		} exec_out_credit;
		struct {
			uint32_t id, signo;
		} exec_signal;
		struct {
			const char *name;
			uint8_t found;
			uint64_t cpu_usec, cpu_user_usec, cpu_system_usec, memory, memory_max, pids, pids_max,
				oom_kills;
		} ctr_stats; /* CTR_STATS_REQ: name only */
		struct {
			const char *name;
			uint32_t cgroupc;
			const char *const *cgroup; /* CTR_UPDATE */
			int32_t errnum;            /* CTR_UPDATED */
			const char *text;
		} ctr_update;
	} u;
};

/* Backing storage of one decoded message.  Each str costs 4 + n bytes on the
 * wire and n + 1 here, a data chunk n and n + 1, so the payload bound bounds
 * `bytes`; the vectors hold argv and env plus their NULL terminators. */
struct qp_msg_store {
	char bytes[QP_PROTO_MAX_PAYLOAD + 1];
	const char *argv[QP_PROTO_MAX_STRV + 1];
	const char *env[QP_PROTO_MAX_STRV + 1];
	const char *mounts[QP_PROTO_MAX_MOUNTS + 1];
	const char *cgroup[QP_PROTO_MAX_CGROUP + 1];
	const char *routes[QP_PROTO_MAX_ROUTES + 1];
	const char *addrs6[QP_PROTO_MAX_ADDRS6 + 1];
};

#endif
