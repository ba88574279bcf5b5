/* tinyring: the transport porting layer.
 *
 * A port fills in this struct; core's collectives drive it and never block
 * anywhere but inside poll(). Only the two ring links exist: LEFT is the
 * connection to rank (rank-1+world)%world, RIGHT to (rank+1)%world. With
 * world 2 both neighbours are the same rank over two distinct connections.
 *
 * The contract follows mbedTLS's BIO (send may take fewer bytes than asked;
 * "would block" is a code, not an error) and fits lwIP's raw API in NO_SYS=1
 * firmware: a port whose poll() runs the stack's main-loop work (netif input,
 * sys_check_timeouts) until something is ready or the timeout passes.
 * A port that blocks is simply one whose poll() sleeps.
 *
 * All functions are called from one thread (the one running the collective).
 */
#ifndef TR_TRANSPORT_H
#define TR_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

enum tr_peer {
    TR_LEFT  = 0,  /* link to rank (rank - 1 + world) % world */
    TR_RIGHT = 1   /* link to rank (rank + 1) % world */
};

/* Bits for poll(): what the caller waits for, and what is ready. */
#define TR_POLL_RECV(peer) (1u << (2u * (unsigned)(peer)))       /* bytes (or EOF/error) to read */
#define TR_POLL_SEND(peer) (2u << (2u * (unsigned)(peer)))       /* room to write */

/* One piece of a vectored send. */
struct tr_iovec {
    const void *base;  /* first byte */
    size_t      len;   /* bytes at base (may be 0) */
};

struct tr_transport {
    /* Port state, passed back as the first argument of every call. Owned by
     * the port's caller; core never looks inside. */
    void *ctx;

    /* Queue up to len bytes (len >= 1) from buf for peer. Returns the number
     * of bytes accepted (1..len; the port has copied them and buf may be
     * reused at once), TR_ERR_AGAIN if none can be accepted now, or a
     * negative tr_err for a broken link (TR_ERR_CLOSED, TR_ERR_IO, ...).
     * Must not block. */
    long (*send)(void *ctx, int peer, const void *buf, size_t len);

    /* Copy up to len bytes (len >= 1) received from peer into buf. Returns
     * the number copied (1..len), TR_ERR_AGAIN if none are waiting,
     * TR_ERR_CLOSED if the peer closed the link (after all its bytes were
     * read), or another negative tr_err. Must not block. */
    long (*recv)(void *ctx, int peer, void *buf, size_t len);

    /* Wait until one of the TR_POLL_* conditions in want holds, or timeout_ms
     * passes (0 = just check). Returns the mask of conditions that hold (a
     * broken link counts as readable and writable, so the next call reports
     * it), 0 on timeout, or a negative tr_err. The lwIP port drives the stack
     * here. May return early with 0: callers re-check their deadlines. */
    int (*poll)(void *ctx, unsigned want, uint32_t timeout_ms);

    /* A monotonic millisecond clock; wraps at 2^32 (callers use differences). */
    uint32_t (*now_ms)(void *ctx);

    /* Optional (NULL if the port has none): send as above, over the
     * concatenation of iov[0..n) (n >= 1, total >= 1 byte). Returns the
     * bytes accepted from the start of that concatenation, TR_ERR_AGAIN or a
     * negative tr_err, exactly as send. Core uses it to hand a message's
     * header and payload over in one call, so a socket port can put them in
     * one system call and one TCP segment (a POSIX port: sendmsg). Ports
     * must set it, to NULL if they do not implement it. */
    long (*sendv)(void *ctx, int peer, const struct tr_iovec *iov, unsigned n);
};

#endif /* TR_TRANSPORT_H */
