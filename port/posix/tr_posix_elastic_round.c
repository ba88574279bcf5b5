/* tinyring POSIX port: one elastic membership round (tr_posix_elastic_reform).
 * A member asks the view's members in ascending original rank for the
 * coordinator; the first that is itself coordinates: it accepts the JOINs,
 * waits for the missing members until they are known dead or the deadline,
 * decides (core's tr_el_decide) and sends the VIEW or the ABORT. Then every
 * member of the new view opens its ring links over the listening socket it
 * kept (tr_posix_link.c, with the epoch's link token). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tr_error.h"
#include "tr_posix_int.h"

#define RETRY_MS   20      /* a JOIN closed unanswered (the member was opening
                            * links): ask the same one again after this */
#define PROBE_MS   200     /* a missing member's port is probed this often, */
#define ALIVE_MS   1000    /* ... and this often once it accepted a probe (a
                            * frozen process's backlog need not fill up) */
#define MAX_ROUNDS 4       /* rounds in one call when the new links fail */
#define TR_POSIX_EL_BAR_MS     4000u    /* a joiner dropped at once: its first bar */
#define TR_POSIX_EL_BAR_MAX_MS 60000u   /* and the longest */

/* What a wait for the coordinator's verdict ended with, besides 0 (VIEW). */
#define WAIT_CLOSED 1      /* the coordinator closed: search again */
#define WAIT_SILENT 2      /* nothing by the deadline: it is dead to us */

struct round {
    struct tr_posix_elastic *el;
    struct tr_posix_elastic_round *out;
    char    *err;
    size_t   errlen;
    uint64_t position;
    uint32_t start;                   /* the call's start (ms) */
    uint32_t round_start;             /* this round's */
    uint32_t search_end;              /* a member gives up finding a coordinator */
    uint32_t coord;                   /* the coordinator's original rank */
    uint8_t  dead[TR_EL_MAX_MEMBERS]; /* by index in el->view: known dead */
    struct tr_el_view first;          /* the view when the call began */
    struct tr_el_view next;           /* the view decided or received */
    struct tr_el_msg msg;             /* the last message read */
};

/* A coordinator's probes of the missing members, by view index. */
struct probes {
    int      fd[TR_EL_MAX_MEMBERS];
    uint32_t at[TR_EL_MAX_MEMBERS];   /* next probe (ms) */
};

/* ---- the verdict --------------------------------------------------------- */

/* ABORT (decided here or received): fills out, says why. */
static int round_abort(struct round *r, const struct tr_el_abort *why)
{
    struct tr_posix_elastic_round *o = r->out;
    o->verdict = (int)why->reason;
    o->why = *why;
    o->coordinator = r->coord;
    o->epoch = r->el->view.epoch + 1;
    o->step = why->step;
    if (why->reason == TR_EL_BELOW_MIN)
        return tr_posix_fail(r->err, r->errlen, TR_ERR_CLOSED,
                             "membership: %u of %u ranks left, below --min-ranks %u; the "
                             "job stops (latest state: rank %u at position %llu)",
                             why->joined, why->previous, why->min_ranks, why->source,
                             (unsigned long long)why->step);
    return tr_posix_fail(r->err, r->errlen, TR_ERR_CLOSED,
                         "membership: only %u of %u ranks answered rank %u, not a majority "
                         "(another group may go on as the job); this group stops (latest "
                         "state: rank %u at position %llu)", why->joined, why->previous,
                         r->coord, why->source, (unsigned long long)why->step);
}

