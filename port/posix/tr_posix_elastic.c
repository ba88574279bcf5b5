/* tinyring POSIX port: the elastic membership's connections. A process
 * keeps its listening port (and, coordinating a tcp:// job, the master port)
 * open for the whole run; the JOINs that arrive there wait in el->conn for
 * the next round (tr_posix_elastic_round.c). This file has the start, the
 * search of a process started again (find), the service between steps,
 * the close, and the pieces the round shares: message I/O, asking a
 * process, the pending connections' poll set. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "tr_error.h"
#include "tr_posix_int.h"

#define MASTER_RETRY_MS      100u    /* the coordinator's next bind attempt */

void tr_posix_el_sleep(int ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
    if (ms > 0)
        nanosleep(&ts, NULL);
}

int tr_posix_el_is_coord(const struct tr_posix_elastic *el)
{
    return el->index == 0 && el->view.n > 0;
}

/* ---- messages ------------------------------------------------------------ */

int tr_posix_el_send(int fd, const struct tr_el_msg *m, uint32_t deadline)
{
    uint8_t out[TR_EL_MAX_BYTES];
    size_t n = tr_el_encode(m, out, sizeof out);
    if (!n)
        return TR_ERR_INVAL;
    return tr_posix_send_all(fd, out, n, deadline);
}

void tr_posix_el_join_msg(const struct tr_posix_elastic *el, struct tr_el_msg *m,
                          uint32_t epoch, uint32_t flags, uint64_t step)
{
    memset(m, 0, sizeof *m);
    m->type = TR_EL_JOIN;
    m->token = el->cfg.job_token;
    m->epoch = epoch;
    m->join.rank = el->cfg.rank;
    m->join.flags = flags;
    m->join.step = step;
    m->join.addr = el->my_addr;
    m->join.port = el->my_port;
}

/* Sends REPLY answer (coordinator coord) on *fd, best effort, and closes it. */
void tr_posix_el_reply(const struct tr_posix_elastic *el, int *fd, uint32_t answer,
                       uint32_t coord)
{
    struct tr_el_msg m;
    memset(&m, 0, sizeof m);
    m.type = TR_EL_REPLY;
    m.token = el->cfg.job_token;
    m.epoch = el->view.epoch;
    m.answer = answer;
    m.coord = coord;
    tr_posix_el_send(*fd, &m, tr_posix_clock_ms() + 100u);  /* 32 bytes: never waits */
    tr_posix_close_fd(fd);
}

/* One step of reading a message into buf (TR_EL_MAX_BYTES): 1 = whole and
 * decoded into m, 0 = not yet, or TR_ERR_CLOSED / TR_ERR_PROTO. */
