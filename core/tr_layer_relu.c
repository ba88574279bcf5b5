/* tinyring: ReLU. Plain loops; gcc vectorises them as they are. */
#include "tr_config.h"   /* first: limits and the float guard */
#include "tr_layer_kernels.h"

void tr_relu_forward(float *restrict y, const float *restrict x, size_t count)
{
    size_t i;
    for (i = 0; i < count; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

void tr_relu_inplace(float *x, size_t count)
{
    size_t i;
    for (i = 0; i < count; i++)
        x[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

void tr_relu_backward(float *restrict dx, const float *restrict dy,
                      const float *restrict y, size_t count)
{
    size_t i;
    /* dy read whatever y is: a select, which vectorises (with dy read only
     * where y > 0, GCC kept the loop scalar on AArch64) */
    for (i = 0; i < count; i++) {
        const float g = dy[i];
        dx[i] = y[i] > 0.0f ? g : 0.0f;
    }
}
