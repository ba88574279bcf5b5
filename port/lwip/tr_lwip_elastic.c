/* tinyring: an lwIP rank in the elastic ring (see tr_lwip.h, "elastic
 * membership"). The same membership protocol on the wire as the POSIX port
 * (port/posix/tr_posix_elastic*.c), with core's messages and decision
 * (core/include/tr_elastic.h, the brief codec: no 3 KiB view on a board).
 *
 *   JOINs to this rank   arrive on the kept listener: tr_lwip.c hands over
 *                        a connection whose first bytes are not a link hello
 *                        (el_take); they are read and answered in lwIP's
 *                        callbacks, inside the caller's drive().
 *   this rank's round    tr_lwip_elastic_reform: as a member, asks the
 *                        view's members in ascending rank on one connection
 *                        (el->ask); as the lowest live member, coordinates
 *                        (accepts the JOINs, probes on el->ask, decides);
 *                        then opens the new ring's links over the listener
 *                        (tr_lwip_relink). It drives the stack like
 *                        tr_lwip_connect.
 *   started again        tr_lwip_elastic_find: a joiner's JOIN to the
 *                        table's ranks; its VIEW comes in reform.
 * No malloc, no stdio, no host calls. */
#include <string.h>

#include "lwip/opt.h"
#include "lwip/err.h"
#include "lwip/ip_addr.h"
#include "lwip/pbuf.h"
#include "lwip/sys.h"
#include "lwip/tcp.h"

#include "tr_error.h"
#include "tr_lwip.h"
#include "tr_elastic.h"