/* out's ranks that left and came, between r->first and the new view. */
static void round_report(struct round *r, int index)
{
    struct tr_posix_elastic_round *o = r->out;
    const struct tr_el_view *a = &r->first, *b = &r->next;
    uint32_t i;
    o->verdict = TR_EL_GO;
    o->epoch = b->epoch;
    o->rank = index;
    o->world = (int)b->n;
    o->source = (int)b->source;
    o->step = b->step;
    o->coordinator = r->coord;
    o->n_left = o->n_joined = 0;
    for (i = 0; i < a->n; i++)
        if (tr_el_view_index(b, a->m[i].rank) < 0)
            o->left[o->n_left++] = a->m[i].rank;
    for (i = 0; i < b->n && a->n > 0; i++)
        if (tr_el_view_index(a, b->m[i].rank) < 0)
            o->joined[o->n_joined++] = b->m[i].rank;
    if (a->n == 0)                 /* a process after find knows only itself */
        o->joined[o->n_joined++] = r->el->cfg.rank;
}

/* The new ring's links over the kept listening socket, with the epoch's
 * link token (an old ring's link is never taken for this one). */
static int open_links(struct tr_posix_elastic *el, char *err, size_t errlen)
{
    struct tr_posix_endpoint table[TR_EL_MAX_MEMBERS];
    struct tr_posix_plan pl;
    uint32_t i;
    el->px.rank = el->index;
    el->px.world = (int)el->view.n;
    el->px.fd[0] = el->px.fd[1] = -1;
    el->px.addr = el->my_addr;
    el->px.port = el->my_port;
    el->px.job_token = el->cfg.job_token;
    if (el->view.n == 1)
        return 0;                              /* a ring of one: no links */
    for (i = 0; i < el->view.n; i++) {
        table[i].addr = el->view.m[i].addr;
        table[i].port = el->view.m[i].port;
    }
    memset(&pl, 0, sizeof pl);
    pl.rank = el->index;
    pl.world = (int)el->view.n;
    pl.local_addr = el->my_addr;
    pl.listen_port = el->my_port;
    pl.token = tr_el_link_token(el->cfg.job_token, el->view.epoch);
    /* every member answered moments ago: a link that is not up within
     * handshake_ms means a member died after the VIEW (another round) */
    pl.connect_ms = pl.join_ms = el->cfg.handshake_ms;
    pl.handshake_ms = el->cfg.handshake_ms;
    pl.sndbuf = el->cfg.sndbuf;
    pl.rcvbuf = el->cfg.rcvbuf;
    return tr_posix_links_open(&el->px, &pl, el->listen_fd, table, err, errlen);
}

/* GO: the new view becomes el's, then its links. */
static int apply_view(struct round *r)
{
    struct tr_posix_elastic *el = r->el;
    int index = tr_el_view_index(&r->next, el->cfg.rank);
    if (index < 0)
        return tr_posix_fail(r->err, r->errlen, TR_ERR_PROTO,
                             "membership: the view of epoch %u from rank %u does not name "
                             "rank %u", r->next.epoch, r->coord, el->cfg.rank);
    round_report(r, index);
    el->view = r->next;
    el->index = index;
    el->my_addr = el->view.m[index].addr;      /* a joiner's, as the coordinator saw it */
    tr_posix_el_master(el, 1);
    tr_posix_beat_view(el);
    return open_links(el, r->err, r->errlen);
}

/* ---- a member ------------------------------------------------------------- */

/* The coordinator's answer to a member after ACCEPT: VIEW (0), ABORT (an
 * error), WAIT_CLOSED, WAIT_SILENT. Meanwhile the JOINs already taken in
 * are sent to the coordinator; the listening port is left alone (the new
 * ring's link hellos may come before this process's VIEW). */
