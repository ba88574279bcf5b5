/* tinyring fuzz harnesses of the collectives: one rank of a simulated ring
 * whose neighbours' bytes come from the fuzzer.
 *
 * A plan (world, rank, collective, sizes) is read from the input. The
 * reference is a whole ring of that plan run on test/comm's simulated
 * transport; the bytes its rank received on each link are what a correct
 * neighbour sends. The rank under test then runs alone on a transport that
 * serves those streams after the input's edits (flip, cut, insert, delete
 * bytes), in chunks of sizes the input chooses (0: would block), so every
 * header, hello and verdict the parser meets is one a fuzzer shaped.
 */
#ifndef TR_FUZZ_RING_H
#define TR_FUZZ_RING_H

#include <stddef.h>
#include <stdint.h>

#include "fuzz.h"
#include "tr_comm.h"

enum fz_kind { FZ_RING, FZ_CHAIN, FZ_REDUCE_BCAST, FZ_REDUCE, FZ_BCAST, FZ_BARRIER,
               FZ_RING_CODEC, FZ_KINDS };

struct fz_plan {
    int      world, rank;
    int      kind;             /* enum fz_kind */
    int      op;               /* enum tr_op */
    int      codec;            /* FZ_RING_CODEC: enum tr_codec (bf16, int8, int4),
                                * from the op byte's upper bits */
    int      root;
    size_t   count;            /* floats (bytes for FZ_BCAST) */
    uint32_t segment;
};

/* A byte stream one link delivers (and how much of it the rank read). */
struct fz_stream {
    uint8_t *buf;
    size_t   len, cap, pos;
};

/* What a correct ring does: the streams into plan->rank and its result. */
struct fz_ref {
    struct fz_stream in[2];    /* [TR_LEFT], [TR_RIGHT], whole */
    size_t   hello_len[2];     /* the hello's share of each (verdicts included) */
    uint8_t *result;           /* plan->rank's buffer afterwards */
    size_t   bytes;            /* of result */
};

/* The transport the rank under test runs on. */
struct fz_net {
    struct fz_stream in[2];    /* served to recv, in chunks */
    size_t   sent[2];          /* bytes the rank sent on each link */
    uint8_t  chunk[4];         /* cycle of per-call byte limits; 0 = would block */
    unsigned calls;
    uint32_t now;              /* ms; every call moves it on, so a stall times out */
    struct tr_transport tp;
};

/* Reads a plan from the input (always a valid one). */
void fz_plan_read(struct fz_plan *pl, struct fz *in);
/* Runs the reference ring; 0, or -1 if it failed (then the harness skips). */
int  fz_ref_run(struct fz_ref *ref, const struct fz_plan *pl);
void fz_ref_free(struct fz_ref *ref);
/* The rank's buffer before the collective (the reference's too). */
void fz_fill(uint8_t *buf, const struct fz_plan *pl, int rank);
/* Copies [from, len) of ref's stream into s and applies the input's edits
 * (4 bytes each) to that part, until the input ends. */
void fz_stream_edit(struct fz_stream *s, const struct fz_stream *ref, size_t from,
                    struct fz *in);
void fz_net_init(struct fz_net *n, struct fz *in);
void fz_net_free(struct fz_net *n);
/* Starts the plan's collective on c over buf. */
int  fz_start(struct tr_comm *c, const struct fz_plan *pl, void *buf);
/* tr_comm_progress until not TR_ERR_AGAIN; a bound on the calls turns a
 * hang into an invariant failure. */
int  fz_finish(struct tr_comm *c, int rc);
/* A failed call: the code is one a peer's bytes may cause, it is recorded,
 * the peer rank named is a rank of this world, and the communicator stays
 * broken with it. */
void fz_check_failure(struct tr_comm *c, const struct fz_plan *pl, int rc);

#endif /* TR_FUZZ_RING_H */
