/* tinyring: conv's 8 x 8 transpose block in AVX registers (AVX, AVX2,
 * AVX-512): eight row loads, the in-register transpose (unpack, shuffle,
 * 128-bit lane permute) and eight row stores.
 * Included by tr_layer_conv.c alone, from its one #if that chooses the
 * kernel bodies per target; not a header of its own. */
#ifndef TR_CONV_AVX_H
#define TR_CONV_AVX_H

#include <immintrin.h>

/* one full 8 x 8 block: column c of a's block is row c of t's */
static void transpose8(float *restrict t, const float *restrict a, size_t rows, size_t cols)
{
    __m256 r[8], u[8], v[8];
    int j;

    for (j = 0; j < 8; j++)
        r[j] = _mm256_loadu_ps(a + j * cols);
    for (j = 0; j < 8; j += 2) {
        u[j] = _mm256_unpacklo_ps(r[j], r[j + 1]);
        u[j + 1] = _mm256_unpackhi_ps(r[j], r[j + 1]);
    }
    for (j = 0; j < 8; j += 4) {
        v[j] = _mm256_shuffle_ps(u[j], u[j + 2], _MM_SHUFFLE(1, 0, 1, 0));
        v[j + 1] = _mm256_shuffle_ps(u[j], u[j + 2], _MM_SHUFFLE(3, 2, 3, 2));
        v[j + 2] = _mm256_shuffle_ps(u[j + 1], u[j + 3], _MM_SHUFFLE(1, 0, 1, 0));
        v[j + 3] = _mm256_shuffle_ps(u[j + 1], u[j + 3], _MM_SHUFFLE(3, 2, 3, 2));
    }
    for (j = 0; j < 4; j++) {
        _mm256_storeu_ps(t + j * rows, _mm256_permute2f128_ps(v[j], v[j + 4], 0x20));
        _mm256_storeu_ps(t + (j + 4) * rows, _mm256_permute2f128_ps(v[j], v[j + 4], 0x31));
    }
}

#endif /* TR_CONV_AVX_H */