static int wait_verdict(struct round *r, int fd, uint32_t deadline)
{
    struct tr_posix_elastic *el = r->el;
    struct pollfd pf[TR_POSIX_EL_POLL + 1];
    int slot[TR_POSIX_EL_POLL + 1], np, rc = 0;
    uint8_t buf[TR_EL_MAX_BYTES];
    size_t got = 0, total = TR_EL_HEAD_BYTES;
    while (rc == 0) {
        int wait = tr_posix_left_ms(deadline);
        if (wait == 0 || tr_posix_beat_dead(el, r->coord))
            return WAIT_SILENT;
        if (wait > TR_POSIX_EL_SLICE_MS)
            wait = TR_POSIX_EL_SLICE_MS;
        pf[0].fd = fd; pf[0].events = POLLIN; pf[0].revents = 0;
        slot[0] = TR_POSIX_EL_SLOT_OTHER;
        np = 1 + tr_posix_el_poll_set(el, pf + 1, slot + 1, &wait, 0);
        if (poll(pf, (nfds_t)np, wait) <= 0)
            continue;
        if (pf[0].revents)
            rc = tr_posix_el_read_step(fd, buf, &got, &total, el->cfg.job_token, &r->msg);
        tr_posix_el_pump(el, pf + 1, slot + 1, np - 1);
        tr_posix_el_redirect(el, r->coord, 1);
    }
    if (rc < 0)
        return WAIT_CLOSED;
    if (r->msg.type == TR_EL_ABORT)
        return round_abort(r, &r->msg.abort);
    if (r->msg.type != TR_EL_VIEW)
        return WAIT_CLOSED;
    r->next = r->msg.view;
    return 0;
}

/* A refusal that ends this member's part in the job. */
static int member_refused(struct round *r, const struct tr_el_msg *m)
{
    const struct tr_posix_elastic *el = r->el;
    const char *why = m->answer == TR_EL_DUPLICATE ? "another process claims its rank"
                    : m->answer == TR_EL_EXCLUDED  ? "the job went on without it"
                    : "its view is not the coordinator's (stale epoch)";
    return tr_posix_fail(r->err, r->errlen, TR_ERR_MISMATCH,
                         "membership: rank %u (epoch %u) was refused by rank %u: %s",
                         el->cfg.rank, el->view.epoch, m->coord, why);
}

/* Asks view member *k. Returns 0 (VIEW in r->next), 1 (go on with *k, which
 * may have changed), or an error. */
static int member_ask(struct round *r, int *k)
{
    struct tr_posix_elastic *el = r->el;
    const struct tr_el_member *c = &el->view.m[*k];
    struct tr_el_msg join;
    uint32_t now = tr_posix_clock_ms(), reply_end = now + el->cfg.timeout_ms + el->cfg.handshake_ms;
    int fd = -1, rc, hint;
    /* A member that never beats (lwIP, a board) learns of a loss only by
     * --timeout, then asks the lower ones itself before it coordinates:
     * this process, told by heartbeats, may be a whole round ahead of it.
     * Silence from such a member is not death until the search ends. */
    if ((int32_t)(reply_end - r->search_end) > 0 || !tr_posix_beat_heard(el, c->rank))
        reply_end = r->search_end;
    tr_posix_el_join_msg(el, &join, el->view.epoch, 0, r->position);
    rc = tr_posix_el_ask(el, c->rank, c->addr, c->port, &join, now + el->cfg.handshake_ms,
                         reply_end, &fd, &r->msg);
    if (rc == TR_EL_ASK_DEAD || rc == TR_EL_ASK_SILENT) {
        r->dead[(*k)++] = 1;
        return 1;
    }
    if (rc == TR_EL_ASK_CLOSED) {              /* it was opening links: again */
        tr_posix_el_sleep(RETRY_MS);
        return 1;
    }
    if (r->msg.answer == TR_EL_ACCEPT) {
        r->coord = r->msg.coord;
        rc = wait_verdict(r, fd, tr_posix_clock_ms() + el->cfg.timeout_ms +
                                 2 * el->cfg.handshake_ms);
        tr_posix_close_fd(&fd);
        if (rc == WAIT_SILENT)
            r->dead[*k] = 1;
        if (rc == WAIT_SILENT || rc == WAIT_CLOSED) {
            *k = 0;                           /* search again from the lowest */
            tr_posix_el_sleep(RETRY_MS);
            return 1;
        }
        return rc;
    }
    tr_posix_close_fd(&fd);
    if (r->msg.answer != TR_EL_NOT_COORD)
        return member_refused(r, &r->msg);
    hint = r->msg.coord == el->cfg.rank ? el->index : tr_el_view_index(&el->view, r->msg.coord);
    if (hint < 0 || r->dead[hint])
        (*k)++;
    else
        *k = hint;
    tr_posix_el_sleep(RETRY_MS);               /* it may not coordinate yet */
    return 1;
}

