/* tinyring fuzz harnesses: what they share.
 *
 * Every harness is a libFuzzer target (LLVMFuzzerTestOneInput) that feeds
 * outside bytes to one parser and then checks an invariant of the result,
 * not only that nothing crashed: FZ_ASSERT prints what broke and aborts, so
 * libFuzzer saves the input. A harness reads its own parameters (world
 * size, chunk sizes, modes) from the input with the fz_* readers; what is
 * left is the bytes the parser sees.
 */
#ifndef TR_FUZZ_H
#define TR_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define FZ_ASSERT(cond, ...)                                                 \
    do {                                                                     \
        if (!(cond)) {                                                       \
            fprintf(stderr, "fuzz invariant broken at %s:%d: ", __FILE__,    \
                    __LINE__);                                               \
            fprintf(stderr, __VA_ARGS__);                                    \
            fprintf(stderr, "\n");                                           \
            abort();                                                         \
        }                                                                    \
    } while (0)

/* The input, read from the front. Reading past the end gives zeros. */
struct fz {
    const uint8_t *p;
    size_t n;
};

static inline uint8_t fz_u8(struct fz *f)
{
    uint8_t v = 0;
    if (f->n) {
        v = *f->p++;
        f->n--;
    }
    return v;
}

static inline uint16_t fz_u16(struct fz *f)
{
    uint16_t lo = fz_u8(f);
    return (uint16_t)(lo | (uint16_t)(fz_u8(f) << 8));
}

/* Up to want bytes from the front (fewer at the end); *got says how many. */
static inline const uint8_t *fz_take(struct fz *f, size_t want, size_t *got)
{
    const uint8_t *p = f->p;
    *got = want < f->n ? want : f->n;
    f->p += *got;
    f->n -= *got;
    return p;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif /* TR_FUZZ_H */
