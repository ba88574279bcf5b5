/* tinyring test: the gradient codecs (core/tr_codec.c) and the compressed
 * ring allreduce (core/tr_comm_codec.c) on the simulated transport.
 *
 *   - round trips of every codec at odd sizes: the bytes the size says, the
 *     error within half a step, residual = x - decoded exactly;
 *   - exact bytes (golden) of bf16 rounding and an int8 and int4 block;
 *   - NaN/infinity refused; zero, denormal and huge blocks; bytes no
 *     encoder writes refused by the decoder;
 *   - the allreduce over worlds 1..8, counts and segment sizes: every rank
 *     bitwise equal, and bitwise equal to a serial model of the documented
 *     reduction order (the ring, or at world 2 the exchange; so segmentation
 *     does not change the bits); error
 *     feedback's identity; the codec on the wire header (a peer with
 *     another codec is refused); NaN refused before anything is sent.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm_util.h"
#include "harness.h"
#include "sim_transport.h"
#include "tr_codec.h"
#include "tr_comm.h"
#include "tr_error.h"

static const int lossy[] = { TR_CODEC_BF16, TR_CODEC_INT8, TR_CODEC_INT4 };

static uint32_t bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* the largest error a codec may make on a block whose largest value is amax */
static double bound(int codec, double amax, double x)
{
    if (codec == TR_CODEC_BF16)
        return fabs(x) / 256.0;
    if (codec == TR_CODEC_INT8)
        return amax / 127.0 * 0.5000001 + 1e-45;
    return amax / 7.0 * 0.5000001 + 1e-45;
}

static void test_round_trip(void)
{
    static const size_t sizes[] = { 0, 1, 3, 63, 64, 65, 127, 128, 129, 1000, 100003 };
    size_t si, ci, i;
    for (ci = 0; ci < 4; ci++) {
        int codec = ci == 3 ? TR_CODEC_NONE : lossy[ci];
        for (si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            size_t n = sizes[si], nb = tr_codec_bytes(codec, n), bad = 0;
            float *x = malloc((n + 1) * 4), *d = malloc((n + 1) * 4), *res = malloc((n + 1) * 4);
            uint8_t *e = malloc(nb + 16);
            memset(e + nb, 0xA5, 16);
            for (i = 0; i < n; i++)
                x[i] = val(1, i, 7) * (float)(1 + i % 97) * ((i / 64) % 3 == 1 ? 1e-3f : 1.0f);
            TH_CHECK(tr_codec_encode(codec, x, n, e, res) == 0, "%s encode n=%zu",
                     tr_codec_name(codec), n);
            TH_CHECK(tr_codec_decode(codec, e, n, d) == 0, "%s decode n=%zu",
                     tr_codec_name(codec), n);
            for (i = 0; i < 16; i++)
                if (e[nb + i] != 0xA5)
                    bad++;
            TH_CHECK(bad == 0, "%s n=%zu wrote past %zu bytes", tr_codec_name(codec), n, nb);
            for (i = 0; i < n; i++) {
                size_t b0 = codec == TR_CODEC_INT8 || codec == TR_CODEC_INT4 ? i / 64 * 64 : i;
                size_t b1 = b0 + tr_codec_block_values(codec), k;
                double amax = 0;
                for (k = b0; k < b1 && k < n; k++)
                    amax = fabs(x[k]) > amax ? fabs(x[k]) : amax;
                if (!(fabs((double)x[i] - d[i]) <= bound(codec, amax, x[i])) ||
                    bits(res[i]) != bits(x[i] - d[i]))
                    bad++;
            }
            TH_CHECK(bad == 0, "%s n=%zu: %zu values off", tr_codec_name(codec), n, bad);
            free(x), free(d), free(res), free(e);
        }
    }
    TH_CHECK(tr_codec_bytes(TR_CODEC_INT8, 64) == 68 && tr_codec_bytes(TR_CODEC_INT8, 65) == 73 &&
             tr_codec_bytes(TR_CODEC_INT4, 64) == 36 && tr_codec_bytes(TR_CODEC_INT4, 65) == 41 &&
             tr_codec_bytes(TR_CODEC_INT4, 3) == 6 && tr_codec_bytes(TR_CODEC_BF16, 3) == 6 &&
             tr_codec_bytes(TR_CODEC_NONE, 3) == 12 && tr_codec_bytes(9, 3) == 0,
             "encoded sizes");
}

