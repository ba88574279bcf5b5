/* tinyring: the reduction kernels of the collectives.
 *
 * The fast forms are plain restrict loops so the compiler vectorises them;
 * the _ref forms are the same arithmetic element by element and serve as the
 * reference in the tests. Both do one IEEE add (and one divide) per element,
 * so they agree bitwise; -ffp-contract=off keeps it so on every target. */
#include "tr_config.h"   /* first: limits and the float guard */
#include "tr_comm_internal.h"

void tr_comm_sum(float *restrict dst, const float *restrict src, size_t n)
{
    size_t i;
    /* dst (n), src (n) */
    for (i = 0; i < n; i++)
        dst[i] += src[i];
}

void tr_comm_sum_div(float *restrict dst, const float *restrict src, size_t n, float div)
{
    size_t i;
    /* a true divide, not a multiply by 1/div: x/1 stays exact */
    for (i = 0; i < n; i++)
        dst[i] = (dst[i] + src[i]) / div;
}

void tr_comm_rsum(float *restrict dst, const float *restrict src, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        dst[i] = src[i] + dst[i];
}

void tr_comm_rsum_div(float *restrict dst, const float *restrict src, size_t n, float div)
{
    size_t i;
    for (i = 0; i < n; i++)
        dst[i] = (src[i] + dst[i]) / div;
}

void tr_comm_div(float *restrict dst, size_t n, float div)
{
    size_t i;
    for (i = 0; i < n; i++)
        dst[i] = dst[i] / div;
}

void tr_comm_sum_ref(float *dst, const float *src, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) {
        float a = dst[i];
        float b = src[i];
        dst[i] = a + b;
    }
}

void tr_comm_sum_div_ref(float *dst, const float *src, size_t n, float div)
{
    size_t i;
    for (i = 0; i < n; i++) {
        float s = dst[i] + src[i];
        dst[i] = s / div;
    }
}

void tr_comm_rsum_ref(float *dst, const float *src, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) {
        float a = src[i];
        float b = dst[i];
        dst[i] = a + b;
    }
}

void tr_comm_rsum_div_ref(float *dst, const float *src, size_t n, float div)
{
    size_t i;
    for (i = 0; i < n; i++) {
        float s = src[i] + dst[i];
        dst[i] = s / div;
    }
}
