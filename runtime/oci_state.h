/* runtime/oci_state.h — the OCI state object (runtime-spec runtime.md
 * "State"): ociVersion, id, status, pid, bundle, annotations.  One writer
 * for what `qpod state` prints and what every hook reads on its stdin. */
#ifndef QPOD_OCI_STATE_H
#define QPOD_OCI_STATE_H

#include <stdbool.h>
#include <sys/types.h>
#include <yajl/yajl_gen.h>

#include "spec/spec.h"
#include "state.h"
#include "util/error.h"

#define QP_OCI_VERSION "1.2.0"

struct qp_oci_state {
	const char *id;
	enum qp_status status;        /* QP_STATUS_CREATING is "creating" */
	pid_t pid;                    /* 0: none */
	const char *bundle;           /* absolute */
	const struct qp_kv *annotations;
	size_t n_annotations;
};

/* The state's keys into the map open in g.  A pid of 0 is written as 0
 * (runc's `state` does so for a stopped container) unless omit_zero_pid
 * (the spec's state, where pid is only there while the process is). */
void qp_oci_state_put(yajl_gen g, const struct qp_oci_state *s, bool omit_zero_pid);
/* The whole object as compact JSON text, pid omitted when 0 (hooks' stdin). */
int qp_oci_state_json(const struct qp_oci_state *s, char **out, size_t *len, qp_error **err);

#endif
