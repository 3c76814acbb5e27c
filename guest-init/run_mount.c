/* guest-init/run_mount.c — RUN's mount entries (channel.h): one text line
 * per mount, parsed and formatted with every field checked. */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>

#include "guest-init/channel.h"

static const struct {
	const char *name;
	unsigned long flag;
} rm_flags[] = { { "ro", MS_RDONLY }, { "nosuid", MS_NOSUID }, { "nodev", MS_NODEV }, { "noexec", MS_NOEXEC } };

static bool rm_dest_ok(const char *d)
{
	size_t n = strlen(d);

	if (d[0] != '/' || n < 2 || n >= sizeof(((struct qp_run_mount *)0)->dest))
		return false;
	for (const char *p = d; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return false;
	/* no ".." component */
	for (const char *p = d; (p = strstr(p, "..")); p += 2)
		if (p[-1] == '/' && (p[2] == '/' || p[2] == '\0'))
			return false;
	return true;
}

static bool rm_tag_ok(const char *t, size_t n)
{
	if (!n || n > QP_PROTO_MAX_TAG)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)t[i]) && t[i] != '_')
			return false;
	return true;
}

int qp_run_mount_parse(const char *entry, struct qp_run_mount *out)
{
	struct qp_run_mount m = { 0 };
	char buf[2048], *f[4], *save = NULL, *p = buf;
	int n = 0;

	if (strlen(entry) >= sizeof(buf))
		return -1;
	strcpy(buf, entry);
	/* exactly four tab-separated fields (empty ones allowed) */
	for (f[n++] = p; *p; p++)
		if (*p == '\t') {
			if (n == 4)
				return -1;
			*p = '\0';
			f[n++] = p + 1;
		}
	if (n != 4 || !rm_dest_ok(f[2]))
		return -1;
	snprintf(m.dest, sizeof(m.dest), "%s", f[2]);
	for (char *o = strtok_r(f[3], ",", &save); o; o = strtok_r(NULL, ",", &save)) {
		size_t k = 0;
		while (k < sizeof(rm_flags) / sizeof(rm_flags[0]) && strcmp(o, rm_flags[k].name))
			k++;
		if (k == sizeof(rm_flags) / sizeof(rm_flags[0]))
			return -1;
		m.flags |= rm_flags[k].flag;
	}
	if (!strcmp(f[0], "9p")) {
		m.kind = QP_RM_9P;
		if (!rm_tag_ok(f[1], strlen(f[1])))
			return -1;
		snprintf(m.tag, sizeof(m.tag), "%s", f[1]);
	} else if (!strcmp(f[0], "9pfile")) {
		char *slash = strchr(f[1], '/');
		m.kind = QP_RM_9PFILE;
		if (!slash || !rm_tag_ok(f[1], (size_t)(slash - f[1])) || !slash[1] || strchr(slash + 1, '/') ||
		    !strcmp(slash + 1, "..") || !strcmp(slash + 1, ".") || strlen(slash + 1) >= sizeof(m.name))
			return -1;
		*slash = '\0';
		snprintf(m.tag, sizeof(m.tag), "%s", f[1]);
		snprintf(m.name, sizeof(m.name), "%s", slash + 1);
	} else if (!strcmp(f[0], "pod")) {
		/* 1..3 components, each a plain name */
		char path[256], *save2 = NULL;
		int k = 0;
		m.kind = QP_RM_POD;
		if (strlen(f[1]) >= sizeof(path) || strstr(f[1], "//") || f[1][0] == '/' || !f[1][0] ||
		    f[1][strlen(f[1]) - 1] == '/')
			return -1;
		snprintf(m.name, sizeof(m.name), "%s", f[1]);
		strcpy(path, f[1]);
		for (char *c = strtok_r(path, "/", &save2); c; c = strtok_r(NULL, "/", &save2))
			if (++k > 3 || !qp_proto_dir_name_ok(c))
				return -1;
	} else if (!strcmp(f[0], "podshare")) {
		m.kind = QP_RM_PODSHARE;
		if (!rm_tag_ok(f[1], strlen(f[1])) || strcmp(f[2], QP_PROTO_POD_DEST) || m.flags)
			return -1;
		snprintf(m.tag, sizeof(m.tag), "%s", f[1]);
	} else if (!strcmp(f[0], "tmpfs")) {
		m.kind = QP_RM_TMPFS;
		if (strlen(f[1]) >= sizeof(m.data) || strchr(f[1], '\t'))
			return -1;
		snprintf(m.data, sizeof(m.data), "%s", f[1]);
	} else {
		return -1;
	}
	if (out)
		*out = m;
	return 0;
}

int qp_run_mount_format(const struct qp_run_mount *m, char *buf, size_t size)
{
	char flags[64] = "", src[QP_PROTO_MAX_TAG + 260];
	size_t fl = 0;
	int n;

	for (size_t k = 0; k < sizeof(rm_flags) / sizeof(rm_flags[0]); k++)
		if (m->flags & rm_flags[k].flag)
			fl += (size_t)snprintf(flags + fl, sizeof(flags) - fl, "%s%s", fl ? "," : "", rm_flags[k].name);
	static const char *const kinds[] = { [QP_RM_9P] = "9p", [QP_RM_9PFILE] = "9pfile", [QP_RM_TMPFS] = "tmpfs",
					     [QP_RM_POD] = "pod", [QP_RM_PODSHARE] = "podshare" };
	if (m->kind == QP_RM_9PFILE)
		snprintf(src, sizeof(src), "%s/%s", m->tag, m->name);
	else if (m->kind == QP_RM_POD)
		snprintf(src, sizeof(src), "%s", m->name);
	else
		snprintf(src, sizeof(src), "%s", m->kind == QP_RM_TMPFS ? m->data : m->tag);
	if ((unsigned)m->kind >= sizeof(kinds) / sizeof(kinds[0]))
		return -1;
	n = snprintf(buf, size, "%s\t%s\t%s\t%s", kinds[m->kind], src, m->dest, flags);
	if (n < 0 || (size_t)n >= size)
		return -1;
	return qp_run_mount_parse(buf, NULL);
}
