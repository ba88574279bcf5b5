/* tinyring: the layer kernels tr_model runs, exported (tr_ prefix) so the
 * tests can drive each one alone and compare fast against reference.
 *
 * Conventions: outputs first, inputs next, shape last. Shapes come from a
 * resolved struct tr_layer (per-sample in_* / out_* and the description);
 * n is the number of samples. Tensors are float32 NCHW. Every backward
 * OVERWRITES its parameter gradients and its input gradient dx; dx may be
 * NULL when the input needs no gradient (the first layer).
 * A "_ref" kernel is the plain loop the fast one must match within float
 * rounding; the fast one may need scratch (see *_scratch_floats).
 */
#ifndef TR_LAYER_KERNELS_H
#define TR_LAYER_KERNELS_H

#include <stddef.h>
#include "tr_model.h"

/* 1 where the target is Arm's scalar FPU with 32 single registers in
 * Thumb-2 (Cortex-M4F, M7, M33) and the compiler takes GNU assembly: the
 * GEMM tiles, conv1's plane kernels and the lean conv bands' row copies
 * there are written in assembly. (Helium targets have vector kernels of
 * their own.) */
#if defined(__GNUC__) && defined(__thumb2__) && defined(__ARM_FP) && (__ARM_FP & 4) && \
    !defined(__ARM_NEON) && !(defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2))
#define TR_VFP_ASM 1
#else
#define TR_VFP_ASM 0
#endif

/* 1 where GCC's vector extension has a target's vector registers to work
 * with (x86 SSE2 and up, 64-bit Arm NEON): the GEMM's vector tiles, the
 * conv's shifted planes and the linear layer's blocks are built on it. */
#if defined(__GNUC__) && (defined(__AVX512F__) || defined(__AVX__) || \
                          defined(__ARM_NEON) || defined(__SSE2__))
#define TR_HOST_VECTORS 1
#else
#define TR_HOST_VECTORS 0
#endif

#if TR_HOST_VECTORS
/* The host's own vector: TR_VL floats in one register (16 with AVX-512, 8
 * with AVX, 4 with SSE2 or NEON). A kernel's 16 lanes (the lanes16 sums,
 * the pool's 16 windows) are TR_V16 of them side by side, lane j in vector
 * j / TR_VL: wider GCC vectors than the registers are split by the
 * compiler through the stack (AVX2 spilled every sum of a 64-byte vector).
 * The GEMM's tiles take the same width (TR_VW, tr_kernel_gemm.c). */
#if defined(__AVX512F__) && !defined(TR_VEC256)
#define TR_VL 16
#elif defined(__AVX__)
#define TR_VL 8
#else
#define TR_VL 4
#endif
#define TR_V16 (16 / TR_VL)
typedef float tr_vfl __attribute__((vector_size(TR_VL * 4)));
typedef int32_t tr_vil __attribute__((vector_size(TR_VL * 4)));
/* v = the TR_VL floats at p (any alignment), and back */
#define TR_VLOAD(v, p) __builtin_memcpy(&(v), (p), sizeof(tr_vfl))
#define TR_VSTORE(p, v) __builtin_memcpy((p), &(v), sizeof(tr_vfl))
#endif

/* An empty asm through which the compiler must keep vector v in a register
 * as it is: one load of it, not one folded into each of its uses. The
 * constraint for a vector register is "v" on x86 and "w" on Arm. */
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define TR_IN_REGISTER(v) __asm__("" : "+v"(v))
#elif defined(__GNUC__) && (defined(__aarch64__) || defined(__arm__))
#define TR_IN_REGISTER(v) __asm__("" : "+w"(v))
#else
#define TR_IN_REGISTER(v) ((void)0)
#endif

/* C (M, N; row stride ldc) += A (M, K; lda) * B (K, N; ldb), row-major. */
void tr_gemm_ref(float *c, const float *a, const float *b, size_t m, size_t n,
                 size_t k, size_t lda, size_t ldb, size_t ldc);