/* ---- the coordinator -------------------------------------------------------- */

/* Answers ACCEPT and keeps c for the verdict. */
static void accept_conn(struct round *r, struct tr_posix_el_conn *c)
{
    struct tr_el_msg m;
    memset(&m, 0, sizeof m);
    m.type = TR_EL_REPLY;
    m.token = r->el->cfg.job_token;
    m.epoch = r->el->view.epoch;
    m.answer = TR_EL_ACCEPT;
    m.coord = r->el->cfg.rank;
    if (tr_posix_el_send(c->fd, &m, tr_posix_clock_ms() + r->el->cfg.handshake_ms) < 0)
        tr_posix_close_fd(&c->fd);
    else
        c->state = TR_POSIX_EL_ACCEPTED;
}

/* The accepted connection of original rank `rank`, or NULL. */
static struct tr_posix_el_conn *accepted_of(struct tr_posix_elastic *el, uint32_t rank)
{
    int i;
    for (i = 0; i < TR_POSIX_EL_CONNS; i++)
        if (el->conn[i].fd >= 0 && el->conn[i].state == TR_POSIX_EL_ACCEPTED &&
            el->conn[i].join.rank == rank)
            return &el->conn[i];
    return NULL;
}

/* A whole JOIN: accept it, refuse it, or (a joiner whose rank is still a
 * member) leave it for a later round. */
static void coord_judge(struct round *r, struct tr_posix_el_conn *c)
{
    struct tr_posix_elastic *el = r->el;
    const struct tr_el_join *j = &c->join;
    int joiner = (j->flags & TR_EL_JOINER) != 0, k = tr_el_view_index(&el->view, j->rank);
    struct tr_posix_el_conn *old;
    uint32_t answer = TR_EL_ACCEPT;
    if (joiner && j->rank >= el->cfg.world)
        answer = TR_EL_EXCLUDED;
    else if (joiner && c->epoch != TR_EL_ANY_EPOCH)
        answer = TR_EL_STALE;
    else if (joiner && (k >= 0 || tr_posix_el_barred(el, j->rank)))
        return;                                /* a later round (once it is dropped,
                                                * or its bar ends) */
    else if (!joiner && (c->epoch != el->view.epoch || k < 0))
        answer = k < 0 ? TR_EL_EXCLUDED : TR_EL_STALE;
    else if (j->rank == el->cfg.rank)
        answer = TR_EL_DUPLICATE;
    if (answer == TR_EL_ACCEPT && (old = accepted_of(el, j->rank)) != NULL) {
        if (old->join.addr == j->addr && old->join.port == j->port)
            tr_posix_close_fd(&old->fd);       /* the same process asking again */
        else
            answer = TR_EL_DUPLICATE;
    }
    if (answer == TR_EL_ACCEPT)
        accept_conn(r, c);
    else
        tr_posix_el_reply(el, &c->fd, answer, el->cfg.rank);
}

/* Judges what arrived; marks the members that answered. Returns 1 when
 * every member of the view answered or is known dead. */
static int coord_tally(struct round *r, uint8_t *answered)
{
    struct tr_posix_elastic *el = r->el;
    uint32_t i, done = 0;
    memset(answered, 0, el->view.n);
    answered[el->index] = 1;
    for (i = 0; i < TR_POSIX_EL_CONNS; i++) {
        struct tr_posix_el_conn *c = &el->conn[i];
        int k;
        if (c->fd >= 0 && c->state == TR_POSIX_EL_PENDING)
            coord_judge(r, c);
        if (c->fd < 0 || c->state != TR_POSIX_EL_ACCEPTED || (c->join.flags & TR_EL_JOINER))
            continue;
        k = tr_el_view_index(&el->view, c->join.rank);
        if (k >= 0)
            answered[k] = 1;
    }
    for (i = 0; i < el->view.n; i++) {
        if (!answered[i] && !r->dead[i] && tr_posix_beat_dead(el, el->view.m[i].rank))
            r->dead[i] = 1;                    /* silent: its heartbeats stopped */
        done += answered[i] || r->dead[i];
    }
    return done == el->view.n;
}

