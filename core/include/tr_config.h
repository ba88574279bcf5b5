/* tinyring: configuration, and the float guard. Every core source includes
 * this header first, and every header whose types depend on a limit includes
 * it too.
 *
 * Your settings (as lwIP's lwipopts.h or littlefs's LFS_CONFIG): define
 * TR_CONFIG_FILE to a header name, for example
 *     -DTR_CONFIG_FILE='"my_tinyring_config.h"'
 * and #define there any of the limits below; or define them with -D. Core and
 * every file that includes tinyring's headers must see the same values (the
 * limits size arrays inside the public structs). Each default is what the
 * tests run with.
 *
 * The float guard: every rank, on every target, must compute the same float
 * results bit for bit (docs/DESIGN.md, "The arithmetic every plan and target
 * computes"). That needs each product and sum rounded on its own, in source
 * order, in IEEE single precision. The build files pass -ffp-contract=off; the guard below
 * makes the code itself hold to it, so a build that drops the flag (a
 * hand-copied core, an IDE that takes no flags from a library) still rounds
 * the same, and a flag that would change the bits is a compile error rather
 * than a silently different model. test/build/float_guard.sh checks both. */
#ifndef TR_CONFIG_H
#define TR_CONFIG_H

#ifdef TR_CONFIG_FILE
#include TR_CONFIG_FILE
#endif

/* ---- limits ----------------------------------------------------------- */

/* Layers of a model description (struct tr_model_desc.layer[]): sizes
 * struct tr_model_desc and struct tr_model. */
#ifndef TR_MAX_LAYERS
#define TR_MAX_LAYERS 16
#endif

/* The largest world of an elastic run: the trainer's collectives keep
 * scratch for any world a reform may make, up to this (tr_train_size). */
#ifndef TR_TRAIN_MAX_WORLD
#define TR_TRAIN_MAX_WORLD 64
#endif

/* Members of an elastic view (struct tr_el_view.m[]): bounds the membership
 * messages and the POSIX port's world. */
#ifndef TR_EL_MAX_MEMBERS
#define TR_EL_MAX_MEMBERS 256u
#endif

/* Milliseconds without progress before a collective fails with
 * TR_ERR_TIMEOUT, where tr_comm_config.timeout_ms is 0. */
#ifndef TR_COMM_DEFAULT_TIMEOUT_MS
#define TR_COMM_DEFAULT_TIMEOUT_MS 30000u
#endif

/* A pipeline segment's payload in bytes, where tr_comm_config.segment_bytes
 * is 0: a multiple of 4, at least 64 (tr_comm.h). */
#ifndef TR_COMM_DEFAULT_SEGMENT
#define TR_COMM_DEFAULT_SEGMENT 262144u
#endif

/* The ports' bootstrap deadlines where their configs say 0: a rank's links
 * (or its connection to the master) are up within TR_LINK_CONNECT_MS, every
 * rank has joined within TR_LINK_JOIN_MS, and an accepted connection sends
 * its hello (or JOIN) within TR_LINK_HANDSHAKE_MS. */
#ifndef TR_LINK_CONNECT_MS
#define TR_LINK_CONNECT_MS 30000u
#endif
#ifndef TR_LINK_JOIN_MS
#define TR_LINK_JOIN_MS 60000u
#endif
#ifndef TR_LINK_HANDSHAKE_MS
#define TR_LINK_HANDSHAKE_MS 3000u
#endif

/* An elastic port's membership timeout where its config says 0. */
#ifndef TR_EL_DEFAULT_TIMEOUT_MS
#define TR_EL_DEFAULT_TIMEOUT_MS 60000u
#endif

/* ---- the float guard -------------------------------------------------- */

/* Flags that change results and say so in a macro: -ffast-math and -Ofast,
 * -ffinite-math-only, -fassociative-math, -freciprocal-math,
 * -fno-signed-zeros (and -funsafe-math-optimizations, which turns the last
 * three on), and x87 or other excess precision (each sum rounded to more than
 * float). Each is a compile error here. */
#if defined(__FAST_MATH__)
#error "tinyring: core must not be compiled with -ffast-math or -Ofast: ranks would stop being bit-identical (tr_config.h)"
#endif
#if (defined(__FINITE_MATH_ONLY__) && __FINITE_MATH_ONLY__) || defined(__ASSOCIATIVE_MATH__) || \
    defined(__RECIPROCAL_MATH__) || defined(__NO_SIGNED_ZEROS__)
#error "tinyring: core must not be compiled with -funsafe-math-optimizations, -fassociative-math, -freciprocal-math, -fno-signed-zeros or -ffinite-math-only (tr_config.h)"
#endif
#if defined(__FLT_EVAL_METHOD__) && __FLT_EVAL_METHOD__ != 0 && __FLT_EVAL_METHOD__ != -1
#error "tinyring: core needs float arithmetic evaluated in float (FLT_EVAL_METHOD 0): SSE or the FPU, not x87 excess precision (tr_config.h)"
#endif

/* Contraction (a*b+c fused into one rounding) off for the code that follows.
 * Clang honours the standard pragma; its default would fuse within a
 * statement. GCC ignores that pragma. Its default is no contraction in the
 * ISO dialects (-std=c99, as tinyring's own builds compile core) and full
 * contraction in the GNU ones (gnu99, gnu11: Arduino, ESP-IDF, Zephyr, a
 * hand-copied core), so in the GNU dialects its optimize pragma turns it
 * off. Only there: that pragma re-derives every optimisation option of the
 * functions that follow (GCC's manual keeps it for debugging), which on the
 * host changed the code of 10 of core's 31 objects and brought back calls to
 * memset and memmove that -ffreestanding keeps out. Not caught: an explicit
 * -ffp-contract=fast in an ISO dialect with GCC, or with Clang (which then
 * disregards the pragma); tinyring's build descriptions put their
 * -ffp-contract=off after the project's flags, so it wins there. */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__) && !defined(__STRICT_ANSI__)
#pragma GCC optimize("fp-contract=off")
#endif

#endif /* TR_CONFIG_H */
