/* runtime/report/svg.c — SVG primitives (svg.h). */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report/svg.h"
#include "util/cleanup.h"

static const char *const palette[] = { "#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
				       "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac" };

const char *qp_svg_color(size_t i)
{
	return palette[i % QP_ARRAY_SIZE(palette)];
}

int qp_svg_begin(struct qp_svg *s, double w, double h, const char *title, qp_error **err)
{
	memset(s, 0, sizeof(*s));
	s->f = open_memstream(&s->buf, &s->len);
	if (!s->f)
		return qp_fail(err, errno, "chart");
	s->w = w;
	s->h = h;
	fprintf(s->f,
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
		"viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" role=\"img\">\n<title>",
		w, h, w, h);
	qp_put_xml(s->f, title);
	fprintf(s->f, "</title>\n<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"#ffffff\"/>\n",
		w, h);
	fprintf(s->f, "<text x=\"%.1f\" y=\"24\" text-anchor=\"middle\" font-size=\"16\">", w / 2);
	qp_put_xml(s->f, title); /* titles are ours, and never cut */
	fputs("</text>\n", s->f);
	return 0;
}

int qp_svg_end(struct qp_svg *s, struct qp_charts *out, const char *slug, const char *title,
	       const char *caption, qp_error **err)
{
	struct qp_chart *v;
	int bad;

	fputs("</svg>\n", s->f);
	bad = ferror(s->f);
	fclose(s->f);
	s->f = NULL;
	_cleanup_free_ char *svg = steal_ptr(&s->buf);
	if (bad || !svg)
		return qp_fail(err, ENOMEM, "chart");
	v = reallocarray(out->v, out->n + 1, sizeof(*v));
	if (!v)
		return qp_fail(err, ENOMEM, "chart");
	out->v = v;
	v = &out->v[out->n];
	v->slug = strdup(slug);
	v->title = strdup(title);
	v->caption = strdup(caption);
	v->svg = steal_ptr(&svg);
	out->n++; /* counted first, so qp_charts_free() releases a half-made entry */
	if (!v->slug || !v->title || !v->caption)
		return qp_fail(err, ENOMEM, "chart");
	return 0;
}

int qp_svg_abort(struct qp_svg *s)
{
	if (s->f)
		fclose(s->f);
	free(s->buf);
	memset(s, 0, sizeof(*s));
	return -1;
}

void qp_svg_rect(struct qp_svg *s, double x, double y, double w, double h, const char *fill,
		 const char *tip)
{
	fprintf(s->f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"", x, y,
		w > 0 ? w : 0, h > 0 ? h : 0, fill);
	if (!tip) {
		fputs("/>\n", s->f);
		return;
	}
	fputs("><title>", s->f);
	qp_put_xml(s->f, tip);
	fputs("</title></rect>\n", s->f);
}

void qp_svg_line(struct qp_svg *s, double x1, double y1, double x2, double y2, const char *stroke,
		 double width)
{
	fprintf(s->f,
		"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"%.1f\"/>\n",
		x1, y1, x2, y2, stroke, width);
}

void qp_svg_text(struct qp_svg *s, double x, double y, const char *anchor, double size,
		 const char *text)
{
	fprintf(s->f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" font-size=\"%.0f\" fill=\"#222222\">",
		x, y, anchor, size);
	/* long hostile labels would run over the plot: cut at 40 characters */
	if (qp_text_width(text) > 40) {
		char cut[160];
		size_t i = 0, chars = 0;
		for (; text[i] && i < sizeof(cut) - 4; i++) {
			if (((unsigned char)text[i] & 0xc0) != 0x80 && ++chars > 38)
				break;
			cut[i] = text[i];
		}
		memcpy(cut + i, "...", 4);
		qp_put_xml(s->f, cut);
	} else {
		qp_put_xml(s->f, text);
	}
	fputs("</text>\n", s->f);
}

void qp_svg_legend(struct qp_svg *s, double x, double y, const char *const *labels, size_t n)
{
	double x0 = x;

	for (size_t i = 0; i < n; i++) {
		double w = 24 + 7.0 * (double)(qp_text_width(labels[i]) < 40 ? qp_text_width(labels[i]) : 40);
		if (x + w > s->w - 10 && x > x0) {
			x = x0;
			y += 18;
		}
		qp_svg_rect(s, x, y - 10, 12, 12, qp_svg_color(i), NULL);
		qp_svg_text(s, x + 16, y, "start", 12, labels[i]);
		x += w + 12;
	}
}

double qp_svg_nice_max(double v)
{
	static const double steps[] = { 1, 2, 2.5, 5, 10 };
	double p = 1;

	if (!(v > 0))
		return 1;
	/* the power of ten p <= v < 10p, without libm */
	while (p * 10 <= v)
		p *= 10;
	while (p > v)
		p /= 10;
	for (size_t i = 0; i < QP_ARRAY_SIZE(steps); i++)
		if (steps[i] * p >= v)
			return steps[i] * p;
	return 10 * p;
}

double qp_svg_x(const struct qp_svg *s, double v, double max)
{
	double span = s->w - QP_SVG_PLOT_X - QP_SVG_PLOT_RIGHT;
	return QP_SVG_PLOT_X + span * (v > 0 ? v : 0) / max;
}

void qp_svg_xaxis(struct qp_svg *s, double max, double y0, double y1, const char *unit)
{
	char label[48];

	for (int i = 0; i <= 5; i++) {
		double v = max * i / 5, x = qp_svg_x(s, v, max);
		qp_svg_line(s, x, y0, x, y1, i ? "#dddddd" : "#444444", 1);
		snprintf(label, sizeof(label), "%g", v);
		qp_svg_text(s, x, y1 + 16, "middle", 11, label);
	}
	/* the unit is the axis' title, centred under the tick labels (after
	 * the last tick it read as part of it: "1000ms") */
	qp_svg_text(s, qp_svg_x(s, max / 2, max), y1 + QP_SVG_AXIS_TITLE_DY, "middle", 11, unit);
}

char *qp_svg_slug(size_t idx, const char *suffix)
{
	char *slug = NULL;

	if (asprintf(&slug, "%zu-%s", idx, suffix) < 0)
		return NULL;
	for (char *p = slug; *p; p++)
		if (!islower((unsigned char)*p) && !isdigit((unsigned char)*p) && *p != '-' && *p != '_')
			*p = '_';
	if (strlen(slug) > 64)
		slug[64] = '\0';
	return slug;
}
