/* tinyring: the GEMM's tiles on a scalar FPU (Cortex-M4F in VFP assembly, RISC-V
 * F) and Helium (Cortex-M55), and the grid forms' reference loops there.
 * Included by tr_kernel_gemm.c alone, from its one #if that chooses the
 * tiles per target; not a header of its own. */
#ifndef TR_GEMM_SCALAR_H
#define TR_GEMM_SCALAR_H

/* ---- scalar FPU tile: Cortex-M4F (FPv4-SP), RISC-V F, 32 float registers
 *
 * A tile of up to 6 rows x 4 columns of C lives in 24 scalar accumulators;
 * with the 4 values of a B row, one A value and one product that is 30 of
 * the 32 float registers. Each k step loads the B row (4 loads and one
 * pointer step), one value of each of the 6 A rows (on Arm a post-increment
 * load each), and does 24 multiplies and 24 adds: on the Cortex-M4F 61
 * instructions with the loop's compare and branch, 2.54 per multiply-add.
 * RISC-V has no post-increment, so its loop walks 2 k steps per turn (the A
 * loads use offsets and each row pointer steps once per turn).
 *
 * GCC's first scheduling pass hoists loads and multiplies so far ahead that
 * 30 live values no longer fit and accumulators spill to the stack in the
 * loop (65 instructions per k step on the M4F, 103 on RV32; on the M55 the
 * Helium tile spills a Q register), so the tiles are compiled without it. */
#define TR_MR 6
#define TR_NR 4
#if defined(__riscv)
#define TR_KU 2   /* k steps per loop turn */
#else
#define TR_KU 1
#endif
#if defined(__GNUC__) && !defined(__clang__)
#define TR_TILE static inline __attribute__((always_inline, optimize("no-schedule-insns")))
#define TR_TILE_FN static __attribute__((optimize("no-schedule-insns")))
#else
#define TR_TILE static inline
#define TR_TILE_FN static
#endif

/* row i of the tile: accumulators ci0..ci3 start at C's values or +0 */
#define ACC_INIT(i)                                                           \
    float c##i##0 = acc ? c[i * ldc + 0] : 0.0f, c##i##1 = acc ? c[i * ldc + 1] : 0.0f, \
          c##i##2 = acc ? c[i * ldc + 2] : 0.0f, c##i##3 = acc ? c[i * ldc + 3] : 0.0f;
/* one k step of row i: its A value times the B row b0..b3 */
#define ROW_STEP(i)                                                           \
    if (mr > i) {                                                             \
        const float av = at ? ap[i] : *a##i++;                                \
        c##i##0 += av * b0; c##i##1 += av * b1;                               \
        c##i##2 += av * b2; c##i##3 += av * b3;                               \
    }
#define ACC_STORE(i)                                                          \
    if (mr > i) {                                                             \
        c[i * ldc + 0] = c##i##0; c[i * ldc + 1] = c##i##1;                   \
        c[i * ldc + 2] = c##i##2; c[i * ldc + 3] = c##i##3;                   \
    }

/* one k step of the whole tile: B row p, then each row's A value */
#define K_STEP()                                                              \
    do {                                                                      \
        const float b0 = b[0], b1 = b[1], b2 = b[2], b3 = b[3];              \
        b += ldb;                                                             \
        ROW_STEP(0) ROW_STEP(1) ROW_STEP(2) ROW_STEP(3) ROW_STEP(4) ROW_STEP(5) \
        if (at)                                                               \
            ap += lda;                                                        \
    } while (0)

/* the A row pointers of a tile of mr rows (the unused ones repeat the
 * last), for row-major A; ap walks transposed A one k step (lda) at a time */
#define A_ROWS()                                                              \
    const float *a0 = a, *a1 = mr > 1 ? a0 + lda : a0, *a2 = mr > 2 ? a1 + lda : a1; \
    const float *a3 = mr > 3 ? a2 + lda : a2, *a4 = mr > 4 ? a3 + lda : a3;   \
    const float *a5 = mr > 5 ? a4 + lda : a4, *ap = a

