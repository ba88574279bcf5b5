/* tinyring POSIX port: the rendezvous. Rank 0 serves the master port and
 * collects every rank's listening address; the other ranks dial it, register
 * and wait for the table. One poll loop; no client can block the master:
 * each connection must register within handshake_ms or it is closed. */
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

#define MAX_CONNS (TR_POSIX_MAX_WORLD + 16)   /* ranks plus a few strangers at once */
#define ANS_MAX   (TR_POSIX_ANS_BYTES + 8 * TR_POSIX_MAX_WORLD)

static void sleep_ms(int ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

static void sockaddr4(struct sockaddr_in *sa, uint32_t addr, uint16_t port)
{
    memset(sa, 0, sizeof *sa);
    sa->sin_family = AF_INET;
    sa->sin_addr.s_addr = addr;
    sa->sin_port = htons(port);
}

int tr_posix_master_open(const struct tr_posix_plan *pl, int *fd, char *err, size_t errlen)
{
    struct sockaddr_in sa;
    char ab[32];
    int b, one = 1, s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (s < 0)
        return tr_posix_fail(err, errlen, TR_ERR_IO, "master: socket: %s", strerror(errno));
    /* SO_REUSEADDR only skips TIME_WAIT leftovers; a live listener still
     * makes bind fail with EADDRINUSE. */
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr4(&sa, pl->master_addr, pl->master_port);
    b = bind(s, (struct sockaddr *)&sa, sizeof sa);
    if (b < 0 && errno == EADDRNOTAVAIL) {
        /* MASTER_ADDR names this host by an address it does not own (NAT,
         * a load balancer): listen on every address instead. */
        sockaddr4(&sa, htonl(INADDR_ANY), pl->master_port);
        b = bind(s, (struct sockaddr *)&sa, sizeof sa);
    }
    if (b < 0 || listen(s, 128) < 0) {
        int e = errno, code = tr_posix_errno_code(e);
        close(s);
        if (code == TR_ERR_ADDRINUSE)
            return tr_posix_fail(err, errlen, code,
                                 "master port %s:%u is already in use (another job? pick "
                                 "another port)", tr_posix_ntoa(pl->master_addr, ab, sizeof ab),
                                 pl->master_port);
        return tr_posix_fail(err, errlen, code == TR_ERR_AGAIN ? TR_ERR_IO : code,
                             "master: cannot listen on %s:%u: %s",
                             tr_posix_ntoa(pl->master_addr, ab, sizeof ab), pl->master_port,
                             strerror(e));
    }
    *fd = s;
    return 0;
}

struct conn {
    int      fd;
    int      rank;            /* -1 until it registered */
    uint32_t deadline;        /* must have registered by then */
    size_t   got;
    uint8_t  buf[TR_POSIX_REG_BYTES];
};

/* Best effort: the answer is small and the socket buffer empty, so this does
 * not wait in practice; a client that does not read cannot stall us long. */
static void answer(int fd, int status, uint32_t world, uint32_t why,
                   const struct tr_posix_endpoint *table, uint32_t n, uint32_t handshake_ms)
{
    uint8_t out[ANS_MAX];
    tr_posix_put_ans(out, status, world, why, table, n);
    tr_posix_send_all(fd, out, TR_POSIX_ANS_BYTES + 8u * n,
                      tr_posix_clock_ms() + handshake_ms);
}

/* Close every connection; registered ranks first get the answer. With
 * any_addr, rank 0's entry is the address that rank reached the master at. */
static void finish(struct conn *c, int nc, int status, uint32_t world, uint32_t why,
                   struct tr_posix_endpoint *table, uint32_t n, uint32_t handshake_ms,
                   int any_addr)
{
    int i;
    for (i = 0; i < nc; i++) {
        if (c[i].fd < 0)
            continue;
        if (any_addr && table && n) {
            struct sockaddr_in sa;
            socklen_t len = sizeof sa;
            if (getsockname(c[i].fd, (struct sockaddr *)&sa, &len) == 0)
                table[0].addr = sa.sin_addr.s_addr;
        }
        if (c[i].rank >= 0)
            answer(c[i].fd, status, world, why, table, n, handshake_ms);
        tr_posix_close_fd(&c[i].fd);
    }
}

static void list_missing(char *out, size_t len, const struct tr_posix_endpoint *table, int world)
{
    size_t used = 0;
    int i, shown = 0;
    out[0] = 0;
    for (i = 0; i < world && used + 16 < len; i++) {
        if (table[i].port)
            continue;
        used += (size_t)snprintf(out + used, len - used, "%s%d", shown ? "," : "", i);
        shown++;
    }
}

/* A complete registration from c: 0 = joined, 1 = refused (closed, job goes
 * on), < 0 = the job must abort (message in err). */
static int admit(struct conn *c, const struct tr_posix_plan *pl, struct tr_posix_endpoint *table,
                 uint32_t *why, char *err, size_t errlen)
{
    struct tr_posix_intro r;
    char ab[32];
    if (tr_posix_get_reg(&r, c->buf) < 0)
        return 1;                                   /* stranger: close */
    if (r.token != pl->token) {
        answer(c->fd, TR_ERR_MISMATCH, (uint32_t)pl->world, TR_POSIX_WHY_TOKEN, NULL, 0,
               pl->handshake_ms);
        return 1;                                   /* another job: refuse */
    }
    if (r.version != TR_POSIX_VERSION) {
        *why = TR_POSIX_WHY_VERSION;
        return tr_posix_fail(err, errlen, TR_ERR_MISMATCH,
                             "rank %u speaks rendezvous version %u, master %u", r.rank,
                             r.version, TR_POSIX_VERSION);
    }
    if (r.world != (uint32_t)pl->world) {
        *why = TR_POSIX_WHY_WORLD;
        return tr_posix_fail(err, errlen, TR_ERR_MISMATCH,
                             "world sizes differ: rank %u says %u, master (rank 0) says %d",
                             r.rank, r.world, pl->world);
    }
    if (r.rank == 0 || r.rank >= (uint32_t)pl->world || table[r.rank].port) {
        *why = r.rank >= (uint32_t)pl->world ? TR_POSIX_WHY_RANGE : TR_POSIX_WHY_DUPLICATE;
        return tr_posix_fail(err, errlen, TR_ERR_MISMATCH,
                             "rank %u registered twice (second one from %s)", r.rank,
                             tr_posix_ntoa(r.addr, ab, sizeof ab));
    }
    table[r.rank].addr = r.addr;
    table[r.rank].port = r.port;
    c->rank = (int)r.rank;
    return 0;
}

/* The master's connections while ranks join. */
struct serve {
    const struct tr_posix_plan *pl;
    struct tr_posix_endpoint *table;
    struct conn c[MAX_CONNS];            /* ~13 KiB of stack; no static state */
    int      joined;                     /* ranks in the table, rank 0 included */
    uint32_t why;                        /* TR_POSIX_WHY_* of an abort */
    char    *err;
    size_t   errlen;
};

/* Fills the poll set (the master port, then every connection); closes
 * strangers that stayed silent too long. Returns the number of entries. */
static int serve_poll_set(struct serve *s, int master_fd, uint32_t now, struct pollfd *pf,
                          int *map, int *wait)
{
    int np = 0, i;
    pf[np].fd = master_fd; pf[np].events = POLLIN; map[np++] = -1;
    for (i = 0; i < MAX_CONNS; i++) {
        struct conn *k = &s->c[i];
        if (k->fd < 0)
            continue;
        if (k->rank < 0) {
            int32_t d = (int32_t)(k->deadline - now);
            if (d <= 0) {                      /* silent stranger: close */
                tr_posix_close_fd(&k->fd);
                continue;
            }
            if (d < *wait)
                *wait = d;
        }
        pf[np].fd = k->fd; pf[np].events = POLLIN; map[np++] = i;
    }
    return np;
}

/* A registered rank says nothing more until the answer; EOF or bytes mean
 * it died or misbehaves: forget it, it may rejoin. */
static void serve_registered(struct serve *s, struct conn *k)
{
    uint8_t junk[64];
    ssize_t n = recv(k->fd, junk, sizeof junk, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    s->table[k->rank].port = 0;
    s->joined--;
    tr_posix_close_fd(&k->fd);
}

/* Reads a registration; refuses garbage as soon as the magic is wrong.
 * Returns 0, or < 0 when the job must abort (every connection answered
 * and closed, message in err). */
static int serve_joining(struct serve *s, struct conn *k)
{
    ssize_t n = recv(k->fd, k->buf + k->got, sizeof k->buf - k->got, MSG_DONTWAIT);
    int rc;
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return 0;
    if (n <= 0) {
        tr_posix_close_fd(&k->fd);
        return 0;
    }
    k->got += (size_t)n;
    if (memcmp(k->buf, "TRR1", k->got < 4 ? k->got : 4) != 0) {
        tr_posix_close_fd(&k->fd);
        return 0;
    }
    if (k->got < sizeof k->buf)
        return 0;
    rc = admit(k, s->pl, s->table, &s->why, s->err, s->errlen);
    if (rc < 0) {
        answer(k->fd, rc, (uint32_t)s->pl->world, s->why, NULL, 0, s->pl->handshake_ms);
        tr_posix_close_fd(&k->fd);
        finish(s->c, MAX_CONNS, rc, (uint32_t)s->pl->world, s->why, NULL, 0,
               s->pl->handshake_ms, 0);
        return rc;
    }
    if (rc > 0)
        tr_posix_close_fd(&k->fd);
    else
        s->joined++;
    return 0;
}

/* Takes every pending connection into a free slot (none free: refused). */
static void serve_accept(struct serve *s, int master_fd)
{
    for (;;) {
        int i, fd = accept4(master_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;
        for (i = 0; i < MAX_CONNS && s->c[i].fd >= 0; i++)
            ;
        if (i == MAX_CONNS) {                  /* full: refuse, keep the ranks */
            close(fd);
            continue;
        }
        s->c[i].fd = fd;
        s->c[i].rank = -1;
        s->c[i].got = 0;
        s->c[i].deadline = tr_posix_clock_ms() + s->pl->handshake_ms;
    }
}

/* The join deadline passed: tell the ranks that joined who is missing. */
static int serve_timeout(struct serve *s)
{
    const struct tr_posix_plan *pl = s->pl;
    char miss[256];
    list_missing(miss, sizeof miss, s->table, pl->world);
    finish(s->c, MAX_CONNS, TR_ERR_TIMEOUT, (uint32_t)pl->world, TR_POSIX_WHY_MISSING, s->table,
           (uint32_t)pl->world, pl->handshake_ms, pl->any_addr);
    return tr_posix_fail(s->err, s->errlen, TR_ERR_TIMEOUT,
                         "rendezvous: rank(s) %s never joined within %u ms", miss, pl->join_ms);
}

int tr_posix_master_serve(const struct tr_posix_plan *pl, int master_fd,
                          struct tr_posix_endpoint *table, char *err, size_t errlen)
{
    struct serve s;
    struct pollfd pf[MAX_CONNS + 1];
    int map[MAX_CONNS + 1];
    uint32_t deadline = tr_posix_clock_ms() + pl->join_ms;
    int i;

    s.pl = pl;
    s.table = table;
    s.joined = 1;
    s.why = 0;
    s.err = err;
    s.errlen = errlen;
    for (i = 0; i < MAX_CONNS; i++)
        s.c[i].fd = -1;
    for (i = 1; i < pl->world; i++)
        table[i].port = 0;              /* table[0] is rank 0 itself */

    while (s.joined < pl->world) {
        int wait = tr_posix_left_ms(deadline), np, rc;
        if (wait == 0)
            return serve_timeout(&s);
        np = serve_poll_set(&s, master_fd, tr_posix_clock_ms(), pf, map, &wait);
        rc = poll(pf, (nfds_t)np, wait);
        if (rc < 0 && errno != EINTR) {
            finish(s.c, MAX_CONNS, TR_ERR_IO, (uint32_t)pl->world, 0, NULL, 0,
                   pl->handshake_ms, 0);
            return tr_posix_fail(err, errlen, TR_ERR_IO, "master: poll: %s", strerror(errno));
        }
        if (rc <= 0)
            continue;
        for (i = 1; i < np; i++) {
            struct conn *k = &s.c[map[i]];
            if (!pf[i].revents)
                continue;
            if (k->rank >= 0)
                serve_registered(&s, k);
            else if ((rc = serve_joining(&s, k)) < 0)
                return rc;
        }
        if (pf[0].revents)
            serve_accept(&s, master_fd);
    }
    finish(s.c, MAX_CONNS, 0, (uint32_t)pl->world, 0, table, (uint32_t)pl->world,
           pl->handshake_ms, pl->any_addr);
    return 0;
}

int tr_posix_master_dial(const struct tr_posix_plan *pl, int *fd, char *err, size_t errlen)
{
    uint32_t deadline = tr_posix_clock_ms() + pl->connect_ms;
    int last = 0;
    char ab[32];
    for (;;) {
        struct sockaddr_in sa;
        int s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        int left = tr_posix_left_ms(deadline);
        if (s < 0)
            return tr_posix_fail(err, errlen, TR_ERR_IO, "socket: %s", strerror(errno));
        sockaddr4(&sa, pl->master_addr, pl->master_port);
        if (connect(s, (struct sockaddr *)&sa, sizeof sa) == 0) {
            *fd = s;
            return 0;
        }
        if (errno == EINPROGRESS) {
            struct pollfd p = { s, POLLOUT, 0 };
            int e = 0;
            socklen_t el = sizeof e;
            if (poll(&p, 1, left > 1000 ? 1000 : left) > 0 &&
                getsockopt(s, SOL_SOCKET, SO_ERROR, &e, &el) == 0 && e == 0) {
                *fd = s;
                return 0;
            }
            last = e ? e : ETIMEDOUT;
        } else {
            last = errno;
        }
        close(s);
        if (tr_posix_left_ms(deadline) == 0)
            return tr_posix_fail(err, errlen, TR_ERR_UNREACH,
                                 "master %s:%u not reachable within %u ms (last error: %s)",
                                 tr_posix_ntoa(pl->master_addr, ab, sizeof ab),
                                 pl->master_port, pl->connect_ms, strerror(last));
        sleep_ms(left > 50 ? 50 : left);     /* master not up yet: retry */
    }
}

int tr_posix_client_join(const struct tr_posix_plan *pl, int fd,
                         struct tr_posix_endpoint *table, char *err, size_t errlen)
{
    uint8_t reg[TR_POSIX_REG_BYTES], head[TR_POSIX_ANS_BYTES];
    struct tr_posix_intro r;
    uint32_t world, why, n, i;
    int status, rc;
    uint32_t deadline = tr_posix_clock_ms() + pl->join_ms + pl->handshake_ms;
    char ab[32];

    r.version = TR_POSIX_VERSION;
    r.token = pl->token;
    r.rank = (uint32_t)pl->rank;
    r.world = (uint32_t)pl->world;
    r.addr = pl->local_addr;
    r.port = pl->listen_port;
    tr_posix_put_reg(reg, &r);
    rc = tr_posix_send_all(fd, reg, sizeof reg, deadline);
    if (rc == 0)
        rc = tr_posix_recv_all(fd, head, sizeof head, deadline);
    if (rc == TR_ERR_CLOSED)
        return tr_posix_fail(err, errlen, TR_ERR_CLOSED,
                             "rendezvous: the master (rank 0) at %s:%u closed the connection "
                             "before answering (it died, or it is not a tinyring master)",
                             tr_posix_ntoa(pl->master_addr, ab, sizeof ab), pl->master_port);
    if (rc == TR_ERR_TIMEOUT)
        return tr_posix_fail(err, errlen, TR_ERR_TIMEOUT,
                             "rendezvous: no answer from the master within %u ms",
                             pl->join_ms + pl->handshake_ms);
    if (rc < 0)
        return tr_posix_fail(err, errlen, rc, "rendezvous with the master: %s",
                             strerror(errno));
    if (tr_posix_get_ans_head(head, &status, &world, &why, &n) < 0)
        return tr_posix_fail(err, errlen, TR_ERR_PROTO,
                             "rendezvous: the master sent a malformed answer");
    for (i = 0; i < n; i++) {
        uint8_t e[8];
        rc = tr_posix_recv_all(fd, e, sizeof e, deadline);
        if (rc < 0)
            return tr_posix_fail(err, errlen, rc, "rendezvous: table cut short (%s)",
                                 rc == TR_ERR_CLOSED ? "master closed" : "timeout");
        if ((int)i < pl->world && tr_posix_get_ans_entry(e, &table[i]) < 0)
            return tr_posix_fail(err, errlen, TR_ERR_PROTO,
                                 "rendezvous: the master sent a malformed table entry");
    }
    if (status == 0) {
        if (world != (uint32_t)pl->world || n != world)
            return tr_posix_fail(err, errlen, TR_ERR_PROTO,
                                 "rendezvous: the master's table has %u ranks, expected %d",
                                 n, pl->world);
        return 0;
    }
    switch (why) {
    case TR_POSIX_WHY_TOKEN:
        return tr_posix_fail(err, errlen, TR_ERR_MISMATCH,
                             "rendezvous: the master at %s:%u belongs to another job "
                             "(job token differs); refused",
                             tr_posix_ntoa(pl->master_addr, ab, sizeof ab), pl->master_port);
    case TR_POSIX_WHY_WORLD:
        return tr_posix_fail(err, errlen, TR_ERR_MISMATCH,
                             "rendezvous: world sizes differ (this rank %d says %d, the master "
                             "says %u); job aborted", pl->rank, pl->world, world);
    case TR_POSIX_WHY_DUPLICATE:
    case TR_POSIX_WHY_RANGE:
        return tr_posix_fail(err, errlen, TR_ERR_MISMATCH,
                             "rendezvous: two processes claimed the same rank; job aborted");
    case TR_POSIX_WHY_VERSION:
        return tr_posix_fail(err, errlen, TR_ERR_MISMATCH,
                             "rendezvous: ranks run different protocol versions; job aborted");
    case TR_POSIX_WHY_MISSING: {
        char miss[256];
        list_missing(miss, sizeof miss, table, (int)(n < (uint32_t)pl->world ? n : (uint32_t)pl->world));
        return tr_posix_fail(err, errlen, TR_ERR_TIMEOUT,
                             "rendezvous: rank(s) %s never joined; the master gave up", miss);
    }
    default:
        return tr_posix_fail(err, errlen, status < 0 ? status : TR_ERR_PROTO,
                             "rendezvous: the master aborted the job (code %d)", status);
    }
}
