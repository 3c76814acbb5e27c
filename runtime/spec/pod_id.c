/* runtime/spec/pod_id.c — what a pod ID may be: a directory name, a cgroup
 * name and a word in log lines (state.c's IDs, and the pod IDs a spec names:
 * qpod.pod, a CRI sandbox's). */
#include <ctype.h>
#include <string.h>

#include "spec/spec.h"

int spec_validate_pod_id(const char *id, qp_error **err)
{
	size_t n;

	if (!id || !*id)
		return qp_error_set(err, QP_E_INVALID, 0, "invalid pod ID: empty");
	n = strnlen(id, QP_ID_MAX + 1);
	if (n > QP_ID_MAX)
		return qp_error_set(err, QP_E_INVALID, 0, "invalid pod ID: longer than %d bytes",
				    QP_ID_MAX);
	/* a leading '.' is reserved for qpod's own entries in the root (.net) */
	if (id[0] == '.' || id[0] == '-')
		return qp_error_set(err, QP_E_INVALID, 0, "invalid pod ID: must not start with '%c'",
				    id[0]);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)id[i];
		/* The ID names a directory, a cgroup and log lines: keep it to a
		 * conservative printable set so it can never traverse or inject. */
		if (!(isalnum(c) || strchr("_.+-:@", c)))
			return qp_error_set(err, QP_E_INVALID, 0,
					    "invalid pod ID: character 0x%02x at offset %zu "
					    "(allowed: letters, digits, _ . + - : @)", c, i);
	}
	return 0;
}