static void test_golden(void)
{
    /* bf16: ties to even, above the tie up, FLT_MAX cut rather than inf */
    float x[5] = { from_bits(0x3F808000u), from_bits(0x3F818000u), from_bits(0x3F808001u),
                   FLT_MAX, -1.5f };
    uint8_t e[64], want_bf[10] = { 0x80, 0x3F, 0x82, 0x3F, 0x81, 0x3F, 0x7F, 0x7F, 0xC0, 0xBF };
    float y[3] = { 1.0f, -0.5f, 0.25f }, y4[3] = { 7.0f, -3.5f, 1.75f }, d[5];
    /* int8: s = 1/127; q = 127, -63.5 -> -64 (tie to even), 31.75 -> 32 */
    uint8_t want_i8[7], want_i4[6];
    uint32_t s8 = bits(1.0f / 127.0f), s4 = bits(1.0f);
    want_i8[0] = (uint8_t)s8, want_i8[1] = (uint8_t)(s8 >> 8), want_i8[2] = (uint8_t)(s8 >> 16),
    want_i8[3] = (uint8_t)(s8 >> 24), want_i8[4] = 127, want_i8[5] = 0xC0, want_i8[6] = 32;
    /* int4 of 7, -3.5, 1.75: s = 1; q = 7, -4 (tie to even: 0xC), 2; low
     * nibble first */
    want_i4[0] = (uint8_t)s4, want_i4[1] = (uint8_t)(s4 >> 8), want_i4[2] = (uint8_t)(s4 >> 16),
    want_i4[3] = (uint8_t)(s4 >> 24), want_i4[4] = 0xC7, want_i4[5] = 0x02;
    TH_CHECK(tr_codec_encode(TR_CODEC_BF16, x, 5, e, NULL) == 0 && memcmp(e, want_bf, 10) == 0,
             "bf16 golden bytes");
    TH_CHECK(tr_codec_decode(TR_CODEC_BF16, e, 5, d) == 0 && d[3] == from_bits(0x7F7F0000u),
             "bf16 cut below infinity");
    TH_CHECK(tr_codec_encode(TR_CODEC_INT8, y, 3, e, NULL) == 0 && memcmp(e, want_i8, 7) == 0,
             "int8 golden bytes");
    TH_CHECK(tr_codec_decode(TR_CODEC_INT8, e, 3, d) == 0 && d[1] == -64.0f * (1.0f / 127.0f),
             "int8 golden decode");
    TH_CHECK(tr_codec_encode(TR_CODEC_INT4, y4, 3, e, NULL) == 0 && memcmp(e, want_i4, 6) == 0,
             "int4 golden bytes");
}