/* C (mr, 4) += A (mr, k) * B (k, 4), mr <= 6 and A's layout at
 * compile-time constants at every call, so the unused rows vanish */
TR_TILE void tile(float *restrict c, const float *restrict a, const float *restrict b,
                  size_t k, size_t lda, size_t ldb, size_t ldc, int acc, const int mr,
                  const int at)
{
    A_ROWS();
    size_t p, u;
    ACC_INIT(0) ACC_INIT(1) ACC_INIT(2) ACC_INIT(3) ACC_INIT(4) ACC_INIT(5)

    for (p = k / TR_KU; p > 0; p--) {
#if defined(__GNUC__)
#pragma GCC unroll 4
#endif
        for (u = 0; u < TR_KU; u++)
            K_STEP();
    }
    for (p = k % TR_KU; p > 0; p--)
        K_STEP();
    ACC_STORE(0) ACC_STORE(1) ACC_STORE(2) ACC_STORE(3) ACC_STORE(4) ACC_STORE(5)
}

#if defined(TR_GEMM_MVE)
/* ---- Helium tile: C (mr, 4) in one Q register per row -----------------
 *
 * Each k step loads the B row as one vector and, per row, multiplies it by
 * the row's A value (a general-purpose register, post-increment load) and
 * adds it to the row's accumulator: 1 + 6 + 12 vector and load instructions,
 * the B pointer step and the loop's LE, 21 instructions per 24
 * multiply-adds. 6 accumulators, B and the product fill the 8 Q registers. */
#define VACC_INIT(i) \
    float32x4_t v##i = acc && mr > i ? vld1q_f32(c + i * ldc) : vdupq_n_f32(0.0f);
#define VROW_STEP(i) \
    if (mr > i) v##i = vaddq_f32(v##i, vmulq_n_f32(bv, at ? ap[i] : *a##i++));