void tr_gemm(float *c, const float *a, const float *b, size_t m, size_t n,
             size_t k, size_t lda, size_t ldb, size_t ldc);
/* C (M, N; ldc) = A * B: the same, overwriting C (its old values unread). */
void tr_gemm_set(float *c, const float *a, const float *b, size_t m, size_t n,
                 size_t k, size_t lda, size_t ldb, size_t ldc);

/* C (M, N; ldc) += A^T * B with A stored (K, M; lda): c[i][j] adds
 * a[p][i]*b[p][j] for p ascending, tr_gemm's contract with A transposed
 * (tr_kernel_gemm.c); _set overwrites C (from +0). */
void tr_gemm_at_ref(float *c, const float *a, const float *b, size_t m, size_t n, size_t k,
                    size_t lda, size_t ldb, size_t ldc);
void tr_gemm_at(float *c, const float *a, const float *b, size_t m, size_t n, size_t k,
                size_t lda, size_t ldb, size_t ldc);
void tr_gemm_at_set(float *c, const float *a, const float *b, size_t m, size_t n, size_t k,
                    size_t lda, size_t ldb, size_t ldc);

/* The rows of a GEMM operand on a 3-D grid: row r = (r0, r1, r2), r2
 * fastest, r1 < n1, r2 < n2, starts at base + r0*s0 + r1*s1 + r2*s2 (the
 * convolutions' taps (ic, ki, kj) as shifted input planes, docs/DESIGN.md
 * "Kernels"). The products and their order are tr_gemm's. */
struct tr_gemm_grid {
    size_t n1, n2;
    size_t s0, s1, s2;
};
/* C (M, N; ldc) += A^T * B with A stored (K, M; lda), as tr_gemm_at, and
 * B's row p at b + grid(p); with bias, row i of C starts at bias[i]
 * instead of its old values (C = bias + A^T B, the conv's forward order) */
void tr_gemm_at_grid_ref(float *c, const float *a, const float *b,
                        const struct tr_gemm_grid *g, size_t m, size_t n, size_t k,
                        size_t lda, size_t ldc);
void tr_gemm_at_grid(float *c, const float *a, const float *b, const struct tr_gemm_grid *g,
                     size_t m, size_t n, size_t k, size_t lda, size_t ldc, const float *bias);
/* C (M, N; ldc) += A (M, K) * B (K, N; ldb) with A's row i at a + grid(i) */
void tr_gemm_grid_a_ref(float *c, const float *a, const struct tr_gemm_grid *g,
                        const float *b, size_t m, size_t n, size_t k, size_t ldb, size_t ldc);
void tr_gemm_grid_a(float *c, const float *a, const struct tr_gemm_grid *g, const float *b,
                    size_t m, size_t n, size_t k, size_t ldb, size_t ldc);

/* Conv2d: x (n, IC, H, W), w (OC, IC, KH, KW), b (OC), y (n, OC, OH, OW). */
void tr_conv2d_forward_ref(float *y, const float *x, const float *w, const float *b,
                           const struct tr_layer *l, unsigned n);
void tr_conv2d_forward(float *y, const float *x, const float *w, const float *b,
                       const struct tr_layer *l, unsigned n, float *scratch);
/* dw (OC, IC, KH, KW), db (OC), dx (n, IC, H, W) or NULL. */
void tr_conv2d_backward_ref(float *dx, float *dw, float *db, const float *dy,
                            const float *x, const float *w,
                            const struct tr_layer *l, unsigned n);
void tr_conv2d_backward(float *dx, float *dw, float *db, const float *dy,
                        const float *x, const float *w,
                        const struct tr_layer *l, unsigned n, float *scratch);