static void test_edges(void)
{
    float z[70], d[70], res[70], big[3] = { FLT_MAX, -FLT_MAX, 1.0f };
    float den[5] = { 1e-45f, -3e-45f, 1e-40f, 0.0f, -0.0f };
    uint8_t e[128];
    size_t i, ci;
    int ok;
    memset(z, 0, sizeof z);
    for (ci = 0; ci < 3; ci++) {
        int c = lossy[ci];
        const char *nm = tr_codec_name(c);
        float bad[4] = { 1.0f, NAN, 2.0f, INFINITY };
        TH_CHECK(tr_codec_encode(c, bad, 2, e, NULL) == TR_ERR_RANGE, "%s refuses NaN", nm);
        TH_CHECK(tr_codec_encode(c, bad + 2, 2, e, NULL) == TR_ERR_RANGE, "%s refuses inf", nm);
        bad[3] = -INFINITY;
        TH_CHECK(tr_codec_encode(c, bad + 2, 2, e, NULL) == TR_ERR_RANGE, "%s refuses -inf", nm);
        /* a zero block: all zero back, residual zero */
        ok = tr_codec_encode(c, z, 70, e, res) == 0 && tr_codec_decode(c, e, 70, d) == 0;
        for (i = 0; i < 70 && ok; i++)
            ok = d[i] == 0.0f && res[i] == 0.0f;
        TH_CHECK(ok, "%s zero block", nm);
        /* denormals: finite back, and the residual carries what is lost */
        ok = tr_codec_encode(c, den, 5, e, res) == 0 && tr_codec_decode(c, e, 5, d) == 0;
        for (i = 0; i < 5 && ok; i++)
            ok = isfinite(d[i]) && bits(res[i] + d[i]) == bits(den[i] + 0.0f) &&
                 fabsf(d[i]) <= 1e-39f;
        TH_CHECK(ok, "%s denormals", nm);
        /* huge values: never infinity back */
        ok = tr_codec_encode(c, big, 3, e, res) == 0 && tr_codec_decode(c, e, 3, d) == 0;
        for (i = 0; i < 3 && ok; i++)
            ok = isfinite(d[i]) && isfinite(res[i]);
        TH_CHECK(ok && d[0] > 3e38f && d[1] < -3e38f, "%s FLT_MAX (%g %g)", nm, d[0], d[1]);
    }
    /* bytes no encoder writes */
    {
        float one = 1.0f;
        uint8_t b[8];
        tr_codec_encode(TR_CODEC_INT8, &one, 1, b, NULL);
        b[7] = 0x80;  /* not read: n = 1 */
        TH_CHECK(tr_codec_decode(TR_CODEC_INT8, b, 1, d) == 0, "int8 valid block");
        b[4] = 0x80;
        TH_CHECK(tr_codec_decode(TR_CODEC_INT8, b, 1, d) == TR_ERR_PROTO, "int8 q=-128 refused");
        b[4] = 1;
        b[3] |= 0x80;
        TH_CHECK(tr_codec_decode(TR_CODEC_INT8, b, 1, d) == TR_ERR_PROTO, "negative scale refused");
        b[0] = 0, b[1] = 0, b[2] = 0xC0, b[3] = 0x7F;   /* NaN */
        TH_CHECK(tr_codec_decode(TR_CODEC_INT8, b, 1, d) == TR_ERR_PROTO, "NaN scale refused");
        b[2] = 0x80;                                     /* inf */
        TH_CHECK(tr_codec_decode(TR_CODEC_INT8, b, 1, d) == TR_ERR_PROTO, "inf scale refused");
        b[0] = 0xFF, b[1] = 0xFF, b[2] = 0x7F, b[3] = 0x7F; /* FLT_MAX: 127*s overflows */
        TH_CHECK(tr_codec_decode(TR_CODEC_INT8, b, 1, d) == TR_ERR_PROTO, "huge scale refused");
        tr_codec_encode(TR_CODEC_INT4, &one, 1, b, NULL);
        TH_CHECK(tr_codec_decode(TR_CODEC_INT4, b, 1, d) == 0 && d[0] == 1.0f, "int4 valid");
        b[4] = 0x17;
        TH_CHECK(tr_codec_decode(TR_CODEC_INT4, b, 1, d) == TR_ERR_PROTO, "int4 padding refused");
        b[4] = 0x08;
        TH_CHECK(tr_codec_decode(TR_CODEC_INT4, b, 1, d) == TR_ERR_PROTO, "int4 q=-8 refused");
        b[0] = 0x00, b[1] = 0x7F;
        TH_CHECK(tr_codec_decode(TR_CODEC_BF16, b, 1, d) == 0 && d[0] == from_bits(0x7F000000u),
                 "bf16 valid");
        b[0] = 0x80;
        TH_CHECK(tr_codec_decode(TR_CODEC_BF16, b, 1, d) == TR_ERR_PROTO, "bf16 inf refused");
        TH_CHECK(tr_codec_decode(7, b, 1, d) == TR_ERR_INVAL && tr_codec_encode(7, d, 1, b, NULL) ==
                 TR_ERR_INVAL, "unknown codec");
    }
}

/* The documented reduction order, serially: out (count) is what every rank
 * must hold; res[r] what rank r's residual must hold. x[r] are the inputs
 * (already + residual). */
