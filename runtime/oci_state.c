/* runtime/oci_state.c — the OCI state object (see oci_state.h). */
#include <errno.h>

#include "oci_state.h"
#include "util/json.h"

void qp_oci_state_put(yajl_gen g, const struct qp_oci_state *s, bool omit_zero_pid)
{
	qp_json_kstr(g, "ociVersion", QP_OCI_VERSION);
	qp_json_kstr(g, "id", s->id);
	qp_json_kstr(g, "status", qp_status_name(s->status));
	if (s->pid || !omit_zero_pid)
		qp_json_kint(g, "pid", s->pid);
	qp_json_kstr(g, "bundle", s->bundle);
	qp_state_put_annotations(g, "annotations", s->annotations, s->n_annotations);
}

int qp_oci_state_json(const struct qp_oci_state *s, char **out, size_t *len, qp_error **err)
{
	yajl_gen g = qp_json_gen_new(false);

	if (!g)
		return qp_fail(err, ENOMEM, "the OCI state");
	yajl_gen_map_open(g);
	qp_oci_state_put(g, s, true);
	yajl_gen_map_close(g);
	return qp_json_gen_finish(g, out, len, err);
}
