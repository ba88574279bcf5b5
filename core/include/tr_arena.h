/* tinyring: the caller's arena, carved front to back.
 *
 * The caller owns every byte (littlefs, CMSIS-NN). A size query runs the same
 * layout code as init on an arena in "measure" mode, so the number it returns
 * is, by construction, exactly what init will use.
 */
#ifndef TR_ARENA_H
#define TR_ARENA_H

#include <stddef.h>
#include <stdint.h>

/* Every arena buffer handed to init must start on this boundary (declare it
 * with TR_ARENA_ALIGNED); init returns TR_ERR_INVAL otherwise. */
#define TR_ARENA_ALIGN 16u

#if defined(__GNUC__)
#define TR_ARENA_ALIGNED __attribute__((aligned(TR_ARENA_ALIGN)))
#else
#define TR_ARENA_ALIGNED
#endif

struct tr_arena {
    uint8_t *base;  /* first byte of the caller's buffer; NULL when measuring */
    size_t   size;  /* bytes available at base; SIZE_MAX when measuring */
    size_t   used;  /* bytes handed out so far, alignment padding included */
    int      err;   /* sticky: 0, or TR_ERR_NOMEM once a request did not fit */
};

/* Arena over buf[0..size). buf must be TR_ARENA_ALIGN-aligned: returns
 * TR_ERR_INVAL if it is not (or buf is NULL), 0 otherwise. */
int tr_arena_init(struct tr_arena *a, void *buf, size_t size);

/* Arena that hands out nothing and only counts: alloc returns NULL and adds
 * the bytes (with padding) to used. Layout code must not touch the memory
 * when a->base is NULL. */
void tr_arena_measure(struct tr_arena *a);

/* bytes rounded up to TR_ARENA_ALIGN, carved from the front. Returns the
 * pointer, or NULL (and sets a->err to TR_ERR_NOMEM) if it does not fit, or
 * NULL in measure mode. Zero bytes is valid and returns the current front. */
void *tr_arena_alloc(struct tr_arena *a, size_t bytes);

/* Typed helper: n floats. */
#define tr_arena_floats(a, n) ((float *)tr_arena_alloc((a), (size_t)(n) * sizeof(float)))

#endif /* TR_ARENA_H */
