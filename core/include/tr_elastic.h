/* tinyring: the elastic ring's membership, as pure functions shared by the
 * ports (POSIX hosts, lwIP boards): the membership messages in one encoder
 * and one decoder, and the coordinator's decision.
 *
 * A job starts with world W; each rank keeps its original rank (0..W-1) for
 * the whole job. The membership is a view: an epoch (0 for the ring the job
 * started with, +1 at every change) and its members in ascending original
 * rank; a member's rank in the ring of that view is its index. When a
 * collective fails or a process asks to join, the live members send JOIN to
 * the coordinator (the lowest original rank that answers), which decides the
 * next view (tr_el_decide) and sends every member VIEW, or ABORT.
 *
 * Messages (integers little-endian, fixed layout; every reserved field 0,
 * so a message that decodes encodes back to the same bytes):
 *   head, 24 bytes: "TRE1" | u16 version=1 | u16 type | u64 job_token |
 *                   u32 epoch | u32 body bytes
 *   JOIN  (24): u32 rank | u32 flags (TR_EL_JOINER) | u64 global_step |
 *               4 bytes IPv4 (network order) | u16 port | u16 0
 *         epoch: the view the sender asks to enter (TR_EL_ANY_EPOCH for a
 *         process started again, which knows no view)
 *   REPLY (8):  u32 answer (enum tr_el_answer) | u32 the coordinator's
 *               original rank
 *   VIEW  (16 + 12 n): u32 n | u32 source | u64 step |
 *               n entries: u32 rank | 4 bytes IPv4 | u16 port | u16 0
 *   ABORT (32): u32 reason (enum tr_el_verdict) | u32 joined | u32 previous |
 *               u32 min_ranks | u64 step | u32 source rank | u32 0
 *
 * Freestanding C99: no allocation, no library calls.
 */
#ifndef TR_ELASTIC_H
#define TR_ELASTIC_H

#include <stddef.h>
#include <stdint.h>
#include "tr_link.h"

#include "tr_config.h"   /* TR_EL_MAX_MEMBERS: members of a view (the POSIX port's world bound) */

#define TR_EL_VERSION    1u
#define TR_EL_HEAD_BYTES 24u
#define TR_EL_JOIN_BYTES 24u
#define TR_EL_REPLY_BYTES 8u
#define TR_EL_ABORT_BYTES 32u
#define TR_EL_VIEW_BYTES(n) (16u + 12u * (n))
/* the longest message: a head and a VIEW of TR_EL_MAX_MEMBERS */
#define TR_EL_MAX_BYTES  (TR_EL_HEAD_BYTES + TR_EL_VIEW_BYTES(TR_EL_MAX_MEMBERS))

#define TR_EL_ANY_EPOCH  0xFFFFFFFFu   /* JOIN of a process that knows no view */
#define TR_EL_JOINER     1u            /* JOIN flag: a process started again (no state) */
#define TR_EL_NO_RANK    0xFFFFFFFFu

enum tr_el_type {
    TR_EL_JOIN  = 1,
    TR_EL_REPLY = 2,
    TR_EL_VIEW  = 3,
    TR_EL_ABORT = 4
};

/* REPLY: what a process that received a JOIN says. */
enum tr_el_answer {
    TR_EL_ACCEPT    = 0,   /* I coordinate this round: wait for VIEW or ABORT */
    TR_EL_NOT_COORD = 1,   /* not me: look again (hint: who I follow) */
    TR_EL_EXCLUDED  = 2,   /* the ring went on without you (you were dropped) */
    TR_EL_DUPLICATE = 3,   /* your rank is a live member: two processes claim it */
    TR_EL_STALE     = 4    /* your epoch is not this round's */
};

/* The coordinator's decision (ABORT's reason). */
enum tr_el_verdict {
    TR_EL_GO          = 0, /* the next view is formed */
    TR_EL_NO_MAJORITY = 1, /* the members that answered are not a majority of
                            * the previous view (nor exactly half with its
                            * lowest rank): another group may go on */
    TR_EL_BELOW_MIN   = 2  /* fewer members than min_ranks */
};

/* A member of a view: original rank and its listening address. */
struct tr_el_member {
    uint32_t rank;
    uint32_t addr;             /* IPv4, network order (opaque bytes) */
    uint16_t port;
};

struct tr_el_view {
    uint32_t epoch;
    uint32_t n;                /* members, 1..TR_EL_MAX_MEMBERS */
    uint32_t source;           /* index of the member whose state is broadcast */
    uint64_t step;             /* the source's global step */
    struct tr_el_member m[TR_EL_MAX_MEMBERS];   /* ascending rank */
};

struct tr_el_join {
    uint32_t rank;             /* original rank */
    uint32_t flags;            /* TR_EL_JOINER */
    uint64_t step;             /* global steps done (0 for a joiner) */
    uint32_t addr;             /* where it listens */
    uint16_t port;
};

struct tr_el_abort {
    uint32_t reason;           /* enum tr_el_verdict (not TR_EL_GO) */
    uint32_t joined;           /* previous members that answered */
    uint32_t previous;         /* members of the previous view */
    uint32_t min_ranks;
    uint64_t step;             /* the latest state among those that answered */
    uint32_t source;           /* original rank holding it (lowest on ties) */
};

/* One decoded message; only the part of its type is meaningful. */
struct tr_el_msg {
    uint32_t type;             /* enum tr_el_type */
    uint64_t token;
    uint32_t epoch;
    struct tr_el_join join;
    uint32_t answer, coord;    /* REPLY */
    struct tr_el_abort abort;
    struct tr_el_view view;    /* VIEW (view.epoch == epoch) */
};

