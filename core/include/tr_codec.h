/* tinyring: the gradient codecs of the compressed allreduce
 * (tr_allreduce_codec_start in tr_comm.h; design in docs/DESIGN.md,
 * "Compressed allreduce and periodic averaging").
 *
 * A codec turns n floats into bytes and back. Every format is little-endian
 * byte by byte and the arithmetic is plain C (one IEEE operation at a time,
 * -ffp-contract=off, integer rounding), so every rank and every target that
 * decodes the same bytes gets the same floats.
 *
 *   none  fp32 as it is: 4 bytes a value (the plain ring; here for tests)
 *   bf16  the top 16 bits of each float, rounded to nearest, ties to even;
 *         a finite value that would round to infinity is cut instead
 *         (truncated), so bf16 never makes an infinity. 2 bytes a value.
 *   int8  blocks of TR_CODEC_BLOCK values: a scale s (binary32, 4 bytes,
 *         finite, >= +0, 127*s finite) then one signed byte q per value,
 *         -127..127; value = (float)q * s. s = max|x| / 127 (one bit lower
 *         where 127*s would overflow), q = x / s rounded to nearest, ties to
 *         even, clamped. 68 bytes per 64 values; the last block of a range
 *         may be short (4 + m bytes for m values).
 *   int4  the same with q in -7..7, s = max|x| / 7, two values a byte (the
 *         first in the low nibble, two's complement); a short block of odd
 *         length leaves the last high nibble 0. 36 bytes per 64 values.
 *
 * Encoding refuses NaN and infinity (TR_ERR_RANGE) and writes nothing
 * useful then. Decoding checks the bytes (a scale that is negative, not
 * finite or too large, q = -128 or -8, a bf16 infinity or NaN, a nonzero
 * padding nibble): TR_ERR_PROTO, since the bytes come from a peer. */
#ifndef TR_CODEC_H
#define TR_CODEC_H

#include <stddef.h>
#include <stdint.h>

enum tr_codec {
    TR_CODEC_NONE = 0,
    TR_CODEC_BF16 = 1,
    TR_CODEC_INT8 = 2,
    TR_CODEC_INT4 = 3
};
#define TR_CODEC_COUNT 4

/* Values per scaled block (int8, int4). */
#define TR_CODEC_BLOCK 64u

/* 1 for a codec above, 0 otherwise. */
int tr_codec_valid(int codec);
/* "none", "bf16", "int8", "int4"; "?" for anything else. */
const char *tr_codec_name(int codec);
/* Does the codec lose information (and so want an error-feedback residual)? */
int tr_codec_lossy(int codec);
/* Values of one block (1 for none and bf16) and its bytes when full. */
uint32_t tr_codec_block_values(int codec);
uint32_t tr_codec_block_bytes(int codec);
/* Bytes of n values encoded (the last block may be short); 0 for a bad codec. */
size_t tr_codec_bytes(int codec, size_t n);

/* out[0 .. tr_codec_bytes(codec, n)) = x[0..n) encoded. res (n, may be NULL,
 * may not alias x): res[i] = x[i] - decoded[i], the error feedback.
 * 0, TR_ERR_RANGE (NaN or infinity in x), TR_ERR_INVAL (codec). */
int tr_codec_encode(int codec, const float *x, size_t n, uint8_t *out, float *res);

/* out[0..n) = the values of in[0 .. tr_codec_bytes(codec, n)).
 * 0, TR_ERR_PROTO (bytes no encoder writes), TR_ERR_INVAL (codec). */
int tr_codec_decode(int codec, const uint8_t *in, size_t n, float *out);

/* out[i] = decoded[i] + out[i] (the incoming partial sum first, then this
 * rank's own value). Same checks as tr_codec_decode; on TR_ERR_PROTO out is
 * partly updated. */
int tr_codec_decode_add(int codec, const uint8_t *in, size_t n, float *out);

/* 1 if every x[0..n) is finite. */
int tr_codec_finite(const float *x, size_t n);

#endif /* TR_CODEC_H */
