/* tinyring board_mps2: see args.h. */
#include "args.h"
#include "fmt.h"
#include "semihost.h"

static char line[BOARD_CMDLINE_BYTES];

int board_args(char **argv)
{
    int argc = 0;
    char *p = line;
    if (sh_cmdline(line, sizeof line) < 0) {
        board_printf("args: no command line, or longer than %u bytes\n",
                     (unsigned)sizeof line - 1u);
        return 0;
    }
    while (*p && argc < BOARD_MAX_ARGS) {
        while (*p == ' ')
            *p++ = '\0';
        if (!*p)
            break;
        argv[argc++] = p;
        while (*p && *p != ' ')
            p++;
    }
    return argc;
}

uint64_t board_arg_u64(const char *s, int *ok)
{
    uint64_t v = 0;
    unsigned base = 10, d;
    const char *p = s;
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
        base = 16;
        p += 2;
    }
    if (!*p) {
        *ok = 0;
        return 0;
    }
    for (; *p; p++) {
        if (*p >= '0' && *p <= '9')
            d = (unsigned)(*p - '0');
        else if (base == 16 && *p >= 'a' && *p <= 'f')
            d = (unsigned)(*p - 'a' + 10);
        else if (base == 16 && *p >= 'A' && *p <= 'F')
            d = (unsigned)(*p - 'A' + 10);
        else {
            *ok = 0;
            return 0;
        }
        v = v * base + d;
    }
    return v;
}