/* Floats of scratch the fast conv kernels need for this layer:
 * col (IC*KH*KW, OH*OW), dy^T (OH*OW, OC), dw^T and w^T (IC*KH*KW, OC),
 * column masks (KW, OH*OW) for stride-1 "same" convolutions. */
size_t tr_conv2d_scratch_floats(const struct tr_layer *l);

/* BatchNorm2d, eps 1e-5, momentum 0.1. gb = gamma (C) then beta (C);
 * run = running mean (C) then running var (C); save = batch mean (C) then
 * 1/sqrt(biased var + eps) (C), written by the training forward for
 * backward, which recomputes xhat from x instead of storing it. */
void tr_bn2d_forward_train(float *y, float *save, float *run, const float *x,
                           const float *gb, const struct tr_layer *l, unsigned n);
void tr_bn2d_forward_eval(float *y, const float *x, const float *gb,
                          const float *run, const struct tr_layer *l, unsigned n);
/* The same followed by ReLU in one pass: y = max(0, bn(x)). */
void tr_bn2d_forward_train_relu(float *y, float *save, float *run, const float *x,
                                const float *gb, const struct tr_layer *l, unsigned n);
void tr_bn2d_forward_eval_relu(float *y, const float *x, const float *gb,
                               const float *run, const struct tr_layer *l, unsigned n);
void tr_bn2d_backward(float *dx, float *dgb, const float *dy, const float *x,
                      const float *gb, const float *save,
                      const struct tr_layer *l, unsigned n);
/* The pieces of one channel's plane (hw floats) the BN kernels above are
 * made of, so an execution plan that produces a plane at a time computes
 * the same bits (docs/DESIGN.md, "The arithmetic every plan and target
 * computes"). tr_sum_lanes16 is the lanes16 sum; sqdev the lanes16 sum of
 * (x - mean)^2; dsums the lanes16 sums of dy and dy*xhat; finish turns
 * channel c's mean and summed sqdev over cnt values into save and the
 * running stats; apply writes y = ((x - mean)*invstd)*g + b (max(0, y) with
 * relu); dx = k*((cnt*dy - dbeta) - xhat*dgamma) with k = g*invstd/cnt, and
 * dx may be x or dy. eval_invstd is 1/sqrt(running var + eps). */
float tr_sum_lanes16(const float *x, size_t n);
/* 16 named accumulators a0 .. a15 (TR_L16(TR_ZERO) declares them at +0,
 * TR_L16(TR_RED) adds them to s in order): a scalar FPU with 32 registers
 * keeps them in registers, where an array of them stays in memory at -O2
 * on the Cortex-M4F */
#define TR_L16(M) M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7) \
                  M(8) M(9) M(10) M(11) M(12) M(13) M(14) M(15)
#define TR_ZERO(j) float a##j = 0.0f;
#define TR_RED(j) s += a##j;

float tr_bn2d_plane_sqdev(const float *x, size_t n, float mean);
void tr_bn2d_plane_dsums(float *sb, float *sg, const float *dy, const float *x, size_t n,
                         float mean, float invstd);
void tr_bn2d_finish(float *save, float *run, unsigned C, unsigned c, float mean, float sq,
                    float cnt);
void tr_bn2d_plane_apply(float *y, const float *x, size_t hw, float mean, float invstd,
                         float g, float b, int relu);
void tr_bn2d_plane_dx(float *dx, const float *dy, const float *x, size_t hw, float mean,
                      float invstd, float k, float cnt, float dbeta, float dgamma);
float tr_bn2d_eval_invstd(float run_var);

/* ReLU over count floats; backward gates dy by y > 0 (PyTorch: grad 0 at 0).
 * tr_relu_inplace is the forward with y == x (the model runs a ReLU in place
 * after conv, BN and linear layers, see tr_model_relu_in_place). */
void tr_relu_forward(float *y, const float *x, size_t count);
void tr_relu_inplace(float *x, size_t count);
/* 1 if layer i of m is a ReLU that overwrites its input's buffer */
int tr_model_relu_in_place(const struct tr_model *m, unsigned i);
/* 1 if a BatchNorm layer of m would see one value per channel with n samples
 * (n * H * W == 1): training refuses it, as PyTorch does */