static void serial(int codec, int world, size_t count, float **x, float **res, float *out,
                   int avg)
{
    size_t base = count / world, rem = count % world;
    float *v = malloc((count + 2) * 4);
    uint8_t *e = malloc(tr_codec_bytes(codec, count + 1) + 1);
    int i, h;
    if (world == 2) {
        /* the exchange: each rank's whole range encoded once, then on every
         * rank decoded(rank 1) + decoded(rank 0) */
        size_t k;
        for (i = 0; i < 2; i++) {
            memcpy(v, x[i], count * 4);
            tr_codec_encode(codec, v, count, e, res[i]);
            if (i == 0)
                tr_codec_decode(codec, e, count, out);
            else
                tr_codec_decode_add(codec, e, count, out);
        }
        for (k = 0; avg && k < count; k++)
            out[k] = out[k] / 2.0f;
        free(v);
        free(e);
        return;
    }
    for (i = 0; i < world; i++) {
        size_t off = i * base + ((size_t)i < rem ? (size_t)i : rem);
        size_t m = base + ((size_t)i < rem), k;
        int q = i;
        memcpy(v, x[q] + off, m * 4);
        tr_codec_encode(codec, v, m, e, res[q] + off);
        for (h = 1; h < world; h++) {
            q = (i + h) % world;
            tr_codec_decode_add(codec, e, m, memcpy(v, x[q] + off, m * 4));
            tr_codec_encode(codec, v, m, e, res[q] + off);
        }
        tr_codec_decode(codec, e, m, out + off);
        if (avg)
            for (k = 0; k < m; k++)
                out[off + k] = out[off + k] / (float)world;
    }
    free(v);
    free(e);
}

/* One compressed allreduce on fresh ranks; 1 if everything held. */
static int run_codec(int world, size_t count, int codec, int op, int with_res, uint32_t seg)
{
    struct job j;
    float *buf[SIM_MAX_WORLD], *res[SIM_MAX_WORLD], *in[SIM_MAX_WORLD], *sres[SIM_MAX_WORLD];
    uint8_t *wire[SIM_MAX_WORLD];
    float *want = malloc((count + 1) * 4);
    size_t wb = tr_allreduce_codec_wire_size(codec, count, world), i;
    int r, ok = 1;
    unsigned salt = (unsigned)(count * 17 + (size_t)world * 3 + (size_t)codec);
    double lhs, rhs, scale;

    if (job_open(&j, world, seg, 1u << 16, 2000) < 0) {
        job_free(&j);
        free(want);
        return 0;
    }
    for (r = 0; r < world; r++) {
        buf[r] = alloc_buf(count);
        res[r] = alloc_buf(count);
        in[r] = malloc((count + 1) * 4);
        sres[r] = malloc((count + 1) * 4);
        wire[r] = malloc(wb + 1);
        for (i = 0; i < count; i++) {
            buf[r][i] = val(r, i, salt) * (1.0f + (float)(i % 5));
            res[r][i] = with_res ? val(r + 9, i, salt) * 0.01f : 0.0f;
            in[r][i] = buf[r][i] + res[r][i];
        }
    }
    serial(codec, world, count, in, sres, want, op == TR_OP_AVG);
    for (r = 0; r < world; r++)
        j.rc[r] = tr_allreduce_codec_start(&j.c[r], buf[r], count, (enum tr_op)op, codec,
                                           with_res ? res[r] : NULL, wire[r], wb);
    if (sim_run(&j.net, j.c, j.rc, 100000, 0) < 0 || !all_rc(&j, 0)) {
        fprintf(stderr, "  rc0=%d\n", j.rc[0]);
        ok = 0;
    }
    for (r = 0; r < world && ok; r++) {
        if (world > 1 && count && memcmp(buf[r], want, count * 4) != 0) {
            fprintf(stderr, "  rank %d differs from the serial order\n", r);
            ok = 0;
        }
        if (world > 1 && with_res && count && memcmp(res[r], sres[r], count * 4) != 0) {
            fprintf(stderr, "  rank %d residual differs from the serial order\n", r);
            ok = 0;
        }
        if (!canary_ok(buf[r], count) || !canary_ok(res[r], count))
            ok = 0;
    }
    /* error feedback: what arrived + what the residuals keep = what went in */
    for (i = 0; i < count && ok && world > 1 && with_res; i++) {
        lhs = (double)buf[0][i] * (op == TR_OP_AVG ? world : 1);
        rhs = 0;
        scale = 0;
        for (r = 0; r < world; r++) {
            lhs += res[r][i];
            rhs += in[r][i];
            scale += fabs(in[r][i]) + fabs(res[r][i]);
        }
        if (fabs(lhs - rhs) > 1e-5 * (scale + 1)) {
            fprintf(stderr, "  elem %zu: sum+residuals %g, inputs %g\n", i, lhs, rhs);
            ok = 0;
        }
    }
    for (r = 0; r < world; r++)
        free(buf[r]), free(res[r]), free(in[r]), free(sres[r]), free(wire[r]);
    free(want);
    job_free(&j);
    return ok;
}

