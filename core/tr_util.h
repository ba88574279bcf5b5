/* tinyring: byte-order and hashing helpers, one home for core, the ports,
 * the apps and the tests (as littlefs keeps its own in lfs_util.h).
 *
 * Every wire and file format of tinyring is written byte by byte with these,
 * so it does not depend on the host's byte order, alignment or struct
 * layout. Freestanding C99: static inline functions, no library calls.
 */
#ifndef TR_UTIL_H
#define TR_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* ---- little-endian (every tinyring format) ------------------------------ */

static inline void tr_put_le16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static inline void tr_put_le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static inline void tr_put_le64(uint8_t *p, uint64_t v)
{
    tr_put_le32(p, (uint32_t)v);
    tr_put_le32(p + 4, (uint32_t)(v >> 32));
}

static inline uint16_t tr_get_le16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (uint16_t)(p[1] << 8));
}

static inline uint32_t tr_get_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

static inline uint64_t tr_get_le64(const uint8_t *p)
{
    return (uint64_t)tr_get_le32(p) | (uint64_t)tr_get_le32(p + 4) << 32;
}

/* ---- floats as bits, and plain copies ---------------------------------- */

/* The bits of a float and back: hashes, the state file, bit-exact compares. */
static inline uint32_t tr_float_bits(float f)
{
    union {
        float    f;
        uint32_t u;
    } v;
    v.f = f;
    return v.u;
}

static inline float tr_bits_float(uint32_t u)
{
    union {
        float    f;
        uint32_t u;
    } v;
    v.u = u;
    return v.f;
}

/* n floats from src to dst (they do not overlap); n = 0 with NULL pointers
 * is fine, unlike memcpy. The kernels' hot copies have their own
 * (tr_copy_floats, tr_layer_kernels.h). */
static inline void tr_float_copy(float *dst, const float *src, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        dst[i] = src[i];
}

/* ---- big-endian (the IDX files of MNIST) -------------------------------- */

static inline void tr_put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static inline uint32_t tr_get_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
           (uint32_t)p[3];
}

/* ---- FNV-1a --------------------------------------------------------------
 * Fowler-Noll-Vo 1a over n bytes at p, continuing from h: start with
 * TR_FNV32_INIT / TR_FNV64_INIT (the offset bases) and chain calls to hash
 * several pieces as one byte string. Not a cryptographic hash: it names
 * layouts, configurations, job tokens and test data. */
#define TR_FNV32_INIT 2166136261u
#define TR_FNV64_INIT 0xcbf29ce484222325ull

static inline uint32_t tr_fnv1a32(uint32_t h, const void *p, size_t n)
{
    const uint8_t *b = (const uint8_t *)p;
    size_t i;
    for (i = 0; i < n; i++) {
        h ^= b[i];
        h *= 16777619u;                 /* FNV 32-bit prime */
    }
    return h;
}

static inline uint64_t tr_fnv1a64(uint64_t h, const void *p, size_t n)
{
    const uint8_t *b = (const uint8_t *)p;
    size_t i;
    for (i = 0; i < n; i++) {
        h ^= b[i];
        h *= 0x100000001b3ull;          /* FNV 64-bit prime */
    }
    return h;
}

#endif /* TR_UTIL_H */
