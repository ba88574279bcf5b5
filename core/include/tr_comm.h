/* tinyring: collectives over the ring links of a tr_transport.
 *
 * Every collective is a state machine: *_start() checks the arguments and
 * arms it, tr_comm_progress() moves bytes through send/recv without ever
 * blocking and returns TR_ERR_AGAIN until it is done (0) or fails (< 0).
 * The blocking forms (tr_allreduce, ...) are start + a loop of progress and
 * transport poll(), bounded by the configured timeout.
 *
 * Scratch (the receive staging for one pipeline segment) comes
 * from the caller: ask tr_comm_scratch_size() first.
 *
 * Results are bitwise identical on every rank: reductions are computed once
 * per element by one rank and then only copied.
 */
#ifndef TR_COMM_H
#define TR_COMM_H

#include <stddef.h>
#include "tr_config.h"
#include <stdint.h>
#include "tr_transport.h"

/* The wire's version, in every header and hello: 2 since the compressed
 * allreduce's world-2 exchange (kind 10); 1 before it. A neighbour of
 * another version is refused at hello (TR_ERR_MISMATCH, fault.peer_version). */
#define TR_PROTO_VERSION 2u

enum tr_op {
    TR_OP_SUM = 0,
    TR_OP_AVG = 1              /* sum, then divided by world (by the rank that
                                * finished the sum, before it is copied) */
};

enum tr_algo {
    TR_ALGO_RING = 0,          /* reduce-scatter + all-gather, bandwidth-optimal (seed 003) */
    TR_ALGO_CHAIN = 1,         /* accumulate 0 -> 1 -> ... -> N-1, pass the total around (seeds 000/001) */
    TR_ALGO_REDUCE_BCAST = 2   /* reduce to rank 0, broadcast from rank 0 (seed 002, part 2) */
};

/* What a collective was doing when it failed (for messages: tr_comm_phase_name). */
enum tr_phase {
    TR_PHASE_NONE = 0,
    TR_PHASE_HELLO,
    TR_PHASE_REDUCE_SCATTER,
    TR_PHASE_ALL_GATHER,
    TR_PHASE_CHAIN_REDUCE,
    TR_PHASE_CHAIN_PASS,
    TR_PHASE_REDUCE,
    TR_PHASE_BROADCAST,
    TR_PHASE_BARRIER
};

/* tr_comm_config.timeout_ms where it is 0: TR_COMM_DEFAULT_TIMEOUT_MS
 * (tr_config.h) */

struct tr_comm_config {
    int      rank;            /* 0 .. world-1 */
    int      world;           /* >= 1 */
    uint32_t timeout_ms;      /* no progress for this long -> TR_ERR_TIMEOUT;
                                 * 0 = TR_COMM_DEFAULT_TIMEOUT_MS */
    uint32_t segment_bytes;   /* pipeline segment payload, multiple of 4, >= 64;
                               * 0 = default (256 KiB: every segment costs the
                               * port a send and the neighbour a wake-up;
                               * port/posix/README.md has the measurements);
                               * boards use less. Must be the same on all
                               * ranks (hello checks it). */
    uint64_t job_token;       /* peers of another job are refused at hello */
    uint32_t layout_hash;     /* e.g. tr_model_layout_hash(); must agree on all ranks */
};

/* Why the last call failed: which phase, which link, which peer rank. */
struct tr_comm_fault {
    int      code;            /* the tr_err returned, 0 if none */
    int      phase;           /* enum tr_phase */
    int      peer;            /* TR_LEFT or TR_RIGHT, -1 if not link-specific */
    int      peer_rank;       /* rank on that link, -1 if unknown */
    uint32_t seq;             /* collective sequence number */
    int      peer_version;    /* hello refused for the protocol version: the
                               * neighbour's (not TR_PROTO_VERSION), else 0 */
};

/* One direction of the running collective: sends go to the RIGHT link,
 * receives come from the LEFT link (hello uses both; see tr_comm_hello.c). */
struct tr_comm_xfer {
    uint32_t step;            /* current step (0 .. nsteps-1); nsteps = done */
    uint32_t nsteps;          /* steps this rank sends (tx) / receives (rx) */
    uint32_t seg;             /* segment within the current step */
    uint32_t nseg;            /* segments of the current step (>= 1) */
    uint32_t off;             /* current step's region: byte offset in buf */
    uint32_t len;             /* current step's region: bytes (may be 0) */
    uint32_t done;            /* bytes of the current message (header then
                               * payload) moved so far */
    int32_t  dep;             /* tx: rx step that must hold a segment before
                               * the same segment is sent; -1 for none */
    int32_t  mode;            /* rx: what to do with a payload (internal enum) */
    int32_t  phase;           /* enum tr_phase of the current step */
    uint32_t voff;            /* compressed ring: first value of the step's
                               * chunk in the caller's floats */
    uint32_t vcnt;            /* compressed ring: values of that chunk */
    uint8_t  hdr[32];         /* wire header being sent / received */
};

