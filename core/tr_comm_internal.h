/* tinyring: private declarations shared by the tr_comm*.c files. Not part
 * of the public contract; callers include tr_comm.h only. */
#ifndef TR_COMM_INTERNAL_H
#define TR_COMM_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include "tr_comm.h"

#define TR_COMM_MIN_SEGMENT        64u

/* What a running collective is (struct tr_comm_run.kind, also on the wire). */
enum tr_comm_kind {
    TR_KIND_IDLE = 0,
    TR_KIND_HELLO = 1,
    TR_KIND_RING = 2,         /* ring allreduce: reduce-scatter + all-gather */
    TR_KIND_CHAIN = 3,        /* chain allreduce through root world-1 */
    TR_KIND_REDUCE_BCAST = 4, /* chain reduce to root 0 + broadcast from 0 */
    TR_KIND_REDUCE = 5,       /* chain reduce to a root */
    TR_KIND_BCAST = 6,        /* broadcast of bytes from a root */
    TR_KIND_BARRIER = 7,      /* N-1 empty ring steps */
    TR_KIND_EXCHANGE = 8,     /* ring allreduce at world 2: one swap + add */
    TR_KIND_RING_CODEC = 9,   /* compressed ring allreduce (codec in root) */
    TR_KIND_CODEC_EXCHANGE = 10 /* the same at world 2: one swap (codec in root) */
};

/* What a receive step does with a segment's payload. */
enum tr_comm_rxmode {
    TR_RX_COPY = 0,           /* straight into the caller's buffer */
    TR_RX_SUM = 1,            /* into staging, then buf += staging */
    TR_RX_SUM_DIV = 2,        /* into staging, then buf = (buf+staging)/world */
    TR_RX_RSUM = 3,           /* into staging, then buf = staging + buf */
    TR_RX_RSUM_DIV = 4,       /* into staging, then buf = (staging+buf)/world */
    TR_RX_CODEC_ADD = 5,      /* into staging; x = decoded + x, encoded into buf */
    TR_RX_CODEC_LAST = 6,     /* the same, then x = decoded(buf) (/ world) */
    TR_RX_CODEC_COPY = 7,     /* straight into buf; x = decoded (/ world) */
    TR_RX_CODEC_SWAP = 8      /* into staging; x = decoded + decoded(buf) (/ world) */
};

/* ---- wire (tr_comm_wire.c) ---------------------------------------------- */
#define TR_WIRE_MAGIC     0x474E5254u   /* "TRNG" as little-endian bytes */
#define TR_WIRE_HDR_BYTES 32u
#define TR_WIRE_HELLO_BYTES 32u         /* hello payload */
#define TR_WIRE_BOM       0x01020304u   /* sent in native byte order */

struct tr_wire_hdr {
    uint32_t magic;    /* TR_WIRE_MAGIC */
    uint8_t  version;  /* TR_PROTO_VERSION */
    uint8_t  kind;     /* enum tr_comm_kind */
    uint8_t  op;       /* enum tr_op (0 for kinds without one) */
    uint8_t  flags;    /* 0; reserved */
    uint32_t seq;      /* collective sequence number (hello: 0) */
    uint32_t step;     /* step of the collective this segment belongs to */
    uint32_t root;     /* root rank (0 for kinds without one) */
    uint32_t offset;   /* byte offset of the payload in the buffer */
    uint32_t length;   /* payload bytes following the header */
    uint32_t total;    /* bytes of the whole buffer (count * element size) */
};

struct tr_wire_hello {
    uint32_t version;  /* TR_PROTO_VERSION */
    uint32_t bom;      /* TR_WIRE_BOM as the sender's native bytes */
    uint64_t token;    /* job token */
    uint32_t rank;     /* sender's rank */
    uint32_t world;    /* sender's world size */
    uint32_t layout;   /* sender's layout hash */
    uint32_t segment;  /* sender's segment_bytes: every rank must cut the same */
};

void tr_wire_put_hdr(uint8_t out[TR_WIRE_HDR_BYTES], const struct tr_wire_hdr *h);
void tr_wire_get_hdr(struct tr_wire_hdr *h, const uint8_t in[TR_WIRE_HDR_BYTES]);
void tr_wire_put_hello(uint8_t out[TR_WIRE_HELLO_BYTES], const struct tr_wire_hello *h);
void tr_wire_get_hello(struct tr_wire_hello *h, const uint8_t in[TR_WIRE_HELLO_BYTES]);

/* ---- reduction kernels (tr_comm_sum.c) -------------------------------- */
/* dst[i] += src[i]; dst (n), src (n); must not overlap */
void tr_comm_sum(float *dst, const float *src, size_t n);
/* dst[i] = (dst[i] + src[i]) / div */
void tr_comm_sum_div(float *dst, const float *src, size_t n, float div);
/* dst[i] = src[i] + dst[i]: the same sum with the operands the other way
 * round, so that two ranks adding each other's data get the same bits */
