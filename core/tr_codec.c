/* tinyring: the gradient codecs (formats in tr_codec.h).
 *
 * Bit-exact on every target: each operation is one IEEE binary32 operation
 * (a divide for the scale and the quotient, a multiply to decode, a
 * subtract for the residual), rounding to integers is done on the integer
 * and fraction parts (exact for |t| < 2^23), and nothing is fused or
 * reordered (-ffp-contract=off, no -ffast-math). */
#include "tr_config.h"   /* first: limits and the float guard */
#include "tr_codec.h"
#include "tr_error.h"
#include "tr_util.h"

#define EXP_MASK 0x7F800000u

static int finite_bits(uint32_t u)
{
    return (u & EXP_MASK) != EXP_MASK;
}

int tr_codec_finite(const float *x, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (!finite_bits(tr_float_bits(x[i])))
            return 0;
    return 1;
}

int tr_codec_valid(int codec)
{
    return codec >= TR_CODEC_NONE && codec < TR_CODEC_COUNT;
}

const char *tr_codec_name(int codec)
{
    switch (codec) {
    case TR_CODEC_NONE: return "none";
    case TR_CODEC_BF16: return "bf16";
    case TR_CODEC_INT8: return "int8";
    case TR_CODEC_INT4: return "int4";
    default:            return "?";
    }
}

int tr_codec_lossy(int codec)
{
    return codec == TR_CODEC_BF16 || codec == TR_CODEC_INT8 || codec == TR_CODEC_INT4;
}

/* the largest |q| of a scaled codec */
static int qmax_of(int codec)
{
    return codec == TR_CODEC_INT8 ? 127 : 7;
}

uint32_t tr_codec_block_values(int codec)
{
    return codec == TR_CODEC_INT8 || codec == TR_CODEC_INT4 ? TR_CODEC_BLOCK : 1u;
}

/* bytes of a block of m values (1 <= m <= its block's values) */
static size_t block_bytes_of(int codec, size_t m)
{
    switch (codec) {
    case TR_CODEC_NONE: return 4u * m;
    case TR_CODEC_BF16: return 2u * m;
    case TR_CODEC_INT8: return 4u + m;
    case TR_CODEC_INT4: return 4u + (m + 1u) / 2u;
    default:            return 0;
    }
}

uint32_t tr_codec_block_bytes(int codec)
{
    return (uint32_t)block_bytes_of(codec, tr_codec_block_values(codec));
}

size_t tr_codec_bytes(int codec, size_t n)
{
    size_t bv, full, rest;
    if (!tr_codec_valid(codec))
        return 0;
    bv = tr_codec_block_values(codec);
    full = n / bv;
    rest = n % bv;
    return full * block_bytes_of(codec, bv) + (rest ? block_bytes_of(codec, rest) : 0u);
}

/* ---- bf16 */

