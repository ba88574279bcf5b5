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
#include "tr_link.h"
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
    tr_posix_link_clamp(s, sa.sin_addr.s_addr, pl->rcvbuf);
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

/* An accepted connection that has not said who it is yet. */
struct cand {
    int      fd;
    uint32_t deadline;
    size_t   got;
    uint8_t  buf[TR_LINK_HELLO_BYTES];
};

/* What the listening port refused while waiting (for the timeout message). */
struct refusals {
    unsigned other_job, wrong, garbage;
};

/* Opening both links: the state one poll loop moves forward. */
struct links {
    const struct tr_posix_plan *pl;
    const struct tr_posix_endpoint *table;
    int      right, left;             /* neighbour ranks */
    uint32_t deadline;                /* both links up by then */
    uint8_t  mine[TR_LINK_HELLO_BYTES];
    char     where[48];               /* the right neighbour's address:port */
    char    *err;
    size_t   errlen;
    /* the right link: dial, send our hello, read the answer */
    enum out_stage out;
    int      out_fd;
    uint32_t retry_at;                /* next dial (OUT_DIAL) */
    uint32_t dial_end;                /* give up this attempt (OUT_CONNECTING) */
    int      last_err;                /* errno of the last failed attempt */
    uint8_t  reply[TR_LINK_HELLO_BYTES];
    size_t   reply_got;
    /* the left link: the first candidate that is our left neighbour */
    int      listen_fd, in_fd;
    struct cand cd[MAX_CANDIDATES];
    struct refusals ref;
};

/* Poll set entries that are not candidates. */
#define SLOT_OUT    (-2)
#define SLOT_LISTEN (-1)

static const char *refusals_text(const struct refusals *r, char *buf, size_t len)
{
    if (!r->other_job && !r->wrong && !r->garbage)
        return "";
    snprintf(buf, len, "; refused meanwhile: %u hello(s) of another job, %u of another "
             "world or rank, %u stranger(s)", r->other_job, r->wrong, r->garbage);
    return buf;
}

/* The right neighbour answered, but not as rank `want` of this job. */
static int reply_refused(const struct links *s, enum tr_link_verdict v,
                         const struct tr_link_hello *h)
{
    const struct tr_posix_plan *pl = s->pl;
    switch (v) {
    case TR_LINK_OTHER_JOB:
        return tr_posix_fail(s->err, s->errlen, TR_ERR_MISMATCH,
                             "rank %d: the process at %s (table entry of rank %d) belongs "
                             "to another job (job token differs); refused", pl->rank,
                             s->where, s->right);
    case TR_LINK_OTHER_WORLD:
        return tr_posix_fail(s->err, s->errlen, TR_ERR_MISMATCH,
                             "rank %d: world sizes differ: rank %d at %s says %u, this rank "
                             "says %d", pl->rank, s->right, s->where, h->world, pl->world);
    case TR_LINK_OTHER_RANK:
        return tr_posix_fail(s->err, s->errlen, TR_ERR_MISMATCH,
                             "rank %d: the process at %s is rank %u, not rank %d (do the "
                             "ranks' address tables differ?)", pl->rank, s->where, h->rank,
                             s->right);
    case TR_LINK_OTHER_VERSION:
        return tr_posix_fail(s->err, s->errlen, TR_ERR_MISMATCH,
                             "rank %d: rank %d at %s speaks link version %u, this rank %u",
                             pl->rank, s->right, s->where, h->version, TR_LINK_VERSION);
    default:
        return tr_posix_fail(s->err, s->errlen, TR_ERR_PROTO,
                             "rank %d: the process at %s is not a tinyring rank", pl->rank,
                             s->where);
    }
}