#define VACC_STORE(i) \
    if (mr > i) vst1q_f32(c + i * ldc, v##i);

/* the same tile with MVE; returns 1, C untouched, when any operation met a
 * subnormal (tr_mve_flushed), else 0 */
TR_TILE int tile_mve(float *restrict c, const float *restrict a, const float *restrict b,
                     size_t k, size_t lda, size_t ldb, size_t ldc, int acc, const int mr,
                     const int at)
{
    const unsigned fpscr = tr_mve_begin();
    A_ROWS();
    size_t p;
    VACC_INIT(0) VACC_INIT(1) VACC_INIT(2) VACC_INIT(3) VACC_INIT(4) VACC_INIT(5)

    for (p = 0; p < k; p++) {
        const float32x4_t bv = vld1q_f32(b);
        b += ldb;
        VROW_STEP(0) VROW_STEP(1) VROW_STEP(2) VROW_STEP(3) VROW_STEP(4) VROW_STEP(5)
        if (at)
            ap += lda;
    }
    if (tr_mve_flushed(fpscr))
        return 1;
    VACC_STORE(0) VACC_STORE(1) VACC_STORE(2) VACC_STORE(3) VACC_STORE(4) VACC_STORE(5)
    return 0;
}

/* a tile of mr rows: Helium, or the scalar FPU where Helium flushed */
TR_TILE void tile_rows(float *restrict c, const float *restrict a, const float *restrict b,
                       size_t k, size_t lda, size_t ldb, size_t ldc, int acc, const int mr,
                       const int at)
{
    if (tile_mve(c, a, b, k, lda, ldb, ldc, acc, mr, at))
        tile(c, a, b, k, lda, ldb, ldc, acc, mr, at);
}
#else
/* a tile of mr rows: the scalar FPU */
TR_TILE void tile_rows(float *restrict c, const float *restrict a, const float *restrict b,
                       size_t k, size_t lda, size_t ldb, size_t ldc, int acc, const int mr,
                       const int at)
{
    tile(c, a, b, k, lda, ldb, ldc, acc, mr, at);
}
#endif

#if TR_VFP_ASM
/* ---- tiles of 4, 5 and 6 rows x 4 columns in Arm VFP assembly (Thumb-2,
 * 32 single registers)
 *
 * The same operations as tile() in the same order, with what C cannot ask
 * of GCC: B rows, A values and C's rows moved by load-multiple (vldmia,
 * vstmia) and the k loop unrolled twice.
 *   - 4 and 5 rows take two k steps at once: the B rows k and k+1 in s0-s3
 *     and s4-s7, each row's A values for k and k+1 in one load (s8, s9),
 *     products in s10 and s11, accumulators from s12 (row r in s12+4r ..
 *     s15+4r). A row's pair of steps is 1 load, 8 multiplies and 8 adds, its
 *     accumulators taking step k before step k+1; 5 rows and the loop are 91
 *     instructions per 40 multiply-adds (2.275).
 *   - 6 rows leave no registers for a second B row: accumulators s8-s31,
 *     the B row s0-s3, the A value s4, products s5-s7; the step written
 *     twice per loop turn (VFP_LOOP_X2): 114 instructions per 48
 *     multiply-adds (2.375). Only a block of exactly 6 rows takes it.
 *   Each assembly string stays under the 4095 characters C99 promises (GCC
 *   and clang -pedantic check). */
#define VFP_ROW(ai, x0, x1, x2, x3)                                           \
    "vldmia %[" ai "]!, {s4}\n\t"                                             \
    "vmul.f32 s5, s4, s0\n\t"                                                 \
    "vmul.f32 s6, s4, s1\n\t"                                                 \
    "vadd.f32 " x0 ", " x0 ", s5\n\t"                                         \
    "vmul.f32 s7, s4, s2\n\t"                                                 \
    "vadd.f32 " x1 ", " x1 ", s6\n\t"                                         \
    "vmul.f32 s5, s4, s3\n\t"                                                 \
    "vadd.f32 " x2 ", " x2 ", s7\n\t"                                         \
    "vadd.f32 " x3 ", " x3 ", s5\n\t"
/* one row, steps k (A in s8, B in s0-s3) and k+1 (s9, s4-s7) */
#define VFP_PROW(ai, x0, x1, x2, x3)                                          \
    "vldmia %[" ai "]!, {s8-s9}\n\t"                                          \
    "vmul.f32 s10, s8, s0\n\t"                                                \
    "vmul.f32 s11, s8, s1\n\t"                                                \
    "vadd.f32 " x0 ", " x0 ", s10\n\t"                                        \
    "vmul.f32 s10, s8, s2\n\t"                                                \
    "vadd.f32 " x1 ", " x1 ", s11\n\t"                                        \
    "vmul.f32 s11, s8, s3\n\t"                                                \
    "vadd.f32 " x2 ", " x2 ", s10\n\t"                                        \
    "vmul.f32 s10, s9, s4\n\t"                                                \
    "vadd.f32 " x3 ", " x3 ", s11\n\t"                                        \
    "vmul.f32 s11, s9, s5\n\t"                                                \
    "vadd.f32 " x0 ", " x0 ", s10\n\t"                                        \
    "vmul.f32 s10, s9, s6\n\t"                                                \
    "vadd.f32 " x1 ", " x1 ", s11\n\t"                                        \
    "vmul.f32 s11, s9, s7\n\t"                                                \
    "vadd.f32 " x2 ", " x2 ", s10\n\t"                                        \
    "vadd.f32 " x3 ", " x3 ", s11\n\t"
/* one row, one step k (A in s8, B in s0-s3) */
#define VFP_SROW(ai, x0, x1, x2, x3)                                          \
    "vldmia %[" ai "]!, {s8}\n\t"                                             \
    "vmul.f32 s10, s8, s0\n\t"                                                \
    "vmul.f32 s11, s8, s1\n\t"                                                \
    "vadd.f32 " x0 ", " x0 ", s10\n\t"                                        \
    "vmul.f32 s10, s8, s2\n\t"                                                \
    "vadd.f32 " x1 ", " x1 ", s11\n\t"                                        \
    "vmul.f32 s11, s8, s3\n\t"                                                \
    "vadd.f32 " x2 ", " x2 ", s10\n\t"                                        \
    "vadd.f32 " x3 ", " x3 ", s11\n\t"
#define VFP_B "vldmia %[b], {s0-s3}\n\tadd %[b], %[b], %[ldb4]\n\t"
#define VFP_B2 VFP_B "vldmia %[b], {s4-s7}\n\tadd %[b], %[b], %[ldb4]\n\t"
#define VFP_ROWS6                                                             \
    VFP_ROW("a0", "s8", "s9", "s10", "s11")                                   \
    VFP_ROW("a1", "s12", "s13", "s14", "s15")                                 \
    VFP_ROW("a2", "s16", "s17", "s18", "s19")                                 \
    VFP_ROW("a3", "s20", "s21", "s22", "s23")                                 \
    VFP_ROW("a4", "s24", "s25", "s26", "s27")                                 \
    VFP_ROW("a5", "s28", "s29", "s30", "s31")
/* the rows r = 0..n-1 of the two-step tiles: accumulators s12+4r.. */
#define VFP_XROWS4(R)                                                         \
    R("a0", "s12", "s13", "s14", "s15")                                       \
    R("a1", "s16", "s17", "s18", "s19")                                       \
    R("a2", "s20", "s21", "s22", "s23")                                       \
    R("a3", "s24", "s25", "s26", "s27")
#define VFP_XROWS5(R) VFP_XROWS4(R) R("a4", "s28", "s29", "s30", "s31")
/* C's rows from or to the accumulators: t walks the rows, t2 holds ldc
 * bytes; the first row's registers, then the others' */
#define VFP_CFIRST(op, regs)                                                  \
    "ldr %[t], [%[args]]\n\t"                                                 \
    "ldr %[t2], [%[args], #4]\n\t"                                            \
    op " %[t], {" regs "}\n\t"
#define VFP_CNEXT(op, regs) "add %[t], %[t], %[t2]\n\t" op " %[t], {" regs "}\n\t"
#define VFP_C6(op)                                                            \
    VFP_CFIRST(op, "s8-s11") VFP_CNEXT(op, "s12-s15") VFP_CNEXT(op, "s16-s19") \
    VFP_CNEXT(op, "s20-s23") VFP_CNEXT(op, "s24-s27") VFP_CNEXT(op, "s28-s31")
#define VFP_CX4(op)                                                           \
    VFP_CFIRST(op, "s12-s15") VFP_CNEXT(op, "s16-s19") VFP_CNEXT(op, "s20-s23") \
    VFP_CNEXT(op, "s24-s27")
#define VFP_CX5(op) VFP_CX4(op) VFP_CNEXT(op, "s28-s31")

static const float tr_zero24[24];

/* C (rows, 4) += A (rows, k) * B (k, 4), or = with acc 0: the assembly
 * for C's rows (CROWS), the accumulator registers (ACCS) and the k loop
 * (LOOP, on t and k), around it the code that sets up its operands */
#define VFP_TILE(name, CROWS, ACCS, LOOP)                                     \
    static void name(float *c, const float *a, const float *b, size_t k,     \
                     size_t lda, size_t ldb, size_t ldc, int acc)            \
    {                                                                         \
        /* what the assembly reads from memory: C, its row stride in bytes, \
         * whether to start from C or from +0, and 24 zeros */               \
        const struct { float *c; size_t ldc4; int acc; const float *zero; } args = { \
            c, ldc * sizeof *c, acc, tr_zero24};                              \
        const float *a0 = a, *a1 = a0 + lda, *a2 = a1 + lda, *a3 = a2 + lda;  \
        const float *a4 = a3 + lda, *a5 = a4 + lda;                           \
        const size_t ldb4 = ldb * sizeof *b;                                  \
        size_t t, t2;                                                         \
        __asm__ volatile(                                                     \
            "ldr %[t], [%[args], #8]\n\t"                                     \
            "cmp %[t], #0\n\t"                                                \
            "beq 1f\n\t"                                                      \
            CROWS("vldmia")                                                   \
            "b 2f\n"                                                          \
            "1:\n\t"                                                          \
            "ldr %[t], [%[args], #12]\n\t"                                    \
            "vldmia %[t], {" ACCS "}\n"                                       \
            "2:\n\t"                                                          \
            LOOP                                                              \
            "5:\n\t"                                                          \
            CROWS("vstmia")                                                   \
            : [a0] "+r"(a0), [a1] "+r"(a1), [a2] "+r"(a2), [a3] "+r"(a3),     \
              [a4] "+r"(a4), [a5] "+r"(a5), [b] "+r"(b), [t] "=&r"(t),        \
              [t2] "=&r"(t2)                                                  \
            : [k] "r"(k), [ldb4] "r"(ldb4), [args] "r"(&args)                 \
            : "s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9",     \
              "s10", "s11", "s12", "s13", "s14", "s15", "s16", "s17", "s18",  \
              "s19", "s20", "s21", "s22", "s23", "s24", "s25", "s26", "s27",  \
              "s28", "s29", "s30", "s31", "cc", "memory");                    \
    }
/* k loop: two steps per turn, then the odd one */
#define VFP_LOOP2(PAIR, SINGLE)                                               \
    "lsrs %[t], %[k], #1\n\t"                                                 \
    "beq 4f\n"                                                                \
    "3:\n\t"                                                                  \
    PAIR                                                                      \
    "subs %[t], %[t], #1\n\t"                                                 \
    "bne 3b\n"                                                                \
    "4:\n\t"                                                                  \
    "tst %[k], #1\n\t"                                                        \
    "beq 5f\n\t"                                                              \
    SINGLE
/* one step written twice per turn, (k + 1) / 2 turns: an odd k starts at
 * the second copy */
#define VFP_LOOP_X2(STEP)                                                     \
    "adds %[t], %[k], #1\n\t"                                                \
    "lsrs %[t], %[t], #1\n\t"                                                \
    "beq 5f\n\t"                                                             \
    "tst %[k], #1\n\t"                                                       \
    "bne 6f\n"                                                                \
    "3:\n\t"                                                                 \
    STEP                                                                      \
    "6:\n\t"                                                                 \
    STEP                                                                      \
    "subs %[t], %[t], #1\n\t"                                                \
    "bne 3b\n\t"
VFP_TILE(tile_vfp6, VFP_C6, "s8-s31", VFP_LOOP_X2(VFP_B VFP_ROWS6))
VFP_TILE(tile_vfp5, VFP_CX5, "s12-s31",
         VFP_LOOP2(VFP_B2 VFP_XROWS5(VFP_PROW), VFP_B VFP_XROWS5(VFP_SROW)))
VFP_TILE(tile_vfp4, VFP_CX4, "s12-s27",
         VFP_LOOP2(VFP_B2 VFP_XROWS4(VFP_PROW), VFP_B VFP_XROWS4(VFP_SROW)))

/* ---- the same for transposed A (K, M): a k step's values of the tile's
 * rows are consecutive, so one load-multiple takes them all: the B row
 * s0-s3, the A values s4-s8, products s9 and s10, accumulators from s12.
 * Two k steps per loop turn, the same registers loaded again for the
 * second (an odd k enters the first turn at its second step): 5 rows take
 * 90 instructions per 40 multiply-adds (2.25), 4 rows 74 per 32. */
#define VFP_TROW(av, x0, x1, x2, x3)                                          \
    "vmul.f32 s9, " av ", s0\n\t"                                             \
    "vmul.f32 s10, " av ", s1\n\t"                                            \
    "vadd.f32 " x0 ", " x0 ", s9\n\t"                                         \
    "vmul.f32 s9, " av ", s2\n\t"                                             \
    "vadd.f32 " x1 ", " x1 ", s10\n\t"                                        \
    "vmul.f32 s10, " av ", s3\n\t"                                            \
    "vadd.f32 " x2 ", " x2 ", s9\n\t"                                         \
    "vadd.f32 " x3 ", " x3 ", s10\n\t"
#define VFP_TSTEP4                                                            \
    VFP_B "vldmia %[ap], {s4-s7}\n\tadd %[ap], %[ap], %[lda4]\n\t"            \
    VFP_TROW("s4", "s12", "s13", "s14", "s15")                                \
    VFP_TROW("s5", "s16", "s17", "s18", "s19")                                \
    VFP_TROW("s6", "s20", "s21", "s22", "s23")                                \
    VFP_TROW("s7", "s24", "s25", "s26", "s27")
#define VFP_TSTEP5                                                            \
    VFP_B "vldmia %[ap], {s4-s8}\n\tadd %[ap], %[ap], %[lda4]\n\t"            \
    VFP_TROW("s4", "s12", "s13", "s14", "s15")                                \
    VFP_TROW("s5", "s16", "s17", "s18", "s19")                                \
    VFP_TROW("s6", "s20", "s21", "s22", "s23")                                \
    VFP_TROW("s7", "s24", "s25", "s26", "s27")                                \
    VFP_TROW("s8", "s28", "s29", "s30", "s31")
#define VFP_TILE_AT(name, CROWS, ACCS, STEP)                                  \
    static void name(float *c, const float *a, const float *b, size_t k,     \
                     size_t lda, size_t ldb, size_t ldc, int acc)            \
    {                                                                         \
        const struct { float *c; size_t ldc4; int acc; const float *zero; } args = { \
            c, ldc * sizeof *c, acc, tr_zero24};                              \
        const size_t ldb4 = ldb * sizeof *b, lda4 = lda * sizeof *a;          \
        size_t t, t2;                                                         \
        __asm__ volatile(                                                     \
            "ldr %[t], [%[args], #8]\n\t"                                     \
            "cmp %[t], #0\n\t"                                                \
            "beq 1f\n\t"                                                      \
            CROWS("vldmia")                                                   \
            "b 2f\n"                                                          \
            "1:\n\t"                                                          \
            "ldr %[t], [%[args], #12]\n\t"                                    \
            "vldmia %[t], {" ACCS "}\n"                                       \
            "2:\n\t"                                                          \
            VFP_LOOP_X2(STEP)                                                 \
            "5:\n\t"                                                          \
            CROWS("vstmia")                                                   \
            : [ap] "+r"(a), [b] "+r"(b), [t] "=&r"(t), [t2] "=&r"(t2)         \
            : [k] "r"(k), [ldb4] "r"(ldb4), [lda4] "r"(lda4), [args] "r"(&args) \
            : "s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9",     \
              "s10", "s11", "s12", "s13", "s14", "s15", "s16", "s17", "s18",  \
              "s19", "s20", "s21", "s22", "s23", "s24", "s25", "s26", "s27",  \
              "s28", "s29", "s30", "s31", "cc", "memory");                    \
    }
VFP_TILE_AT(tile_vfp5_at, VFP_CX5, "s12-s31", VFP_TSTEP5)
VFP_TILE_AT(tile_vfp4_at, VFP_CX4, "s12-s27", VFP_TSTEP4)

/* rows per block: 5 (the fastest tiles), 6 only for exactly 6 */
#define TR_MR_BLOCK 5
/* a block of mr rows (1..6): 4 to 6 in assembly (4 and 5 for transposed
 * A), fewer in C */
static void tile_block(float *c, const float *a, const float *b, size_t mr, size_t k,
                       size_t lda, size_t ldb, size_t ldc, int acc)
{
    switch (mr) {
    case 6: tile_vfp6(c, a, b, k, lda, ldb, ldc, acc); break;
    case 5: tile_vfp5(c, a, b, k, lda, ldb, ldc, acc); break;
    case 4: tile_vfp4(c, a, b, k, lda, ldb, ldc, acc); break;
    case 3: tile_rows(c, a, b, k, lda, ldb, ldc, acc, 3, 0); break;
    case 2: tile_rows(c, a, b, k, lda, ldb, ldc, acc, 2, 0); break;
    default: tile_rows(c, a, b, k, lda, ldb, ldc, acc, 1, 0); break;
    }
}

static void tile_block_at(float *c, const float *a, const float *b, size_t mr, size_t k,
                          size_t lda, size_t ldb, size_t ldc, int acc)
{
    switch (mr) {
    case 5: tile_vfp5_at(c, a, b, k, lda, ldb, ldc, acc); break;
    case 4: tile_vfp4_at(c, a, b, k, lda, ldb, ldc, acc); break;
    case 6: tile_rows(c, a, b, k, lda, ldb, ldc, acc, 6, 1); break;
    case 3: tile_rows(c, a, b, k, lda, ldb, ldc, acc, 3, 1); break;
    case 2: tile_rows(c, a, b, k, lda, ldb, ldc, acc, 2, 1); break;
    default: tile_rows(c, a, b, k, lda, ldb, ldc, acc, 1, 1); break;
    }
}
#else
#define TR_MR_BLOCK TR_MR
/* a block of mr rows (1..6), for each A layout */
#define TILE_BLOCK_FN(name, at)                                               \
    TR_TILE_FN void name(float *c, const float *a, const float *b, size_t mr, size_t k, \
                         size_t lda, size_t ldb, size_t ldc, int acc)         \
    {                                                                         \
        switch (mr) {                                                         \
        case 6: tile_rows(c, a, b, k, lda, ldb, ldc, acc, 6, at); break;      \
        case 5: tile_rows(c, a, b, k, lda, ldb, ldc, acc, 5, at); break;      \
        case 4: tile_rows(c, a, b, k, lda, ldb, ldc, acc, 4, at); break;      \
        case 3: tile_rows(c, a, b, k, lda, ldb, ldc, acc, 3, at); break;      \
        case 2: tile_rows(c, a, b, k, lda, ldb, ldc, acc, 2, at); break;      \
        default: tile_rows(c, a, b, k, lda, ldb, ldc, acc, 1, at); break;     \
        }                                                                     \
    }
TILE_BLOCK_FN(tile_block, 0)
TILE_BLOCK_FN(tile_block_at, 1)
#endif

/* the next row block of the left rows: as few blocks of at most
 * TR_MR_BLOCK rows as possible, as even as possible (32 rows: 6, 6, 5, 5,
 * 5, 5 with blocks of 6, 5, 5, 5, 5, 4, 4, 4 with blocks of 5); exactly 6
 * stay one block */
static size_t block_rows(size_t left)
{
    const size_t nb = (left + TR_MR_BLOCK - 1) / TR_MR_BLOCK;
    return left == TR_MR ? TR_MR : (left + nb - 1) / nb;
}

/* the driver for A's layout at: column strips outermost (the strip of B
 * (k, 4) is reread by every row block while it is still in the cache,
 * where there is one), row blocks inside */
#define GEMM_FN(name, at, block)                                              \
    static void name(float *c, const float *a, const float *b, size_t m, size_t n, \
                     size_t k, size_t lda, size_t ldb, size_t ldc, int acc)   \
    {                                                                         \
        const size_t nb = n - n % TR_NR;                                      \
        size_t i, j, r;                                                       \
        for (j = 0; j < nb; j += TR_NR)                                       \
            for (i = 0; i < m; i += r) {                                      \
                r = block_rows(m - i);                                        \
                block(c + i * ldc + j, A_ROW(a, i, lda, at), b + j, r, k, lda, ldb, ldc, acc); \
            }                                                                 \
        if (nb < n)                                                           \
            gemm_tail(c + nb, a, b + nb, m, n - nb, k, lda, ldb, ldc, acc, at); \
    }
GEMM_FN(gemm, 0, tile_block)
GEMM_FN(gemm_at, 1, tile_block_at)

/* a scalar FPU's convolutions use im2col and tr_gemm (tr_layer_conv.c):
 * the grid forms are their reference loops there */
void tr_gemm_grid_a(float *c, const float *a, const struct tr_gemm_grid *g, const float *b,
                    size_t m, size_t n, size_t k, size_t ldb, size_t ldc)
{
    tr_gemm_grid_a_ref(c, a, g, b, m, n, k, ldb, ldc);
}

void tr_gemm_at_grid(float *c, const float *a, const float *b, const struct tr_gemm_grid *g,
                     size_t m, size_t n, size_t k, size_t lda, size_t ldc, const float *bias)
{
    size_t i, j;

    for (i = 0; bias && i < m; i++)
        for (j = 0; j < n; j++)
            c[i * ldc + j] = bias[i];
    tr_gemm_at_grid_ref(c, a, b, g, m, n, k, lda, ldc);
}

#endif /* TR_GEMM_SCALAR_H */