static uint16_t bf16_of(uint32_t u)
{
    uint32_t r = (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
    if ((r & 0x7F80u) == 0x7F80u)
        r = u >> 16;                    /* would round to infinity: cut */
    return (uint16_t)r;
}

/* ---- scaled blocks */

/* t rounded to nearest, ties to even; |t| <= 127 */
static int32_t round_even(float t)
{
    int32_t i = (int32_t)t;             /* toward zero */
    float f = t - (float)i;             /* exact */
    if (f > 0.5f || (f == 0.5f && (i & 1)))
        i++;
    else if (f < -0.5f || (f == -0.5f && (i & 1)))
        i--;
    return i;
}

/* the scale of a block whose largest magnitude is amax */
static float scale_of(float amax, int qmax)
{
    float qm = (float)qmax;
    float s = amax / qm;
    /* decoding must never overflow: qmax * s finite */
    while (!finite_bits(tr_float_bits(qm * s)))
        s = tr_bits_float(tr_float_bits(s) - 1u);
    return s;
}

static int32_t quant(float x, float s, int qmax)
{
    float t, qm = (float)qmax;
    if (s == 0.0f)
        return 0;                       /* all zero, or below the smallest scale */
    t = x / s;
    if (t > qm)
        t = qm;
    if (t < -qm)
        t = -qm;
    return round_even(t);
}

static int encode_scaled(int codec, const float *x, size_t n, uint8_t *out, float *res)
{
    size_t bv = TR_CODEC_BLOCK, at = 0;
    int qmax = qmax_of(codec);

    while (at < n) {
        size_t m = n - at < bv ? n - at : bv, i;
        float amax = 0.0f, s;
        uint8_t *q = out + 4;
        for (i = 0; i < m; i++) {
            float a = x[at + i];
            if (!finite_bits(tr_float_bits(a)))
                return TR_ERR_RANGE;
            if (a < 0.0f)
                a = -a;
            if (a > amax)
                amax = a;
        }
        s = scale_of(amax, qmax);
        tr_put_le32(out, tr_float_bits(s));
        if (codec == TR_CODEC_INT4) {
            for (i = 0; i < (m + 1u) / 2u; i++)
                q[i] = 0;
        }
        for (i = 0; i < m; i++) {
            int32_t v = quant(x[at + i], s, qmax);
            if (codec == TR_CODEC_INT8)
                q[i] = (uint8_t)(int8_t)v;
            else
                q[i / 2u] = (uint8_t)(q[i / 2u] | (((uint32_t)v & 0xFu) << (4u * (i & 1u))));
            if (res)
                res[at + i] = x[at + i] - (float)v * s;
        }
        out += block_bytes_of(codec, m);
        at += m;
    }
    return 0;
}

/* Decodes the scaled blocks of in into out (add: out = decoded + out). */
static int decode_scaled(int codec, const uint8_t *in, size_t n, float *out, int add)
{
    size_t bv = TR_CODEC_BLOCK, at = 0;
    int qmax = qmax_of(codec);

    while (at < n) {
        size_t m = n - at < bv ? n - at : bv, i;
        uint32_t su = tr_get_le32(in);
        float s = tr_bits_float(su);
        const uint8_t *q = in + 4;
        if ((su >> 31) != 0u || !finite_bits(su) || !finite_bits(tr_float_bits((float)qmax * s)))
            return TR_ERR_PROTO;
        if (codec == TR_CODEC_INT4 && (m & 1u) && (q[m / 2u] >> 4) != 0u)
            return TR_ERR_PROTO;        /* the padding nibble */
        for (i = 0; i < m; i++) {
            int32_t v;
            float d;
            if (codec == TR_CODEC_INT8) {
                v = (int32_t)(int8_t)q[i];
            } else {
                uint32_t nib = ((uint32_t)q[i / 2u] >> (4u * (i & 1u))) & 0xFu;
                v = nib >= 8u ? (int32_t)nib - 16 : (int32_t)nib;
            }
            if (v < -qmax)
                return TR_ERR_PROTO;
            d = (float)v * s;
            out[at + i] = add ? d + out[at + i] : d;
        }
        in += block_bytes_of(codec, m);
        at += m;
    }
    return 0;
}

int tr_codec_encode(int codec, const float *x, size_t n, uint8_t *out, float *res)
{
    size_t i;
    switch (codec) {
    case TR_CODEC_NONE:
        for (i = 0; i < n; i++) {
            uint32_t u = tr_float_bits(x[i]);
            if (!finite_bits(u))
                return TR_ERR_RANGE;
            tr_put_le32(out + 4u * i, u);
            if (res)
                res[i] = 0.0f;
        }
        return 0;
    case TR_CODEC_BF16:
        for (i = 0; i < n; i++) {
            uint32_t u = tr_float_bits(x[i]);
            uint16_t h;
            if (!finite_bits(u))
                return TR_ERR_RANGE;
            h = bf16_of(u);
            tr_put_le16(out + 2u * i, h);
            if (res)
                res[i] = x[i] - tr_bits_float((uint32_t)h << 16);
        }
        return 0;
    case TR_CODEC_INT8:
    case TR_CODEC_INT4:
        return encode_scaled(codec, x, n, out, res);
    default:
        return TR_ERR_INVAL;
    }
}

static int decode(int codec, const uint8_t *in, size_t n, float *out, int add)
{
    size_t i;
    switch (codec) {
    case TR_CODEC_NONE:
    case TR_CODEC_BF16:
        for (i = 0; i < n; i++) {
            uint32_t u = codec == TR_CODEC_NONE ? tr_get_le32(in + 4u * i)
                                                : (uint32_t)tr_get_le16(in + 2u * i) << 16;
            float d;
            if (!finite_bits(u))
                return TR_ERR_PROTO;
            d = tr_bits_float(u);
            out[i] = add ? d + out[i] : d;
        }
        return 0;
    case TR_CODEC_INT8:
    case TR_CODEC_INT4:
        return decode_scaled(codec, in, n, out, add);
    default:
        return TR_ERR_INVAL;
    }
}

int tr_codec_decode(int codec, const uint8_t *in, size_t n, float *out)
{
    return decode(codec, in, n, out, 0);
}

int tr_codec_decode_add(int codec, const uint8_t *in, size_t n, float *out)
{
    return decode(codec, in, n, out, 1);
}