/* Starts the probes that are due; adds the running ones to the poll set. */
static int probe_set(struct round *r, struct probes *p, const uint8_t *answered,
                     struct pollfd *pf, int *slot, int np, int *wait)
{
    struct tr_posix_elastic *el = r->el;
    uint32_t now = tr_posix_clock_ms(), k;
    for (k = 0; k < el->view.n; k++) {
        if (answered[k] || r->dead[k]) {
            tr_posix_close_fd(&p->fd[k]);
            continue;
        }
        if (p->fd[k] < 0 && (int32_t)(now - p->at[k]) >= 0) {
            int rc = tr_posix_el_dial(el->view.m[k].addr, el->view.m[k].port, &p->fd[k]);
            p->at[k] = now + PROBE_MS;
            if (rc == TR_ERR_REFUSED)
                r->dead[k] = 1;                /* nobody listens there: dead */
        }
        if (p->fd[k] < 0) {
            int32_t d = (int32_t)(p->at[k] - now);
            if (!r->dead[k] && d < *wait)
                *wait = d > 0 ? d : 0;
            continue;
        }
        pf[np].fd = p->fd[k]; pf[np].events = POLLOUT; pf[np].revents = 0;
        slot[np++] = TR_POSIX_EL_SLOT_OTHER - (int)k;
    }
    return np;
}

/* A probe's connect finished: refused = dead; connected = alive (closed,
 * probed again later). */
static void probe_done(struct round *r, struct probes *p, int k)
{
    int e = 0;
    socklen_t len = sizeof e;
    getsockopt(p->fd[k], SOL_SOCKET, SO_ERROR, &e, &len);
    if (e == ECONNREFUSED)
        r->dead[k] = 1;
    else if (e == 0)
        p->at[k] = tr_posix_clock_ms() + ALIVE_MS;
    tr_posix_close_fd(&p->fd[k]);
}

/* One wait of the coordinator: new JOINs, probe results. */
static void coord_poll(struct round *r, struct probes *p, const uint8_t *answered,
                       uint32_t end)
{
    struct pollfd pf[TR_POSIX_EL_POLL + TR_EL_MAX_MEMBERS];
    int slot[TR_POSIX_EL_POLL + TR_EL_MAX_MEMBERS];
    int wait = tr_posix_left_ms(end), np, i, nc;
    if (wait > TR_POSIX_EL_SLICE_MS)
        wait = TR_POSIX_EL_SLICE_MS;           /* the heartbeats may declare one dead */
    nc = tr_posix_el_poll_set(r->el, pf, slot, &wait, 1);
    np = probe_set(r, p, answered, pf, slot, nc, &wait);
    if (poll(pf, (nfds_t)np, wait) <= 0)
        return;
    tr_posix_el_pump(r->el, pf, slot, nc);
    for (i = nc; i < np; i++)
        if (pf[i].revents)
            probe_done(r, p, TR_POSIX_EL_SLOT_OTHER - slot[i]);
}

/* The bars (tr_posix.h): each joiner of joins[0..n) admitted into epoch
 * `next`; each member of the view ending that was admitted into it and is
 * not among joins (dropped at once) barred, for twice as long as before. */
