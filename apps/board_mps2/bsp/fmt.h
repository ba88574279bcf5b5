/* tinyring board_mps2: a tiny formatter for console lines (no printf, no
 * heap). Conversions: %s, %d (int), %u (unsigned), %x (unsigned, 8 hex
 * digits), %f (double, 6 decimals, no exponent), %%. Always NUL-terminates;
 * returns the length written (truncated to len-1). */
#ifndef BOARD_FMT_H
#define BOARD_FMT_H

#include <stdarg.h>
#include <stddef.h>

int fmt_v(char *buf, size_t len, const char *fmt, va_list ap);
int fmt_s(char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* fmt_s into a static line buffer and out through board_puts. */
void board_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* BOARD_FMT_H */