int tr_model_bn_single_value(const struct tr_model *m, unsigned n);
void tr_relu_backward(float *dx, const float *dy, const float *y, size_t count);

/* MaxPool2d, window k, stride s, no padding, floor. Backward routes dy to
 * the first element of each window (row-major) equal to the forward max, as
 * PyTorch's argmax does, recomputing it from x and y: nothing saved. */
void tr_maxpool2d_forward(float *y, const float *x, const struct tr_layer *l, unsigned n);
void tr_maxpool2d_backward(float *dx, const float *dy, const float *x, const float *y,
                           const struct tr_layer *l, unsigned n);
/* The same followed by the backward of the ReLU that produced x: dy goes
 * through only where the window's max is > 0 (x at the argmax is the max). */
void tr_maxpool2d_relu_backward(float *dx, const float *dy, const float *x, const float *y,
                                const struct tr_layer *l, unsigned n);
/* One plane (H, W) of the two above (relu 0 or 1), same bits. dx may be x
 * when tr_maxpool2d_in_place(l) (2x2 windows, stride 2: every input is read
 * by one window at most), else it must not overlap x. */
int tr_maxpool2d_in_place(const struct tr_layer *l);
void tr_maxpool2d_backward_plane(float *dx, const float *dy, const float *x, const float *y,
                                 const struct tr_layer *l, int relu);

/* A BN plane's affine map and optional ReLU (tr_bn2d_plane_apply's
 * arguments), and a pool over the plane it makes (one plane of l): forward
 * y = pool(apply(x)); backward dx (H, W) = the pool's [relu] backward of
 * dy with the pool's input apply(x) and its output y, dx not overlapping x.
 * The bits of tr_bn2d_plane_apply into t (H, W) followed by the pool's
 * plane kernels; a 2x2 stride-2 forward never writes t (each window's
 * values are made in registers), nor does the backward where the target
 * has AVX-512. */
struct tr_bn_plane {
    float mean, invstd, g, b;
    int relu;
};
void tr_maxpool2d_bn_forward_plane(float *y, const float *x, const struct tr_bn_plane *bn,
                                   const struct tr_layer *l, float *t);
void tr_maxpool2d_bn_backward_plane(float *dx, const float *dy, const float *x,
                                    const float *y, const struct tr_bn_plane *bn,
                                    const struct tr_layer *l, float *t);

/* For a 2x2 stride-2 pool (tr_maxpool2d_in_place): the forward plane also
 * writes each window's argmax to arg (OH*OW bytes, 0..3 row-major in the
 * window: the first element greater than all before it, the one the
 * backward finds again by its bits), and the backward takes it from there
 * instead of making the plane again: dx (H, W) = dy at each window's
 * argmax where the gate passes (relu: the window's max y > 0), +0 else.
 * The same bits as the two plane kernels above. */
void tr_maxpool2d_bn_forward_plane_arg(float *y, uint8_t *arg, const float *x,
                                       const struct tr_bn_plane *bn, const struct tr_layer *l,
                                       float *t);
void tr_maxpool2d_backward_plane_arg(float *dx, const float *dy, const uint8_t *arg,
                                     const float *y, const struct tr_layer *l, int relu);

/* For a 2x2 stride-2 pool, the lean plan's backward: from the plane x
 * (H, W) the BN map bn makes the pool's input of, each window's max into
 * y (unless NULL), its argmax into arg (0..3 as above, TR_POOL_SHUT where
 * the ReLU's gate is shut) and dx (H, W, not overlapping x): the bits of
 * tr_maxpool2d_bn_backward_plane, with no plane written in between.
 * tr_maxpool2d_plane_route makes the same dx again from dy and those
 * bytes alone. */
