/* tinyring board_mps2: see settings.h. */
#include "settings.h"

#include <string.h>

#include "args.h"
#include "fmt.h"
#include "semihost.h"
#include "tr_codec.h"
#include "tr_comm.h"
#include "tr_util.h"

uint64_t board_token(const char *s)
{
    uint64_t h = tr_fnv1a64(TR_FNV64_INIT, s, strlen(s));
    return h ? h : 1;
}

const char *board_algo_name(int algo)
{
    return algo == TR_ALGO_CHAIN ? "chain" : algo == TR_ALGO_REDUCE_BCAST ? "reduce-bcast" : "ring";
}

/* A decimal number (digits, '.', e+-NN) as the host's (float)strtod gives
 * it: the digits as an integer m and a power of ten, then one correctly
 * rounded double operation (m and 10^|e| are exact doubles for at most 15
 * digits and |e| <= 22), then the same rounding to float. */
static int parse_float(const char *s, double *out)
{
    uint64_t m = 0;
    int sig = 0, e10 = 0, e = 0, eneg = 0, any = 0, neg = 0;
    double p = 1;
    if (*s == '-' || *s == '+')
        neg = *s++ == '-';
    for (; *s >= '0' && *s <= '9'; s++, any = 1) {
        m = m * 10u + (uint64_t)(*s - '0');
        sig += m != 0;
    }
    if (*s == '.')
        for (s++; *s >= '0' && *s <= '9'; s++, any = 1) {
            m = m * 10u + (uint64_t)(*s - '0');
            sig += m != 0;
            e10--;
        }
    if (any && (*s == 'e' || *s == 'E')) {
        s++;
        if (*s == '-' || *s == '+')
            eneg = *s++ == '-';
        if (*s < '0' || *s > '9')
            return -1;
        for (; *s >= '0' && *s <= '9' && e < 1000; s++)
            e = e * 10 + (*s - '0');
    }
    e10 += eneg ? -e : e;
    if (!any || *s || sig > 15 || e10 > 22 || e10 < -22)
        return -1;
    for (e = e10 < 0 ? -e10 : e10; e > 0; e--)
        p *= 10.0;
    *out = (neg ? -1.0 : 1.0) * (e10 < 0 ? (double)m / p : (double)m * p);
    return 0;
}

static int bad(const char *flag, const char *v, const char *want)
{
    board_printf("train: %s: '%s' %s\n", flag, v ? v : "", want);
    return -1;
}

static int num(const char *flag, const char *v, uint64_t lo, uint64_t hi, uint64_t *out)
{
    int ok = 1;
    uint64_t x = v ? board_arg_u64(v, &ok) : 0;
    if (!v || !ok || x < lo || x > hi) {
        char want[64];
        fmt_s(want, sizeof want, "is not a whole number in %u..%u", (unsigned)lo, (unsigned)hi);
        return bad(flag, v, want);
    }
    *out = x;
    return 0;
}

static int real(const char *flag, const char *v, double lo, double hi, float *out)
{
    double x;
    if (!v || parse_float(v, &x) < 0 || !(x >= lo && x <= hi))
        return bad(flag, v, "is not a number in range (at most 15 digits)");
    *out = (float)x;
    return 0;
}

/* "A.B.C.D:PORT" */
static int parse_addr(const char *s, const char *end, struct board_addr *a)
{
    unsigned v = 0, part = 0, digits = 0;
    for (; s < end; s++) {
        if (*s >= '0' && *s <= '9' && digits < 5) {
            v = v * 10u + (unsigned)(*s - '0');
            digits++;
        } else if (((*s == '.' && part < 3) || (*s == ':' && part == 3)) && digits && v <= 255u) {
            a->ip[part++] = (uint8_t)v;
            v = 0;
            digits = 0;
        } else {
            return -1;
        }
    }
    if (part != 4 || !digits || v == 0 || v > 65535u)
        return -1;
    a->port = (uint16_t)v;
    return 0;
}

/* One line "RANK A.B.C.D:PORT" of the table (blank and '#' lines: 1, else 0 or -1). */
static int peer_line(struct board_settings *s, const char *p, const char *end, int *seen,
                     unsigned line)
{
    const char *w;
    struct board_addr a;
    unsigned rank = 0, r;
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\r'))
        p++;
    if (p == end || *p == '#')
        return 1;
    for (w = p; p < end && *p >= '0' && *p <= '9'; p++)
        rank = rank * 10u + (unsigned)(*p - '0');
    if (p == w || p - w > 3 || p == end || (*p != ' ' && *p != '\t') || rank >= BOARD_MAX_WORLD) {
        board_printf("train: --peers %s: line %u: want 'RANK IPV4:PORT', rank < %u\n", s->peers,
                      line, (unsigned)BOARD_MAX_WORLD);
        return -1;
    }
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    while (end > p && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
        end--;
    if (parse_addr(p, end, &a) < 0) {
        board_printf("train: --peers %s: line %u: not an IPV4:PORT\n", s->peers, line);
        return -1;
    }
    for (r = 0; r < BOARD_MAX_WORLD; r++)
        if (seen[r] && (r == rank || (!memcmp(a.ip, s->table[r].ip, 4) && a.port == s->table[r].port))) {
            board_printf("train: --peers %s: line %u: rank %u or its address already on line %u\n",
                         s->peers, line, rank, (unsigned)seen[r]);
            return -1;
        }
    s->table[rank] = a;
    seen[rank] = (int)line;
    return 0;
}

/* --peers FILE through semihosting: the same format as mnist_ring's. */
static int read_peers(struct board_settings *s)
{
    static char text[BOARD_PEERS_BYTES];
    int seen[BOARD_MAX_WORLD] = { 0 }, fd = sh_open(s->peers), n = 0, r;
    long len = fd < 0 ? -1 : sh_read(fd, text, sizeof text);
    unsigned line = 0;
    const char *p = text, *end;
    if (fd >= 0)
        sh_close(fd);
    if (len < 0 || len == (long)sizeof text)
        return bad("--peers", s->peers, len < 0 ? "cannot be read" : "is longer than 1 KiB");
    for (end = text + len; p < end; p++) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        eol = eol ? eol : end;
        if ((r = peer_line(s, p, eol, seen, ++line)) < 0)
            return -1;
        n += r == 0;
        p = eol;
    }
    for (r = 0; r < n; r++)
        if (!seen[r]) {
            board_printf("train: --peers %s: rank %d is missing (%d lines need ranks 0..%d)\n",
                         s->peers, r, n, n - 1);
            return -1;
        }
    if (n == 0 || s->rank >= n)
        return bad("--rank", "", "is not in the --peers table");
    s->world = n;
    return 0;
}

