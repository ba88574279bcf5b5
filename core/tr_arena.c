/* tinyring: arena carving. */
#include "tr_config.h"   /* first: limits and the float guard */
#include "tr_arena.h"
#include "tr_error.h"

static size_t round_up(size_t n)
{
    return (n + (TR_ARENA_ALIGN - 1u)) & ~(size_t)(TR_ARENA_ALIGN - 1u);
}

int tr_arena_init(struct tr_arena *a, void *buf, size_t size)
{
    a->base = (uint8_t *)buf;
    a->size = size;
    a->used = 0;
    a->err = 0;
    if (buf == NULL || ((uintptr_t)buf & (TR_ARENA_ALIGN - 1u)) != 0) {
        a->err = TR_ERR_INVAL;
        return TR_ERR_INVAL;
    }
    return 0;
}

void tr_arena_measure(struct tr_arena *a)
{
    a->base = NULL;
    a->size = (size_t)-1;
    a->used = 0;
    a->err = 0;
}

void *tr_arena_alloc(struct tr_arena *a, size_t bytes)
{
    size_t need = round_up(bytes);
    void *p;

    if (a->err != 0)
        return NULL;
    if (need < bytes || need > a->size - a->used) {  /* overflow or too big */
        a->err = TR_ERR_NOMEM;
        return NULL;
    }
    p = a->base ? (void *)(a->base + a->used) : NULL;
    a->used += need;
    return p;
}
