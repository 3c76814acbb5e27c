/* runtime/util/timeline.c — see timeline.h. */
#include <stdio.h>
#include <stdlib.h>

#include "util/json.h"
#include "util/timeline.h"

long long qp_request_ns;

double qp_ms_between(long long a, long long b)
{
	return (double)(b - a) / 1e6;
}

int qp_timeline_json(const struct qp_phase *ph, size_t n, char **out, size_t *len)
{
	yajl_gen g = qp_json_gen_new(false);

	if (!g)
		return -1;
	yajl_gen_map_open(g);
	for (size_t i = 0; i < n; i++) {
		char num[32];
		int l = snprintf(num, sizeof(num), "%.3f", ph[i].ms);
		qp_json_key(g, ph[i].name);
		yajl_gen_number(g, num, (size_t)l);
	}
	yajl_gen_map_close(g);
	return qp_json_gen_finish(g, out, len, NULL);
}