static void test_allreduce_grid(void)
{
    static const size_t counts[] = { 0, 1, 3, 63, 65, 200, 1009, 30000 };
    static const uint32_t segs[] = { 72, 4096, 0 };
    int world, ci, op;
    size_t k, s;
    for (world = 1; world <= 8; world++)
        for (ci = 0; ci < 3; ci++)
            for (k = 0; k < sizeof counts / sizeof counts[0]; k++)
                for (s = 0; s < 3; s++)
                    for (op = 0; op < 2; op++) {
                        int res = (int)((k + s + (size_t)op) & 1);
                        if (counts[k] > 1009 && (s == 0 || world % 2))
                            continue;   /* keep the grid short */
                        TH_CHECK(run_codec(world, counts[k], lossy[ci], op, res, segs[s]),
                                 "world %d count %zu %s op %d residual %d seg %u", world,
                                 counts[k], tr_codec_name(lossy[ci]), op, res, segs[s]);
                    }
}

/* codec none through the codec entry: the plain ring's bits */
static void test_none_is_ring(void)
{
    struct job a, b;
    size_t n = 5000, i;
    float *x[3], *y[3];
    int r, ok;
    ok = job_open(&a, 3, 1024, 1u << 16, 2000) == 0 && job_open(&b, 3, 1024, 1u << 16, 2000) == 0;
    for (r = 0; r < 3; r++) {
        x[r] = malloc(n * 4), y[r] = malloc(n * 4);
        for (i = 0; i < n; i++)
            x[r][i] = y[r][i] = val(r, i, 5);
        a.rc[r] = tr_allreduce_codec_start(&a.c[r], x[r], n, TR_OP_AVG, TR_CODEC_NONE, NULL,
                                           NULL, 0);
        b.rc[r] = tr_allreduce_start(&b.c[r], y[r], n, TR_OP_AVG, TR_ALGO_RING);
    }
    ok = ok && sim_run(&a.net, a.c, a.rc, 100000, 0) >= 0 && all_rc(&a, 0) &&
         sim_run(&b.net, b.c, b.rc, 100000, 0) >= 0 && all_rc(&b, 0);
    for (r = 0; r < 3; r++) {
        ok = ok && memcmp(x[r], y[r], n * 4) == 0;
        free(x[r]), free(y[r]);
    }
    TH_CHECK(ok, "codec none = the plain ring, bit for bit");
    job_free(&a), job_free(&b);
}

