/* runtime/util/error.h — qpod's one error convention.
 *
 * A function that can fail returns a negative value (-1) and, when `err` is
 * not NULL, fills *err with a heap-allocated qp_error: the errno that caused
 * it (0 if none), a qpod error code (QP_E_*, for callers such as the density
 * mode that must tell causes apart) and a message.  Callers that add context
 * call qp_error_prefix(), which prepends "context: " and returns -1, so an
 * error travels up as one line:
 *
 *     qpod: create: mount "/proc": Operation not permitted
 *
 * main() prints it with qp_error_print() and frees it.  A function never
 * prints and never exits on error; only main.c does.
 */
#ifndef QPOD_ERROR_H
#define QPOD_ERROR_H

#include <stdarg.h>

enum qp_error_code {
	QP_E_GENERIC = 1,
	QP_E_INVALID,     /* bad input: CLI, config file, guest message */
	QP_E_NOTFOUND,    /* unknown pod ID, missing file */
	QP_E_EXISTS,      /* pod ID already in use */
	QP_E_STATE,       /* operation not allowed in the pod's current state */
	QP_E_NOMEM,       /* allocation failure: ENOMEM/EAGAIN from fork, mmap, VMM */
	QP_E_TAPLIMIT,    /* tap device could not be created */
	QP_E_BRIDGEFULL,  /* bridge cannot take another port */
	QP_E_SUBNETFULL,  /* IPAM subnet exhausted */
	QP_E_ADDRINUSE,   /* requested address already allocated */
	QP_E_TIMEOUT,     /* a peer (guest, child) did not answer in time */
	QP_E_GUEST,       /* a guest sent something malformed */
	QP_E_EXEC,        /* the workload could not be executed */
	QP_E_NOTRUNNING,  /* runc's "container not running": exit status 1, as runc's */
};

typedef struct qp_error {
	int errnum;   /* errno, or 0 */
	int code;     /* enum qp_error_code */
	char *msg;    /* full message, without the "qpod: " prefix */
} qp_error;

/* Fill *err (if err != NULL) and return -1.  errnum != 0 appends ": strerror". */
int qp_error_set(qp_error **err, int code, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Shorthand: QP_E_GENERIC with errno-based code mapping (ENOMEM -> QP_E_NOMEM). */
int qp_fail(qp_error **err, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Prepend "context: " to an existing error; returns -1. Safe if *err is NULL. */
int qp_error_prefix(qp_error **err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void qp_error_free(qp_error **err);

/* A printable, bounded copy of hostile text for an error message: at most 48
 * characters, non-printables and '"' as '?', "..." when cut. buf holds
 * QP_SHOWN_MAX bytes. */
#define QP_SHOWN_MAX (48 + 4)
const char *qp_shown(const char *s, char buf[QP_SHOWN_MAX]);
/* Print "qpod: MSG" to stderr (and the log), return an exit code (1). */
int qp_error_print(qp_error *err);

#endif
