/* tinyring board_mps2: see fmt.h. */
#include <stdint.h>
#include "fmt.h"
#include "board.h"

struct out {
    char  *buf;
    size_t len, pos;
};

static void put(struct out *o, char c)
{
    if (o->pos + 1 < o->len)
        o->buf[o->pos] = c;
    o->pos++;
}

static void put_u(struct out *o, unsigned long v, unsigned base, int width)
{
    char d[24];
    int n = 0;
    do {
        d[n++] = "0123456789abcdef"[v % base];
        v /= base;
    } while (v);
    while (n < width)
        d[n++] = '0';
    while (n)
        put(o, d[--n]);
}

static void put_f(struct out *o, double v)
{
    unsigned long ip, fp;
    if (v != v) {
        put(o, 'n'); put(o, 'a'); put(o, 'n');
        return;
    }
    if (v < 0) {
        put(o, '-');
        v = -v;
    }
    if (v >= 4e9) {
        put(o, 'i'); put(o, 'n'); put(o, 'f');
        return;
    }
    ip = (unsigned long)v;
    fp = (unsigned long)((v - (double)ip) * 1e6 + 0.5);
    if (fp >= 1000000ul) {
        ip++;
        fp -= 1000000ul;
    }
    put_u(o, ip, 10, 1);
    put(o, '.');
    put_u(o, fp, 10, 6);
}

int fmt_v(char *buf, size_t len, const char *f, va_list ap)
{
    struct out o;
    o.buf = buf;
    o.len = len;
    o.pos = 0;
    for (; *f; f++) {
        if (*f != '%') {
            put(&o, *f);
            continue;
        }
        switch (*++f) {
        case 's': {
            const char *s = va_arg(ap, const char *);
            while (*s)
                put(&o, *s++);
            break;
        }
        case 'd': {
            int v = va_arg(ap, int);
            if (v < 0) {
                put(&o, '-');
                put_u(&o, 0ul - (unsigned long)v, 10, 1);
            } else {
                put_u(&o, (unsigned long)v, 10, 1);
            }
            break;
        }
        case 'u':
            put_u(&o, va_arg(ap, unsigned), 10, 1);
            break;
        case 'x':
            put_u(&o, va_arg(ap, unsigned), 16, 8);
            break;
        case 'f':
            put_f(&o, va_arg(ap, double));
            break;
        case '\0':
            f--;
            break;
        default:
            put(&o, *f);
            break;
        }
    }
    if (len)
        buf[o.pos < len ? o.pos : len - 1] = '\0';
    return (int)(o.pos < len ? o.pos : (len ? len - 1 : 0));
}

int fmt_s(char *buf, size_t len, const char *f, ...)
{
    va_list ap;
    int n;
    va_start(ap, f);
    n = fmt_v(buf, len, f, ap);
    va_end(ap);
    return n;
}

void board_printf(const char *f, ...)
{
    static char line[256];
    va_list ap;
    va_start(ap, f);
    fmt_v(line, sizeof line, f, ap);
    va_end(ap);
    board_puts(line);
}
