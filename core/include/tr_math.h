/* tinyring: the few math functions core needs, brought along so core links
 * without libm on any target (RISC-V images build with -nostdlib). Portable
 * C99, deterministic: the same input gives the same bits on every IEEE-754
 * single-precision target compiled with -ffp-contract=off. */
#ifndef TR_MATH_H
#define TR_MATH_H

float tr_expf(float x);   /* e^x, relative error < 2 ulp; 0 below -103, inf above 88.7 */
float tr_logf(float x);   /* natural log, x > 0; relative error < 2 ulp */
float tr_sqrtf(float x);  /* correctly rounded square root, x >= 0 */
/* The portable bit-by-bit square root tr_sqrtf uses where the target has no
 * square root instruction; exported so the host tests can compare the two. */
float tr_sqrtf_soft(float x);

#endif /* TR_MATH_H */
