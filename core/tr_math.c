/* tinyring: expf, logf, sqrtf without libm.
 *
 * Plain C99 on IEEE-754 binary32 with -ffp-contract=off: every operation is
 * one correctly rounded float op, so the same input gives the same bits on
 * every target. Bits are moved through a union (defined by C99 TC3 and GCC).
 */
#include "tr_config.h"   /* first: limits and the float guard */
#include "tr_math.h"
#include <stdint.h>
#include "tr_util.h"

/* 2^k for k in [-126, 127] as a normal float. */
static float pow2i(int k)
{
    return tr_bits_float((uint32_t)(k + 127) << 23);
}

/* e^x = 2^k * e^r, x = k*ln2 + r, |r| <= ln2/2. ln2 is split (Cody-Waite)
 * so k*LN2_HI is exact for |k| < 2^8; e^r by a degree-7 Taylor polynomial,
 * whose truncation error (r^8/8! < 1.2e-7 * 2^-13) is far below an ulp. */
float tr_expf(float x)
{
    const float LN2_HI = 6.93145752e-1f;   /* 0x3f317200: 16 significant bits */
    const float LN2_LO = 1.42860677e-6f;   /* ln2 - LN2_HI */
    const float INV_LN2 = 1.44269504e+0f;
    float kf, r, p;
    int k;

    if (x != x)
        return x;                          /* NaN */
    if (x > 88.7228394f)
        return tr_bits_float(0x7f800000u);      /* +inf */
    if (x < -103.972084f)
        return 0.0f;
    kf = x * INV_LN2;
    k = (int)(kf < 0.0f ? kf - 0.5f : kf + 0.5f);   /* round to nearest */
    kf = (float)k;
    r = (x - kf * LN2_HI) - kf * LN2_LO;
    /* Horner: 1 + r(1 + r/2(1 + r/3(1 + r/4(1 + r/5(1 + r/6(1 + r/7)))))) */
    p = 1.0f / 5040.0f;
    p = p * r + 1.0f / 720.0f;
    p = p * r + 1.0f / 120.0f;
    p = p * r + 1.0f / 24.0f;
    p = p * r + 1.0f / 6.0f;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    if (k > 127)                            /* only when rounding pushed k up */
        return p * pow2i(127) * pow2i(k - 127);
    if (k < -126)                           /* subnormal result: two exact-ish steps */
        return p * pow2i(k + 100) * pow2i(-100);
    return p * pow2i(k);
}

/* log(x) = e*ln2 + log(1+f), 1+f = m in [sqrt(1/2), sqrt(2)). With
 * s = f/(2+f), log(1+f) = f - hfsq + s*(hfsq + R(s*s)), hfsq = f*f/2, where
 * R is the odd series 2*(z/3 + z^2/5 + z^3/7 + z^4/9 + z^5/11) of atanh
 * (|s| < 0.1716, so five terms leave < 1e-9 relative error). */
float tr_logf(float x)
{
    const float LN2_HI = 6.9313812256e-01f; /* 0x3f317180 */
    const float LN2_LO = 9.0580006145e-06f; /* ln2 - LN2_HI */
    uint32_t ix = tr_float_bits(x);
    int e = 0;
    float f, s, z, r, hfsq, ef;

    if (x != x)
        return x;
    if (x == 0.0f)
        return -tr_bits_float(0x7f800000u);     /* -inf */
    if (ix & 0x80000000u)
        return tr_bits_float(0x7fc00000u);      /* log of a negative: NaN */
    if (ix >= 0x7f800000u)
        return x;                           /* +inf */
    if (ix < 0x00800000u) {                 /* subnormal: scale by 2^25 */
        x *= 33554432.0f;
        ix = tr_float_bits(x);
        e = -25;
    }
    e += (int)(ix >> 23) - 127;
    ix &= 0x007fffffu;
    if (ix > 0x3504f3u) {                   /* m > sqrt(2): use m/2 */
        ix |= 0x3f000000u;
        e += 1;
    } else {
        ix |= 0x3f800000u;
    }
    f = tr_bits_float(ix) - 1.0f;
    s = f / (2.0f + f);
    z = s * s;
    r = 2.0f / 11.0f;
    r = r * z + 2.0f / 9.0f;
    r = r * z + 2.0f / 7.0f;
    r = r * z + 2.0f / 5.0f;
    r = r * z + 2.0f / 3.0f;
    r = r * z;
    hfsq = 0.5f * f * f;
    ef = (float)e;
    return ef * LN2_HI + ((f - (hfsq - (s * (hfsq + r) + ef * LN2_LO))));
}

/* Correctly rounded square root. Where the target has a single-precision
 * square root instruction (x86 SSE, Arm VFP, RISC-V F) GCC emits it for the
 * builtin with -fno-math-errno; elsewhere the bit-by-bit integer method
 * below gives the same correctly rounded result. */
#if defined(__GNUC__) && (defined(__SSE_MATH__) || \
    (defined(__ARM_FP) && (__ARM_FP & 4)) || \
    (defined(__riscv_flen) && defined(__riscv_fdiv)))
float tr_sqrtf(float x)
{
    return __builtin_sqrtf(x);
}
#else
float tr_sqrtf(float x)
{
    return tr_sqrtf_soft(x);
}
#endif

/* Portable fallback, also tested against the instruction on the host. */
float tr_sqrtf_soft(float x)
{
    uint32_t ix = tr_float_bits(x), q, s, t, r, m;
    int e;

    if (x != x || x == 0.0f)
        return x;                           /* NaN, +-0 */
    if (ix & 0x80000000u)
        return tr_bits_float(0x7fc00000u);
    if (ix >= 0x7f800000u)
        return x;                           /* +inf */
    e = (int)(ix >> 23);
    m = ix & 0x007fffffu;
    if (e == 0) {                           /* subnormal: normalise */
        while ((m & 0x00800000u) == 0) {
            m <<= 1;
            e--;
        }
        e++;
        m &= 0x007fffffu;
    }
    e -= 127;
    m |= 0x00800000u;
    if (e & 1)
        m <<= 1;                            /* make the exponent even */
    e = (e - (e & 1)) / 2;                  /* floor(e/2), e now even */
    /* m is in [2^23, 2^25): sqrt(m * 2^-23) in [1, 2). Produce 24 bits. */
    m <<= 1;
    q = s = 0;
    r = 0x01000000u;
    while (r != 0) {
        t = s + r;
        if (t <= m) {
            s = t + r;
            m -= t;
            q += r;
        }
        m <<= 1;
        r >>= 1;
    }
    /* round to nearest: the remainder decides (ties cannot occur) */
    if (m != 0)
        q += q & 1u;
    ix = (q >> 1) + ((uint32_t)(e + 126) << 23);
    return tr_bits_float(ix);
}