#define TR_POOL_SHUT 4u
void tr_maxpool2d_bn_plane_keep(float *dx, float *y, uint8_t *arg, const float *x,
                                const float *dy, const struct tr_bn_plane *bn,
                                const struct tr_layer *l);
void tr_maxpool2d_plane_route(float *dx, const float *dy, const uint8_t *arg,
                              const struct tr_layer *l);

/* Conv2d in bands of q output positions (lean plan): the bits of the two
 * kernels above with q * IC*K*K floats of scratch
 * (tr_conv2d_band_floats). dx may be x: each sample's dx is written after
 * its x was read (or NULL). */
size_t tr_conv2d_band_floats(const struct tr_layer *l, size_t q);
void tr_conv2d_forward_band(float *y, const float *x, const float *w, const float *b,
                            const struct tr_layer *l, unsigned n, float *scratch, size_t q);
void tr_conv2d_backward_band(float *dx, float *dw, float *db, const float *dy,
                             const float *x, const float *w,
                             const struct tr_layer *l, unsigned n, float *scratch, size_t q);
/* One sample's input zero-padded to (IC, H+2P, W+2P) (pad_floats of it);
 * output plane oc from it (w_oc = w + oc*IC*K*K, its bias b); and the
 * weight gradient of that plane added into dw_oc (IC*K*K) from the plane's
 * output gradient g (OH, OW): the conv kernels' bits, one plane at a time. */
size_t tr_conv2d_pad_floats(const struct tr_layer *l);
void tr_conv2d_pad(float *xpad, const float *x, const struct tr_layer *l);
void tr_conv2d_plane(float *y, const float *xpad, const float *w_oc, float b,
                     const struct tr_layer *l);
void tr_conv2d_plane_dw(float *dw_oc, const float *xpad, const float *g,
                        const struct tr_layer *l);
/* Input row or column o*S - P + t lies in [0, in) for o in [*lo, *hi)
 * (inline: the conv kernels ask it per kernel row and column). */
static inline void tr_conv2d_valid_range(unsigned *lo, unsigned *hi, unsigned t, unsigned s,
                                         unsigned p, unsigned in, unsigned out)
{
    long a = (long)p - (long)t;              /* o*s >= p - t */
    long b = (long)in + (long)p - (long)t;   /* o*s <  in + p - t */
    long l = a <= 0 ? 0 : (a + (long)s - 1) / (long)s;
    long h = b <= 0 ? 0 : (b + (long)s - 1) / (long)s;
    if (h > (long)out)
        h = (long)out;
    if (l > h)
        l = h;
    *lo = (unsigned)l;
    *hi = (unsigned)h;
}

/* d[0..n) = s[0..n) (the regions do not overlap): the scalar targets'
 * im2col copies, a few to a few hundred floats each. On Thumb-2 four floats
 * go per load-multiple and store-multiple pair, which GCC does not emit for
 * such a loop: with VFP assembly (TR_VFP_ASM) the whole loop is assembly,
 * 4 instructions a turn; on Helium targets one pair per turn of a C loop,
 * which GCC closes with the low-overhead loop instruction. The bits are
 * moved, not computed. */
static inline void tr_copy_floats(float *restrict d, const float *restrict s, size_t n)
{
#if TR_VFP_ASM
    size_t quads = n / 4;

    if (quads)
        __asm__ volatile("1:\n\t"
                         "ldmia %[s]!, {r0, r1, r2, r3}\n\t"
                         "stmia %[d]!, {r0, r1, r2, r3}\n\t"
                         "subs %[q], %[q], #1\n\t"
                         "bne 1b"
                         : [s] "+r"(s), [d] "+r"(d), [q] "+r"(quads)
                         :
                         : "r0", "r1", "r2", "r3", "cc", "memory");
    n %= 4;
#elif defined(__GNUC__) && defined(__thumb2__)
    for (; n >= 4; n -= 4)
        __asm__ volatile("ldmia %[s]!, {r0, r1, r2, r3}\n\t"
                         "stmia %[d]!, {r0, r1, r2, r3}"
                         : [s] "+r"(s), [d] "+r"(d)
                         :
                         : "r0", "r1", "r2", "r3", "memory");
#else
    for (; n >= 4; n -= 4, d += 4, s += 4) {    /* one pointer step per 4 floats */
        d[0] = s[0];
        d[1] = s[1];
        d[2] = s[2];
        d[3] = s[3];
    }
#endif
    for (; n > 0; n--)
        *d++ = *s++;
}

