/* runtime/report/write.c — writing one freshly measured report (qpod bench,
 * qpod density) in the format the user asked for: the JSON result itself, or
 * its CSV, table or markdown rendering. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "report/report.h"

int qp_report_write_one(struct qp_bench_report *r, const char *format, const char *path,
			const char *label, qp_error **err)
{
	const char *paths[] = { path ? path : label };
	struct qp_report_set set = { .n = 1, .reports = &r, .paths = paths };
	FILE *f = stdout;
	int ret;

	if (path && !(f = fopen(path, "we")))
		return qp_fail(err, errno, "open \"%s\"", path);
	if (!strcmp(format, "json"))
		ret = qp_bench_report_write_json(r, f, err);
	else if (!strcmp(format, "csv"))
		ret = qp_report_csv(&set, f, err);
	else
		ret = qp_report_text(&set, !strcmp(format, "markdown"), f, err);
	if (path && fclose(f) != 0 && ret == 0)
		ret = qp_fail(err, errno, "write \"%s\"", path);
	return ret;
}