int tr_posix_el_read_step(int fd, uint8_t *buf, size_t *got, size_t *total,
                          uint64_t token, struct tr_el_msg *m)
{
    ssize_t n = recv(fd, buf + *got, *total - *got, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return 0;
    if (n <= 0)
        return n == 0 ? TR_ERR_CLOSED : tr_posix_errno_code(errno);
    *got += (size_t)n;
    if (!tr_el_prefix_ok(buf, *got))
        return TR_ERR_PROTO;
    if (*got == TR_EL_HEAD_BYTES && *total == TR_EL_HEAD_BYTES &&
        tr_el_head_total(buf, total) < 0)
        return TR_ERR_PROTO;
    if (*got < *total)
        return 0;
    if (tr_el_decode(buf, *total, m) < 0 || m->token != token)
        return TR_ERR_PROTO;
    return 1;
}

/* A whole message from fd by deadline (nothing else served meanwhile);
 * TR_ERR_TIMEOUT too once the heartbeats declare original rank `rank` (the
 * one asked) dead. */
static int recv_msg(struct tr_posix_elastic *el, int fd, uint32_t rank, uint32_t deadline,
                    struct tr_el_msg *m)
{
    uint8_t buf[TR_EL_MAX_BYTES];
    size_t got = 0, total = TR_EL_HEAD_BYTES;
    for (;;) {
        struct pollfd p = { fd, POLLIN, 0 };
        int left = tr_posix_left_ms(deadline), rc;
        if (left == 0 || (rank != TR_EL_NO_RANK && tr_posix_beat_dead(el, rank)))
            return TR_ERR_TIMEOUT;
        if (poll(&p, 1, left < TR_POSIX_EL_SLICE_MS ? left : TR_POSIX_EL_SLICE_MS) <= 0)
            continue;
        rc = tr_posix_el_read_step(fd, buf, &got, &total, el->cfg.job_token, m);
        if (rc != 0)
            return rc < 0 ? rc : 0;
    }
}

/* ---- asking a process ---------------------------------------------------- */

/* Starts a non-blocking connect. Returns 0 (*fd connecting or connected),
 * or TR_ERR_REFUSED / another tr_err when it failed at once. */
int tr_posix_el_dial(uint32_t addr, uint16_t port, int *fd)
{
    struct sockaddr_in sa;
    int s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    *fd = -1;
    if (s < 0)
        return tr_posix_errno_code(errno);
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = addr;
    sa.sin_port = htons(port);
    if (connect(s, (struct sockaddr *)&sa, sizeof sa) < 0 && errno != EINPROGRESS) {
        int e = errno;
        close(s);
        return e == ECONNREFUSED ? TR_ERR_REFUSED : tr_posix_errno_code(e);
    }
    *fd = s;
    return 0;
}

/* Connects (by dial_end) and sends m, then waits for the answer until
 * reply_end. Returns 0 with *reply and *fd open; TR_EL_ASK_DEAD (refused or
 * unreachable), TR_EL_ASK_CLOSED (closed unanswered), TR_EL_ASK_SILENT (no
 * answer in time). */
int tr_posix_el_ask(struct tr_posix_elastic *el, uint32_t rank, uint32_t addr, uint16_t port,
                    const struct tr_el_msg *m, uint32_t dial_end, uint32_t reply_end,
                    int *fd, struct tr_el_msg *reply)
{
    struct pollfd p;
    int e = 0, rc = tr_posix_el_dial(addr, port, fd);
    socklen_t el_len = sizeof e;
    if (rc < 0)
        return TR_EL_ASK_DEAD;
    p.fd = *fd;
    p.events = POLLOUT;
    p.revents = 0;
    if (poll(&p, 1, tr_posix_left_ms(dial_end)) <= 0 ||
        getsockopt(*fd, SOL_SOCKET, SO_ERROR, &e, &el_len) < 0 || e != 0) {
        tr_posix_close_fd(fd);
        return TR_EL_ASK_DEAD;         /* refused, unreachable, or no SYN-ACK */
    }
    rc = tr_posix_el_send(*fd, m, tr_posix_clock_ms() + el->cfg.handshake_ms);
    if (rc == 0)
        rc = recv_msg(el, *fd, rank, reply_end, reply);
    if (rc == 0 && reply->type == TR_EL_REPLY)
        return 0;
    tr_posix_close_fd(fd);
    if (rc == TR_ERR_TIMEOUT)
        return TR_EL_ASK_SILENT;
    return TR_EL_ASK_CLOSED;           /* closed, reset, or not our message */
}

/* ---- pending connections ------------------------------------------------- */

static void conn_read(struct tr_posix_elastic *el, struct tr_posix_el_conn *c);

static void conn_accept(struct tr_posix_elastic *el, int lfd)
{
    for (;;) {
        int k, fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;
        for (k = 0; k < TR_POSIX_EL_CONNS && el->conn[k].fd >= 0; k++)
            ;
        if (k == TR_POSIX_EL_CONNS) {          /* full: refuse this one */
            close(fd);
            continue;
        }
        el->conn[k].fd = fd;
        el->conn[k].since = tr_posix_clock_ms();
        el->conn[k].state = TR_POSIX_EL_READING;
        el->conn[k].got = 0;
        conn_read(el, &el->conn[k]);           /* the JOIN is often there already */
    }
}

/* The JOIN in c->buf is whole: keep it if it is one of this job's. */
static void conn_judge(struct tr_posix_elastic *el, struct tr_posix_el_conn *c)
{
    struct tr_el_msg m;
    if (tr_el_decode(c->buf, sizeof c->buf, &m) < 0 || m.type != TR_EL_JOIN ||
        m.token != el->cfg.job_token) {
        tr_posix_close_fd(&c->fd);             /* another job's gets nothing */
        return;
    }
    c->epoch = m.epoch;
    c->join = m.join;
    c->state = TR_POSIX_EL_PENDING;
    if (c->join.addr == 0) {                   /* "where you see me from" */
        struct sockaddr_in sa;
        socklen_t len = sizeof sa;
        if (getpeername(c->fd, (struct sockaddr *)&sa, &len) == 0)
            c->join.addr = sa.sin_addr.s_addr;
    }
}

/* Reads what c sent: a JOIN, partial reads kept; garbage closed at its
 * first wrong byte. A whole JOIN says nothing more: EOF or bytes end it. */
static void conn_read(struct tr_posix_elastic *el, struct tr_posix_el_conn *c)
{
    size_t total;
    ssize_t n;
    if (c->state != TR_POSIX_EL_READING) {
        uint8_t extra;
        n = recv(c->fd, &extra, 1, MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            return;
        tr_posix_close_fd(&c->fd);
        return;
    }
    n = recv(c->fd, c->buf + c->got, sizeof c->buf - c->got, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (n <= 0) {
        tr_posix_close_fd(&c->fd);
        return;
    }
    c->got = (uint8_t)(c->got + n);
    if (!tr_el_prefix_ok(c->buf, c->got) ||
        (c->got >= TR_EL_HEAD_BYTES && (tr_el_head_total(c->buf, &total) < 0 ||
                                        total != sizeof c->buf || c->buf[6] != TR_EL_JOIN))) {
        tr_posix_close_fd(&c->fd);
        return;
    }
    if (c->got == sizeof c->buf)
        conn_judge(el, c);
}

int tr_posix_el_poll_set(struct tr_posix_elastic *el, struct pollfd *pf, int *slot,
                         int *wait, int listeners)
{
    uint32_t now = tr_posix_clock_ms();
    int np = 0, i;
    if (listeners && el->listen_fd >= 0) {
        pf[np].fd = el->listen_fd; pf[np].events = POLLIN; pf[np].revents = 0;
        slot[np++] = TR_POSIX_EL_SLOT_LISTEN;
    }
    for (i = 0; listeners && i < TR_POSIX_MAX_MASTERS; i++) {
        if (el->master_fd[i] < 0)
            continue;
        pf[np].fd = el->master_fd[i]; pf[np].events = POLLIN; pf[np].revents = 0;
        slot[np++] = TR_POSIX_EL_SLOT_MASTER;
    }
    for (i = 0; i < TR_POSIX_EL_CONNS; i++) {
        struct tr_posix_el_conn *c = &el->conn[i];
        if (c->fd < 0)
            continue;
        if (c->state == TR_POSIX_EL_READING) {
            int32_t d = (int32_t)(c->since + el->cfg.handshake_ms - now);
            if (d <= 0) {                      /* silent too long: close */
                tr_posix_close_fd(&c->fd);
                continue;
            }
            if (d < *wait)
                *wait = d;
        }
        pf[np].fd = c->fd; pf[np].events = POLLIN; pf[np].revents = 0;
        slot[np++] = i;
    }
    return np;
}

void tr_posix_el_pump(struct tr_posix_elastic *el, const struct pollfd *pf, const int *slot,
                      int np)
{
    int i, j;
    for (i = 0; i < np; i++) {
        if (!pf[i].revents)
            continue;
        if (slot[i] >= 0 && el->conn[slot[i]].fd == pf[i].fd)
            conn_read(el, &el->conn[slot[i]]);
        else if (slot[i] == TR_POSIX_EL_SLOT_LISTEN)
            conn_accept(el, el->listen_fd);
        else if (slot[i] == TR_POSIX_EL_SLOT_MASTER)
            for (j = 0; j < TR_POSIX_MAX_MASTERS; j++)
                if (el->master_fd[j] >= 0 && el->master_fd[j] == pf[i].fd)
                    conn_accept(el, el->master_fd[j]);
    }
}

/* Whole JOINs waiting here get NOT_COORD(hint): in a round (all) this
 * process follows hint; between rounds (!all) it is not the coordinator,
 * and answers a joiner, or a member of an older view. A joiner whose rank
 * is still a member of this view is not answered: in a fresh static job the
 * ranks that are up already have a view that names every rank, and the one
 * still asking must hear nothing from them (find: no running job) rather
 * than be sent to a coordinator that will never accept it. */
void tr_posix_el_redirect(struct tr_posix_elastic *el, uint32_t hint, int all)
{
    int i;
    for (i = 0; i < TR_POSIX_EL_CONNS; i++) {
        struct tr_posix_el_conn *c = &el->conn[i];
        int joiner;
        if (c->fd < 0 || c->state != TR_POSIX_EL_PENDING)
            continue;
        joiner = (c->join.flags & TR_EL_JOINER) != 0;
        if (all || (joiner && tr_el_view_index(&el->view, c->join.rank) < 0) ||
            (!joiner && c->epoch < el->view.epoch))
            tr_posix_el_reply(el, &c->fd, TR_EL_NOT_COORD, hint);
    }
}

/* ---- listening sockets ----------------------------------------------------- */

/* Listens on addr:port (SO_REUSEADDR; addr not this host's: every address,
 * or with !any an error), with the links' socket options. Returns 0 or a
 * tr_err with a message. */
static int listen_at(const struct tr_posix_elastic *el, uint32_t addr, uint16_t port, int *fd,
                     uint16_t *bound, int backlog, int any, char *err, size_t errlen)
{
    struct sockaddr_in sa;
    socklen_t len = sizeof sa;
    char ab[32];
    int one = 1, b, s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (s < 0)
        return tr_posix_fail(err, errlen, TR_ERR_IO, "socket: %s", strerror(errno));
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    tr_posix_link_opts(s, el->cfg.sndbuf, el->cfg.rcvbuf);
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = addr;
    sa.sin_port = htons(port);
    tr_posix_link_clamp(s, addr, el->cfg.rcvbuf);
    b = bind(s, (struct sockaddr *)&sa, sizeof sa);
    if (b < 0 && errno == EADDRNOTAVAIL && any) {
        sa.sin_addr.s_addr = htonl(INADDR_ANY);
        b = bind(s, (struct sockaddr *)&sa, sizeof sa);
    }
    if (b < 0 || listen(s, backlog) < 0 || getsockname(s, (struct sockaddr *)&sa, &len) < 0) {
        int e = errno, code = tr_posix_errno_code(e);
        close(s);
        return tr_posix_fail(err, errlen, code == TR_ERR_ADDRINUSE ? code : TR_ERR_IO,
                             "rank %u: cannot listen on %s:%u: %s", el->cfg.rank,
                             tr_posix_ntoa(addr, ab, sizeof ab), port, strerror(e));
    }
    *fd = s;
    if (bound)
        *bound = ntohs(sa.sin_port);
    return 0;
}

static int listen_on(const struct tr_posix_elastic *el, uint32_t addr, uint16_t port, int *fd,
                     uint16_t *bound, int backlog, char *err, size_t errlen)
{
    return listen_at(el, addr, port, fd, bound, backlog, 1, err, errlen);
}

/* Master address k: 0 master_addr, then master_more. */
static void master_at(const struct tr_posix_elastic *el, unsigned k, uint32_t *addr,
                      uint16_t *port)
{
    *addr = k ? el->cfg.master_more[k - 1].addr : el->cfg.master_addr;
    *port = k ? el->cfg.master_more[k - 1].port : el->cfg.master_port;
}

/* tcp://: the coordinator serves the master ports (so a process started
 * again finds the job), everyone else lets them go. With one address a
 * coordinator whose host does not own it listens on every address at that
 * port (NAT); with several, only on those its host owns: the others'
 * hosts serve them. force: try to bind now (else at most every
 * MASTER_RETRY_MS: the previous holder may not have let go yet). */
void tr_posix_el_master(struct tr_posix_elastic *el, int force)
{
    uint32_t now = tr_posix_clock_ms(), addr;
    uint16_t port;
    unsigned k, n = 1 + el->cfg.n_master_more;
    int missing = 0;
    if (!el->cfg.master_addr)
        return;
    if (!tr_posix_el_is_coord(el)) {
        for (k = 0; k < n; k++)
            if (el->master_fd[k] >= 0) {
                conn_accept(el, el->master_fd[k]);  /* they get NOT_COORD, not a reset */
                tr_posix_close_fd(&el->master_fd[k]);
            }
        return;
    }
    for (k = 0; k < n; k++)
        missing |= el->master_fd[k] < 0;
    if (!missing || (!force && (int32_t)(now - el->master_retry) < 0))
        return;
    el->master_retry = now + MASTER_RETRY_MS;
    for (k = 0; k < n; k++) {
        if (el->master_fd[k] >= 0)
            continue;
        master_at(el, k, &addr, &port);
        if (listen_at(el, addr, port, &el->master_fd[k], NULL, 128, n == 1, NULL, 0) < 0)
            el->master_fd[k] = -1;
    }
}

/* ---- start, service, close ----------------------------------------------- */

/* Copies cfg with its defaults; every descriptor closed. */
static int el_init(struct tr_posix_elastic *el, const struct tr_posix_elastic_config *cfg,
                   char *err, size_t errlen)
{
    struct tr_posix_config spin;
    int i;
    memset(el, 0, sizeof *el);
    el->px.fd[0] = el->px.fd[1] = -1;
    el->listen_fd = el->coord_fd = -1;
    for (i = 0; i < TR_POSIX_MAX_MASTERS; i++)
        el->master_fd[i] = -1;
    el->index = -1;
    for (i = 0; i < TR_POSIX_EL_CONNS; i++)
        el->conn[i].fd = -1;
    if (err && errlen)
        err[0] = 0;
    el->cfg = *cfg;
    el->cfg.table = NULL;
    tr_el_config_defaults(&el->cfg.timeout_ms, &el->cfg.handshake_ms, &el->cfg.min_ranks);
    tr_posix_beat_init(el);
    tr_posix_config_default(&spin);             /* only for tr_posix_spin_for */
    spin.spin_us = cfg->spin_us;
    spin.local_ranks = cfg->local_ranks;
    el->px.spin_us = tr_posix_spin_for(&spin);
    if (cfg->world < 1 || cfg->world > TR_POSIX_MAX_WORLD || cfg->rank >= cfg->world)
        return tr_posix_fail(err, errlen, TR_ERR_INVAL,
                             "elastic: rank %u of world %u is out of range", cfg->rank,
                             cfg->world);
    return 0;
}

int tr_posix_elastic_start(struct tr_posix_elastic *el, const struct tr_posix_elastic_config *cfg,
                           struct tr_posix *px, char *err, size_t errlen)
{
    uint32_t addr[TR_POSIX_MAX_WORLD];
    uint16_t port[TR_POSIX_MAX_WORLD];
    uint32_t i;
    int rc = el_init(el, cfg, err, errlen);
    if (rc == 0 && (!cfg->table || px->rank != (int)cfg->rank || px->world != (int)cfg->world))
        rc = tr_posix_fail(err, errlen, TR_ERR_INVAL,
                           "elastic: no address table, or the ring (rank %d of %d) is not "
                           "rank %u of %u", px->rank, px->world, cfg->rank, cfg->world);
    if (rc < 0)
        return rc;
    for (i = 0; i < cfg->world; i++) {
        addr[i] = cfg->table[i].addr;
        port[i] = cfg->table[i].port;
    }
    tr_el_view_initial(&el->view, cfg->world, addr, port);
    el->index = (int)cfg->rank;
    el->my_addr = addr[cfg->rank];
    el->my_port = port[cfg->rank];
    if (cfg->world > 1) {
        rc = listen_on(el, el->my_addr, el->my_port, &el->listen_fd, NULL, 64, err, errlen);
        if (rc < 0)
            return rc;
    }
    el->px = *px;                             /* the links move into el, with their spin */
    px->fd[0] = px->fd[1] = -1;
    tr_posix_el_master(el, 1);
    tr_posix_beat_view(el);
    return 0;
}

int tr_posix_el_barred(const struct tr_posix_elastic *el, uint32_t rank)
{
    return rank < TR_POSIX_MAX_WORLD && el->bar_until[rank] &&
           (int32_t)(el->bar_until[rank] - tr_posix_clock_ms()) > 0;
}

/* One pending JOIN per joiner's rank: a newer one replaces the older. */
static void service_one_per_rank(struct tr_posix_elastic *el)
{
    int i, k;
    for (i = 0; i < TR_POSIX_EL_CONNS; i++) {
        struct tr_posix_el_conn *a = &el->conn[i];
        if (a->fd < 0 || a->state != TR_POSIX_EL_PENDING || !(a->join.flags & TR_EL_JOINER))
            continue;
        for (k = 0; k < TR_POSIX_EL_CONNS; k++) {
            struct tr_posix_el_conn *b = &el->conn[k];
            if (k != i && b->fd >= 0 && b->state == TR_POSIX_EL_PENDING &&
                (b->join.flags & TR_EL_JOINER) && b->join.rank == a->join.rank &&
                (int32_t)(b->since - a->since) <= 0) {
                tr_posix_close_fd(&b->fd);
            }
        }
    }
}

/* Between rounds: answers what this process should not keep. Returns the
 * joiners waiting for a round (coordinator only; not the barred). */
static int service_answer(struct tr_posix_elastic *el)
{
    const struct tr_el_view *v = &el->view;
    int i, waiting = 0;
    service_one_per_rank(el);
    if (!tr_posix_el_is_coord(el)) {
        tr_posix_el_redirect(el, v->m[0].rank, 0);
        return 0;
    }
    for (i = 0; i < TR_POSIX_EL_CONNS; i++) {
        struct tr_posix_el_conn *c = &el->conn[i];
        const struct tr_el_join *j = &c->join;
        if (c->fd < 0 || c->state != TR_POSIX_EL_PENDING)
            continue;
        if ((j->flags & TR_EL_JOINER) && j->rank >= el->cfg.world)
            tr_posix_el_reply(el, &c->fd, TR_EL_EXCLUDED, el->cfg.rank);
        else if ((j->flags & TR_EL_JOINER) && c->epoch != TR_EL_ANY_EPOCH)
            tr_posix_el_reply(el, &c->fd, TR_EL_STALE, el->cfg.rank);
        else if (j->flags & TR_EL_JOINER)
            waiting += tr_el_view_index(v, j->rank) < 0 && !tr_posix_el_barred(el, j->rank);
        else if (c->epoch < v->epoch)
            tr_posix_el_reply(el, &c->fd, tr_el_view_index(v, j->rank) < 0 ? TR_EL_EXCLUDED
                                                                         : TR_EL_STALE,
                              el->cfg.rank);
    }
    return waiting;
}

int tr_posix_elastic_service(struct tr_posix_elastic *el)
{
    struct pollfd pf[TR_POSIX_EL_POLL];
    int slot[TR_POSIX_EL_POLL], np, wait = 0;
    if (el->view.n == 0)
        return 0;
    tr_posix_el_master(el, 0);
    np = tr_posix_el_poll_set(el, pf, slot, &wait, 1);
    if (np > 0 && poll(pf, (nfds_t)np, 0) > 0)
        tr_posix_el_pump(el, pf, slot, np);
    return service_answer(el);
}

void tr_posix_elastic_close(struct tr_posix_elastic *el)
{
    int i;
    tr_posix_beat_stop(el);
    tr_posix_close(&el->px);
    for (i = 0; i < TR_POSIX_EL_CONNS; i++)
        tr_posix_close_fd(&el->conn[i].fd);
    tr_posix_close_fd(&el->listen_fd);
    for (i = 0; i < TR_POSIX_MAX_MASTERS; i++)
        tr_posix_close_fd(&el->master_fd[i]);
    tr_posix_close_fd(&el->coord_fd);
}

int tr_posix_elastic_master(const struct tr_posix_config *cfg,
                            struct tr_posix_elastic_config *ec, char *err, size_t errlen)
{
    struct tr_posix_plan pl;
    int rc = tr_posix_plan_make(&pl, cfg, err, errlen);
    if (rc < 0)
        return rc;
    ec->master_addr = pl.master_addr;
    ec->master_port = pl.master_port;
    memcpy(ec->master_more, pl.more, sizeof ec->master_more);
    ec->n_master_more = (unsigned)pl.n_more;
    return 0;
}

/* ---- find: a process started again ----------------------------------------- */

/* A refusal that ends the search. */
static int find_refused(const struct tr_posix_elastic *el, const struct tr_el_msg *r,
                        char *err, size_t errlen)
{
    if (r->answer == TR_EL_DUPLICATE)
        return tr_posix_fail(err, errlen, TR_ERR_MISMATCH,
                             "rank %u is a live member of the job (rank %u coordinates)",
                             el->cfg.rank, r->coord);
    if (r->answer == TR_EL_EXCLUDED)
        return tr_posix_fail(err, errlen, TR_ERR_MISMATCH,
                             "rank %u is not a rank of the running job (world %u?); "
                             "rank %u refused it", el->cfg.rank, el->cfg.world, r->coord);
    return tr_posix_fail(err, errlen, TR_ERR_PROTO,
                         "rank %u: the job's rank %u answered %u to a joiner", el->cfg.rank,
                         r->coord, r->answer);
}

/* Accepted by the process at fd: keep the connection for the VIEW. */
static int find_accepted(struct tr_posix_elastic *el, int fd, uint32_t coord)
{
    el->coord_fd = fd;
    el->coord_rank = coord;
    return 1;
}

/* Entries asked at once (find): a static table's (a fresh job's ranks that
 * have their left link do not read their listener until their right one is
 * up, so one silent entry must not cost a wait per entry), or a tcp://
 * job's master addresses (a frozen holder of one must not hide the others). */
struct sweep {
    const struct tr_posix_endpoint *tab;
    uint32_t n;                            /* entries */
    int      master;                       /* master addresses, not the ranks' */
    int      joined;                       /* an entry took the JOIN and was silent
                                            * to the end (a frozen holder) */
    int      fd[TR_POSIX_MAX_WORLD];       /* -1: done with it */
    uint8_t  sent[TR_POSIX_MAX_WORLD];     /* JOIN sent, waiting for the REPLY */
    uint32_t redial[TR_POSIX_MAX_WORLD];   /* 0, or when to ask it again (ms) */
    uint8_t  got[TR_POSIX_MAX_WORLD];
    uint8_t  tries[TR_POSIX_MAX_WORLD];    /* dials of entry k so far */
    uint8_t  buf[TR_POSIX_MAX_WORLD][TR_EL_HEAD_BYTES + TR_EL_REPLY_BYTES];
    uint8_t  join[TR_EL_HEAD_BYTES + TR_EL_JOIN_BYTES];
    int      answered;                     /* a NOT_COORD came: a job is running */
};

/* Entry k closed the JOIN unanswered: a link listener's refusal (a fresh
 * job's, or a running member's while it opens links, just after a round):
 * asked again 50 ms later, twice at most. */
static void sweep_closed(struct sweep *s, uint32_t k)
{
    tr_posix_close_fd(&s->fd[k]);
    if (s->tries[k] < 3 && !s->redial[k])
        s->redial[k] = tr_posix_clock_ms() + 50u;
}

/* Entry k's REPLY is whole. Returns 1 (ACCEPT: the connection kept in el),
 * 0, or an error (DUPLICATE, EXCLUDED, STALE). */
static int sweep_reply(struct tr_posix_elastic *el, struct sweep *s, uint32_t k, char *err,
                       size_t errlen)
{
    struct tr_el_msg m;
    if (tr_el_decode(s->buf[k], sizeof s->buf[k], &m) < 0 || m.type != TR_EL_REPLY ||
        m.token != el->cfg.job_token) {
        tr_posix_close_fd(&s->fd[k]);          /* not one of this job's answers */
        return 0;
    }
    if (m.answer == TR_EL_ACCEPT) {
        int fd = s->fd[k];
        s->fd[k] = -1;
        return find_accepted(el, fd, m.coord);
    }
    tr_posix_close_fd(&s->fd[k]);
    if (m.answer != TR_EL_NOT_COORD)
        return find_refused(el, &m, err, errlen);
    if (s->master) {           /* a member let it go: the coordinator takes it over */
        s->answered = 1;
        if (s->tries[k] < 250)
            s->redial[k] = tr_posix_clock_ms() + MASTER_RETRY_MS;
        return 0;
    }
    s->answered |= m.coord != el->cfg.rank;    /* "ask yourself": a view that waits for me */
    if (m.coord < el->cfg.world && m.coord != el->cfg.rank && s->fd[m.coord] < 0 &&
        !s->redial[m.coord] && s->tries[m.coord] < 6)
        s->redial[m.coord] = tr_posix_clock_ms() + 20u;   /* it was opening links */
    return 0;
}

/* Entry k is ready: its connect finished (send the JOIN) or its REPLY
 * arrives. Returns as sweep_reply. */
static int sweep_step(struct tr_posix_elastic *el, struct sweep *s, uint32_t k, char *err,
                      size_t errlen)
{
    ssize_t n;
    if (!s->sent[k]) {
        int e = 0;
        socklen_t len = sizeof e;
        getsockopt(s->fd[k], SOL_SOCKET, SO_ERROR, &e, &len);
        if (e == ECONNREFUSED || (e && e != ECONNRESET)) {
            tr_posix_close_fd(&s->fd[k]);      /* nobody there */
            return 0;
        }
        if (e || tr_posix_send_all(s->fd[k], s->join, sizeof s->join,
                                   tr_posix_clock_ms() + el->cfg.handshake_ms) < 0) {
            sweep_closed(s, k);
            return 0;
        }
        s->sent[k] = 1;
        return 0;
    }
    n = recv(s->fd[k], s->buf[k] + s->got[k], sizeof s->buf[k] - s->got[k], MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return 0;
    if (n <= 0) {
        sweep_closed(s, k);
        return 0;
    }
    s->got[k] = (uint8_t)(s->got[k] + n);
    return s->got[k] < sizeof s->buf[k] ? 0 : sweep_reply(el, s, k, err, errlen);
}

/* Dials entry k (now, or when its redial is due); fills the poll set. */
static int sweep_set(struct sweep *s, struct pollfd *pf, uint32_t *idx, int *wait)
{
    const struct tr_posix_endpoint *table = s->tab;
    uint32_t now = tr_posix_clock_ms(), k;
    int np = 0;
    for (k = 0; k < s->n; k++) {
        if (s->redial[k] && (int32_t)(now - s->redial[k]) >= 0) {
            s->redial[k] = 0;
            s->sent[k] = 0;
            s->got[k] = 0;
            s->tries[k]++;
            tr_posix_el_dial(table[k].addr, table[k].port, &s->fd[k]);
        } else if (s->redial[k] && (int32_t)(s->redial[k] - now) < *wait) {
            *wait = (int)(s->redial[k] - now);
        }
        if (s->fd[k] < 0)
            continue;
        pf[np].fd = s->fd[k];
        pf[np].events = s->sent[k] ? POLLIN : POLLOUT;
        pf[np].revents = 0;
        idx[np++] = k;
    }
    return np;
}

/* One sweep over n entries of table (master: the master addresses; else
 * the ranks' entries, this rank's left out). Returns as find (0: nobody
 * accepted). */
static int sweep_run(struct tr_posix_elastic *el, const struct tr_posix_endpoint *table,
                     uint32_t n, int master, struct sweep *s, uint32_t wait_ms, char *err,
                     size_t errlen)
{
    struct pollfd pf[TR_POSIX_MAX_WORLD];
    uint32_t idx[TR_POSIX_MAX_WORLD], deadline = tr_posix_clock_ms() + wait_ms, k;
    struct tr_el_msg m;
    int rc = 0, np, i;
    memset(s, 0, sizeof *s);
    s->tab = table;
    s->n = n;
    s->master = master;
    tr_posix_el_join_msg(el, &m, TR_EL_ANY_EPOCH, TR_EL_JOINER, 0);
    tr_el_encode(&m, s->join, sizeof s->join);
    for (k = 0; k < n; k++) {
        s->fd[k] = -1;
        s->tries[k] = 1;
        if (master || k != el->cfg.rank)
            tr_posix_el_dial(table[k].addr, table[k].port, &s->fd[k]);  /* refused: -1 */
    }
    while (rc == 0) {
        int wait = tr_posix_left_ms(deadline);
        np = sweep_set(s, pf, idx, &wait);
        if (wait == 0 || (np == 0 && wait == tr_posix_left_ms(deadline)))
            break;                             /* deadline, or nothing left to ask */
        if (poll(pf, (nfds_t)np, wait) <= 0)
            continue;
        for (i = 0; i < np && rc == 0; i++)
            if (pf[i].revents)
                rc = sweep_step(el, s, idx[i], err, errlen);
    }
    for (k = 0; k < n; k++) {
        s->joined |= rc == 0 && s->fd[k] >= 0 && s->sent[k];  /* took it, said nothing */
        tr_posix_close_fd(&s->fd[k]);
    }
    return rc;
}

/* tcp://: the master addresses, served by the coordinator, asked at once
 * (one whose holder is frozen, or whose host is gone, does not hide the
 * others). Returns as find. */
static int find_master(struct tr_posix_elastic *el, uint32_t wait_ms, char *err, size_t errlen)
{
    const struct tr_posix_elastic_config *c = &el->cfg;
    struct tr_posix_endpoint at[TR_POSIX_MAX_MASTERS];
    struct sweep s;                            /* ~12 KiB of stack */
    char ab[32];
    unsigned k, n = 1 + c->n_master_more;
    int rc;
    /* listen_addr 0: every address here, and the JOIN says 0, which the
     * coordinator reads as "the address you see me from" */
    el->my_addr = c->listen_addr;
    rc = listen_on(el, el->my_addr, c->listen_port, &el->listen_fd, &el->my_port, 64, err,
                   errlen);
    if (rc < 0)
        return rc;
    for (k = 0; k < n; k++)
        master_at(el, k, &at[k].addr, &at[k].port);
    rc = sweep_run(el, at, n, 1, &s, wait_ms, err, errlen);
    if (rc != 0 || (!s.answered && !s.joined))
        return rc;                             /* accepted, refused, or nobody there */
    return tr_posix_fail(err, errlen, TR_ERR_TIMEOUT,
                         "rank %u: the job at %s:%u%s did not accept it within %u ms",
                         c->rank, tr_posix_ntoa(c->master_addr, ab, sizeof ab),
                         c->master_port, n > 1 ? " (and its other addresses)" : "", wait_ms);
}

/* Can this process take its table entry? A live member of that rank holds
 * it. Bound and let go at once, never listening: a fresh job's rank dialing
 * this entry meanwhile is refused (and retries), not reset. */
static int find_entry_free(const struct tr_posix_elastic *el, char *err, size_t errlen)
{
    struct sockaddr_in sa;
    char ab[32];
    int one = 1, b, e, s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        return tr_posix_fail(err, errlen, TR_ERR_IO, "socket: %s", strerror(errno));
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = el->my_addr;
    sa.sin_port = htons(el->my_port);
    b = bind(s, (struct sockaddr *)&sa, sizeof sa);
    e = errno;
    close(s);
    if (b < 0 && e == EADDRINUSE)
        return tr_posix_fail(err, errlen, TR_ERR_ADDRINUSE,
                             "rank %u: its table entry %s:%u is in use: rank %u is a live "
                             "member of the job (or another process holds the port)",
                             el->cfg.rank, tr_posix_ntoa(el->my_addr, ab, sizeof ab),
                             el->my_port, el->cfg.rank);
    return 0;
}

/* Static table: ask the other ranks' entries, all at once. Returns as find.
 * A running job answers within a step or two: its members NOT_COORD, its
 * coordinator ACCEPT when the round starts. A fresh job never answers:
 * its ranks refuse (not up), close (link listeners) or stay silent (a rank
 * with its left link reads its listener only once its right one is up), so
 * find gives up after wait_ms at most, once. */
static int find_table(struct tr_posix_elastic *el, const struct tr_posix_endpoint *table,
                      uint32_t wait_ms, char *err, size_t errlen)
{
    struct sweep s;                            /* ~12 KiB of stack */
    int rc;
    el->my_addr = table[el->cfg.rank].addr;
    el->my_port = table[el->cfg.rank].port;
    rc = find_entry_free(el, err, errlen);
    if (rc == 0)
        rc = sweep_run(el, table, el->cfg.world, 0, &s, wait_ms, err, errlen);
    if (rc == 1) {    /* accepted: listen on this rank's entry for the links */
        int lr = listen_on(el, el->my_addr, el->my_port, &el->listen_fd, NULL, 64, err, errlen);
        rc = lr < 0 ? lr : 1;
    } else if (rc == 0 && s.answered) {
        rc = tr_posix_fail(err, errlen, TR_ERR_TIMEOUT,
                           "rank %u: the job is running (its members answered) but its "
                           "coordinator did not accept within %u ms", el->cfg.rank, wait_ms);
    }
    return rc;
}

int tr_posix_elastic_find(struct tr_posix_elastic *el, const struct tr_posix_elastic_config *cfg,
                          uint32_t wait_ms, char *err, size_t errlen)
{
    int rc = el_init(el, cfg, err, errlen);
    if (rc == 0 && !cfg->master_addr && !cfg->table)
        rc = tr_posix_fail(err, errlen, TR_ERR_INVAL,
                           "elastic: neither a master address nor an address table");
    if (rc == 0 && cfg->master_addr)
        rc = find_master(el, wait_ms, err, errlen);
    else if (rc == 0)
        rc = find_table(el, cfg->table, wait_ms, err, errlen);
    if (rc != 1)
        tr_posix_elastic_close(el);
    return rc;
}
