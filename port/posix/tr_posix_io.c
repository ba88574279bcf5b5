/* tinyring POSIX port: the struct tr_transport functions over the two
 * non-blocking ring sockets (send/recv never block; poll() sleeps). */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>

#include "tr_error.h"
#include "tr_posix_int.h"

static uint64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static int link_fd(void *ctx, int peer)
{
    struct tr_posix *px = ctx;
    return (peer == TR_LEFT || peer == TR_RIGHT) ? px->fd[peer] : -1;
}

/* One non-blocking sendmsg over iov[0..n). MSG_NOSIGNAL: a dead peer is
 * TR_ERR_CLOSED, not SIGPIPE. Core hands each message's 32-byte header and
 * its payload over together (sendv), so with TCP_NODELAY they still leave as
 * one segment and wake the receiver once. */
static long px_sendmsg(void *ctx, int peer, const struct tr_iovec *iov, unsigned n)
{
    struct iovec v[4];
    struct msghdr mh;
    int fd = link_fd(ctx, peer);
    unsigned i;
    if (fd < 0 || n == 0 || n > 4)
        return TR_ERR_INVAL;
    for (i = 0; i < n; i++) {
        v[i].iov_base = (void *)iov[i].base;
        v[i].iov_len = iov[i].len;
    }
    memset(&mh, 0, sizeof mh);
    mh.msg_iov = v;
    mh.msg_iovlen = n;
    for (;;) {
        ssize_t got = sendmsg(fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (got > 0)
            return (long)got;
        if (got < 0 && errno == EINTR)
            continue;
        return got < 0 ? tr_posix_errno_code(errno) : TR_ERR_AGAIN;
    }
}

static long px_send(void *ctx, int peer, const void *buf, size_t len)
{
    struct tr_iovec one;
    one.base = buf;
    one.len = len;
    return px_sendmsg(ctx, peer, &one, 1);
}

static long px_recv(void *ctx, int peer, void *buf, size_t len)
{
    int fd = link_fd(ctx, peer);
    if (fd < 0)
        return TR_ERR_INVAL;
    for (;;) {
        ssize_t n = recv(fd, buf, len, MSG_DONTWAIT);
        if (n > 0)
            return (long)n;
        if (n == 0)
            return TR_ERR_CLOSED;
        if (errno == EINTR)
            continue;
        return tr_posix_errno_code(errno);
    }
}

/* Re-check for up to spin_us without sleeping: a sleeping poll() costs a
 * wake-up (scheduler latency) on every arrival. Returns poll()'s result. */
static int spin(void *ctx, struct pollfd *pf, int np)
{
    struct tr_posix *px = ctx;
    uint64_t t0, t;
    int rc = 0;
    if (!px->spin_us)
        return 0;
    t0 = now_us();
    do {
        rc = poll(pf, (nfds_t)np, 0);
        t = now_us();
    } while (rc == 0 && t - t0 < px->spin_us);
    return rc;
}

static int px_poll(void *ctx, unsigned want, uint32_t timeout_ms)
{
    struct tr_posix *px = ctx;
    struct pollfd pf[3];
    int np = 0, peer, rc, idx[2];
    unsigned ready = 0;
    for (peer = TR_LEFT; peer <= TR_RIGHT; peer++) {
        short ev = 0;
        int fd = link_fd(ctx, peer);
        if (want & TR_POLL_RECV(peer))
            ev |= POLLIN;
        if (want & TR_POLL_SEND(peer))
            ev |= POLLOUT;
        if (!ev || fd < 0)
            continue;
        pf[np].fd = fd;
        pf[np].events = ev;
        pf[np].revents = 0;
        idx[np++] = peer;
    }
    if (px->beat_on) {            /* readable: a member was declared dead */
        pf[np].fd = px->beat_fd;
        pf[np].events = POLLIN;
        pf[np].revents = 0;
    }
    rc = np && timeout_ms ? spin(ctx, pf, np) : 0;
    if (rc == 0)
        rc = poll(pf, (nfds_t)np + (px->beat_on ? 1u : 0u),
                  timeout_ms > 0x7fffffffu ? -1 : (int)timeout_ms);
    if (rc < 0)
        return errno == EINTR ? 0 : TR_ERR_IO;
    for (rc = 0; rc < np; rc++) {
        short r = pf[rc].revents;
        peer = idx[rc];
        /* A broken link is readable and writable: the next call reports it. */
        if (r & (POLLERR | POLLHUP | POLLNVAL))
            r |= POLLIN | POLLOUT;
        if ((r & POLLIN) && (want & TR_POLL_RECV(peer)))
            ready |= TR_POLL_RECV(peer);
        if ((r & POLLOUT) && (want & TR_POLL_SEND(peer)))
            ready |= TR_POLL_SEND(peer);
    }
    /* a member declared dead, and nothing left to move on the links: the
     * ring is broken (to the membership round) */
    if (!ready && px->beat_on && pf[np].revents)
        return TR_ERR_TIMEOUT;
    return (int)ready;
}

static uint32_t px_now(void *ctx)
{
    (void)ctx;
    return tr_posix_clock_ms();
}

void tr_posix_transport(struct tr_posix *px, struct tr_transport *tp)
{
    tp->ctx = px;
    tp->send = px_send;
    tp->recv = px_recv;
    tp->poll = px_poll;
    tp->now_ms = px_now;
    tp->sendv = px_sendmsg;
}