#define RETRY_MS   20u     /* a JOIN closed unanswered: ask again after this */
#define MAX_ROUNDS 4u      /* rounds in one call when the new links fail */
#define POLL_TICKS 2u      /* tcp_poll interval of a JOIN being read (x 500 ms) */
#define PROBE_MS   1000u   /* a missing member that accepted a probe: again after */
#define PROBE_HOLD_MS 200u /* an accepted probe is held this long: a reset meanwhile
                            * (a dying process's listener) means probe again now */

enum { C_READING = 0, C_PENDING = 1, C_ACCEPTED = 2 };  /* struct tr_lwip_el_conn */
enum { A_CONNECTING = 0, A_OPEN, A_CLOSED, A_DEAD };   /* struct tr_lwip_el_ask */

/* What an ask or a wait for the verdict ended with, besides 0. */
#define ASK_DEAD   1       /* refused or unreachable: not there */
#define ASK_CLOSED 2       /* closed unanswered */
#define ASK_SILENT 3       /* no answer in time */

static int before(uint32_t a, uint32_t b) { return (int32_t)(a - b) < 0; }

static uint32_t left_ms(uint32_t deadline)
{
    uint32_t now = sys_now();
    return before(now, deadline) ? deadline - now : 0;
}

/* Drive the stack for ms (JOINs to this rank are served meanwhile). */
static void el_sleep(struct tr_lwip_elastic *el, uint32_t ms)
{
    uint32_t end = sys_now() + ms, left;
    while ((left = left_ms(end)) > 0)
        el->lw->cfg.drive(el->lw->cfg.drive_arg, left);
}

/* One turn of the stack waiting at most until deadline (and 10 ms). */
static void el_turn(struct tr_lwip_elastic *el, uint32_t deadline)
{
    uint32_t left = left_ms(deadline);
    el->lw->cfg.drive(el->lw->cfg.drive_arg, left < 10u ? left : 10u);
}

static uint32_t addr_of(const struct tr_lwip_addr *a)
{
    uint32_t v;
    memcpy(&v, a->ip, 4);          /* the bytes as they are: network order */
    return v;
}

/* Write a message (a VIEW's members in m) on pcb and push it. Returns 0 or
 * a tr_err. */
static int send_msg(struct tcp_pcb *pcb, const struct tr_el_brief *b,
                    const struct tr_el_member *m)
{
    uint8_t out[TR_LWIP_EL_MSG_MAX];
    size_t n = tr_el_encode_brief(b, m, out, sizeof out);
    err_t e;
    if (!n)
        return TR_ERR_INVAL;
    e = tcp_write(pcb, out, (u16_t)n, TCP_WRITE_FLAG_COPY);
    if (e == ERR_OK)
        e = tcp_output(pcb);
    return tr_lwip_err(e);
}

/* ---- JOINs to this rank -------------------------------------------------- */

static void conn_detach(struct tr_lwip_el_conn *c)
{
    struct tcp_pcb *pcb = c->pcb;
    c->pcb = NULL;
    tcp_arg(pcb, NULL);
    tcp_recv(pcb, NULL);           /* lwIP's default drops what still comes */
    tcp_err(pcb, NULL);
    tcp_poll(pcb, NULL, 0);
}

/* Drop c at once (RST). Returns 1: the pcb is gone. */
static int conn_abort(struct tr_lwip_el_conn *c)
{
    struct tcp_pcb *pcb = c->pcb;
    if (!pcb)
        return 0;
    conn_detach(c);
    tcp_abort(pcb);
    return 1;
}

/* Close c after its last bytes (FIN). Returns 1 if the pcb had to be
 * aborted instead. */
static int conn_close(struct tr_lwip_el_conn *c)
{
    struct tcp_pcb *pcb = c->pcb;
    if (!pcb)
        return 0;
    conn_detach(c);
    if (tcp_close(pcb) == ERR_OK)
        return 0;
    tcp_abort(pcb);                /* no memory for the FIN: reset */
    return 1;
}

/* REPLY answer (coordinator coord) on c, then close. Returns as conn_close. */
static int conn_reply(struct tr_lwip_el_conn *c, uint32_t answer, uint32_t coord)
{
    struct tr_lwip_elastic *el = c->el;
    struct tr_el_brief b;
    memset(&b, 0, sizeof b);
    b.type = TR_EL_REPLY;
    b.token = el->job_token;
    b.epoch = el->epoch;
    b.answer = answer;
    b.coord = coord;
    send_msg(c->pcb, &b, NULL);        /* 32 bytes on a fresh connection */
    if (answer == TR_EL_NOT_COORD)
        el->redirected++;
    return conn_close(c);
}

/* The accepted connection of original rank `rank`, or NULL. */
static struct tr_lwip_el_conn *accepted_of(struct tr_lwip_elastic *el, uint32_t rank)
{
    unsigned i;
    for (i = 0; i < TR_LWIP_EL_CONNS; i++)
        if (el->conn[i].pcb && el->conn[i].state == C_ACCEPTED && el->conn[i].join.rank == rank)
            return &el->conn[i];
    return NULL;
}

/* Coordinating: accept a whole JOIN (REPLY ACCEPT, kept for the verdict),
 * refuse it, or (a process started again whose rank is still a member)
 * leave it for a later round. Returns 1 if the pcb was aborted. */
static int coord_judge(struct tr_lwip_el_conn *c)
{
    struct tr_lwip_elastic *el = c->el;
    const struct tr_el_join *j = &c->join;
    int joiner = (j->flags & TR_EL_JOINER) != 0, k = tr_el_member_index(el->m, el->n, j->rank);
    struct tr_lwip_el_conn *old;
    uint32_t answer = TR_EL_ACCEPT;
    struct tr_el_brief b;
    if (joiner && j->rank >= el->world)
        answer = TR_EL_EXCLUDED;
    else if (joiner && c->epoch != TR_EL_ANY_EPOCH)
        answer = TR_EL_STALE;
    else if (joiner && k >= 0)
        return 0;                  /* a later round, once it is dropped */
    else if (!joiner && (c->epoch != el->epoch || k < 0))
        answer = k < 0 ? TR_EL_EXCLUDED : TR_EL_STALE;
    else if (j->rank == el->rank)
        answer = TR_EL_DUPLICATE;
    if (answer == TR_EL_ACCEPT && (old = accepted_of(el, j->rank)) != NULL) {
        if (old->join.addr == j->addr && old->join.port == j->port)
            conn_abort(old);       /* the same process asking again */
        else
            answer = TR_EL_DUPLICATE;
    }
    if (answer != TR_EL_ACCEPT)
        return conn_reply(c, answer, el->rank);
    memset(&b, 0, sizeof b);
    b.type = TR_EL_REPLY;
    b.token = el->job_token;
    b.epoch = el->epoch;
    b.answer = TR_EL_ACCEPT;
    b.coord = el->rank;
    if (send_msg(c->pcb, &b, NULL) < 0)
        return conn_abort(c);
    c->state = C_ACCEPTED;
    return 0;
}

/* Between rounds, as the view's lowest rank (the next coordinator): a
 * process started again waits for the next round (tr_lwip_elastic_service
 * counts it); refusals as the POSIX coordinator's. */
static int lowest_answer(struct tr_lwip_el_conn *c)
{
    struct tr_lwip_elastic *el = c->el;
    const struct tr_el_join *j = &c->join;
    if ((j->flags & TR_EL_JOINER) && j->rank >= el->world)
        return conn_reply(c, TR_EL_EXCLUDED, el->rank);
    if ((j->flags & TR_EL_JOINER) && c->epoch != TR_EL_ANY_EPOCH)
        return conn_reply(c, TR_EL_STALE, el->rank);
    if (!(j->flags & TR_EL_JOINER) && before(c->epoch, el->epoch))
        return conn_reply(c, tr_el_member_index(el->m, el->n, j->rank) < 0 ? TR_EL_EXCLUDED
                                                                           : TR_EL_STALE,
                          el->rank);
    return 0;
}

/* A pending JOIN: answer it now, or leave it for this rank's round. While
 * this rank opens ring links: closed unanswered. Coordinating: coord_judge.
 * As a member in a round: to the coordinator followed. Between rounds: as
 * the view's lowest rank, lowest_answer; else a process started again whose
 * rank the view no longer names, or a JOIN of an older view, to the view's
 * lowest rank, and the others wait (a JOIN of this view: its sender noticed
 * the failure first). Returns 1 if the pcb was aborted. */
static int conn_answer(struct tr_lwip_el_conn *c)
{
    struct tr_lwip_elastic *el = c->el;
    if (c->state != C_PENDING || !c->pcb)
        return 0;
    if (el->lw->linking && !el->coordinating && !el->following)
        return conn_close(c);      /* opening links: closed unanswered, as the
                                    * POSIX port does (the asker asks again; a
                                    * fresh job's process started with find
                                    * reads it as "no job running") */
    if (el->coordinating)
        return coord_judge(c);
    if (el->following)
        return conn_reply(c, TR_EL_NOT_COORD, el->coord);
    if (el->index == 0)
        return lowest_answer(c);
    if ((c->join.flags & TR_EL_JOINER) ? tr_el_member_index(el->m, el->n, c->join.rank) < 0
                                       : before(c->epoch, el->epoch))
        return conn_reply(c, TR_EL_NOT_COORD, el->m[0].rank);
    return 0;                      /* as the POSIX port: a joiner whose rank the
                                    * view still names waits unanswered (in a
                                    * fresh job it is no sign of a running one) */
}

/* The JOIN in c->buf is whole: keep it if it is one of this job's. */
static int conn_judge(struct tr_lwip_el_conn *c)
{
    struct tr_el_brief b;
    if (tr_el_decode_brief(c->buf, sizeof c->buf, &b, NULL, 0) < 0 || b.type != TR_EL_JOIN ||
        b.token != c->el->job_token)
        return conn_abort(c);      /* another job's gets nothing */
    c->epoch = b.epoch;
    c->join = b.join;
    if (c->join.addr == 0)         /* "where you see me from" */
        c->join.addr = ip4_addr_get_u32(ip_2_ip4(&c->pcb->remote_ip));
    c->state = C_PENDING;
    return conn_answer(c);
}

/* Bytes for c: a JOIN, nothing after it (a JOIN answered at once has
 * closed c: what follows is dropped; one that waits is reset by more bytes,
 * as the POSIX port closes it). Returns 1 if the pcb was aborted. */
static int conn_feed(struct tr_lwip_el_conn *c, const uint8_t *p, size_t n)
{
    size_t total, k = sizeof c->buf - c->got;
    int gone;
    if (!c->pcb || n == 0)
        return 0;                  /* answered and closed: the rest is dropped */
    if (c->state != C_READING)
        return conn_abort(c);      /* more than one JOIN: garbage */
    if (k > n)
        k = n;
    memcpy(c->buf + c->got, p, k);
    c->got = (uint8_t)(c->got + k);
    if (!tr_el_prefix_ok(c->buf, c->got) ||
        (c->got >= TR_EL_HEAD_BYTES && (tr_el_head_total(c->buf, &total) < 0 ||
                                        total != sizeof c->buf || c->buf[6] != TR_EL_JOIN)))
        return conn_abort(c);
    if (c->got < sizeof c->buf)
        return 0;
    gone = conn_judge(c);
    return gone ? 1 : conn_feed(c, p + k, n - k);
}

/* A pbuf chain for c (window given back, chain freed). 1: pcb aborted. */
static int conn_feed_chain(struct tr_lwip_el_conn *c, struct tcp_pcb *pcb, struct pbuf *p)
{
    struct pbuf *q;
    int gone = 0;
    tcp_recved(pcb, p->tot_len);
    for (q = p; q && !gone; q = q->next)
        gone = conn_feed(c, (const uint8_t *)q->payload, q->len);
    pbuf_free(p);
    return gone;
}

static err_t conn_recv(void *arg, struct tcp_pcb *pcb, struct pbuf *p, err_t err)
{
    struct tr_lwip_el_conn *c = (struct tr_lwip_el_conn *)arg;
    (void)err;
    if (!c || c->pcb != pcb) {     /* detached */
        if (p) {
            tcp_recved(pcb, p->tot_len);
            pbuf_free(p);
        }
        return ERR_OK;
    }
    if (!p)                        /* the asker gave up */
        return conn_close(c) ? ERR_ABRT : ERR_OK;
    return conn_feed_chain(c, pcb, p) ? ERR_ABRT : ERR_OK;
}

static void conn_err(void *arg, err_t err)
{
    struct tr_lwip_el_conn *c = (struct tr_lwip_el_conn *)arg;
    (void)err;
    if (c)
        c->pcb = NULL;             /* lwIP freed it */
}

/* lwIP's slow timer: a JOIN that does not arrive whole in time is dropped. */
static err_t conn_poll(void *arg, struct tcp_pcb *pcb)
{
    struct tr_lwip_el_conn *c = (struct tr_lwip_el_conn *)arg;
    if (!c || c->pcb != pcb || c->state != C_READING ||
        (uint32_t)(sys_now() - c->since) < c->el->cfg.handshake_ms)
        return ERR_OK;
    conn_abort(c);
    return ERR_ABRT;
}

/* tr_lwip's take hook: a connection on the listener that is not a link
 * hello. A membership message gets a slot; anything else is refused. */
static int el_take(void *ctx, struct tcp_pcb *pcb, const uint8_t *first, unsigned n,
                   struct pbuf *rest)
{
    struct tr_lwip_elastic *el = (struct tr_lwip_elastic *)ctx;
    struct tr_lwip_el_conn *c = NULL;
    unsigned i;
    if (!tr_el_prefix_ok(first, n))
        return 0;
    for (i = 0; i < TR_LWIP_EL_CONNS && !c; i++)
        if (!el->conn[i].pcb)
            c = &el->conn[i];
    if (!c)
        return 0;                  /* full: reset (the asker sees this rank dead) */
    c->el = el;
    c->pcb = pcb;
    c->state = C_READING;
    c->got = 0;
    c->since = sys_now();
    tcp_arg(pcb, c);
    tcp_recv(pcb, conn_recv);
    tcp_err(pcb, conn_err);
    tcp_sent(pcb, NULL);
    tcp_poll(pcb, conn_poll, POLL_TICKS);
    if (conn_feed(c, first, n)) {
        if (rest)
            pbuf_free(rest);
        return -1;
    }
    if (rest && conn_feed_chain(c, pcb, rest))
        return -1;
    return 1;                      /* ours (maybe answered and closing already) */
}

/* Every pending JOIN that can be answered now is. */
static void answer_pending(struct tr_lwip_elastic *el)
{
    unsigned i;
    for (i = 0; i < TR_LWIP_EL_CONNS; i++)
        if (el->conn[i].pcb)
            conn_answer(&el->conn[i]);
}

/* ---- asking a member ------------------------------------------------------ */

static void ask_forget(struct tr_lwip_el_ask *a, int abort)
{
    struct tcp_pcb *pcb = a->pcb;
    if (!pcb)
        return;
    a->pcb = NULL;
    tcp_arg(pcb, NULL);
    tcp_recv(pcb, NULL);
    tcp_err(pcb, NULL);
    if (abort || tcp_close(pcb) != ERR_OK)
        tcp_abort(pcb);
}

static err_t ask_recv(void *arg, struct tcp_pcb *pcb, struct pbuf *p, err_t err)
{
    struct tr_lwip_el_ask *a = (struct tr_lwip_el_ask *)arg;
    (void)err;
    if (!a || a->pcb != pcb) {
        if (p) {
            tcp_recved(pcb, p->tot_len);
            pbuf_free(p);
        }
        return ERR_OK;
    }
    if (!p) {                      /* FIN: what is buffered still counts */
        a->eof = 1;
        return ERR_OK;
    }
    if (p->tot_len > sizeof a->buf - a->got) {
        pbuf_free(p);              /* more than a REPLY and a VIEW: garbage */
        ask_forget(a, 1);
        a->state = A_CLOSED;
        return ERR_ABRT;
    }
    a->got += pbuf_copy_partial(p, a->buf + a->got, p->tot_len, 0);
    tcp_recved(pcb, p->tot_len);
    pbuf_free(p);
    return ERR_OK;
}

static void ask_err(void *arg, err_t err)
{
    struct tr_lwip_el_ask *a = (struct tr_lwip_el_ask *)arg;
    (void)err;
    if (!a)
        return;
    a->pcb = NULL;
    a->err = err;
    a->state = a->state == A_CONNECTING ? A_DEAD : A_CLOSED;   /* refused : reset */
}

static err_t ask_connected(void *arg, struct tcp_pcb *pcb, err_t err)
{
    struct tr_lwip_el_ask *a = (struct tr_lwip_el_ask *)arg;
    (void)pcb; (void)err;
    if (a)
        a->state = A_OPEN;
    return ERR_OK;
}

/* Starts a connect to addr:port. Returns 0 or a tr_err (no pcb). */
static int ask_dial(struct tr_lwip_elastic *el, uint32_t addr, uint16_t port)
{
    struct tr_lwip_el_ask *a = &el->ask;
    struct tcp_pcb *pcb;
    ip_addr_t ip;
    err_t e;
    ask_forget(a, 1);
    a->el = el;
    a->got = 0;
    a->eof = 0;
    a->err = ERR_OK;
    a->since = sys_now();
    a->state = A_CONNECTING;
    if (!(pcb = tcp_new()))
        return TR_ERR_NOBUFS;
    a->pcb = pcb;
    tcp_arg(pcb, a);
    tcp_recv(pcb, ask_recv);
    tcp_err(pcb, ask_err);
    tcp_nagle_disable(pcb);
    ip_addr_set_ip4_u32(&ip, addr);
    e = tcp_connect(pcb, &ip, port, ask_connected);
    if (e != ERR_OK) {             /* e.g. no route: not there */
        ask_forget(a, 1);
        a->state = A_DEAD;
    }
    return 0;
}

/* The next whole message from the member: 1 (in b, a VIEW's members in
 * el->next), 0 (not yet), or TR_ERR_PROTO / TR_ERR_NOMEM. */
static int ask_msg(struct tr_lwip_elastic *el, struct tr_el_brief *b)
{
    struct tr_lwip_el_ask *a = &el->ask;
    size_t total;
    int rc;
    if (a->got < TR_EL_HEAD_BYTES)
        return tr_el_prefix_ok(a->buf, a->got) ? 0 : TR_ERR_PROTO;
    if (tr_el_head_total(a->buf, &total) < 0)
        return TR_ERR_PROTO;
    if (total > TR_LWIP_EL_MSG_MAX)
        return TR_ERR_NOMEM;       /* a view larger than this port's bound */
    if (a->got < total)
        return 0;
    rc = tr_el_decode_brief(a->buf, total, b, el->next, TR_LWIP_MAX_WORLD);
    memmove(a->buf, a->buf + total, a->got - total);
    a->got -= total;
    if (rc == 0 && b->token != el->job_token)
        rc = TR_ERR_PROTO;
    return rc < 0 ? rc : 1;
}

/* Waits for the member's next message until deadline. Returns 0 (in b),
 * ASK_CLOSED, ASK_SILENT, or TR_ERR_NOMEM. */
static int ask_wait(struct tr_lwip_elastic *el, struct tr_el_brief *b, uint32_t deadline)
{
    for (;;) {
        int rc = ask_msg(el, b);
        if (rc == 1)
            return 0;
        if (rc == TR_ERR_NOMEM)
            return rc;
        if (rc < 0 || el->ask.eof || el->ask.state != A_OPEN)
            return ASK_CLOSED;     /* closed, reset, or not our message */
        if (left_ms(deadline) == 0)
            return ASK_SILENT;
        el_turn(el, deadline);
    }
}

static void join_msg(const struct tr_lwip_elastic *el, struct tr_el_brief *b, uint32_t epoch,
                     uint32_t flags, uint64_t step)
{
    memset(b, 0, sizeof *b);
    b->type = TR_EL_JOIN;
    b->token = el->job_token;
    b->epoch = epoch;
    b->join.rank = el->rank;
    b->join.flags = flags;
    b->join.step = step;
    b->join.addr = el->my_addr;
    b->join.port = el->my_port;
}

/* Connects to m (by handshake_ms), sends JOIN j, waits for the REPLY
 * until reply_end. Returns 0 (REPLY in b, el->ask open), ASK_DEAD,
 * ASK_CLOSED, ASK_SILENT, or a tr_err. */
static int ask_at(struct tr_lwip_elastic *el, const struct tr_el_member *m,
                  const struct tr_el_brief *j, uint32_t reply_end, struct tr_el_brief *b)
{
    uint32_t dial_end = sys_now() + el->cfg.handshake_ms;
    int rc = ask_dial(el, m->addr, m->port);
    if (rc < 0)
        return rc;
    while (el->ask.state == A_CONNECTING && left_ms(dial_end) > 0)
        el_turn(el, dial_end);
    if (el->ask.state != A_OPEN) {
        ask_forget(&el->ask, 1);
        return ASK_DEAD;           /* refused, unreachable, or no SYN-ACK */
    }
    if (send_msg(el->ask.pcb, j, NULL) < 0) {
        ask_forget(&el->ask, 1);
        return ASK_CLOSED;
    }
    rc = ask_wait(el, b, reply_end);
    if (rc == 0 && b->type != TR_EL_REPLY)
        rc = ASK_CLOSED;
    if (rc != 0)
        ask_forget(&el->ask, 1);
    return rc;
}

/* ---- this rank's round ----------------------------------------------------- */

/* ABORT from the coordinator. */
static int round_abort(struct tr_lwip_elastic *el, const struct tr_el_brief *b,
                       struct tr_lwip_elastic_round *out)
{
    out->verdict = (int)b->abort.reason;
    out->why = b->abort;
    out->coordinator = el->coord;
    out->epoch = el->epoch + 1;
    out->step = b->abort.step;
    return TR_ERR_CLOSED;
}

/* After ACCEPT: the verdict on the same connection. Returns 0 (VIEW in b,
 * members in el->next), ASK_CLOSED, ASK_SILENT, or an error (ABORT). */
static int wait_verdict(struct tr_lwip_elastic *el, struct tr_el_brief *b,
                        struct tr_lwip_elastic_round *out)
{
    uint32_t deadline = sys_now() + el->cfg.timeout_ms + 2u * el->cfg.handshake_ms;
    int rc;
    el->following = 1;             /* JOINs to this rank: go to el->coord */
    answer_pending(el);
    rc = ask_wait(el, b, deadline);
    ask_forget(&el->ask, 0);
    if (rc != 0)
        return rc;
    if (b->type == TR_EL_ABORT)
        return round_abort(el, b, out);
    if (b->type != TR_EL_VIEW || (!el->joining && b->epoch != el->epoch + 1))
        return ASK_CLOSED;         /* a joiner knows no epoch */
    return 0;
}

/* ---- coordinating ---------------------------------------------------------- */

/* Marks the members that answered (this rank, accepted JOINs). Returns 1
 * when every member of the view answered or is known dead. */
static int coord_tally(struct tr_lwip_elastic *el)
{
    uint32_t i, done = 0;
    memset(el->answered, 0, sizeof el->answered);
    el->answered[el->index] = 1;
    for (i = 0; i < TR_LWIP_EL_CONNS; i++) {
        const struct tr_lwip_el_conn *c = &el->conn[i];
        int k;
        if (!c->pcb || c->state != C_ACCEPTED || (c->join.flags & TR_EL_JOINER))
            continue;
        if ((k = tr_el_member_index(el->m, el->n, c->join.rank)) >= 0)
            el->answered[k] = 1;
    }
    for (i = 0; i < el->n; i++)
        done += el->answered[i] || el->dead[i];
    return done == el->n;
}

/* When the probe of member k is over: answered meanwhile; refused (dead);
 * accepted and then reset or closed (its listener went away with its
 * process: probe again at once, the next connect is refused); accepted and
 * held PROBE_HOLD_MS (alive, or frozen: again after PROBE_MS); no SYN-ACK
 * within handshake_ms. Returns 1 when over (probe_at[k] set). */
static int probe_over(struct tr_lwip_elastic *el, int k, uint32_t now)
{
    const struct tr_lwip_el_ask *a = &el->ask;
    uint32_t age = now - a->since;
    el->probe_at[k] = now + PROBE_MS;
    if (el->answered[k])
        return 1;
    if (a->state == A_DEAD) {
        el->dead[k] = a->err == ERR_RST;   /* refused: nobody listens there */
        return 1;
    }
    if (a->state == A_CLOSED || (a->state == A_OPEN && a->eof)) {
        el->probe_at[k] = now;
        return 1;
    }
    return (a->state == A_OPEN && age >= PROBE_HOLD_MS) ||
           (a->state == A_CONNECTING && age >= el->cfg.handshake_ms);
}

/* One step of probing the members that have not answered, one connect at a
 * time on el->ask (probe_over says what a probe found). */
static void coord_probe(struct tr_lwip_elastic *el)
{
    struct tr_lwip_el_ask *a = &el->ask;
    uint32_t now = sys_now(), i;
    int k = el->probe_k;
    if (k >= 0 && probe_over(el, k, now)) {
        ask_forget(a, 1);
        el->probe_k = k = -1;
    }
    for (i = 1; k < 0 && i <= el->n; i++) {
        uint32_t m = (el->probe_next + i) % el->n;
        if (el->answered[m] || el->dead[m] || before(now, el->probe_at[m]))
            continue;
        if (ask_dial(el, el->m[m].addr, el->m[m].port) < 0 || a->state == A_DEAD) {
            el->probe_at[m] = now + PROBE_MS;   /* no pcb, or no route */
            continue;
        }
        el->probe_k = k = (int)m;
        el->probe_next = m;
    }
}

/* Sends the verdict m (a VIEW's members in el->next) to every accepted
 * JOIN and closes it; a process started again whose rank stays a member is
 * told DUPLICATE. */
static void coord_tell(struct tr_lwip_elastic *el, const struct tr_el_brief *m)
{
    unsigned i;
    for (i = 0; i < TR_LWIP_EL_CONNS; i++) {
        struct tr_lwip_el_conn *c = &el->conn[i];
        if (c->pcb && c->state == C_ACCEPTED) {
            if (send_msg(c->pcb, m, el->next) < 0)
                conn_abort(c);
            else
                conn_close(c);
        } else if (c->pcb && c->state == C_PENDING && m->type == TR_EL_VIEW &&
                   tr_el_member_index(el->next, m->n, c->join.rank) >= 0) {
            conn_reply(c, TR_EL_DUPLICATE, el->rank);
        }
    }
}

/* Decides (core's tr_el_decide_brief) over this rank's JOIN and the
 * accepted ones, and tells everyone accepted. Returns 0 (VIEW in b, members
 * in el->next) or an error (ABORT: out->verdict). */
static int coord_decide(struct tr_lwip_elastic *el, uint64_t position, struct tr_el_brief *b,
                        struct tr_lwip_elastic_round *out)
{
    struct tr_el_join joins[TR_LWIP_EL_CONNS + 1];
    struct tr_el_brief prev, m;
    struct tr_el_abort why;
    unsigned n = 0, i;
    int verdict;
    memset(joins, 0, sizeof joins);
    joins[n].rank = el->rank;
    joins[n].step = position;
    joins[n].addr = el->my_addr;
    joins[n++].port = el->my_port;
    for (i = 0; i < TR_LWIP_EL_CONNS; i++)
        if (el->conn[i].pcb && el->conn[i].state == C_ACCEPTED)
            joins[n++] = el->conn[i].join;
    memset(&prev, 0, sizeof prev);
    prev.epoch = el->epoch;
    prev.n = el->n;
    memset(b, 0, sizeof *b);
    verdict = tr_el_decide_brief(&prev, el->m, joins, n, el->cfg.min_ranks, b, el->next,
                                 TR_LWIP_MAX_WORLD, &why);
    if (verdict < 0) {             /* cannot happen with judged JOINs */
        for (i = 0; i < TR_LWIP_EL_CONNS; i++)
            if (el->conn[i].state == C_ACCEPTED)
                conn_abort(&el->conn[i]);
        return TR_ERR_PROTO;
    }
    m = *b;
    m.type = verdict == TR_EL_GO ? TR_EL_VIEW : TR_EL_ABORT;
    m.token = el->job_token;
    m.epoch = el->epoch + 1;
    m.abort = why;
    coord_tell(el, &m);
    if (verdict == TR_EL_GO)
        return 0;
    m.type = TR_EL_ABORT;
    return round_abort(el, &m, out);
}

/* This rank coordinates: collect until every member answered or is known
 * dead, or the deadline (timeout_ms from the round's start, at least
 * handshake_ms from now: members that waited on a frozen lower one arrive
 * late), then decide. */
static int coordinate(struct tr_lwip_elastic *el, uint64_t position, uint32_t round_start,
                      struct tr_el_brief *b, struct tr_lwip_elastic_round *out)
{
    uint32_t now = sys_now(), end = round_start + el->cfg.timeout_ms, k;
    int rc;
    if (before(end, now + el->cfg.handshake_ms))
        end = now + el->cfg.handshake_ms;
    el->coord = el->rank;
    el->coordinating = 1;
    el->probe_k = -1;
    el->probe_next = (uint32_t)el->index;
    for (k = 0; k < el->n; k++)
        el->probe_at[k] = now;
    answer_pending(el);            /* JOINs that came before this round */
    while (!coord_tally(el) && left_ms(end) > 0) {
        coord_probe(el);
        el_turn(el, end);
    }
    ask_forget(&el->ask, 1);
    el->probe_k = -1;
    out->coordinated = 1;
    out->coordinator = el->rank;
    rc = coord_decide(el, position, b, out);
    el->coordinating = 0;
    return rc;
}

/* ---- a member ---------------------------------------------------------------- */

/* Asks view member *k. Returns 0 (VIEW in b), 1 (go on with *k, which may
 * have changed), or an error. */
static int member_step(struct tr_lwip_elastic *el, uint32_t *k, uint64_t position,
                       uint32_t search_end, struct tr_el_brief *b,
                       struct tr_lwip_elastic_round *out)
{
    uint32_t reply_end = sys_now() + el->cfg.timeout_ms + el->cfg.handshake_ms;
    int rc, hint;
    if (before(search_end, reply_end))
        reply_end = search_end;
    join_msg(el, b, el->epoch, 0, position);
    rc = ask_at(el, &el->m[*k], b, reply_end, b);
    if (rc == ASK_DEAD || rc == ASK_SILENT) {
        el->dead[(*k)++] = 1;
        return 1;
    }
    if (rc == ASK_CLOSED) {        /* it was opening links: again */
        el_sleep(el, RETRY_MS);
        return 1;
    }
    if (rc < 0)
        return rc;
    if (b->answer == TR_EL_ACCEPT) {
        el->coord = b->coord;
        rc = wait_verdict(el, b, out);
        if (rc == ASK_SILENT)
            el->dead[*k] = 1;
        if (rc == ASK_SILENT || rc == ASK_CLOSED) {
            *k = 0;                /* search again from the lowest */
            el_sleep(el, RETRY_MS);
            return 1;
        }
        return rc;
    }
    ask_forget(&el->ask, 0);
    if (b->answer != TR_EL_NOT_COORD) {
        out->answer = b->answer;   /* DUPLICATE, EXCLUDED, STALE */
        out->coordinator = b->coord;
        return TR_ERR_MISMATCH;
    }
    hint = tr_el_member_index(el->m, el->n, b->coord);
    if (hint < 0 || el->dead[hint])
        (*k)++;
    else
        *k = (uint32_t)hint;
    el_sleep(el, RETRY_MS);        /* it may not coordinate yet */
    return 1;
}

/* One round as a member of the view: find the coordinator, get its verdict. */
static int round_once(struct tr_lwip_elastic *el, uint64_t position, struct tr_el_brief *b,
                      struct tr_lwip_elastic_round *out)
{
    uint32_t start = sys_now(), search_end = start + 2u * (el->cfg.timeout_ms + el->cfg.handshake_ms);
    uint32_t k = 0;
    int rc;
    memset(el->dead, 0, sizeof el->dead);
    out->rounds++;
    while (k < el->n && left_ms(search_end) > 0) {
        if (k == (uint32_t)el->index)
            return coordinate(el, position, start, b, out);
        if (el->dead[k]) {
            k++;
            continue;
        }
        rc = member_step(el, &k, position, search_end, b, out);
        if (rc <= 0)
            return rc;
    }
    return TR_ERR_TIMEOUT;         /* no coordinator answered */
}

/* GO: the VIEW in b / el->next becomes el's; out says what changed. */
static int take_view(struct tr_lwip_elastic *el, const struct tr_el_brief *b,
                     struct tr_lwip_elastic_round *out)
{
    int index = tr_el_member_index(el->next, b->n, el->rank);
    uint32_t i;
    if (index < 0)
        return TR_ERR_PROTO;       /* a view that does not name this rank */
    out->verdict = TR_EL_GO;
    out->epoch = b->epoch;
    out->rank = index;
    out->world = (int)b->n;
    out->source = (int)b->source;
    out->step = b->step;
    out->coordinator = el->coord;
    out->n_left = 0;
    for (i = 0; i < el->n; i++)
        if (tr_el_member_index(el->next, b->n, el->m[i].rank) < 0)
            out->left[out->n_left++] = el->m[i].rank;
    el->epoch = b->epoch;
    el->n = b->n;
    el->source = b->source;
    el->step = b->step;
    el->index = index;
    for (i = 0; i < b->n; i++) {
        el->m[i] = el->next[i];
        memcpy(el->table[i].ip, &el->m[i].addr, 4);
        el->table[i].port = el->m[i].port;
    }
    return 0;
}

/* The new ring's links over the kept listener, with the epoch's token. */
static int open_links(struct tr_lwip_elastic *el)
{
    if (el->n == 1)
        return 0;                  /* a ring of one: no links */
    return tr_lwip_relink(el->lw, el->index, (int)el->n, el->table,
                          tr_el_link_token(el->job_token, el->epoch), el->cfg.timeout_ms);
}

/* A process that tr_lwip_elastic_find got accepted: its VIEW comes on that
 * connection. */
static int joiner_wait(struct tr_lwip_elastic *el, struct tr_el_brief *b,
                       struct tr_lwip_elastic_round *out)
{
    int rc;
    out->rounds++;
    rc = wait_verdict(el, b, out);
    el->joining = 0;
    if (rc == ASK_CLOSED || rc == ASK_SILENT)
        return TR_ERR_CLOSED;      /* the coordinator went away: find again */
    return rc;
}

int tr_lwip_elastic_reform(struct tr_lwip_elastic *el, uint64_t position,
                           struct tr_lwip_elastic_round *out)
{
    struct tr_el_brief b;
    uint32_t t0 = sys_now();
    int rc;
    memset(out, 0, sizeof *out);
    if (!el->lw || (el->index < 0 && !el->joining) || !el->lw->listener)
        return TR_ERR_INVAL;
    tr_lwip_drop_links(el->lw);    /* the ring is broken: a neighbour that has
                                    * not noticed yet fails at once */
    rc = el->joining ? joiner_wait(el, &b, out) : round_once(el, position, &b, out);
    while (rc == 0) {
        rc = take_view(el, &b, out);
        el->following = 0;
        answer_pending(el);        /* JOINs of the old view: to the new lowest */
        if (rc == 0)
            rc = open_links(el);
        if (rc == 0 || rc == TR_ERR_PROTO || out->rounds >= MAX_ROUNDS)
            break;
        tr_lwip_drop_links(el->lw);
        rc = round_once(el, position, &b, out);   /* the new ring failed: again */
    }
    el->following = 0;
    el->coordinating = 0;
    ask_forget(&el->ask, 1);
    out->ms = sys_now() - t0;
    return rc;
}

/* ---- a process started again ----------------------------------------------- */

#define FIND_HOPS 8        /* NOT_COORD answers followed per pass */

/* One pass over the original table from its lowest other rank. Returns 1
 * (accepted: el->ask open), 0 (nobody took it), or an error; *seen: some
 * process kept the JOIN unanswered (1) or closed it (2). */
static int find_pass(struct tr_lwip_elastic *el, uint32_t wait_ms, int *seen)
{
    struct tr_el_brief j, b;
    uint32_t k = el->rank == 0 ? 1 : 0, hops = 0;
    int rc;
    join_msg(el, &j, TR_EL_ANY_EPOCH, TR_EL_JOINER, 0);
    while (k < el->world) {
        uint32_t next = k + 1 == el->rank ? k + 2 : k + 1;
        rc = ask_at(el, &el->m[k], &j, sys_now() + wait_ms, &b);
        *seen |= rc == ASK_SILENT ? 1 : rc == ASK_CLOSED ? 2 : 0;
        if (rc < 0)
            return rc;
        if (rc == 0 && b.answer == TR_EL_ACCEPT) {
            el->coord = b.coord;
            return 1;
        }
        if (rc == 0) {
            ask_forget(&el->ask, 0);
            if (b.answer != TR_EL_NOT_COORD) {
                el->refusal = b.answer;   /* DUPLICATE, EXCLUDED, STALE */
                return TR_ERR_MISMATCH;
            }
            if (b.coord < el->world && b.coord != el->rank && hops++ < FIND_HOPS)
                next = b.coord;
        }
        k = next;
    }
    return 0;
}

int tr_lwip_elastic_find(struct tr_lwip_elastic *el, uint32_t wait_ms)
{
    int pass, rc = 0, seen = 0;
    if (!el->lw || el->lw->listener || el->index < 0 || el->epoch != 0)
        return TR_ERR_INVAL;       /* after start, before connect */
    /* a running job's member may be between its links and its listener for
     * a moment (it closes what is not a link hello): one more pass then */
    for (pass = 0; pass < 2 && rc == 0; pass++) {
        seen &= 1;
        rc = find_pass(el, wait_ms, &seen);
        if (rc != 0 || !(seen & 2))
            break;
        el_sleep(el, 50);
    }
    if (rc == 0)
        return seen & 1 ? TR_ERR_TIMEOUT : 0;
    if (rc < 0)
        return rc;
    /* accepted: no view yet; listen for the new ring's links */
    el->joining = 1;
    el->index = -1;
    el->n = 0;
    el->following = 1;             /* a JOIN to this rank: to the coordinator */
    rc = tr_lwip_listen(el->lw);
    if (rc < 0) {
        ask_forget(&el->ask, 1);
        el->joining = 0;
        return rc;
    }
    return 1;
}

/* ---- start and close ----------------------------------------------------------- */

int tr_lwip_elastic_start(struct tr_lwip_elastic *el, const struct tr_lwip_elastic_config *cfg,
                          struct tr_lwip *lw)
{
    uint32_t i;
    if (!el || !cfg || !lw || !lw->cfg.table || lw->cfg.world < 2 ||
        (uint32_t)lw->cfg.world > TR_LWIP_MAX_WORLD || lw->listener)
        return TR_ERR_INVAL;
    memset(el, 0, sizeof *el);
    el->cfg = *cfg;
    tr_el_config_defaults(&el->cfg.timeout_ms, &el->cfg.handshake_ms, &el->cfg.min_ranks);
    el->lw = lw;
    el->rank = (uint32_t)lw->cfg.rank;
    el->world = (uint32_t)lw->cfg.world;
    el->job_token = lw->cfg.job_token;
    el->n = el->world;
    el->index = lw->cfg.rank;
    for (i = 0; i < el->world; i++) {
        el->table[i] = lw->cfg.table[i];
        el->m[i].rank = i;
        el->m[i].addr = addr_of(&lw->cfg.table[i]);
        el->m[i].port = lw->cfg.table[i].port;
    }
    el->my_addr = el->m[el->rank].addr;
    el->my_port = el->m[el->rank].port;
    el->ask.el = el;
    for (i = 0; i < TR_LWIP_EL_CONNS; i++)
        el->conn[i].el = el;
    lw->cfg.table = el->table;     /* the ring's table from now on */
    lw->keep_listener = 1;
    lw->take = el_take;
    lw->take_ctx = el;
    return 0;
}

int tr_lwip_elastic_service(struct tr_lwip_elastic *el)
{
    unsigned i;
    int waiting = 0;
    if (!el->lw || el->index != 0)
        return 0;
    answer_pending(el);
    for (i = 0; i < TR_LWIP_EL_CONNS; i++) {
        const struct tr_lwip_el_conn *c = &el->conn[i];
        if (c->pcb && c->state == C_PENDING && (c->join.flags & TR_EL_JOINER))
            waiting += tr_el_member_index(el->m, el->n, c->join.rank) < 0;
    }
    return waiting;
}

void tr_lwip_elastic_close(struct tr_lwip_elastic *el, uint32_t linger_ms)
{
    unsigned i;
    if (!el->lw)
        return;
    for (i = 0; i < TR_LWIP_EL_CONNS; i++)
        conn_abort(&el->conn[i]);
    ask_forget(&el->ask, 1);
    el->lw->take = NULL;
    el->lw->keep_listener = 0;
    tr_lwip_close(el->lw, linger_ms);
    el->index = -1;
    el->joining = 0;
}