int board_settings(struct board_settings *s, int argc, char **argv, unsigned batch_max)
{
    int i;
    uint64_t v;
    memset(s, 0, sizeof *s);
    s->data = "data";
    s->epochs = 1;
    s->batch = batch_max;
    s->lr = 0.001f;
    s->momentum = 0.9f;
    s->algo = TR_ALGO_RING;
    s->world = 1;
    s->job_token = "";
    s->timeout_s = 60;
    s->min_ranks = 1;
    for (i = 1; i < argc; i++) {
        const char *f = argv[i], *val = i + 1 < argc ? argv[i + 1] : 0;
        int rc = 0;
        if (!strcmp(f, "--debug-param-hash") || !strcmp(f, "--elastic")) {
            *(f[2] == 'd' ? &s->debug_param_hash : &s->elastic) = 1;
            continue;
        }
        i++;
        if (!strcmp(f, "--data") && val)
            s->data = val;
        else if (!strcmp(f, "--epochs") && !(rc = num(f, val, 1, 100000, &v)))
            s->epochs = (uint32_t)v;
        else if (!strcmp(f, "--batch") && !(rc = num(f, val, 1, batch_max, &v)))
            s->batch = (unsigned)v;
        else if (!strcmp(f, "--lr"))
            rc = real(f, val, 0.0, 100.0, &s->lr);
        else if (!strcmp(f, "--momentum"))
            rc = real(f, val, 0.0, 0.9999, &s->momentum);
        else if (!strcmp(f, "--seed") && !(rc = num(f, val, 0, UINT64_MAX, &v)))
            s->seed = v;
        else if (!strcmp(f, "--max-steps") && !(rc = num(f, val, 1, UINT64_MAX, &v)))
            s->max_steps = v;
        else if (!strcmp(f, "--checkpoint-every") && !(rc = num(f, val, 1, UINT32_MAX, &v)))
            s->checkpoint_every = (uint32_t)v;
        else if (!strcmp(f, "--rank") && !(rc = num(f, val, 0, BOARD_MAX_WORLD - 1, &v)))
            s->rank = (int)v;
        else if (!strcmp(f, "--timeout") && !(rc = num(f, val, 1, 86400, &v)))
            s->timeout_s = (uint32_t)v;
        else if (!strcmp(f, "--min-ranks") && !(rc = num(f, val, 1, BOARD_MAX_WORLD, &v)))
            s->min_ranks = (unsigned)v;
        else if (!strcmp(f, "--average-every") && !(rc = num(f, val, 0, UINT32_MAX, &v)))
            s->average_every = (uint32_t)v;
        else if (!strcmp(f, "--compress") && val) {
            int k;
            for (k = 0; k < TR_CODEC_COUNT && strcmp(val, tr_codec_name(k)); k++)
                ;
            if (k == TR_CODEC_COUNT)
                rc = bad(f, val, "want none, bf16, int8 or int4");
            s->compress = k;
        }
        else if (!strcmp(f, "--peers") && val)
            s->peers = val;
        else if (!strcmp(f, "--checkpoint") && val)
            s->checkpoint = val;
        else if (!strcmp(f, "--job-token") && val)
            s->job_token = val;
        else if (!strcmp(f, "--allreduce") && val) {
            if (!strcmp(val, "ring"))
                s->algo = TR_ALGO_RING;
            else if (!strcmp(val, "chain"))
                s->algo = TR_ALGO_CHAIN;
            else if (!strcmp(val, "reduce-bcast"))
                s->algo = TR_ALGO_REDUCE_BCAST;
            else
                rc = bad(f, val, "want ring, chain or reduce-bcast");
        } else if (!rc)
            rc = bad(f, val, "is an unknown flag or lacks its value");
        if (rc)
            return -1;
    }
    /* mnist_ring's rules, in its words */
    if (s->compress != TR_CODEC_NONE && s->algo != TR_ALGO_RING) {
        board_printf("train: --compress %s needs --allreduce ring\n", tr_codec_name(s->compress));
        return -1;
    }
    if (s->average_every >= 2 && s->elastic) {
        board_printf("train: --average-every needs a fixed world: not with --elastic\n");
        return -1;
    }
    if (s->peers)
        return read_peers(s);
    if (s->rank != 0)
        return bad("--rank", argv[0], "needs --peers FILE");
    return 0;
}
