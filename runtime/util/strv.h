/* runtime/util/strv.h — NULL-terminated string vectors (argv, env, ...). */
#ifndef QPOD_STRV_H
#define QPOD_STRV_H

#include <stddef.h>

size_t qp_strv_len(char *const *v);   /* 0 for NULL */
void qp_strv_free(char **v);          /* frees each string and the vector */
char **qp_strv_dup(char *const *v);   /* deep copy; NULL on ENOMEM (or v NULL) */

#endif