/* The deadline passed: say which link is missing and what was refused. */
static int links_timeout(const struct links *s)
{
    const struct tr_posix_plan *pl = s->pl;
    char ab[32], rt[160];
    if (s->out != OUT_DONE)
        return tr_posix_fail(s->err, s->errlen, TR_ERR_TIMEOUT,
                             "rank %d: could not open the link to its right neighbour "
                             "rank %d at %s within %u ms (%s)", pl->rank, s->right, s->where,
                             pl->join_ms, s->last_err ? strerror(s->last_err) : "no answer");
    return tr_posix_fail(s->err, s->errlen, TR_ERR_TIMEOUT,
                         "rank %d: its left neighbour rank %d (%s:%u) never connected "
                         "within %u ms%s", pl->rank, s->left,
                         tr_posix_ntoa(s->table[s->left].addr, ab, sizeof ab),
                         s->table[s->left].port, pl->join_ms,
                         refusals_text(&s->ref, rt, sizeof rt));
}

/* ---- the right link ------------------------------------------------------ */

static void out_redial(struct links *s, uint32_t at)
{
    tr_posix_close_fd(&s->out_fd);
    s->out = OUT_DIAL;
    s->retry_at = at;
}

/* Starts a connect attempt when one is due. Returns 0 or an error. */
static int out_dial(struct links *s, uint32_t now)
{
    const struct tr_posix_endpoint *r = &s->table[s->right];
    struct sockaddr_in sa;
    if (s->out != OUT_DIAL || (int32_t)(now - s->retry_at) < 0)
        return 0;
    s->out_fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (s->out_fd < 0)
        return tr_posix_fail(s->err, s->errlen, tr_posix_errno_code(errno), "socket: %s",
                             strerror(errno));
    tr_posix_link_opts(s->out_fd, s->pl->sndbuf, s->pl->rcvbuf);
    tr_posix_link_clamp(s->out_fd, r->addr, s->pl->rcvbuf);
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = r->addr;
    sa.sin_port = htons(r->port);
    if (connect(s->out_fd, (struct sockaddr *)&sa, sizeof sa) == 0 || errno == EINPROGRESS) {
        s->out = OUT_CONNECTING;
        s->dial_end = now + DIAL_MS;
    } else {
        s->last_err = errno;
        out_redial(s, now + RETRY_MS);
    }
    return 0;
}

/* An attempt with no SYN-ACK by dial_end is dropped for a fresh one. Shortens
 * *wait to the next moment the right link has something to do. */
static void out_timers(struct links *s, uint32_t now, int *wait)
{
    int32_t d;
    if (s->out == OUT_CONNECTING && (int32_t)(now - s->dial_end) >= 0) {
        s->last_err = ETIMEDOUT;
        out_redial(s, now);
    }
    if (s->out == OUT_CONNECTING)
        d = (int32_t)(s->dial_end - now);
    else if (s->out == OUT_DIAL)
        d = (int32_t)(s->retry_at - now);
    else
        return;
    if (d < *wait)
        *wait = d > 0 ? d : 0;
}

/* The connect finished: send our hello, or dial again (neighbour not
 * listening yet). */
static void out_connected(struct links *s, uint32_t now)
{
    int e = 0;
    socklen_t el = sizeof e;
    getsockopt(s->out_fd, SOL_SOCKET, SO_ERROR, &e, &el);
    if (e == 0 && tr_posix_send_all(s->out_fd, s->mine, sizeof s->mine,
                                    now + s->pl->handshake_ms) == 0) {
        s->out = OUT_REPLY;
        s->reply_got = 0;
        return;
    }
    s->last_err = e ? e : EPIPE;
    out_redial(s, now + RETRY_MS);
}