/* The same messages without struct tr_el_msg's view of TR_EL_MAX_MEMBERS
 * (3 KiB): for a port whose world bound is smaller (the lwIP port on a
 * board). A VIEW's members live in the caller's array; the bytes on the
 * wire are tr_el_encode's. Only the fields of the message's type are
 * meaningful (and read when encoding). */
struct tr_el_brief {
    uint32_t type;             /* enum tr_el_type */
    uint64_t token;
    uint32_t epoch;            /* VIEW: the view's epoch */
    struct tr_el_join join;    /* JOIN */
    uint32_t answer, coord;    /* REPLY */
    struct tr_el_abort abort;  /* ABORT */
    uint32_t n, source;        /* VIEW: members (in the caller's array), source index */
    uint64_t step;             /* VIEW: the source's step */
};

/* As tr_el_encode; a VIEW's n members are members[0..n). */
size_t tr_el_encode_brief(const struct tr_el_brief *m, const struct tr_el_member *members,
                          uint8_t *out, size_t cap);

/* As tr_el_decode, a VIEW's members into members[0..cap). Returns 0,
 * TR_ERR_PROTO as tr_el_decode, or TR_ERR_NOMEM for a well-formed VIEW of
 * more than cap members. */
int tr_el_decode_brief(const uint8_t *in, size_t n, struct tr_el_brief *m,
                       struct tr_el_member *members, uint32_t cap);

/* Bytes m encodes to (head included); 0 if m is not encodable (unknown
 * type, a view of 0 or more than TR_EL_MAX_MEMBERS members). */
size_t tr_el_size(const struct tr_el_msg *m);

/* Write m into out[0..cap). Returns the bytes written, or 0 when m is not
 * encodable or cap is short. */
size_t tr_el_encode(const struct tr_el_msg *m, uint8_t *out, size_t cap);

/* The first n bytes of a stream could start a message ("TRE1" so far). */
int tr_el_prefix_ok(const uint8_t *in, size_t n);

/* From a whole head (TR_EL_HEAD_BYTES): the message's total bytes, head
 * included. Returns 0, or TR_ERR_PROTO (magic, version, type, or a body
 * length its type cannot have). */
int tr_el_head_total(const uint8_t *in, size_t *total);

/* Decode exactly n bytes (one whole message). Returns 0, or TR_ERR_PROTO:
 * a wrong head, a length that is not the head's, a reserved field not 0, a
 * view whose ranks are not strictly ascending or whose source is not a
 * member, an unknown answer or reason. */
int tr_el_decode(const uint8_t *in, size_t n, struct tr_el_msg *m);

/* The view a job starts with: epoch 0, ranks 0..world-1 at addr/port[r]. */
int tr_el_view_initial(struct tr_el_view *v, uint32_t world, const uint32_t *addr,
                       const uint16_t *port);

/* A port's elastic config (tr_posix_elastic_config, tr_lwip_elastic_config):
 * 0 for its membership timeout, its handshake deadline or its smallest view
 * means TR_EL_DEFAULT_TIMEOUT_MS, TR_EL_DEFAULT_HANDSHAKE_MS and 1. */
#define TR_EL_DEFAULT_HANDSHAKE_MS TR_LINK_HANDSHAKE_MS
void tr_el_config_defaults(uint32_t *timeout_ms, uint32_t *handshake_ms, unsigned *min_ranks);

/* Index of original rank `rank` in v, or -1; the same in a member list
 * m[0..n). */
int tr_el_view_index(const struct tr_el_view *v, uint32_t rank);
int tr_el_member_index(const struct tr_el_member *m, uint32_t n, uint32_t rank);

/* The coordinator's decision for the view after prev. joined[0..n) are the
 * JOINs it accepted: previous members (flag clear, rank in prev) and
 * processes started again (TR_EL_JOINER, rank not in prev); at most one
 * per rank. Previous members that did not answer are dropped.
 *   - split brain: go on only if the previous members that answered are a
 *     strict majority of prev, or exactly half and include prev's lowest
 *     rank (two halves of a split can never both go on); else
 *     TR_EL_NO_MAJORITY;
 *   - then fewer than min_ranks members (joiners included): TR_EL_BELOW_MIN;
 *   - else next = epoch prev->epoch + 1, the answering members and the
 *     joiners in ascending rank (addresses from their JOINs), source = the
 *     previous member with the highest step, the lowest rank among ties.
 * Returns the verdict (>= 0) with next or *why filled (why->step/source
 * name the latest state in every verdict), or TR_ERR_INVAL for input that
 * breaks the rules above (duplicate ranks, a joiner that is a member, a
 * member flag on a stranger, n too large). */
int tr_el_decide(const struct tr_el_view *prev, const struct tr_el_join *joined, unsigned n,
                 unsigned min_ranks, struct tr_el_view *next, struct tr_el_abort *why);

/* tr_el_decide over member arrays (the brief codec's view): prev->epoch and
 * prev->n with the members prev_m[0..prev->n); the new view's epoch, n,
 * source and step into *next (type TR_EL_VIEW), its members into
 * next_m[0..cap) (n > cap: TR_ERR_INVAL). Same verdicts and rules. */
int tr_el_decide_brief(const struct tr_el_brief *prev, const struct tr_el_member *prev_m,
                       const struct tr_el_join *joined, unsigned n, unsigned min_ranks,
                       struct tr_el_brief *next, struct tr_el_member *next_m, uint32_t cap,
                       struct tr_el_abort *why);

/* The job token the ring links of view epoch `epoch` use in their link
 * hello: the job's token at epoch 0, a different one at every later epoch
 * (never 0), so a link of an old ring is never taken for a new one. */
uint64_t tr_el_link_token(uint64_t token, uint32_t epoch);

#endif /* TR_ELASTIC_H */
