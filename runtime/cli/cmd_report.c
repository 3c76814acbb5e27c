/* runtime/cli/cmd_report.c — `qpod report [--format F] [--output PATH] FILE…`:
 * render result files (result/result.h) as a table, markdown, CSV, SVG
 * charts or an HTML page (report/report.h). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/io.h"
#include "result/result.h"
#include "cli/cli.h"
#include "report/report.h"
#include "util/cleanup.h"

static const char usage[] =
	"Usage: qpod report [--format table|markdown|csv|svg|html] [--output PATH] FILE...\n"
	"Render result files of `qpod bench` / `qpod density` (--format json).\n\n"
	"  -f, --format table aligned columns for a terminal (default)\n"
	"           markdown  the same tables in markdown\n"
	"           csv       one row per result, with a header line\n"
	"           svg       one SVG file per chart; needs --output DIR (created if\n"
	"                     missing); prints the files written\n"
	"           html      one self-contained page: tables, host, inline SVG charts\n"
	"  -o, --output PATH  write to PATH instead of stdout (svg: a directory)\n";

static const char *const formats[] = { "table", "markdown", "csv", "svg", "html", NULL };

static int write_file(const char *path, const char *data, size_t len, qp_error **err)
{
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0644);

	if (fd < 0 || qp_write_all(fd, data, len) < 0)
		return qp_fail(err, errno, "write \"%s\"", path);
	return 0;
}

static int write_svgs(const struct qp_report_set *set, const char *dir, qp_error **err)
{
	static const char decl[] = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
	struct qp_charts charts;
	int ret = 0;

	if (!dir)
		return qp_error_set(err, QP_E_INVALID, 0, "--format svg needs --output DIR (one file per chart)");
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return qp_fail(err, errno, "mkdir \"%s\"", dir);
	if (qp_report_charts(set, &charts, err) < 0)
		return -1;
	if (!charts.n)
		ret = qp_error_set(err, QP_E_INVALID, 0, "no chart to draw: no result has samples");
	for (size_t i = 0; ret == 0 && i < charts.n; i++) {
		_cleanup_free_ char *path = NULL, *text = NULL;
		if (asprintf(&path, "%s/%s.svg", dir, charts.v[i].slug) < 0 ||
		    asprintf(&text, "%s%s", decl, charts.v[i].svg) < 0) {
			ret = qp_fail(err, ENOMEM, "svg");
			break;
		}
		ret = write_file(path, text, strlen(text), err);
		if (ret == 0)
			printf("%s\n", path);
	}
	qp_charts_free(&charts);
	return ret;
}

/* Render the textual formats into memory, then write it all at once: an
 * error leaves no half-written output. */
static int render(const struct qp_report_set *set, const char *format, const char *output,
		  qp_error **err)
{
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;
	FILE *f;
	int r;

	if (!strcmp(format, "svg"))
		return write_svgs(set, output, err);
	if (!(f = open_memstream(&buf, &len)))
		return qp_fail(err, errno, "render");
	if (!strcmp(format, "csv"))
		r = qp_report_csv(set, f, err);
	else if (!strcmp(format, "html"))
		r = qp_report_html(set, f, err);
	else
		r = qp_report_text(set, !strcmp(format, "markdown"), f, err);
	if (fclose(f) != 0 && r == 0)
		r = qp_fail(err, ENOMEM, "render");
	if (r < 0)
		return -1;
	if (output)
		return write_file(output, buf, len, err);
	if (fwrite(buf, 1, len, stdout) != len || fflush(stdout) == EOF)
		return qp_fail(err, errno, "write to stdout");
	return 0;
}

const struct option cli_opts_report[] = { { "format", required_argument, NULL, 'f' },
				      { "output", required_argument, NULL, 'o' },
				      { "help", no_argument, NULL, 'h' }, { 0 } };

int cmd_report(struct qp_cli *cli, int argc, char **argv, qp_error **err)
{
	const struct option *opts = cli_opts_report;
	const char *format = "table", *output = NULL;
	struct qp_report_set set = { 0 };
	char shown[QP_SHOWN_MAX];
	int c, r = 0;

	while ((c = getopt_long(argc, argv, "+f:o:h", opts, NULL)) != -1) {
		if (c == 'h') {
			fputs(usage, stdout);
			return 0;
		} else if (c == 'f') {
			format = optarg;
		} else if (c == 'o' && *optarg) {
			output = optarg;
		} else {
			return qp_error_set(err, QP_E_INVALID, 0, "report: bad option \"%s\" (see qpod report --help)",
					    qp_shown(argv[optind - 1], shown));
		}
	}
	if (!qp_bench_one_of(format, formats))
		return qp_error_set(err, QP_E_INVALID, 0,
				    "report: --format must be table, markdown, csv, svg or html, not \"%s\"",
				    qp_shown(format, shown));
	if (optind >= argc)
		return qp_error_set(err, QP_E_INVALID, 0, "report: no result file given (see qpod report --help)");
	set.paths = (const char **)argv + optind;
	set.reports = calloc((size_t)(argc - optind), sizeof(*set.reports));
	if (!set.reports)
		return qp_fail(err, ENOMEM, "report");
	for (; set.n < (size_t)(argc - optind); set.n++)
		if ((r = qp_bench_report_read_json(set.paths[set.n], &set.reports[set.n], err)) < 0)
			break;
	if (r == 0)
		r = render(&set, format, output, err);
	for (size_t i = 0; i < set.n; i++)
		qp_bench_report_free(set.reports[i]);
	free(set.reports);
	return r < 0 ? qp_error_prefix(err, "report") : 0;
}