/* Reads the right neighbour's answer. Returns 0 or an error. */
static int out_reply(struct links *s)
{
    struct tr_link_hello h;
    enum tr_link_verdict v;
    ssize_t n = recv(s->out_fd, s->reply + s->reply_got, sizeof s->reply - s->reply_got,
                     MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return 0;
    if (n <= 0)
        return tr_posix_fail(s->err, s->errlen, TR_ERR_CLOSED,
                             "rank %d: right neighbour rank %d at %s closed the link during "
                             "the link hello (died, or not this job)", s->pl->rank, s->right,
                             s->where);
    s->reply_got += (size_t)n;
    if (s->reply_got < sizeof s->reply)
        return 0;
    v = tr_link_hello_judge(&h, s->reply, s->pl->token, (uint32_t)s->pl->world,
                            (uint32_t)s->right);
    if (v != TR_LINK_OK)
        return reply_refused(s, v, &h);
    s->out = OUT_DONE;
    return 0;
}

/* ---- the left link ------------------------------------------------------- */

static void in_accept(struct links *s)
{
    for (;;) {
        int k, fd = accept4(s->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;
        for (k = 0; k < MAX_CANDIDATES && s->cd[k].fd >= 0; k++)
            ;
        if (k == MAX_CANDIDATES) {
            close(fd);
            continue;
        }
        s->cd[k].fd = fd;
        s->cd[k].got = 0;
        s->cd[k].deadline = tr_posix_clock_ms() + s->pl->handshake_ms;
    }
}

static void in_refuse(struct cand *c, unsigned *count)
{
    tr_posix_close_fd(&c->fd);
    (*count)++;
}

/* Reads from a candidate; once its hello is whole, answers any well-formed
 * one (so its sender can say why it was refused) and keeps it only if it is
 * our left neighbour. Garbage is closed at its first wrong byte. */
static void in_candidate(struct links *s, struct cand *c, uint32_t now)
{
    struct tr_link_hello h;
    enum tr_link_verdict v;
    ssize_t n = recv(c->fd, c->buf + c->got, sizeof c->buf - c->got, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) {
        in_refuse(c, &s->ref.garbage);
        return;
    }
    c->got += (size_t)n;
    if (!tr_link_hello_prefix_ok(c->buf, c->got)) {
        in_refuse(c, &s->ref.garbage);
        return;
    }
    if (c->got < sizeof c->buf)
        return;
    v = tr_link_hello_judge(&h, c->buf, s->pl->token, (uint32_t)s->pl->world,
                            (uint32_t)s->left);
    /* a tiny write to an empty socket buffer, bounded all the same */
    if (tr_posix_send_all(c->fd, s->mine, sizeof s->mine,
                          now + (v == TR_LINK_OK ? s->pl->handshake_ms : 100u)) < 0 ||
        v != TR_LINK_OK) {
        in_refuse(c, v == TR_LINK_OTHER_JOB ? &s->ref.other_job : &s->ref.wrong);
        return;
    }
    s->in_fd = c->fd;
    c->fd = -1;
}

/* ---- the loop ------------------------------------------------------------ */

/* Fills the poll set for what is under way; closes candidates that stayed
 * silent too long. Returns the number of entries. */
static int poll_set(struct links *s, uint32_t now, struct pollfd *pf, int *slot, int *wait)
{
    int np = 0, i;
    if (s->out == OUT_CONNECTING || s->out == OUT_REPLY) {
        pf[np].fd = s->out_fd;
        pf[np].events = s->out == OUT_CONNECTING ? POLLOUT : POLLIN;
        slot[np++] = SLOT_OUT;
    }
    if (s->in_fd >= 0)
        return np;
    pf[np].fd = s->listen_fd;
    pf[np].events = POLLIN;
    slot[np++] = SLOT_LISTEN;
    for (i = 0; i < MAX_CANDIDATES; i++) {
        int32_t d;
        if (s->cd[i].fd < 0)
            continue;
        d = (int32_t)(s->cd[i].deadline - now);
        if (d <= 0) {                         /* silent: close, keep waiting */
            in_refuse(&s->cd[i], &s->ref.garbage);
            continue;
        }
        if (d < *wait)
            *wait = d;
        pf[np].fd = s->cd[i].fd;
        pf[np].events = POLLIN;
        slot[np++] = i;
    }
    return np;
}

/* One turn: dial if due, poll, act on what is ready. Returns 0 or an error. */
static int links_turn(struct links *s)
{
    struct pollfd pf[MAX_CANDIDATES + 2];
    int slot[MAX_CANDIDATES + 2], np, i, rc;
    uint32_t now = tr_posix_clock_ms();
    int wait = tr_posix_left_ms(s->deadline);

    if (wait == 0)
        return links_timeout(s);
    if ((rc = out_dial(s, now)) < 0)
        return rc;
    out_timers(s, now, &wait);
    np = poll_set(s, now, pf, slot, &wait);
    if (poll(pf, (nfds_t)np, wait) < 0 && errno != EINTR)
        return tr_posix_fail(s->err, s->errlen, TR_ERR_IO, "poll: %s", strerror(errno));
    for (i = 0; i < np; i++) {
        if (!pf[i].revents)
            continue;
        if (slot[i] == SLOT_OUT && s->out == OUT_CONNECTING)
            out_connected(s, now);
        else if (slot[i] == SLOT_OUT && s->out == OUT_REPLY)
            rc = out_reply(s);
        else if (slot[i] == SLOT_LISTEN)
            in_accept(s);
        else if (slot[i] >= 0 && s->in_fd < 0)
            in_candidate(s, &s->cd[slot[i]], now);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static void links_init(struct links *s, const struct tr_posix_plan *pl, int listen_fd,
                       const struct tr_posix_endpoint *table, char *err, size_t errlen)
{
    struct tr_link_hello me;
    char ab[32];
    int i;
    memset(s, 0, sizeof *s);
    s->pl = pl;
    s->table = table;
    s->right = (pl->rank + 1) % pl->world;
    s->left = (pl->rank - 1 + pl->world) % pl->world;
    s->deadline = tr_posix_clock_ms() + pl->join_ms;
    s->err = err;
    s->errlen = errlen;
    s->out = OUT_DIAL;
    s->out_fd = -1;
    s->listen_fd = listen_fd;
    s->in_fd = -1;
    for (i = 0; i < MAX_CANDIDATES; i++)
        s->cd[i].fd = -1;
    me.version = TR_LINK_VERSION;
    me.token = pl->token;
    me.rank = (uint32_t)pl->rank;
    me.world = (uint32_t)pl->world;
    tr_link_hello_put(s->mine, &me);
    snprintf(s->where, sizeof s->where, "%s:%u",
             tr_posix_ntoa(table[s->right].addr, ab, sizeof ab), table[s->right].port);
}

int tr_posix_links_open(struct tr_posix *px, const struct tr_posix_plan *pl,
                        int listen_fd, const struct tr_posix_endpoint *table,
                        char *err, size_t errlen)
{
    struct links s;
    int i, rc = 0;

    links_init(&s, pl, listen_fd, table, err, errlen);
    while (rc == 0 && (s.out != OUT_DONE || s.in_fd < 0))
        rc = links_turn(&s);
    for (i = 0; i < MAX_CANDIDATES; i++)
        tr_posix_close_fd(&s.cd[i].fd);
    if (rc < 0) {
        tr_posix_close_fd(&s.out_fd);
        tr_posix_close_fd(&s.in_fd);
        return rc;
    }
    tr_posix_link_opts(s.out_fd, pl->sndbuf, pl->rcvbuf);
    tr_posix_link_opts(s.in_fd, pl->sndbuf, pl->rcvbuf);
    px->fd[TR_RIGHT] = s.out_fd;
    px->fd[TR_LEFT] = s.in_fd;
    px->peer_addr[TR_RIGHT] = table[s.right].addr;
    px->peer_port[TR_RIGHT] = table[s.right].port;
    px->peer_addr[TR_LEFT] = table[s.left].addr;
    px->peer_port[TR_LEFT] = table[s.left].port;
    return 0;
}