/* Private state of the running collective (see tr_comm_engine.c). */
struct tr_comm_run {
    int       kind;           /* enum tr_comm_kind (tr_comm_internal.h) */
    int       op;             /* enum tr_op */
    int       root;           /* root rank of chain kinds */
    uint32_t  total;          /* bytes of the whole vector */
    uint32_t  lo, hi;         /* byte range [lo, hi) of the vector this call
                               * moves; the caller's buffer holds it from
                               * its start (0, total: the whole vector) */
    uint32_t  esize;          /* 4 (float) or 1 (bytes, broadcast) */
    uint32_t  last_ms;        /* tp->now_ms() at the last byte moved */
    uint32_t  seg;            /* payload bytes of a full segment of this run
                               * (cfg.segment_bytes, or whole codec blocks) */
    /* compressed ring (tr_comm_codec.c): buf is the encoded wire image */
    int       codec;          /* enum tr_codec */
    uint32_t  count;          /* values */
    uint32_t  seg_vals;       /* values of a full segment */
    float    *cx;             /* the caller's floats */
    float    *cres;           /* error-feedback residual (count), or NULL */
    /* chain kinds: up to two steps per direction, decided at start */
    int8_t    tx_dep[2];      /* rx step each send step waits on, -1 none */
    uint8_t   tx_phase[2];    /* phase of each send step */
    uint8_t   rx_mode[2];     /* internal rx mode of each receive step */
    uint8_t   rx_phase[2];    /* phase of each receive step */
    struct tr_comm_xfer tx;   /* sends, RIGHT link */
    struct tr_comm_xfer rx;   /* receives, LEFT link */
    /* hello only: the second pair of directions (tx LEFT, rx RIGHT) */
    struct tr_comm_xfer tx2;
    struct tr_comm_xfer rx2;
    int       pending_err;    /* hello: TR_ERR_MISMATCH once any rank saw one */
    int       pending_peer;   /* hello: link it was seen on, -1 if told by the ring */
    int       pending_rank;   /* hello: rank on the far side of that link */
    int       hello_stage;    /* hello: 0 exchange on both links, 1 verdict ring */
};

/* Opaque to callers in spirit; defined here so the caller owns the memory.
 * Zero it or not: tr_comm_init sets every field. */
struct tr_comm {
    struct tr_comm_config cfg;
    const struct tr_transport *tp;
    uint8_t  *scratch;         /* caller's scratch, tr_comm_scratch_size() bytes:
                                * one receive staging segment */
    size_t    scratch_size;
    uint32_t  seq;             /* sequence number of the current (or last)
                                * collective: hello is 0, then 1, 2, ... */
    int       hello_done;      /* 1 after a successful tr_comm_hello */
    int       broken;          /* 0, or the error that left the links in an
                                * unknown state: every later call returns it */
    struct tr_comm_fault fault;
    int       active;          /* 0 idle, else the kind of collective running */
    void     *buf;             /* caller's data buffer of the running collective */
    struct tr_comm_run run;    /* private progress state of the running collective */
};

/* Bytes of scratch tr_comm_init needs for this configuration. */
size_t tr_comm_scratch_size(const struct tr_comm_config *cfg);

/* Bind a communicator to a transport (which may be NULL when world == 1).
 * scratch must hold tr_comm_scratch_size(cfg) bytes, 4-byte aligned.
 * Returns 0, TR_ERR_INVAL, or TR_ERR_NOMEM. */
int tr_comm_init(struct tr_comm *c, const struct tr_comm_config *cfg,
                 const struct tr_transport *tp, void *scratch, size_t scratch_size);

/* Exchange hellos on both links (version, job token, rank, world, layout
 * hash, byte order) and check them: TR_ERR_MISMATCH on any difference,
 * TR_ERR_PROTO for a stranger. Blocking (progress + poll) with the timeout. */
int tr_comm_hello(struct tr_comm *c);
/* The same, non-blocking: arm, then tr_comm_progress until not TR_ERR_AGAIN.
 * Every collective below needs a successful hello first when world > 1
 * (TR_ERR_INVAL otherwise). */
int tr_comm_hello_start(struct tr_comm *c);