/* A peer with another codec (or count) is refused; NaN refused up front. */
static void test_refusals(void)
{
    struct job j;
    size_t n = 300, i, wb = tr_allreduce_codec_wire_size(TR_CODEC_INT4, 400, 3) + 4096;
    float *x[3], *res[3];
    uint8_t *w[3];
    int r, ok;

    for (r = 0; r < 3; r++) {
        x[r] = malloc(400 * 4), res[r] = calloc(400, 4), w[r] = malloc(wb);
        for (i = 0; i < 400; i++)
            x[r][i] = val(r, i, 3);
    }
    /* rank 1 says int4, the others int8 */
    TH_CHECK(job_open(&j, 3, 1024, 1u << 16, 500) == 0, "open");
    for (r = 0; r < 3; r++)
        j.rc[r] = tr_allreduce_codec_start(&j.c[r], x[r], n, TR_OP_AVG,
                                           r == 1 ? TR_CODEC_INT4 : TR_CODEC_INT8, res[r], w[r], wb);
    sim_run(&j.net, j.c, j.rc, 100000, 0);
    ok = 0;
    for (r = 0; r < 3; r++)
        ok |= j.rc[r] == TR_ERR_MISMATCH;
    TH_CHECK(ok, "another codec refused (rc %d %d %d)", j.rc[0], j.rc[1], j.rc[2]);
    job_free(&j);

    /* another count */
    TH_CHECK(job_open(&j, 3, 1024, 1u << 16, 500) == 0, "open");
    for (r = 0; r < 3; r++)
        j.rc[r] = tr_allreduce_codec_start(&j.c[r], x[r], r == 2 ? n + 64 : n, TR_OP_AVG,
                                           TR_CODEC_INT8, res[r], w[r], wb);
    sim_run(&j.net, j.c, j.rc, 100000, 0);
    ok = 0;
    for (r = 0; r < 3; r++)
        ok |= j.rc[r] == TR_ERR_MISMATCH;
    TH_CHECK(ok, "another count refused (rc %d %d %d)", j.rc[0], j.rc[1], j.rc[2]);
    job_free(&j);

    /* NaN in buf or in buf + residual: refused before anything is sent,
     * nothing changed, the communicator still works */
    TH_CHECK(job_open(&j, 3, 1024, 1u << 16, 500) == 0, "open");
    x[1][17] = NAN;
    res[2][5] = FLT_MAX;
    x[2][5] = FLT_MAX;
    for (r = 0; r < 3; r++) {
        float keep0 = x[r][0];
        int rc = tr_allreduce_codec_start(&j.c[r], x[r], n, TR_OP_SUM, TR_CODEC_BF16, res[r],
                                          w[r], wb);
        if (r == 0) {
            TH_CHECK(rc == TR_ERR_AGAIN, "rank 0 started (%d)", rc);
            j.rc[0] = rc;
        } else {
            TH_CHECK(rc == TR_ERR_RANGE && x[r][0] == keep0 && j.c[r].active == 0 &&
                     !j.c[r].broken, "rank %d refuses NaN/overflow up front (%d)", r, rc);
        }
    }
    x[1][17] = 1.0f;
    x[2][5] = 1.0f;
    res[2][5] = 0.0f;
    for (r = 1; r < 3; r++)
        j.rc[r] = tr_allreduce_codec_start(&j.c[r], x[r], n, TR_OP_SUM, TR_CODEC_BF16, res[r],
                                           w[r], wb);
    sim_run(&j.net, j.c, j.rc, 100000, 0);
    TH_CHECK(all_rc(&j, 0) && memcmp(x[0], x[1], n * 4) == 0 && memcmp(x[0], x[2], n * 4) == 0,
             "the ring goes on after the refusal (rc %d %d %d)", j.rc[0], j.rc[1], j.rc[2]);
    /* arguments */
    TH_CHECK(tr_allreduce_codec_start(&j.c[0], x[0], n, TR_OP_SUM, TR_CODEC_INT8, res[0], w[0],
                                      10) == TR_ERR_NOMEM, "short wire buffer");
    TH_CHECK(tr_allreduce_codec_start(&j.c[0], x[0], n, TR_OP_SUM, TR_CODEC_INT8, x[0], w[0],
                                      wb) == TR_ERR_INVAL, "residual aliasing buf");
    TH_CHECK(tr_allreduce_codec_start(&j.c[0], x[0], n, TR_OP_SUM, 9, NULL, w[0], wb) ==
             TR_ERR_INVAL, "unknown codec");
    job_free(&j);
    TH_CHECK(job_open(&j, 2, 64, 1u << 16, 500) == 0, "open");
    TH_CHECK(tr_allreduce_codec_start(&j.c[0], x[0], n, TR_OP_SUM, TR_CODEC_INT8, NULL, w[0],
                                      wb) == TR_ERR_INVAL, "segment smaller than a block");
    job_free(&j);
    for (r = 0; r < 3; r++)
        free(x[r]), free(res[r]), free(w[r]);
}

int main(void)
{
    test_round_trip();
    test_golden();
    test_edges();
    test_none_is_ring();
    test_refusals();
    test_allreduce_grid();
    return th_report("codec");
}
