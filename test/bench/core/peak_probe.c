/* peak_probe: this core's limit for the arithmetic the GEMM does, measured.
 *
 * core/ multiplies and adds separately (-ffp-contract=off), so the limit is
 * the rate of independent single-precision multiplies and adds, interleaved,
 * at the vector width the build uses: the same width tr_kernel_gemm.c picks
 * (16 lanes with AVX-512, 8 with AVX, 4 with SSE2 or NEON, else 1). The probe
 * runs two loops, each op counted as one FLOP per lane, keeps the best of
 * several repetitions of each, and takes the higher of the two:
 *   - chains: NCH independent multiply chains and NCH independent add chains
 *     (more than latency x throughput, so no chain waits for itself);
 *   - products: NPR multiplies that depend on no earlier multiply, beside
 *     NPR add chains: the GEMM's own pattern (a product of two loaded
 *     values, added to an accumulator). With AVX's 16 registers the chains
 *     loop cannot hold enough multiply chains to cover their latency
 *     (7 + 7 read 84-86 GFLOP/s on Zen 5, where 8 products and 8 add
 *     chains read 104-106 and the 32-register build's 256-bit chains 98-100):
 *     it read low, and the AVX2 build's fraction of it read high.
 * The same chains with fused multiply-adds (2 FLOPs per lane) are printed
 * beside it for information where the build has FMA.
 *
 * It also prints the seed ConvNet's FLOPs per training sample as bench-core
 * counts them (2 per multiply-accumulate of the convolutions and the linear
 * layer, forward and backward; conv1 has no input gradient), so scripts can
 * turn samples/s into a fraction of the peak.
 *
 * usage: peak_probe [ms]   (time per repetition, default 20; the best of 15)
 * prints: "peak_gflops X", "fma_gflops X" (if any), "flops_per_sample X"
 * and a human line "peak probe: ...". */
#define _POSIX_C_SOURCE 200112L
#include "bench_clock.h"
#include "tinyring.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__FMA__) || defined(__AVX512F__)
#include <immintrin.h>
#endif

#if defined(__GNUC__) && defined(__AVX512F__) && !defined(TR_VEC256)
#define PW 16
#define PNAME "AVX-512, 16 lanes"
#define NCH 12
#elif defined(__GNUC__) && defined(__AVX512F__)   /* core's 256-bit tiles (TR_VEC256) */
#define PW 8
#define PNAME "AVX-512 registers, 8 lanes"
#define NCH 12
#elif defined(__GNUC__) && defined(__AVX__)
/* 14 chains and the multiplier and addend: AVX's 16 registers (6 and 6
 * read 85 GFLOP/s on Zen 5 where 7 and 7 read 93-99 and the GEMM ran at
 * 105-107: the chains' latency, not the ports, limited the 12) */
#define PW 8
#define PNAME "AVX, 8 lanes"
#define NCH 7
#elif defined(__GNUC__) && (defined(__SSE2__) || defined(__ARM_NEON))
#define PW 4
#define PNAME "128-bit vectors, 4 lanes"
#define NCH 6
#else
#define PW 1
#define PNAME "scalar"
#define NCH 6
#endif
typedef float pv __attribute__((vector_size(PW * 4)));

/* keeps the compiler from knowing a value (so x * 1 and x + 0 stay) */
#define HIDE(v) __asm__ volatile("" : "+v"(v))
#if PW == 1 || defined(__ARM_NEON)
#undef HIDE
#define HIDE(v) __asm__ volatile("" : "+w"(v))
#endif

/* 12 named chains (arrays would live in memory): E(i) expands per chain */
#define EACH6(E) E(0) E(1) E(2) E(3) E(4) E(5)
#if NCH == 12
#define EACH(E) EACH6(E) E(6) E(7) E(8) E(9) E(10) E(11)
#elif NCH == 7
#define EACH(E) EACH6(E) E(6)
#else
#define EACH(E) EACH6(E)
#endif

/* iters rounds of NCH multiplies and NCH adds, all independent chains;
 * returns the seconds taken. The multiplier is 1 and the addend 0 (hidden
 * from the compiler), so the values stay normal and the rate is the
 * hardware's for ordinary operands. */
static double mul_add(long iters, float *sink)
{
    pv m = {0}, c = {0};
    double t0;
    long r;
#define DECL(i) pv x##i = m + (float)(i + 1), y##i = m + (float)(i + 2);
#define STEP(i) x##i = x##i * m; y##i = y##i + c;
#define KEEP(i) HIDE(x##i); HIDE(y##i);
#define SUM(i) *sink += x##i[0] + y##i[0];
    EACH(DECL)
    m += 1.0f;
    HIDE(m);
    HIDE(c);
    t0 = bench_now();
    for (r = 0; r < iters; r++) {
        EACH(STEP)
        /* an empty asm per chain and round: the compiler can neither fold
         * rounds together nor see that the values do not change */
        EACH(KEEP)
    }
    t0 = bench_now() - t0;
    EACH(SUM)
    return t0;
}

/* NPR add chains, and per round NPR multiplies of a value the compiler
 * must take as new each time (HIDE) by m: no multiply waits for another,
 * as in a GEMM's k step; the products are kept (SINK) so none is dropped */