/* Non-blocking forms: arm, then call tr_comm_progress until it is not
 * TR_ERR_AGAIN. Only one collective at a time per communicator (TR_ERR_BUSY).
 * count may be 0 and need not divide by world; buffers up to 4 GiB - 1 bytes.
 * A start may finish at once (world 1): it returns 0 and progress returns 0.
 * tr_comm_progress also enforces cfg.timeout_ms (no byte moved for that long
 * -> TR_ERR_TIMEOUT). After a failure the links are in an unknown state: the
 * communicator is broken and every later call returns the same error.
 * tr_reduce (and TR_ALGO_CHAIN/REDUCE_BCAST) work in place: on non-root ranks
 * buf ends up holding a partial sum. */
int tr_allreduce_start(struct tr_comm *c, float *buf, size_t count,
                       enum tr_op op, enum tr_algo algo);
int tr_reduce_start(struct tr_comm *c, float *buf, size_t count, enum tr_op op, int root);
int tr_broadcast_start(struct tr_comm *c, void *buf, size_t bytes, int root);
int tr_barrier_start(struct tr_comm *c);
int tr_comm_progress(struct tr_comm *c);
/* TR_POLL_* bits the running collective waits for (for the caller's own
 * poll loop with the non-blocking forms); 0 when idle. */
unsigned tr_comm_want(const struct tr_comm *c);

/* The allreduce of elements [lo, hi) of a vector of count floats (a
 * bucket of a gradient): buf holds those hi - lo elements (buf[0] is
 * element lo). Every element is reduced exactly as tr_allreduce_start of the
 * whole vector would: the ring keeps the whole vector's chunk boundaries
 * (a step whose chunk misses the range moves a header only), the world-2
 * exchange is chosen by the whole vector's size, and the chain kinds add in
 * their fixed rank order. So reducing a vector range by range, in any
 * cut, gives every rank the bits of one whole allreduce. All ranks must
 * pass the same count, lo and hi (a peer with another range is refused:
 * TR_ERR_MISMATCH or TR_ERR_PROTO). lo <= hi <= count. */
int tr_allreduce_range_start(struct tr_comm *c, float *buf, size_t count, size_t lo,
                             size_t hi, enum tr_op op, enum tr_algo algo);
int tr_allreduce_range(struct tr_comm *c, float *buf, size_t count, size_t lo, size_t hi,
                       enum tr_op op, enum tr_algo algo);

/* Compressed ring allreduce (tr_comm_codec.c, formats in tr_codec.h): the
 * ring's reduce-scatter and all-gather over encoded chunks. Each hop decodes
 * what it receives, adds its own values and encodes the sum again; the rank
 * that completes a chunk encodes it once more, sends those bytes round and
 * decodes them itself too, so every rank ends with the same floats. At
 * world 2 the two ranks instead swap their whole encoded range in one round
 * and each adds the two decoded images (the same two values, so the same
 * bits; tr_comm_codec.c). With TR_OP_AVG every rank divides the decoded sum
 * by world.
 *
 * residual (count floats, or NULL): error feedback. At the start
 * buf += residual; every rank encodes each element exactly once (its own
 * chunk first, the partial sums it passes on, the chunk it completes; at
 * world 2 its own value), and
 * residual then holds what that encoding lost, to be added next time.
 * wire: tr_allreduce_codec_wire_size(codec, count, world) bytes (the
 * encoded image of the whole range). cfg.segment_bytes must hold a block
 * (tr_codec_block_bytes). TR_CODEC_NONE is tr_allreduce_start's ring,
 * unchanged (residual and wire unused). World 1 encodes nothing (buf and
 * residual stay as they are, divided by 1 for TR_OP_AVG).
 * Errors: those of tr_allreduce_start; TR_ERR_RANGE (NaN or infinity in buf
 * or buf+residual) before anything is sent and with buf unchanged, or later
 * when a sum overflows; TR_ERR_PROTO for encoded bytes no encoder writes. */
size_t tr_allreduce_codec_wire_size(int codec, size_t count, int world);
int tr_allreduce_codec_start(struct tr_comm *c, float *buf, size_t count, enum tr_op op,
                             int codec, float *residual, void *wire, size_t wire_bytes);
int tr_allreduce_codec(struct tr_comm *c, float *buf, size_t count, enum tr_op op,
                       int codec, float *residual, void *wire, size_t wire_bytes);

/* Blocking forms: start + progress/poll until done, error or timeout. */
int tr_allreduce(struct tr_comm *c, float *buf, size_t count, enum tr_op op, enum tr_algo algo);
int tr_reduce(struct tr_comm *c, float *buf, size_t count, enum tr_op op, int root);
int tr_broadcast(struct tr_comm *c, void *buf, size_t bytes, int root);
int tr_barrier(struct tr_comm *c);

/* The fault of the last failed call (code 0 if the last call succeeded). */
const struct tr_comm_fault *tr_comm_last_fault(const struct tr_comm *c);
const char *tr_comm_phase_name(int phase);

#endif /* TR_COMM_H */