void tr_comm_rsum(float *dst, const float *src, size_t n);
/* dst[i] = (src[i] + dst[i]) / div */
void tr_comm_rsum_div(float *dst, const float *src, size_t n, float div);
/* dst[i] = dst[i] / div */
void tr_comm_div(float *dst, size_t n, float div);
/* plain references of the above (element by element, no restrict) */
void tr_comm_sum_ref(float *dst, const float *src, size_t n);
void tr_comm_sum_div_ref(float *dst, const float *src, size_t n, float div);
void tr_comm_rsum_ref(float *dst, const float *src, size_t n);
void tr_comm_rsum_div_ref(float *dst, const float *src, size_t n, float div);

/* ---- engine (tr_comm_engine.c) ------------------------------------------ */
/* One step as the engine sees it. */
struct tr_comm_step {
    uint32_t off;      /* byte offset of the step's region in buf */
    uint32_t len;      /* bytes (0: one header-only message) */
    int      dep;      /* tx: rx step whose same segment must be complete
                        * before this segment is sent; -1 for none */
    int      mode;     /* rx: enum tr_comm_rxmode */
    int      phase;    /* enum tr_phase */
    uint32_t voff;     /* compressed ring: the chunk's first value */
    uint32_t vcnt;     /* compressed ring: its values */
};

/* Per-kind step geometry: tr_comm_ring.c, tr_comm_chain.c, tr_comm_barrier.c */
void tr_comm_ring_step(const struct tr_comm *c, int is_tx, uint32_t k,
                       struct tr_comm_step *st);
void tr_comm_chain_step(const struct tr_comm *c, int is_tx, uint32_t k,
                        struct tr_comm_step *st);
void tr_comm_codec_step(const struct tr_comm *c, int is_tx, uint32_t k,
                        struct tr_comm_step *st);
/* The ring's chunk index of step k (tr_comm_ring.c) for rank r of n. */
uint32_t tr_comm_ring_index(long n, long r, int is_tx, uint32_t k);
/* A compressed ring's receive segment: decode, add, encode (tr_comm_codec.c).
 * 0 or a negative tr_err. */
int tr_comm_codec_apply(struct tr_comm *c);
void tr_comm_barrier_step(const struct tr_comm *c, int is_tx, uint32_t k,
                          struct tr_comm_step *st);
/* Sets run.{rx,tx}.nsteps and the per-step tables of a chain kind. */
void tr_comm_chain_plan(struct tr_comm *c);

/* Checks the common preconditions of a start (hello, busy, broken).
 * Returns 0 or the error (fault recorded). */
int tr_comm_start_check(struct tr_comm *c);
/* The prologue of a collective over floats: tr_comm_start_check, then at
 * world 1 the result itself (TR_OP_AVG: x / 1, exact). < 0 the failure,
 * 1 done (world 1), 0 the ring's work starts. */
int tr_comm_start_floats(struct tr_comm *c, float *x, size_t n, enum tr_op op);
/* Arms the engine for kind over buf (total bytes, esize per element) with
 * nsteps per direction already in run.tx/rx.nsteps. Returns 0 or AGAIN. */
int tr_comm_engine_start(struct tr_comm *c, int kind, void *buf, uint32_t total,
                         uint32_t esize, int op, int root);
/* The same over bytes [lo, hi) of a vector of total bytes, buf holding
 * byte lo at its start (run.lo, run.hi: the step geometries clip to them). */
int tr_comm_engine_start_range(struct tr_comm *c, int kind, void *buf, uint32_t total,
                               uint32_t lo, uint32_t hi, uint32_t esize, int op, int root);
int tr_comm_engine_progress(struct tr_comm *c);
unsigned tr_comm_engine_want(const struct tr_comm *c);

/* One transport call on link peer: send (is_tx) or receive up to len bytes
 * at buf. Returns the bytes moved (1..len), 0 when the port would block, or
 * a negative tr_err: the port's, or TR_ERR_IO when the port broke its
 * contract (returned 0, or more than asked). */
long tr_comm_io(struct tr_comm *c, int is_tx, int peer, void *buf, size_t len);
/* The same for a send over iov[0..n): one sendv call when n > 1 and the port
 * has sendv, else a send of iov[0] alone. */
long tr_comm_sendv(struct tr_comm *c, int peer, const struct tr_iovec *iov, unsigned n);

/* Hello (tr_comm_hello.c), dispatched from tr_comm_progress / tr_comm_want. */
int tr_comm_hello_progress(struct tr_comm *c);
unsigned tr_comm_hello_want(const struct tr_comm *c);

/* Records a fault and returns code. peer: TR_LEFT/TR_RIGHT or -1. */
int tr_comm_fail(struct tr_comm *c, int code, int phase, int peer);
/* Blocking loop: progress + poll until done, error or timeout. */
int tr_comm_wait(struct tr_comm *c);
int tr_comm_neighbour(const struct tr_comm *c, int peer);

#endif /* TR_COMM_INTERNAL_H */
