/* tinyring test/core: included first, before a core .c file, by a test that
 * compiles core's kernels into itself for their portable branch (the one
 * Cortex-M4F and RV32 run): the host's vector-register macros are removed,
 * so each kernel file's #if takes the plain-C branch. No include guard: it
 * acts where it is included. */
#undef __AVX512F__
#undef __AVX__
#undef __SSE2__
#undef __ARM_NEON