#if NCH == 12
#define NPR 12
#define EACHP(E) EACH(E)
#else
#define NPR 8
#define EACHP(E) EACH6(E) E(6) E(7)
#endif
#define SINK(v) __asm__ volatile("" : : "v"(v))
#if PW == 1 || defined(__ARM_NEON)
#undef SINK
#define SINK(v) __asm__ volatile("" : : "w"(v))
#endif
static double products(long iters, float *sink)
{
    pv m = {0}, c = {0}, u = {0};
    double t0;
    long r;
#define PDECL(i) pv y##i = m + (float)(i + 2);
#define PSTEP(i) { pv t_; HIDE(u); t_ = u * m; SINK(t_); } y##i = y##i + c;
#define PKEEP(i) HIDE(y##i);
#define PSUM(i) *sink += y##i[0];
    EACHP(PDECL)
    m += 1.0f;
    u += 1.5f;
    HIDE(m);
    HIDE(c);
    t0 = bench_now();
    for (r = 0; r < iters; r++) {
        EACHP(PSTEP)
        EACHP(PKEEP)
    }
    t0 = bench_now() - t0;
    EACHP(PSUM)
    *sink += u[0];
    return t0;
}

#if defined(__AVX512F__) || defined(__FMA__)
#define HAVE_FMA 1
static pv fma_v(pv a, pv b, pv c)
{
#if PW == 16
    return (pv)_mm512_fmadd_ps((__m512)a, (__m512)b, (__m512)c);
#else
    return (pv)_mm256_fmadd_ps((__m256)a, (__m256)b, (__m256)c);
#endif
}

/* 2 x NCH independent fused multiply-add chains: x = x * m + c */
static double fma_chains(long iters, float *sink)
{
    pv m = {0}, c = {0};
    double t0;
    long r;
#define FSTEP(i) x##i = fma_v(x##i, m, c); y##i = fma_v(y##i, m, c);
    EACH(DECL)
    m += 1.0f;
    HIDE(m);
    HIDE(c);
    t0 = bench_now();
    for (r = 0; r < iters; r++) {
        EACH(FSTEP)
        EACH(KEEP)
    }
    t0 = bench_now() - t0;
    EACH(SUM)
    return t0;
}
#endif

/* best GFLOP/s of reps runs of about ms milliseconds each; flops per round
 * given */
static double best_rate(double (*run)(long, float *), double flops_per_round,
                        double ms, float *sink)
{
    long iters = 1000;
    double best = 0, t;
    int rep;

    while ((t = run(iters, sink)) < ms * 1e-3 / 4)   /* size a repetition */
        iters *= 2;
    for (rep = 0; rep < 15; rep++) {
        t = run(iters, sink);
        if (flops_per_round * (double)iters / t > best)
            best = flops_per_round * (double)iters / t;
    }
    return best * 1e-9;
}

/* the seed net's FLOPs per training sample: 2 per multiply-accumulate of
 * each conv (forward, weight gradient, and input gradient after the first
 * layer) and of the linear layer (forward and both gradients), from the
 * resolved layer shapes at batch 1 */
static double seed_flops_per_sample(void)
{
    struct tr_model_desc d;
    struct tr_model m;
    size_t bytes = 0;
    void *arena;
    double f = 0;
    unsigned li;

    tr_model_desc_convnet(&d, 16, 32, 10);
    if (tr_model_arena_size(&d, 1, &bytes) != 0 ||
        posix_memalign(&arena, TR_ARENA_ALIGN, bytes) != 0)
        return 0;
    if (tr_model_init(&m, &d, 1, arena, bytes) == 0)
        for (li = 0; li < m.n_layers; li++) {
            const struct tr_layer *l = &m.layer[li];
            double fwd;
            if (l->d.kind == TR_LAYER_CONV2D) {
                fwd = 2.0 * l->out_c * l->out_h * l->out_w * l->in_c * l->d.kernel * l->d.kernel;
                f += fwd * (li ? 3 : 2);
            } else if (l->d.kind == TR_LAYER_LINEAR) {
                fwd = 2.0 * l->in_c * l->out_c;
                f += fwd * 3;
            }
        }
    free(arena);
    return f;
}

int main(int argc, char **argv)
{
    double ms = argc > 1 ? atof(argv[1]) : 20;
    float sink = 0;
    const double chains = best_rate(mul_add, 2.0 * NCH * PW, ms, &sink);
    const double prods = best_rate(products, 2.0 * NPR * PW, ms, &sink);
    const double peak = chains > prods ? chains : prods;

    printf("peak probe: %s, the higher of %d multiply + %d add chains (%.1f) and %d "
           "products + %d add chains (%.1f): %.1f GFLOP/s "
           "(separate multiplies and adds, 1 FLOP each)\n", PNAME, NCH, NCH, chains, NPR, NPR,
           prods, peak);
    printf("peak_gflops %.2f\n", peak);
#ifdef HAVE_FMA
    {
        double fma = best_rate(fma_chains, 2.0 * 2 * NCH * PW, ms, &sink);
        printf("fma_gflops %.2f\n", fma);
    }
#endif
    printf("flops_per_sample %.0f\n", seed_flops_per_sample());
    return sink == 12345.0f;   /* uses the sink; never true */
}
