/* runtime/report/csv.c — one CSV row per result, with a header line.
 * Statistics are rounded as in the tables (at most two decimals,
 * qp_report_round; the JSON result keeps every digit); a result without
 * samples has empty statistics; the last column is a peer's reason. */
#include "report/report.h"

static const char *const columns[] = { "file", "scenario", "mode", "accel", "name", "target",
				       "test", "metric", "unit", "n", "min", "max", "avg", "median", "reason" };

static int result_row(FILE *out, const char *path, const struct qp_bench_report *r,
		      const struct qp_bench_result *res, qp_error **err)
{
	const char *text[] = { path, r->scenario, r->mode, r->accel, res->name, res->target,
			       res->test, res->metric, res->unit };
	struct qp_bench_stats st;
	char num[32];

	for (size_t k = 0; k < sizeof(text) / sizeof(text[0]); k++) {
		qp_put_csv(out, text[k]);
		fputc(',', out);
	}
	fprintf(out, "%zu", res->n);
	if (res->n && qp_bench_stats(res->samples, res->n, &st, err) < 0)
		return -1;
	const double vals[] = { st.min, st.max, st.avg, st.median };
	for (size_t k = 0; k < sizeof(vals) / sizeof(vals[0]); k++) {
		fputc(',', out);
		if (res->n) {
			qp_report_round(vals[k], num);
			fputs(num, out);
		}
	}
	fputc(',', out);
	qp_put_csv(out, res->reason); /* a peer not measured: why */
	fputc('\n', out);
	return 0;
}

int qp_report_csv(const struct qp_report_set *set, FILE *out, qp_error **err)
{
	for (size_t k = 0; k < sizeof(columns) / sizeof(columns[0]); k++)
		fprintf(out, "%s%s", k ? "," : "", columns[k]);
	fputc('\n', out);
	for (size_t i = 0; i < set->n; i++)
		for (size_t j = 0; j < set->reports[i]->n_results; j++)
			if (result_row(out, set->paths[i], set->reports[i], set->reports[i]->results[j],
				       err) < 0)
				return -1;
	return 0;
}
