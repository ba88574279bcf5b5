/* test_math: tr_expf/tr_logf against libm (ulp distance), tr_sqrtf and the
 * portable fallback against correctly rounded sqrt, PCG32 known answers and
 * ranges, SGD against hand-computed torch.optim.SGD steps. */
#include "harness.h"
#include "tinyring.h"
#include <math.h>
#include <stdint.h>
#include <string.h>

static uint32_t bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static float fromb(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

/* ulps between two finite floats of the same sign (or both tiny) */
static long ulps(float a, float b)
{
    int32_t ia = (int32_t)bits(a), ib = (int32_t)bits(b);
    if (ia < 0) ia = (int32_t)0x80000000 - ia;
    if (ib < 0) ib = (int32_t)0x80000000 - ib;
    return labs((long)ia - (long)ib);
}

static void test_exp_log(void)
{
    struct tr_rng r;
    long worst_e = 0, worst_l = 0;
    float we = 0, wl = 0;
    int i;

    tr_rng_seed(&r, 7, 1);
    for (i = 0; i < 2000000; i++) {
        float x = tr_rng_uniform(&r, -103.0f, 88.7f);
        float ref = (float)exp((double)x);     /* correctly rounded reference */
        long u = ulps(tr_expf(x), ref);
        if (u > worst_e) { worst_e = u; we = x; }
    }
    for (i = 0; i < 200000; i++) {             /* small arguments matter most */
        float x = tr_rng_uniform(&r, -2.0f, 2.0f);
        long u = ulps(tr_expf(x), (float)exp((double)x));
        if (u > worst_e) { worst_e = u; we = x; }
    }
    TH_CHECK(worst_e <= 2, "expf worst %ld ulp at %a", worst_e, we);
    for (i = 0; i < 2000000; i++) {
        /* random bit patterns over every positive normal and subnormal */
        float x = fromb(tr_rng_below(&r, 0x7f800000u - 1u) + 1u);
        float ref = (float)log((double)x);
        long u = ulps(tr_logf(x), ref);
        if (u > worst_l) { worst_l = u; wl = x; }
    }
    for (i = 0; i < 200000; i++) {             /* near 1, where log is tiny */
        float x = tr_rng_uniform(&r, 0.5f, 2.0f);
        long u = ulps(tr_logf(x), (float)log((double)x));
        if (u > worst_l) { worst_l = u; wl = x; }
    }
    TH_CHECK(worst_l <= 2, "logf worst %ld ulp at %a", worst_l, wl);
    printf("expf worst %ld ulp, logf worst %ld ulp\n", worst_e, worst_l);
    TH_CHECK(tr_expf(0.0f) == 1.0f, "exp(0)");
    TH_CHECK(tr_expf(-200.0f) == 0.0f, "exp(-200)");
    TH_CHECK(isinf(tr_expf(100.0f)), "exp(100)");
    TH_CHECK(isnan(tr_expf(NAN)), "exp(nan)");
    TH_CHECK(ulps(tr_expf(-100.0f), expf(-100.0f)) <= 2, "exp subnormal %a vs %a",
             tr_expf(-100.0f), expf(-100.0f));
    TH_CHECK(ulps(tr_expf(88.72f), expf(88.72f)) <= 2, "exp near overflow");
    TH_CHECK(tr_logf(1.0f) == 0.0f, "log(1)");
    TH_CHECK(isinf(tr_logf(0.0f)) && tr_logf(0.0f) < 0, "log(0)");
    TH_CHECK(isnan(tr_logf(-1.0f)), "log(-1)");
    TH_CHECK(isinf(tr_logf(INFINITY)), "log(inf)");
}

static void test_sqrt(void)
{
    struct tr_rng r;
    int i, bad = 0, badsoft = 0;
    uint32_t u;

    tr_rng_seed(&r, 3, 2);
    for (i = 0; i < 3000000; i++) {
        float x = fromb(tr_rng_below(&r, 0x7f800000u));   /* +0 .. max finite */
        float ref = (float)sqrt((double)x);   /* double sqrt then round: correct for float */
        bad += bits(tr_sqrtf(x)) != bits(ref);
        badsoft += bits(tr_sqrtf_soft(x)) != bits(ref);
    }
    for (u = 0; u < 100000; u++) {           /* subnormals and the first normals */
        float x = fromb(u * 97u);
        float ref = (float)sqrt((double)x);
        badsoft += bits(tr_sqrtf_soft(x)) != bits(ref);
    }
    TH_CHECK(bad == 0, "tr_sqrtf differs from correctly rounded in %d cases", bad);
    TH_CHECK(badsoft == 0, "tr_sqrtf_soft differs in %d cases", badsoft);
    TH_CHECK(tr_sqrtf_soft(4.0f) == 2.0f && tr_sqrtf_soft(2.0f) == sqrtf(2.0f), "soft 4, 2");
    TH_CHECK(isnan(tr_sqrtf_soft(-1.0f)) && isinf(tr_sqrtf_soft(INFINITY)), "soft -1, inf");
}

static void test_rng(void)
{
    /* pcg32_srandom(42, 54) from the PCG reference implementation */
    static const uint32_t known[6] = {0xa15c02b7u, 0x7b47f409u, 0xba1d3330u,
                                      0x83d2f293u, 0xbfa4784bu, 0xcbed606eu};
    struct tr_rng r, r2;
    unsigned counts[7] = {0};
    int i, ok = 1, inrange = 1;

    tr_rng_seed(&r, 42u, 54u);
    for (i = 0; i < 6; i++)
        ok &= tr_rng_u32(&r) == known[i];
    TH_CHECK(ok, "PCG32 known answers for seed 42 stream 54");
    tr_rng_seed(&r, 1, 1);
    tr_rng_seed(&r2, 2, 1);
    TH_CHECK(tr_rng_u32(&r) != tr_rng_u32(&r2), "different seeds differ");
    for (i = 0; i < 70000; i++) {
        uint32_t v = tr_rng_below(&r, 7);
        if (v >= 7) inrange = 0; else counts[v]++;
    }
    TH_CHECK(inrange, "below(7) in range");
    for (i = 0; i < 7; i++)
        TH_CHECK(counts[i] > 9400 && counts[i] < 10600, "below(7) bucket %d: %u", i, counts[i]);
    TH_CHECK(tr_rng_below(&r, 1) == 0, "below(1)");
    inrange = 1;
    for (i = 0; i < 100000; i++) {
        float v = tr_rng_uniform(&r, -0.25f, 0.5f);
        if (!(v >= -0.25f && v < 0.5f)) inrange = 0;
    }
    TH_CHECK(inrange, "uniform in [lo, hi)");
}

static void test_sgd(void)
{
    struct tr_sgd s;
    float p[2] = {1.0f, -2.0f}, g[2] = {0.5f, 0.25f}, buf[2] = {123.0f, 456.0f};
    double ep, eb;

    tr_sgd_init(&s);
    TH_CHECK(s.lr == 0.001f && s.momentum == 0.9f && s.weight_decay == 0.0f &&
             !s.nesterov && !s.started, "seed defaults");
    s.lr = 0.1f;
    tr_sgd_step(&s, p, g, buf, 2);      /* first step: buf = g (old buf ignored) */
    TH_CHECK(buf[0] == 0.5f && fabsf(p[0] - 0.95f) < 1e-7f, "step 1: %g %g", buf[0], p[0]);
    tr_sgd_step(&s, p, g, buf, 2);      /* buf = 0.9*0.5 + 0.5 = 0.95; p = 0.95 - 0.095 */
    TH_CHECK(fabsf(buf[0] - 0.95f) < 1e-7f && fabsf(p[0] - 0.855f) < 1e-6f,
             "step 2: %g %g", buf[0], p[0]);
    /* weight decay + nesterov, against the formula in double */
    {
        float q = 2.0f, gg = 0.5f, b = 0.0f;
        struct tr_sgd t = {0.1f, 0.9f, 0.01f, 1, 0};
        double qd = 2.0, bd = 0.0;
        int k;
        for (k = 0; k < 3; k++) {
            double gd = 0.5 + 0.01 * qd;
            bd = k == 0 ? gd : 0.9 * bd + gd;
            qd -= 0.1 * (gd + 0.9 * bd);
            tr_sgd_step(&t, &q, &gg, &b, 1);
        }
        ep = fabs(q - qd);
        eb = fabs(b - bd);
        TH_CHECK(ep < 1e-6 && eb < 1e-6, "nesterov+wd: p %g vs %g, buf %g vs %g", q, qd, b, bd);
    }
    {   /* momentum 0: plain SGD, momentum array untouched */
        float q = 1.0f, gg = 2.0f, b = 7.0f;
        struct tr_sgd t = {0.5f, 0.0f, 0.0f, 0, 0};
        tr_sgd_step(&t, &q, &gg, &b, 1);
        TH_CHECK(q == 0.0f && b == 7.0f, "plain sgd: %g %g", q, b);
    }
}

int main(void)
{
    test_exp_log();
    test_sqrt();
    test_rng();
    test_sgd();
    return th_report("core_math");
}
