/* runtime/util/report.h — the one-line report a forked helper process
 * sends its parent over a pipe: "ok REST\n" or "err CODE ERRNO TEXT\n".
 * Used by the VM monitor (boot result), detached VM execs (started) and
 * the density workers (pod started).  The reader treats the line as
 * hostile-ish: bounded, one line, numbers range-checked. */
#ifndef QPOD_UTIL_REPORT_H
#define QPOD_UTIL_REPORT_H

#include <stddef.h>
#include <sys/types.h>

#include "util/error.h"

#define QP_REPORT_MAX 512

/* "ok " + printf text, one line (newlines in it become spaces).  -1 if
 * the line could not be written (the reader is gone: nobody to tell). */
int qp_report_ok(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "err CODE ERRNO MESSAGE" from e (NULL: QP_E_GENERIC, 0, fallback). */
int qp_report_err(int fd, const qp_error *e, const char *fallback);

/* fork() with a report pipe: in the child (return 0) *fd is the write
 * end; in the parent (return the pid) *fd is the read end.  -1 with an
 * error naming `what` if the pipe or the fork failed. */
pid_t qp_report_fork(int *fd, const char *what, qp_error **err);

/* Parse a line read from such a pipe (NUL-terminated, newline stripped or
 * not).  "ok": returns 0 and *rest points after "ok " in line.  "err":
 * returns -1 with the error rebuilt (code, errno, text).  Anything else
 * (nothing, a crash): -1 with QP_E_GENERIC and `none` as text. */
int qp_report_parse(char *line, const char **rest, const char *none, qp_error **err);

/* Read one report line from fd (blocking until a newline, EOF or
 * timeout_ms; < 0 = no limit) into buf. Returns the length, 0 on EOF
 * without data, -1 on timeout. */
int qp_report_read(int fd, int timeout_ms, char *buf, size_t size);

#endif