#if TR_VFP_ASM
/* d[0..n) += s[0..n), each d + s once (the regions do not overlap): four
 * floats a turn by load-multiple, four adds and store-multiple, then the
 * rest; the M4F's col2im and lean band adds. The other targets keep their
 * plain loops, which their compilers do as well or better (RV32 and M55
 * counted more instructions through a shared plain form). */
static inline void tr_vfp_add(float *restrict d, const float *restrict s, size_t n)
{
    size_t quads = n / 4, i;

    if (quads)
        __asm__ volatile("1:\n\t"
                         "vldmia %[s]!, {s0-s3}\n\t"
                         "vldmia %[d], {s4-s7}\n\t"
                         "vadd.f32 s4, s4, s0\n\t"
                         "vadd.f32 s5, s5, s1\n\t"
                         "vadd.f32 s6, s6, s2\n\t"
                         "vadd.f32 s7, s7, s3\n\t"
                         "vstmia %[d]!, {s4-s7}\n\t"
                         "subs %[q], %[q], #1\n\t"
                         "bne 1b"
                         : [d] "+r"(d), [s] "+r"(s), [q] "+r"(quads)
                         :
                         : "s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "cc", "memory");
    for (i = 0; i < n % 4; i++)
        d[i] += s[i];
}
#endif

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 2)
/* Helium's floating-point vector instructions compute with the standard
 * FPSCR value, which flushes subnormal inputs and results to zero; the
 * scalar FPU and every other target keep them. A kernel's Helium block runs
 * between these two and, when tr_mve_flushed says a subnormal was met
 * (FPSCR's input-denormal or underflow flag raised), leaves its outputs
 * unwritten and is computed again on the scalar FPU. */
#define TR_FPSCR_IDC (1u << 7)   /* an input was subnormal (flushed) */
#define TR_FPSCR_UFC (1u << 3)   /* a result was tiny (flushed) */

/* clears the two flags; returns FPSCR as it was */
static inline unsigned tr_mve_begin(void)
{
    const unsigned fpscr = __builtin_arm_get_fpscr();
    __builtin_arm_set_fpscr(fpscr & ~(TR_FPSCR_IDC | TR_FPSCR_UFC));
    return fpscr;
}

/* puts the two flags back as tr_mve_begin found them; returns 1 if the
 * block raised one */
static inline int tr_mve_flushed(unsigned fpscr)
{
    const unsigned mask = TR_FPSCR_IDC | TR_FPSCR_UFC, now = __builtin_arm_get_fpscr();
    __builtin_arm_set_fpscr((now & ~mask) | (fpscr & mask));
    return (now & mask) != 0;
}
#endif

/* Linear: x (n, IN), w (OUT, IN), b (OUT), y (n, OUT); IN = in_c*in_h*in_w. */
void tr_linear_forward_ref(float *y, const float *x, const float *w, const float *b,
                           const struct tr_layer *l, unsigned n);
void tr_linear_forward(float *y, const float *x, const float *w, const float *b,
                       const struct tr_layer *l, unsigned n);
void tr_linear_backward(float *dx, float *dw, float *db, const float *dy,
                        const float *x, const float *w,
                        const struct tr_layer *l, unsigned n);

#endif /* TR_LAYER_KERNELS_H */
