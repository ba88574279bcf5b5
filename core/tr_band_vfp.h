/* tinyring: the one-plane conv kernels' and the bands' pieces in VFP
 * assembly, for Arm's scalar FPU with 32 single registers (Cortex-M4F:
 * TR_VFP_ASM), in front of tr_band_fpu.h's blocks in C.
 * Included by tr_layer_band.c alone, from its one #if that chooses the
 * kernel bodies per target; not a header of its own. */
#ifndef TR_BAND_VFP_H
#define TR_BAND_VFP_H

/* the band's row copies and adds by load-multiple and store-multiple
 * (tr_layer_kernels.h's loops; macros, as tr_band_cols.h's) */
#define BAND_COPY(r, xs, lo, hi, ow0, j) tr_copy_floats((r) + ((lo) - (ow0)), (xs) + (lo), (hi) - (lo))
#define BAND_ADD(xs, r, lo, hi, ow0, j) tr_vfp_add((xs) + (lo), (r) + ((lo) - (ow0)), (hi) - (lo))
/* r[0..5) = xk[0..5): one load-multiple, one store-multiple */
#define BAND_COPY5(r, xk)                                                     \
    __asm__ volatile("vldmia %[x], {s0-s4}\n\tvstmia %[r], {s0-s4}\n\t"      \
                     :                                                        \
                     : [x] "r"(xk), [r] "r"(r)                                \
                     : "s0", "s1", "s2", "s3", "s4", "memory")

/* Blocks of 12 and 8 outputs of a 5x5 stride-1 kernel (plane_blk12_k5 and
 * plane_blk8_fpu's 5x5 case) in VFP assembly: a
 * kernel row's inputs by one load-multiple (from s16), each weight by a
 * post-increment load (s12), the sums from s0, products alternating in s13
 * and s14; the same operations in the same order as the C: per kernel row
 * of 12 outputs 5 + 120 + 4 instructions, of 8 outputs 5 + 80 + 4. */
#define VP_MAC(a, x, p) "vmul.f32 " p ", s12, " x "\n\tvadd.f32 " a ", " a ", " p "\n\t"
#define VP_TAP8(x0, x1, x2, x3, x4, x5, x6, x7)                                   \
    "vldmia %[w]!, {s12}\n\t"                                                     \
    VP_MAC("s0", x0, "s13") VP_MAC("s1", x1, "s14") VP_MAC("s2", x2, "s13")        \
    VP_MAC("s3", x3, "s14") VP_MAC("s4", x4, "s13") VP_MAC("s5", x5, "s14")        \
    VP_MAC("s6", x6, "s13") VP_MAC("s7", x7, "s14")
#define VP_TAP12(x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11)               \
    VP_TAP8(x0, x1, x2, x3, x4, x5, x6, x7)                                        \
    VP_MAC("s8", x8, "s13") VP_MAC("s9", x9, "s14") VP_MAC("s10", x10, "s13")      \
    VP_MAC("s11", x11, "s14")
#define VP_SET8 "vmov.f32 s0, %[b]\n\tvmov.f32 s1, s0\n\tvmov.f32 s2, s0\n\t"       \
    "vmov.f32 s3, s0\n\tvmov.f32 s4, s0\n\tvmov.f32 s5, s0\n\tvmov.f32 s6, s0\n\t"  \
    "vmov.f32 s7, s0\n\t"
#define VP_SET12 VP_SET8 "vmov.f32 s8, s0\n\tvmov.f32 s9, s0\n\tvmov.f32 s10, s0\n\t" \
    "vmov.f32 s11, s0\n\t"
#define VP_ROW8                                                                   \
    VP_TAP8("s16", "s17", "s18", "s19", "s20", "s21", "s22", "s23")               \
    VP_TAP8("s17", "s18", "s19", "s20", "s21", "s22", "s23", "s24")               \
    VP_TAP8("s18", "s19", "s20", "s21", "s22", "s23", "s24", "s25")               \
    VP_TAP8("s19", "s20", "s21", "s22", "s23", "s24", "s25", "s26")               \
    VP_TAP8("s20", "s21", "s22", "s23", "s24", "s25", "s26", "s27")
