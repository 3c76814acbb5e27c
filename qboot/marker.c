/* qboot/marker.c — the firmware's only output: the marker port.  The reset
 * and jump markers are single bytes written by the assembly (reset.S,
 * jump.S); this file writes the error line of fw_fail(). */
#include <stdarg.h>

#include "io.h"
#include "layout.h"
#include "lib.h"

static void put(char c) { outb(MARK_PORT, (uint8_t)c); }

static void put_str(const char *s)
{
	for (; *s; s++)
		put(*s);
}

static void put_num(uint32_t v, unsigned base)
{
	char digits[12];
	int n = 0;

	do {
		digits[n++] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v);
	while (n)
		put(digits[--n]);
}

void fw_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	put(MARK_ERROR);
	for (; *fmt; fmt++) {
		if (*fmt != '%' || !fmt[1]) {
			put(*fmt == '\n' ? ' ' : *fmt);
			continue;
		}
		switch (*++fmt) {
		case 's': put_str(va_arg(ap, const char *)); break;
		case 'x': put_str("0x"); put_num(va_arg(ap, uint32_t), 16); break;
		case 'u': put_num(va_arg(ap, uint32_t), 10); break;
		default: put(*fmt);
		}
	}
	va_end(ap);
	put('\n');
	stop_vm();
}
