/* runtime/util/log.h — logging: stderr for people, and an optional --log FILE
 * in text or JSON lines ({"level":..,"msg":..,"time":..}, the form containerd
 * reads from OCI runtimes). Errors always reach stderr as "qpod: MSG". */
#ifndef QPOD_LOG_H
#define QPOD_LOG_H

enum qp_log_level { QP_LOG_ERROR, QP_LOG_WARN, QP_LOG_INFO, QP_LOG_DEBUG };

/* path may be NULL (stderr only). json: 1 for JSON lines. Returns -1 on error. */
int qp_log_init(const char *path, int json, int debug);
void qp_log(enum qp_log_level lvl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define qp_debug(...) qp_log(QP_LOG_DEBUG, __VA_ARGS__)
#define qp_warn(...) qp_log(QP_LOG_WARN, __VA_ARGS__)

#endif