static void bar_update(struct tr_posix_elastic *el, const struct tr_el_join *joins, unsigned n,
                       uint32_t next)
{
    uint32_t k, now = tr_posix_clock_ms();
    unsigned i;
    for (k = 0; k < el->view.n; k++) {
        uint32_t rank = el->view.m[k].rank;
        int in = 0;
        if (rank >= TR_POSIX_MAX_WORLD || el->admitted[rank] != el->view.epoch + 1u)
            continue;
        for (i = 0; i < n; i++)
            in |= joins[i].rank == rank;
        el->admitted[rank] = 0;
        if (in) {
            el->bar_ms[rank] = 0;              /* it came through */
            continue;
        }
        el->bar_ms[rank] = el->bar_ms[rank] ? el->bar_ms[rank] * 2u : TR_POSIX_EL_BAR_MS;
        if (el->bar_ms[rank] > TR_POSIX_EL_BAR_MAX_MS)
            el->bar_ms[rank] = TR_POSIX_EL_BAR_MAX_MS;
        el->bar_until[rank] = (now + el->bar_ms[rank]) | 1u;
    }
    for (i = 0; i < n; i++)
        if ((joins[i].flags & TR_EL_JOINER) && joins[i].rank < TR_POSIX_MAX_WORLD)
            el->admitted[joins[i].rank] = next + 1u;
}

/* Decides and tells everyone accepted: VIEW or ABORT. A joiner whose rank
 * stays a live member is told DUPLICATE. */
static int coord_decide(struct round *r)
{
    struct tr_posix_elastic *el = r->el;
    struct tr_el_join joins[TR_EL_MAX_MEMBERS];
    struct tr_el_abort why;
    struct tr_el_msg *m = &r->msg;
    unsigned n = 0, i;
    int verdict;
    tr_posix_el_join_msg(el, m, el->view.epoch, 0, r->position);
    joins[n++] = m->join;
    for (i = 0; i < TR_POSIX_EL_CONNS && n < TR_EL_MAX_MEMBERS; i++)
        if (el->conn[i].fd >= 0 && el->conn[i].state == TR_POSIX_EL_ACCEPTED)
            joins[n++] = el->conn[i].join;
    verdict = tr_el_decide(&el->view, joins, n, el->cfg.min_ranks, &r->next, &why);
    if (verdict < 0)
        return tr_posix_fail(r->err, r->errlen, TR_ERR_PROTO,
                             "membership: rank %u could not decide (%d JOINs)", el->cfg.rank, n);
    if (verdict == TR_EL_GO)
        bar_update(el, joins, n, r->next.epoch);
    memset(m, 0, sizeof *m);
    m->type = verdict == TR_EL_GO ? TR_EL_VIEW : TR_EL_ABORT;
    m->token = el->cfg.job_token;
    m->epoch = el->view.epoch + 1;
    m->view = r->next;
    m->abort = why;
    for (i = 0; i < TR_POSIX_EL_CONNS; i++) {
        struct tr_posix_el_conn *c = &el->conn[i];
        if (c->fd >= 0 && c->state == TR_POSIX_EL_ACCEPTED) {
            tr_posix_el_send(c->fd, m, tr_posix_clock_ms() + el->cfg.handshake_ms);
            tr_posix_close_fd(&c->fd);
        } else if (c->fd >= 0 && c->state == TR_POSIX_EL_PENDING && verdict == TR_EL_GO &&
                   tr_el_view_index(&r->next, c->join.rank) >= 0) {
            tr_posix_el_reply(el, &c->fd, TR_EL_DUPLICATE, el->cfg.rank);
        }
    }
    return verdict == TR_EL_GO ? 0 : round_abort(r, &why);
}

/* This process coordinates: collect until every member answered or is
 * known dead, or the deadline (timeout_ms from the round's start, at least
 * handshake_ms from now: members that waited on a frozen lower one arrive
 * late), then decide. */
