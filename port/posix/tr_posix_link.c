/* tinyring POSIX port: the two ring links. Each rank connects to its right
 * neighbour and accepts its left one at the same time (one poll loop, so no
 * ordering between ranks can deadlock). Both sides exchange a link hello;
 * the accepting side takes only its left neighbour of this job and closes
 * anyone else without stopping (a well-formed hello is answered first, so
 * its sender learns why). Used by the rendezvous (tr_posix_connect) and the
 * static table (tr_posix_connect_table) alike. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "tr_error.h"
#include "tr_posix_int.h"

#define MAX_CANDIDATES 16      /* unverified incoming connections at once */
#define DIAL_MS        1000    /* one connect attempt; then dial again (a
                                * host that drops SYNs, e.g. a board still
                                * booting, would otherwise hold us in the
                                * kernel's SYN backoff for seconds) */
#define RETRY_MS       50      /* pause between refused connect attempts */

int tr_posix_listen_open(const struct tr_posix_plan *pl, int *fd, uint16_t *port,
                         char *err, size_t errlen)
{
    struct sockaddr_in sa;
    socklen_t len = sizeof sa;
    char ab[32];
    int one = 1, s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (s < 0)
        return tr_posix_fail(err, errlen, TR_ERR_IO, "socket: %s", strerror(errno));
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    /* Accepted links inherit the buffer sizes; set before listen so the
     * window scale is negotiated for them. */
    tr_posix_link_opts(s, pl->sndbuf, pl->rcvbuf);
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = pl->any_addr ? htonl(INADDR_ANY) : pl->local_addr;
    sa.sin_port = htons(pl->listen_port);
    if (bind(s, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(s, 64) < 0 ||
        getsockname(s, (struct sockaddr *)&sa, &len) < 0) {
        int e = errno, code = tr_posix_errno_code(e);
        close(s);
        if (code == TR_ERR_ADDRINUSE)
            return tr_posix_fail(err, errlen, code, "rank %d: listening port %s:%u is "
                                 "already in use", pl->rank,
                                 tr_posix_ntoa(pl->local_addr, ab, sizeof ab), pl->listen_port);
        return tr_posix_fail(err, errlen, code == TR_ERR_AGAIN ? TR_ERR_IO : code,
                             "rank %d: cannot listen on %s:%u: %s", pl->rank,
                             tr_posix_ntoa(pl->local_addr, ab, sizeof ab), pl->listen_port,
                             strerror(e));
    }
    *fd = s;
    *port = ntohs(sa.sin_port);
    return 0;
}

enum out_stage { OUT_DIAL, OUT_CONNECTING, OUT_REPLY, OUT_DONE };

struct cand {
    int      fd;
    uint32_t deadline;
    size_t   got;
    uint8_t  buf[TR_POSIX_LINK_BYTES];
};

static void hello_of(const struct tr_posix_plan *pl, uint8_t out[TR_POSIX_LINK_BYTES])
{
    struct tr_posix_intro me;
    me.version = TR_POSIX_VERSION;
    me.token = pl->token;
    me.rank = (uint32_t)pl->rank;
    me.world = (uint32_t)pl->world;
    me.addr = 0;
    me.port = 0;
    tr_posix_put_link(out, &me);
}

enum hello_verdict { HELLO_OK, HELLO_GARBAGE, HELLO_VERSION, HELLO_TOKEN, HELLO_WORLD,
                     HELLO_RANK };

/* Is buf the hello of rank `want` of this job? If not, why not. */
static enum hello_verdict hello_check(const struct tr_posix_plan *pl, const uint8_t *buf,
                                      int want, struct tr_posix_intro *h)
{
    if (tr_posix_get_link(h, buf) < 0)
        return HELLO_GARBAGE;
    if (h->version != TR_POSIX_VERSION)
        return HELLO_VERSION;
    if (h->token != pl->token)
        return HELLO_TOKEN;
    if (h->world != (uint32_t)pl->world)
        return HELLO_WORLD;
    return h->rank == (uint32_t)want ? HELLO_OK : HELLO_RANK;
}

/* The right neighbour answered, but not as rank `want` of this job. */
static int reply_refused(const struct tr_posix_plan *pl, enum hello_verdict v,
                         const struct tr_posix_intro *h, int want, const char *where,
                         char *err, size_t errlen)
{
    switch (v) {
    case HELLO_TOKEN:
        return tr_posix_fail(err, errlen, TR_ERR_MISMATCH,
                             "rank %d: the process at %s (table entry of rank %d) belongs "
                             "to another job (job token differs); refused", pl->rank, where,
                             want);
    case HELLO_WORLD:
        return tr_posix_fail(err, errlen, TR_ERR_MISMATCH,
                             "rank %d: world sizes differ: rank %d at %s says %u, this rank "
                             "says %d", pl->rank, want, where, h->world, pl->world);
    case HELLO_RANK:
        return tr_posix_fail(err, errlen, TR_ERR_MISMATCH,
                             "rank %d: the process at %s is rank %u, not rank %d (do the "
                             "ranks' address tables differ?)", pl->rank, where, h->rank, want);
    case HELLO_VERSION:
        return tr_posix_fail(err, errlen, TR_ERR_MISMATCH,
                             "rank %d: rank %d at %s speaks link version %u, this rank %u",
                             pl->rank, want, where, h->version, TR_POSIX_VERSION);
    default:
        return tr_posix_fail(err, errlen, TR_ERR_PROTO,
                             "rank %d: the process at %s is not a tinyring rank", pl->rank,
                             where);
    }
}

/* What the listening port refused while waiting (for the timeout message). */
struct refusals {
    unsigned other_job, wrong, garbage;
};

static const char *refusals_text(const struct refusals *r, char *buf, size_t len)
{
    if (!r->other_job && !r->wrong && !r->garbage)
        return "";
    snprintf(buf, len, "; refused meanwhile: %u hello(s) of another job, %u of another "
             "world or rank, %u stranger(s)", r->other_job, r->wrong, r->garbage);
    return buf;
}

int tr_posix_links_open(struct tr_posix *px, const struct tr_posix_plan *pl,
                        int listen_fd, const struct tr_posix_endpoint *table,
                        char *err, size_t errlen)
{
    int right = (pl->rank + 1) % pl->world, left = (pl->rank - 1 + pl->world) % pl->world;
    uint32_t deadline = tr_posix_clock_ms() + pl->join_ms, retry_at = 0;
    uint32_t dial_end = 0;
    uint8_t mine[TR_POSIX_LINK_BYTES], reply[TR_POSIX_LINK_BYTES];
    size_t reply_got = 0;
    struct cand cd[MAX_CANDIDATES];
    struct refusals ref = { 0, 0, 0 };
    enum out_stage out = OUT_DIAL;
    int out_fd = -1, in_fd = -1, last_err = 0, i, rc = 0;
    char ab[32], where[48], rt[160];

    hello_of(pl, mine);
    snprintf(where, sizeof where, "%s:%u", tr_posix_ntoa(table[right].addr, ab, sizeof ab),
             table[right].port);
    for (i = 0; i < MAX_CANDIDATES; i++)
        cd[i].fd = -1;

    while (out != OUT_DONE || in_fd < 0) {
        struct pollfd pf[MAX_CANDIDATES + 2];
        int map[MAX_CANDIDATES + 2], np = 0, wait;
        uint32_t now = tr_posix_clock_ms();
        wait = tr_posix_left_ms(deadline);
        if (wait == 0) {
            if (out != OUT_DONE)
                rc = tr_posix_fail(err, errlen, TR_ERR_TIMEOUT,
                                   "rank %d: could not open the link to its right neighbour "
                                   "rank %d at %s:%u within %u ms (%s)", pl->rank, right,
                                   tr_posix_ntoa(table[right].addr, ab, sizeof ab),
                                   table[right].port, pl->join_ms,
                                   last_err ? strerror(last_err) : "no answer");
            else
                rc = tr_posix_fail(err, errlen, TR_ERR_TIMEOUT,
                                   "rank %d: its left neighbour rank %d (%s:%u) never connected "
                                   "within %u ms%s", pl->rank, left,
                                   tr_posix_ntoa(table[left].addr, ab, sizeof ab),
                                   table[left].port, pl->join_ms,
                                   refusals_text(&ref, rt, sizeof rt));
            break;
        }
        if (out == OUT_DIAL && (int32_t)(now - retry_at) >= 0) {
            struct sockaddr_in sa;
            out_fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
            if (out_fd < 0) {
                rc = tr_posix_fail(err, errlen, TR_ERR_IO, "socket: %s", strerror(errno));
                break;
            }
            tr_posix_link_opts(out_fd, pl->sndbuf, pl->rcvbuf);
            memset(&sa, 0, sizeof sa);
            sa.sin_family = AF_INET;
            sa.sin_addr.s_addr = table[right].addr;
            sa.sin_port = htons(table[right].port);
            if (connect(out_fd, (struct sockaddr *)&sa, sizeof sa) == 0 || errno == EINPROGRESS) {
                out = OUT_CONNECTING;
                dial_end = now + DIAL_MS;
            } else {
                last_err = errno;
                tr_posix_close_fd(&out_fd);
                retry_at = now + RETRY_MS;
            }
        }
        if (out == OUT_CONNECTING && (int32_t)(now - dial_end) >= 0) {
            last_err = ETIMEDOUT;              /* no SYN-ACK yet: dial afresh */
            tr_posix_close_fd(&out_fd);
            out = OUT_DIAL;
            retry_at = now;
            continue;
        }
        if (out == OUT_CONNECTING) {
            int32_t d = (int32_t)(dial_end - now);
            if (d < wait)
                wait = d > 0 ? d : 0;
        }
        if (out == OUT_DIAL) {
            int32_t d = (int32_t)(retry_at - now);
            if (d < wait)
                wait = d > 0 ? d : 0;
        }
        if (out == OUT_CONNECTING || out == OUT_REPLY) {
            pf[np].fd = out_fd;
            pf[np].events = out == OUT_CONNECTING ? POLLOUT : POLLIN;
            map[np++] = -2;
        }
        if (in_fd < 0) {
            pf[np].fd = listen_fd; pf[np].events = POLLIN; map[np++] = -1;
            for (i = 0; i < MAX_CANDIDATES; i++) {
                int32_t d;
                if (cd[i].fd < 0)
                    continue;
                d = (int32_t)(cd[i].deadline - now);
                if (d <= 0) {                  /* silent: close, keep waiting */
                    tr_posix_close_fd(&cd[i].fd);
                    ref.garbage++;
                    continue;
                }
                if (d < wait)
                    wait = d;
                pf[np].fd = cd[i].fd; pf[np].events = POLLIN; map[np++] = i;
            }
        }
        if (poll(pf, (nfds_t)np, wait) < 0 && errno != EINTR) {
            rc = tr_posix_fail(err, errlen, TR_ERR_IO, "poll: %s", strerror(errno));
            break;
        }
        for (i = 0; i < np; i++) {
            if (!pf[i].revents)
                continue;
            if (map[i] == -2 && out == OUT_CONNECTING) {
                int e = 0;
                socklen_t el = sizeof e;
                getsockopt(out_fd, SOL_SOCKET, SO_ERROR, &e, &el);
                if (e == 0 && tr_posix_send_all(out_fd, mine, sizeof mine,
                                                now + pl->handshake_ms) == 0) {
                    out = OUT_REPLY;
                    reply_got = 0;
                } else {
                    last_err = e ? e : EPIPE;  /* neighbour not listening yet? retry */
                    tr_posix_close_fd(&out_fd);
                    out = OUT_DIAL;
                    retry_at = now + RETRY_MS;
                }
            } else if (map[i] == -2 && out == OUT_REPLY) {
                ssize_t n = recv(out_fd, reply + reply_got, sizeof reply - reply_got,
                                 MSG_DONTWAIT);
                if (n < 0 && (errno == EAGAIN || errno == EINTR))
                    continue;
                if (n <= 0) {
                    rc = tr_posix_fail(err, errlen, TR_ERR_CLOSED,
                                       "rank %d: right neighbour rank %d at %s closed the "
                                       "link during the link hello (died, or not this job)",
                                       pl->rank, right, where);
                    goto out;
                }
                reply_got += (size_t)n;
                if (reply_got == sizeof reply) {
                    struct tr_posix_intro h;
                    enum hello_verdict v = hello_check(pl, reply, right, &h);
                    if (v != HELLO_OK) {
                        rc = reply_refused(pl, v, &h, right, where, err, errlen);
                        goto out;
                    }
                    out = OUT_DONE;
                }
            } else if (map[i] == -1) {
                for (;;) {
                    int k, s = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
                    if (s < 0)
                        break;
                    for (k = 0; k < MAX_CANDIDATES && cd[k].fd >= 0; k++)
                        ;
                    if (k == MAX_CANDIDATES) {
                        close(s);
                        continue;
                    }
                    cd[k].fd = s;
                    cd[k].got = 0;
                    cd[k].deadline = tr_posix_clock_ms() + pl->handshake_ms;
                }
            } else if (map[i] >= 0 && in_fd < 0) {
                struct cand *c = &cd[map[i]];
                ssize_t n = recv(c->fd, c->buf + c->got, sizeof c->buf - c->got, MSG_DONTWAIT);
                if (n < 0 && (errno == EAGAIN || errno == EINTR))
                    continue;
                if (n <= 0) {
                    tr_posix_close_fd(&c->fd);
                    ref.garbage++;
                    continue;
                }
                c->got += (size_t)n;
                if (memcmp(c->buf, "TRL1", c->got < 4 ? c->got : 4) != 0) {
                    tr_posix_close_fd(&c->fd);     /* garbage: refuse */
                    ref.garbage++;
                    continue;
                }
                if (c->got < sizeof c->buf)
                    continue;
                {
                    struct tr_posix_intro h;
                    enum hello_verdict v = hello_check(pl, c->buf, left, &h);
                    /* Answer any well-formed hello (the sender can then say
                     * why it was refused); a tiny write to an empty socket
                     * buffer, bounded by a short deadline all the same. */
                    if (tr_posix_send_all(c->fd, mine, sizeof mine,
                                          now + (v == HELLO_OK ? pl->handshake_ms : 100u)) < 0 ||
                        v != HELLO_OK) {
                        if (v == HELLO_TOKEN)
                            ref.other_job++;
                        else if (v != HELLO_OK)
                            ref.wrong++;
                        tr_posix_close_fd(&c->fd); /* not our left neighbour */
                        continue;
                    }
                }
                in_fd = c->fd;
                c->fd = -1;
            }
        }
    }
out:
    for (i = 0; i < MAX_CANDIDATES; i++)
        tr_posix_close_fd(&cd[i].fd);
    if (rc < 0 || out != OUT_DONE || in_fd < 0) {
        tr_posix_close_fd(&out_fd);
        tr_posix_close_fd(&in_fd);
        return rc < 0 ? rc : TR_ERR_IO;
    }
    tr_posix_link_opts(out_fd, pl->sndbuf, pl->rcvbuf);
    tr_posix_link_opts(in_fd, pl->sndbuf, pl->rcvbuf);
    px->fd[TR_RIGHT] = out_fd;
    px->fd[TR_LEFT] = in_fd;
    px->peer_addr[TR_RIGHT] = table[right].addr;
    px->peer_port[TR_RIGHT] = table[right].port;
    px->peer_addr[TR_LEFT] = table[left].addr;
    px->peer_port[TR_LEFT] = table[left].port;
    return 0;
}