#define VP_ROW12                                                                  \
    VP_TAP12("s16", "s17", "s18", "s19", "s20", "s21", "s22", "s23", "s24", "s25", "s26", "s27") \
    VP_TAP12("s17", "s18", "s19", "s20", "s21", "s22", "s23", "s24", "s25", "s26", "s27", "s28") \
    VP_TAP12("s18", "s19", "s20", "s21", "s22", "s23", "s24", "s25", "s26", "s27", "s28", "s29") \
    VP_TAP12("s19", "s20", "s21", "s22", "s23", "s24", "s25", "s26", "s27", "s28", "s29", "s30") \
    VP_TAP12("s20", "s21", "s22", "s23", "s24", "s25", "s26", "s27", "s28", "s29", "s30", "s31")
/* y (n) = b + the 5x5 taps of IC padded planes from xrow: SET the sums,
 * the kernel rows' inputs XREGS, ROW their products, SUMS stored */
#define VP_BLOCK_FN(name, SET, XREGS, ROW, SUMS)                                  \
    static void name(float *y, const float *xrow, const float *w_oc, float b, unsigned IC, \
                     size_t plane, size_t Wp)                                     \
    {                                                                             \
        const size_t wp4 = Wp * sizeof(float), next4 = (plane - 5 * Wp) * sizeof(float); \
        const float *x = xrow, *w = w_oc;                                         \
        size_t rows, ics = IC;                                                    \
        __asm__ volatile(                                                         \
            SET                                                                   \
            "2:\n\t"                                                              \
            "movs %[rows], #5\n"                                                  \
            "1:\n\t"                                                              \
            "vldmia %[x], {" XREGS "}\n\t"                                        \
            "add %[x], %[x], %[wp4]\n\t"                                          \
            ROW                                                                   \
            "subs %[rows], %[rows], #1\n\t"                                       \
            "bne 1b\n\t"                                                          \
            "add %[x], %[x], %[next4]\n\t"                                        \
            "subs %[ics], %[ics], #1\n\t"                                         \
            "bne 2b\n\t"                                                          \
            "vstmia %[y], {" SUMS "}\n\t"                                         \
            : [x] "+r"(x), [w] "+r"(w), [rows] "=&r"(rows), [ics] "+r"(ics)       \
            : [y] "r"(y), [b] "t"(b), [wp4] "r"(wp4), [next4] "r"(next4)          \
            : "s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11", \
              "s12", "s13", "s14", "s16", "s17", "s18", "s19", "s20", "s21", "s22", \
              "s23", "s24", "s25", "s26", "s27", "s28", "s29", "s30", "s31", "cc",   \
              "memory");                                                          \
    }
VP_BLOCK_FN(plane_blk12_k5, VP_SET12, "s16-s31", VP_ROW12, "s0-s11")
VP_BLOCK_FN(plane_blk8_k5_vfp, VP_SET8, "s16-s27", VP_ROW8, "s0-s7")
#undef VP_MAC
#undef VP_TAP8
#undef VP_TAP12
#undef VP_SET8
#undef VP_SET12
#undef VP_ROW8
#undef VP_ROW12
#undef VP_BLOCK_FN

/* plane_blk8_fpu's first step: its 5x5 case in assembly (the block made,
 * it returns) */
#define PLANE_BLK8_FIRST(y, xrow, w_oc, b, IC, K, plane, Wp)                  \
    if ((K) == 5) {                                                           \
        plane_blk8_k5_vfp(y, xrow, w_oc, b, IC, plane, Wp);                   \
        return;                                                               \
    }

/* plane_row_s1's first step: blocks of 12 outputs of a 5x5 kernel where
 * blocks of 8 would leave 4 (ow: the row's counter, from 0) */