static int coordinate(struct round *r)
{
    struct tr_posix_elastic *el = r->el;
    struct probes p;
    uint8_t answered[TR_EL_MAX_MEMBERS];
    uint32_t now = tr_posix_clock_ms(), end = r->round_start + el->cfg.timeout_ms, k;
    if ((int32_t)(now + el->cfg.handshake_ms - end) > 0)
        end = now + el->cfg.handshake_ms;
    r->coord = el->cfg.rank;
    for (k = 0; k < el->view.n; k++) {
        p.fd[k] = -1;
        p.at[k] = now;
    }
    while (!coord_tally(r, answered) && tr_posix_left_ms(end) > 0)
        coord_poll(r, &p, answered, end);
    for (k = 0; k < el->view.n; k++)
        tr_posix_close_fd(&p.fd[k]);
    return coord_decide(r);
}

/* ---- the call ---------------------------------------------------------------- */

/* One round as a member of el->view: find the coordinator (or be it). */
static int round_once(struct round *r)
{
    struct tr_posix_elastic *el = r->el;
    int k = 0, rc;
    r->round_start = tr_posix_clock_ms();
    r->search_end = r->round_start + 2 * (el->cfg.timeout_ms + el->cfg.handshake_ms);
    memset(r->dead, 0, sizeof r->dead);
    while (k < (int)el->view.n && tr_posix_left_ms(r->search_end) > 0) {
        if (k == el->index)
            return coordinate(r);
        if (!r->dead[k] && tr_posix_beat_dead(el, el->view.m[k].rank))
            r->dead[k] = 1;                    /* its heartbeats stopped: skip it */
        if (r->dead[k]) {
            k++;
            continue;
        }
        rc = member_ask(r, &k);
        if (rc <= 0)
            return rc;
    }
    return tr_posix_fail(r->err, r->errlen, TR_ERR_TIMEOUT,
                         "membership: rank %u found no coordinator for epoch %u within %u ms",
                         el->cfg.rank, el->view.epoch + 1,
                         (unsigned)(tr_posix_clock_ms() - r->round_start));
}

/* A process that find() got accepted: its VIEW comes on that connection. */
static int joiner_wait(struct round *r)
{
    struct tr_posix_elastic *el = r->el;
    int rc;
    r->coord = el->coord_rank;
    rc = wait_verdict(r, el->coord_fd, tr_posix_clock_ms() + el->cfg.timeout_ms +
                                       2 * el->cfg.handshake_ms);
    tr_posix_close_fd(&el->coord_fd);
    if (rc == WAIT_CLOSED || rc == WAIT_SILENT)
        return tr_posix_fail(r->err, r->errlen, TR_ERR_CLOSED,
                             "membership: rank %u: the coordinator (rank %u) %s before "
                             "sending the view; find the job again", el->cfg.rank, r->coord,
                             rc == WAIT_CLOSED ? "closed" : "said nothing");
    return rc;
}

int tr_posix_elastic_reform(struct tr_posix_elastic *el, uint64_t position,
                            struct tr_posix_elastic_round *out, char *err, size_t errlen)
{
    static const struct tr_posix_elastic_round zero;
    struct round r;
    int rc, rounds = 1;
    *out = zero;
    r.el = el;
    r.out = out;
    r.err = err;
    r.errlen = errlen;
    r.position = el->index < 0 ? 0 : position;
    r.start = tr_posix_clock_ms();
    r.first = el->view;
    if (err && errlen)
        err[0] = 0;
    tr_posix_close_fd(&el->px.fd[0]);          /* the ring is broken: plain close */
    tr_posix_close_fd(&el->px.fd[1]);
    if (el->index < 0 && el->coord_fd < 0)
        return tr_posix_fail(err, errlen, TR_ERR_INVAL,
                             "membership: rank %u is neither a member nor accepted by a "
                             "coordinator (tr_posix_elastic_find first)", el->cfg.rank);
    rc = el->index < 0 ? joiner_wait(&r) : round_once(&r);
    while (rc == 0) {
        rc = apply_view(&r);
        if (rc == 0 || rc == TR_ERR_PROTO || rounds++ == MAX_ROUNDS)
            break;
        rc = round_once(&r);                   /* the new ring failed: again */
    }
    out->ms = tr_posix_clock_ms() - r.start;
    return rc;
}
