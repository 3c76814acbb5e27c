/* guest-init/channel.h — framing of the control-channel protocol
 * (protocol.h): encode and decode messages, and send/receive them on a file
 * descriptor with deadlines.  Used by both the host runtime and guest-init;
 * plain libc, errors in the util/error.h convention.
 *
 * Receiving is incremental so it fits a poll loop: qp_chan_fill() reads what
 * is there, qp_chan_next() hands out complete messages.  qp_chan_recv()
 * combines them with a timeout.  A malformed frame leaves the channel
 * unusable (the stream position is lost); the caller closes it.
 */
#ifndef QPOD_CHANNEL_H
#define QPOD_CHANNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "guest-init/protocol.h"
#include "util/error.h"

/* HELLO's seed_check of a CLONE's seed (never 0): the guest reports it of
 * the bytes it added, the host compares it with the seed it sent. */
uint32_t qp_seed_check(const uint8_t seed[QP_PROTO_SEED_SIZE]);

/* Name of a message type ("HELLO", ...), "unknown" for others. */
const char *qp_msg_type_name(uint16_t type);
/* Which side may send `type` (enum qp_sender), 0 if the type is unknown. */
int qp_msg_sender(uint16_t type);

/* One entry of RUN's mounts (protocol.h), parsed and checked. */
enum qp_run_mount_kind { QP_RM_9P, QP_RM_9PFILE, QP_RM_TMPFS, QP_RM_POD, QP_RM_PODSHARE };
struct qp_run_mount {
	enum qp_run_mount_kind kind;
	char tag[QP_PROTO_MAX_TAG + 1]; /* 9p, 9pfile */
	char name[256];                 /* 9pfile: the file in the share; pod: the path in the pod share */
	char data[256];                 /* tmpfs options */
	char dest[1024];
	unsigned long flags;            /* MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC */
};
/* A name of one path component in the pod share (a container's directory). */
bool qp_proto_dir_name_ok(const char *name);
/* 0 and *out (may be NULL: just check), or -1 if malformed. */
int qp_run_mount_parse(const char *entry, struct qp_run_mount *out);
/* The entry for m into buf; -1 if it does not fit or m is not valid. */
int qp_run_mount_format(const struct qp_run_mount *m, char *buf, size_t size);

/* One entry of RUN's routes (protocol.h), parsed and checked: IPv4 (the
 * first 4 bytes of dst and gateway) or IPv6. */
struct qp_run_route {
	int family;                           /* AF_INET or AF_INET6 */
	uint8_t dst[16], prefix, gateway[16]; /* gateway all zero: on the link */
};
/* 0 and *out (may be NULL: just check), or -1 if malformed (host bits
 * past the prefix, or the two addresses of different families, included). */
int qp_run_route_parse(const char *entry, struct qp_run_route *out);
/* The entry for r into buf; -1 if it does not fit or r is not valid. */
int qp_run_route_format(const struct qp_run_route *r, char *buf, size_t size);
/* One entry of RUN's addrs6: "ADDR/PREFIX", a global IPv6 address. */
struct qp_run_addr6 {
	uint8_t addr[16], prefix;
};
int qp_run_addr6_parse(const char *entry, struct qp_run_addr6 *out);
int qp_run_addr6_format(const struct qp_run_addr6 *a, char *buf, size_t size);

/* Encode `m` as one frame into out[0..cap).  Returns the frame length, or -1
 * (QP_E_INVALID) if the message breaks a protocol bound or does not fit. */
ssize_t qp_msg_encode(const struct qp_msg *m, uint8_t *out, size_t cap, qp_error **err);

/* Decode and check a header (magic, version, known type, length bound).
 * Returns 0, or -1 with QP_E_GUEST. */
int qp_msg_decode_header(const uint8_t hdr[QP_PROTO_HDR_SIZE], struct qp_msg_hdr *h,
			 qp_error **err);
/* Decode one complete frame of exactly `len` bytes into *m; strings and data
 * are copied into *st.  Returns 0, or -1 with QP_E_GUEST. */
int qp_msg_decode(const uint8_t *frame, size_t len, struct qp_msg *m,
		  struct qp_msg_store *st, qp_error **err);
/* Refuse a message the given side may not send (QP_E_GUEST). */
int qp_msg_check_sender(const struct qp_msg *m, enum qp_sender from, qp_error **err);

/* One end of the channel.  Large (~200 KiB): allocate it, or make it static. */
struct qp_chan {
	int fd;
	int broken;     /* set after a malformed frame, EOF or a read error */
	int not_socket; /* send() said ENOTSOCK: use write() */
	size_t start;   /* in[start..have) is buffered and not yet handed out */
	size_t have;
	uint8_t in[QP_PROTO_FRAME_MAX];
	uint8_t out[QP_PROTO_FRAME_MAX];
	struct qp_msg_store store;
};

/* Start using fd (not owned: qp_chan_free does not close it). */
void qp_chan_init(struct qp_chan *c, int fd);
/* Heap-allocated qp_chan; NULL with errno ENOMEM. */
struct qp_chan *qp_chan_new(int fd);
void qp_chan_free(struct qp_chan *c);

/* One read() of what is available (call when poll says POLLIN).  Returns the
 * number of bytes read (> 0), or -1: EOF ("peer closed"), read error, or a
 * buffer already full of an unfinished frame.  EAGAIN/EINTR return 0. */
ssize_t qp_chan_fill(struct qp_chan *c, qp_error **err);
/* Hand out the next complete buffered message: 1 and *m set (valid until the
 * next call), 0 if more bytes are needed, -1 if the buffered bytes are
 * malformed.  A bad header fails as soon as its 12 bytes are in. */
int qp_chan_next(struct qp_chan *c, struct qp_msg *m, qp_error **err);
/* Wait up to timeout_ms (>= 0; a deadline, not per read) for one message.
 * Returns 0, or -1: QP_E_TIMEOUT when the deadline passes (also mid-frame),
 * QP_E_GUEST for malformed input or EOF, other codes for I/O errors. */
int qp_chan_recv(struct qp_chan *c, struct qp_msg *m, int timeout_ms, qp_error **err);
/* Encode and write one whole message within timeout_ms (>= 0), coping with
 * short writes and non-blocking fds.  Returns 0 or -1 (QP_E_TIMEOUT, EPIPE...). */
int qp_chan_send(struct qp_chan *c, const struct qp_msg *m, int timeout_ms, qp_error **err);

/* Convenience for ERROR messages: text is cut to QP_PROTO_MAX_TEXT bytes and
 * newlines become spaces. */
int qp_chan_send_error(struct qp_chan *c, uint32_t code, int errnum, const char *text,
		       int timeout_ms, qp_error **err);

#endif