#define PLANE_ROW_BLK12(y, xrow, w_oc, b, OW, IC, K, plane, Wp, ow)           \
    for (; (K) == 5 && ow + 12 <= (OW) && ((OW) - ow) % 8 != 0; ow += 12)     \
        plane_blk12_k5((y) + ow, (xrow) + ow, w_oc, b, IC, plane, Wp)

/* The turn of 8 positions in VFP assembly: the 8 next inputs (s16-s23) and
 * the 8 gradients (s24-s31) by one load-multiple each, then DW_POS's
 * products in its order (input times gradient, products in s14 and s15),
 * the last 4 inputs moved down into x0..x3 for the next turn: 2 + 80 + 4
 * instructions and the loop's 2 per 40 multiply-adds */
#define DWA_MAC(a, x, g, p) "vmul.f32 " p ", " x ", " g "\n\tvadd.f32 %[" a "], %[" a "], " p "\n\t"
#define DWA_POS(g, p0, p1, p2, p3, p4)                                          \
    DWA_MAC("a0", p0, g, "s14") DWA_MAC("a1", p1, g, "s15") DWA_MAC("a2", p2, g, "s14") \
    DWA_MAC("a3", p3, g, "s15") DWA_MAC("a4", p4, g, "s14")
#define DWA_TURN                                                                \
    "vldmia %[xp]!, {s16-s23}\n\t"                                              \
    "vldmia %[gp]!, {s24-s31}\n\t"                                              \
    DWA_POS("s24", "%[x0]", "%[x1]", "%[x2]", "%[x3]", "s16")                     \
    DWA_POS("s25", "%[x1]", "%[x2]", "%[x3]", "s16", "s17")                       \
    DWA_POS("s26", "%[x2]", "%[x3]", "s16", "s17", "s18")                         \
    DWA_POS("s27", "%[x3]", "s16", "s17", "s18", "s19")                           \
    DWA_POS("s28", "s16", "s17", "s18", "s19", "s20")                             \
    DWA_POS("s29", "s17", "s18", "s19", "s20", "s21")                             \
    DWA_POS("s30", "s18", "s19", "s20", "s21", "s22")                             \
    DWA_POS("s31", "s19", "s20", "s21", "s22", "s23")                             \
    "vmov.f32 %[x0], s20\n\tvmov.f32 %[x1], s21\n\t"                            \
    "vmov.f32 %[x2], s22\n\tvmov.f32 %[x3], s23\n\t"
/* plane_dw_row5's turns of 8 positions, in assembly (DWA_TURN): a0..a4,
 * x0..x3, x, gr, ow and OW are plane_dw_row5's */
#define DW_TURNS8                                                                      \
    if (OW >= 8) {                                                                     \
        const float *xp = x + 4, *gp = gr;                                             \
        size_t turns = OW / 8;                                                         \
        __asm__ volatile("1:\n\t" DWA_TURN "subs %[n], %[n], #1\n\tbne 1b\n\t"         \
                         : [a0] "+t"(a0), [a1] "+t"(a1), [a2] "+t"(a2), [a3] "+t"(a3), \
                           [a4] "+t"(a4), [x0] "+t"(x0), [x1] "+t"(x1), [x2] "+t"(x2), \
                           [x3] "+t"(x3), [xp] "+r"(xp), [gp] "+r"(gp), [n] "+r"(turns) \
                         :                                                             \
                         : "s14", "s15", "s16", "s17", "s18", "s19", "s20", "s21", "s22", \
                           "s23", "s24", "s25", "s26", "s27", "s28", "s29", "s30", "s31", \
                           "cc", "memory");                                            \
        ow = OW - OW % 8;                                                              \
    }

/* the blocks are tr_band_fpu.h's */
#define plane_blk8 plane_blk8_fpu
#define plane_blk4 plane_blk4_fpu
#define plane_dw_k5 plane_dw_k5_fpu

#endif /* TR_BAND_VFP_H */
