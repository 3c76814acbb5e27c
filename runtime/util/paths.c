/* runtime/util/paths.c — the lookup order of the files qpod ships beside
 * its binary (see paths.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/paths.h"

static char *if_file(char *p)
{
	struct stat st;

	if (p && stat(p, &st) == 0 && S_ISREG(st.st_mode))
		return p;
	free(p);
	return NULL;
}

/* "a/b" or "a/b/c" */
static char *joined(const char *a, const char *b, const char *c)
{
	char *p = NULL;
	return asprintf(&p, "%s/%s%s%s", a, b, c ? "/" : "", c ? c : "") < 0 ? NULL : p;
}

char *qp_find_shipped(const char *build_rel, const char *name, const char *extra)
{
	const char *dir = getenv("QPOD_EXE_DIR");
	char *p = NULL;

	if (dir && *dir == '/') {
		if (build_rel && (p = if_file(joined(dir, build_rel, NULL))))
			return p;
		if ((p = if_file(joined(dir, QP_LIBDIR_BESIDE_BIN, name))))
			return p;
	}
	if (extra && (p = if_file(strdup(extra))))
		return p;
	return if_file(joined(QP_LIBDIR_SYSTEM, name, NULL));
}

const char *qp_cache_dir(void)
{
	const char *c = getenv("QPOD_CACHE");
	return c && *c == '/' ? c : "/var/cache/qpod";
}
