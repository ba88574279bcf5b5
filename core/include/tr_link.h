/* tinyring: the link hello, the first bytes on every ring connection.
 *
 * Every port speaks it (port/posix over sockets, port/lwip over lwIP's raw
 * API), so host and board ranks share one ring. 24 bytes, integers
 * little-endian:
 *
 *   "TRL1" | u32 version (TR_LINK_VERSION) | u64 job token | u32 rank (the
 *   sender's) | u32 world
 *
 * The connecting side (rank r -> rank r+1) sends first; the accepting side
 * judges it and answers with its own. Which connections a port refuses, and
 * whether it answers them first, is the port's (see its README). Core's
 * tr_comm_hello runs after, over the links this opened.
 */
#ifndef TR_LINK_H
#define TR_LINK_H

#include <stddef.h>
#include "tr_config.h"
#include <stdint.h>

#define TR_LINK_HELLO_BYTES 24u
#define TR_LINK_VERSION     1u

/* The ports' bootstrap deadlines where their configs say 0, one definition
 * for both ports: TR_LINK_CONNECT_MS, TR_LINK_JOIN_MS and
 * TR_LINK_HANDSHAKE_MS (tr_config.h). */

/* A link hello, decoded. */
struct tr_link_hello {
    uint32_t version;   /* TR_LINK_VERSION */
    uint64_t token;     /* job token: ranks of one job share it */
    uint32_t rank;      /* the sender's rank */
    uint32_t world;     /* the sender's world size */
};

/* What a received hello is to the rank judging it. */
enum tr_link_verdict {
    TR_LINK_OK = 0,         /* the expected neighbour of this job */
    TR_LINK_GARBAGE,        /* not a link hello (wrong magic) */
    TR_LINK_OTHER_VERSION,  /* a hello of another protocol version */
    TR_LINK_OTHER_JOB,      /* another job token */
    TR_LINK_OTHER_WORLD,    /* this job's token, another world size */
    TR_LINK_OTHER_RANK      /* this job, but not the neighbour expected */
};

/* This rank's hello (h->version is written as given: TR_LINK_VERSION). */
void tr_link_hello_put(uint8_t out[TR_LINK_HELLO_BYTES], const struct tr_link_hello *h);

/* Decodes in into h. Returns 0, or TR_ERR_PROTO (h untouched) when the magic
 * is not "TRL1". */
int tr_link_hello_get(struct tr_link_hello *h, const uint8_t in[TR_LINK_HELLO_BYTES]);

/* Could the first n bytes (n >= 0) still start a link hello? 1 or 0: a
 * port refuses a stranger as soon as its first bytes break the magic. */
int tr_link_hello_prefix_ok(const uint8_t *in, size_t n);

/* Decodes in into h and judges it: is it the hello of rank want_rank of the
 * job (token, world)? h is filled unless the verdict is TR_LINK_GARBAGE. */
enum tr_link_verdict tr_link_hello_judge(struct tr_link_hello *h,
                                         const uint8_t in[TR_LINK_HELLO_BYTES],
                                         uint64_t token, uint32_t world,
                                         uint32_t want_rank);

/* A verdict as a tr_err: 0, TR_ERR_PROTO (garbage) or TR_ERR_MISMATCH. */
int tr_link_verdict_err(enum tr_link_verdict v);

#endif /* TR_LINK_H */
