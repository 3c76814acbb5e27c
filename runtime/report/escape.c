/* runtime/report/escape.c — hostile text out: each output format's escaping.
 * Strings from result files are valid UTF-8 (yajl checks), but may hold
 * control characters (terminal escapes), markup, and the non-characters
 * U+FFFE/U+FFFF that XML forbids; all of those are neutralised here. */
#include <string.h>

#include "report/report.h"

static bool is_control(unsigned char c)
{
	return c < 0x20 || c == 0x7f;
}

/* U+FFFE and U+FFFF (EF BF BE/BF): not allowed in XML */
static bool is_xml_nonchar(const char *p)
{
	return (unsigned char)p[0] == 0xef && (unsigned char)p[1] == 0xbf &&
	       ((unsigned char)p[2] == 0xbe || (unsigned char)p[2] == 0xbf);
}

void qp_put_xml(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default:
			if (is_xml_nonchar(s)) {
				fputc('?', f);
				s += 2;
			} else {
				fputc(is_control((unsigned char)*s) ? '?' : *s, f);
			}
		}
	}
}

void qp_put_xml_lines(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		char one[2] = { *s, '\0' };
		if (*s == '\n')
			fputc('\n', f);
		else
			qp_put_xml(f, one);
	}
}

void qp_put_plain(FILE *f, const char *s)
{
	for (; s && *s; s++)
		fputc(is_control((unsigned char)*s) ? '?' : *s, f);
}

void qp_put_markdown(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		if (strchr("|\\*_`<[]", *s))
			fputc('\\', f);
		fputc(is_control((unsigned char)*s) ? '?' : *s, f);
	}
}

void qp_put_csv(FILE *f, const char *s)
{
	if (!s)
		return;
	/* a leading = + - @ would be a formula to a spreadsheet: quote and prefix */
	bool formula = strchr("=+-@", *s) && *s && !(*s == '-' && s[1] >= '0' && s[1] <= '9');
	if (!formula && !strpbrk(s, ",\"\r\n")) {
		qp_put_plain(f, s);
		return;
	}
	fputc('"', f);
	if (formula)
		fputc('\'', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(is_control((unsigned char)*s) ? '?' : *s, f);
	}
	fputc('"', f);
}

size_t qp_text_width(const char *s)
{
	size_t n = 0;

	for (; s && *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}
