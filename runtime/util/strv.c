/* runtime/util/strv.c — see strv.h. */
#include <stdlib.h>
#include <string.h>

#include "util/strv.h"

size_t qp_strv_len(char *const *v)
{
	size_t n = 0;
	while (v && v[n])
		n++;
	return n;
}

void qp_strv_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

char **qp_strv_dup(char *const *v)
{
	size_t n = qp_strv_len(v);
	char **out;

	if (!v)
		return NULL;
	out = calloc(n + 1, sizeof(*out));
	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (!(out[i] = strdup(v[i]))) {
			qp_strv_free(out);
			return NULL;
		}
	return out;
}
