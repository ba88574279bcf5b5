/* tinyring: the transport over lwIP's raw TCP API (NO_SYS=1).
 *
 * For bare-metal firmware with one main loop and no threads; proven on the
 * host by test/lwip (lwIP in a process on a TAP device). The port never
 * blocks and never allocates: the state struct and the receive rings are the
 * caller's, lwIP's own memory comes from its static pools (port/lwip/
 * lwipopts.h). Everything host-specific (the NIC, the clock) is the
 * application's:
 *
 *   - sys_now(): lwIP's NO_SYS clock (milliseconds), which the application
 *     provides anyway for sys_check_timeouts(); the port uses it as now_ms.
 *   - drive(arg, wait_ms): one turn of the application's network loop: feed
 *     received frames to the netif (netif->input), call sys_check_timeouts(),
 *     and wait for input at most wait_ms (host: poll() on the TAP fd; board:
 *     service the NIC, maybe WFI). poll() calls it until what core waits for
 *     holds or the timeout passes; so does bootstrap.
 *
 * Bootstrap (tr_lwip_connect): a static table gives every rank's IPv4
 * address and TCP port. Each rank listens on its own port for its left
 * neighbour and connects to its right one, retrying until the deadline. The
 * first bytes on a new connection are the link hello of core/include/tr_link.h
 * (the POSIX port speaks the same, so POSIX and lwIP ranks share one ring):
 * strangers (wrong job token, wrong rank) are dropped and the listener
 * keeps waiting. Core's tr_comm_hello runs after.
 *
 * Use:
 *   static struct tr_lwip lw;                       // caller's state
 *   static uint8_t rx[2 * 16384];                   // caller's rx rings
 *   struct tr_lwip_config c = { rank, world, table, token, 20000, 0,
 *                               my_drive, &nic, rx, sizeof rx };
 *   tr_lwip_init(&lw, &c);                          // after lwip_init + netif_add
 *   tr_lwip_connect(&lw);                           // both links up
 *   static struct tr_transport tp;                  // caller's, lives as long as comm
 *   tr_lwip_transport(&lw, &tp);
 *   tr_comm_init(&comm, &cc, &tp, scratch, n);
 *   ...
 *   tr_lwip_close(&lw, 1000);
 */
#ifndef TR_LWIP_H
#define TR_LWIP_H

#include <stddef.h>
#include <stdint.h>
#include "tr_link.h"
#include "tr_transport.h"

struct tcp_pcb;
struct pbuf;

/* Where one rank listens. */
struct tr_lwip_addr {
    uint8_t  ip[4];   /* IPv4 address a.b.c.d as ip[0..3] */
    uint16_t port;    /* TCP port, host byte order */
};

struct tr_lwip_config {
    int      rank;                /* 0 .. world-1 */
    int      world;               /* >= 2 (world 1 needs no transport) */
    const struct tr_lwip_addr *table; /* world entries, index = rank; the
                                   * caller keeps it alive (a const table in
                                   * flash is the intended use) */
    uint64_t job_token;           /* sent and checked in the link handshake */
    uint32_t connect_timeout_ms;  /* bootstrap deadline; 0 = TR_LINK_CONNECT_MS */
    uint32_t retry_ms;            /* wait between connect attempts; 0 = 100 */
    void   (*drive)(void *arg, uint32_t wait_ms); /* see above; required */
    void    *drive_arg;           /* passed to drive */
    void    *rx_mem;              /* caller's receive rings: split in two equal
                                   * halves, one per link */
    size_t   rx_mem_size;         /* bytes at rx_mem: >= 2 * TR_LWIP_RX_MIN;
                                   * 2 * TCP_WND avoids holding pbufs */
};

/* Smallest ring per link tr_lwip_init accepts. */
#define TR_LWIP_RX_MIN 256u

/* Bytes of rx_mem to give tr_lwip_init for this lwipopts.h: a ring of one
 * TCP window per link, so received pbufs never wait in the port (ask first,
 * then pass the memory). Less works, down to 2 * TR_LWIP_RX_MIN. */
size_t tr_lwip_rx_size(void);

/* One TCP connection to a neighbour (or a candidate on the listener). */
struct tr_lwip_link {
    struct tr_lwip *owner;        /* back pointer (tcp_arg of the pcb) */
    struct tcp_pcb *pcb;          /* NULL once closed or failed */
    int      state;               /* enum in tr_lwip.c: idle, connecting,
                                   * handshake, ready, failed */
    int      err;                 /* sticky tr_err once the link broke, else 0 */
    int      eof;                 /* 1 after the peer's FIN */
    int      peer_rank;           /* rank at the other end, -1 until known */
    uint8_t *ring;                /* receive ring: ring_size bytes of rx_mem */
    size_t   ring_size;
    size_t   ring_head;           /* index of the oldest unread byte */
    size_t   ring_len;            /* unread bytes in the ring */
    struct pbuf *held;            /* received pbufs that did not fit the ring
                                   * yet (not acknowledged to lwIP: the TCP
                                   * window stays shut for them) */
    uint32_t unacked;             /* bytes core read but not yet passed to
                                   * tcp_recved (batched to >= 1 MSS) */
    uint32_t retry_at;            /* sys_now() of the next connect attempt
                                   * (while connecting: when to give up on
                                   * this attempt's SYN) */
    int      send_blocked;        /* 1 after tcp_write said ERR_MEM: not
                                   * writable until a segment is acked */
    uint8_t  hs[TR_LINK_HELLO_BYTES]; /* link hello bytes received so far */
    uint8_t  hs_len;
};

#define TR_LWIP_CANDIDATES 2      /* accepted, not yet identified connections */

struct tr_lwip {
    struct tr_lwip_config cfg;    /* copy of the configuration */
    struct tcp_pcb *listener;     /* listening pcb until the left link is up */
    struct tr_lwip_link link[2];  /* [TR_LEFT], [TR_RIGHT] */
    struct tr_lwip_link cand[TR_LWIP_CANDIDATES];
    uint32_t refused;             /* strangers dropped at the handshake */
    int      last_lwip_err;       /* the last err_t lwIP reported, for messages */
    /* elastic runs (set by tr_lwip_elastic_start; 0 / NULL otherwise) */
    int      keep_listener;       /* 1: the listener stays open for the whole
                                   * run; a link hello that arrives while no
                                   * links are being opened waits unanswered
                                   * (parked) until tr_lwip_relink */
    int      linking;             /* 1 while tr_lwip_connect/relink opens links */
    int    (*take)(void *ctx, struct tcp_pcb *pcb, const uint8_t *first, unsigned n,
                   struct pbuf *rest);   /* offered an accepted connection whose
                                   * first bytes are not a link hello: first[0..n)
                                   * already read (window given back), rest the
                                   * pbufs after them (ownership passes). Returns
                                   * 0 (not taken: the port resets it), 1 (taken,
                                   * its callbacks are the taker's), -1 (taken
                                   * and aborted by the taker) */
    void    *take_ctx;
    struct tcp_pcb *taken;        /* internal: the pcb take() just adopted */
};

/* Check the configuration and set the state up (no network traffic yet).
 * lwip_init() and the netif must already be set up. Returns 0 or
 * TR_ERR_INVAL / TR_ERR_NOMEM (rx_mem too small). */
int tr_lwip_init(struct tr_lwip *lw, const struct tr_lwip_config *cfg);

/* Listen, connect to the right neighbour, accept the left one, exchange link
 * handshakes; drives the stack until both links are up or the deadline.
 * Returns 0, TR_ERR_TIMEOUT, TR_ERR_ADDRINUSE, TR_ERR_NOBUFS (lwIP pools). */
int tr_lwip_connect(struct tr_lwip *lw);

/* Fill tp so core drives lw's two links (tp->ctx = lw); the caller owns tp,
 * as with tr_posix_transport. It stays valid while lw lives. */
void tr_lwip_transport(struct tr_lwip *lw, struct tr_transport *tp);

/* Drive the stack until what was sent is acknowledged (at most linger_ms),
 * then close both links with a FIN; the link state is dropped. */
void tr_lwip_close(struct tr_lwip *lw, uint32_t linger_ms);

/* Elastic runs (used by tr_lwip_elastic.c): listen on table[rank] now (a
 * process started again, before its first links). 0 or a tr_err. */
int tr_lwip_listen(struct tr_lwip *lw);

/* Elastic runs (used by tr_lwip_elastic.c): reset both ring links at once
 * (RST; their receive rings emptied), keeping the listener. */
void tr_lwip_drop_links(struct tr_lwip *lw);

/* Elastic runs: the links of a new ring over the kept listener: drops the
 * old links, then this rank is `rank` of `world` (>= 2) at table[] (kept
 * alive by the caller), the link hellos carry `token`; drives the stack
 * until both links are up or timeout_ms (0 = TR_LINK_CONNECT_MS). Parked hellos are
 * judged first. Returns 0, TR_ERR_INVAL (no listener), TR_ERR_TIMEOUT,
 * TR_ERR_MISMATCH (the right neighbour answered as another ring),
 * TR_ERR_NOBUFS. */
int tr_lwip_relink(struct tr_lwip *lw, int rank, int world, const struct tr_lwip_addr *table,
                   uint64_t token, uint32_t timeout_ms);

/* An lwIP err_t as a tr_err (0 for ERR_OK). */
int tr_lwip_err(int lwip_err);

/* TCP's initial sequence numbers, lwIP's LWIP_HOOK_TCP_ISN in the port's
 * lwipopts.h (a project with its own lwipopts.h may set the same hook):
 * RFC 6528's M + F(local address and port, remote address and port,
 * secret), M the 4 us clock (sys_now() x 250), F SipHash-2-4 of the four
 * with a 128-bit secret drawn once from tr_lwip_rand() (arch/cc.h) at the
 * first connection. lwIP's own is a counter an off-path host can guess.
 * The secret is as unpredictable as the platform's tr_lwip_rand. Both
 * functions are compiled where lwipopts.h sets the hook (a project's own
 * lwIP options without it need no tr_lwip_rand for them). */
struct ip4_addr;
uint32_t tr_lwip_tcp_isn(const struct ip4_addr *local_ip, uint16_t local_port,
                         const struct ip4_addr *remote_ip, uint16_t remote_port);
/* SipHash-2-4 (Aumasson and Bernstein) of m[0..n) under key, the 64-bit
 * result as the reference's little-endian bytes read as a number. */
uint64_t tr_lwip_siphash24(const uint8_t key[16], const uint8_t *m, size_t n);

/* The transport functions, also callable directly. */
long tr_lwip_send(void *ctx, int peer, const void *buf, size_t len);
long tr_lwip_recv(void *ctx, int peer, void *buf, size_t len);
int  tr_lwip_poll(void *ctx, unsigned want, uint32_t timeout_ms);
uint32_t tr_lwip_now_ms(void *ctx);

/* ---- elastic membership (issue 12): an lwIP rank as a member ------------
 *
 * An lwIP rank takes part in an elastic ring (core/include/tr_elastic.h, the POSIX
 * port's tr_posix_elastic_*: the same messages on the wire) as a member, so
 * a mixed ring of hosts and boards survives a lost rank:
 *
 *   tr_lwip_init(&lw, &c);                      // c.table: every rank's address
 *   tr_lwip_elastic_start(&el, &ec, &lw);       // before connect: keeps the listener
 *   tr_lwip_connect(&lw);                       // the ring of epoch 0
 *   tr_lwip_transport(&lw, &tp);                // train with cfg.elastic = 1
 *   on TR_TRAIN_LOST / TR_TRAIN_CHANGE:
 *       rc = tr_lwip_elastic_reform(&el, tr_train_position(&t), &round);
 *       tr_train_reform(&t, round.rank, round.world, round.world > 1 ? &tp : NULL,
 *                       round.source);
 *   tr_lwip_elastic_close(&el, 1000);
 *
 * The listening pcb stays open for the whole run: link hellos ("TRL1") and
 * membership messages ("TRE1") are told apart by their first bytes. A JOIN
 * that arrives is answered from lwIP's callbacks (inside the caller's drive):
 * between rounds, a process started again whose rank the view no longer
 * names, or a JOIN of an older view, is sent to the view's lowest rank
 * (NOT_COORD); a JOIN of this view's epoch waits for this rank's own round,
 * which sends it to the coordinator it follows; while this rank opens ring
 * links a JOIN is closed unanswered (the asker asks again).
 *
 * tr_lwip_elastic_reform runs one membership round as the POSIX members do,
 * driving the stack through cfg.drive like tr_lwip_connect (NO_SYS=1: it
 * returns when the round is over): reset the ring links, ask the view's
 * members in ascending original rank with JOIN{view epoch, rank, step =
 * position, own address and port}: a refused or unreachable member is dead
 * (next), ACCEPT = wait for VIEW or ABORT on that connection, NOT_COORD(hint)
 * = ask the hint, closed unanswered = ask again after 20 ms. On VIEW the new
 * ring's links open over the kept listener (link hello token
 * tr_el_link_token(job_token, epoch), rank = index, world = n); a failed
 * link starts another round from the new view.
 *
 * The lowest live member of the view coordinates, an lwIP rank too: it
 * ACCEPTs the JOINs, probes the members that have not answered (one connect
 * at a time: refused = dead), decides once all answered or are known dead,
 * or timeout_ms from the round's start passed (core's tr_el_decide_brief:
 * the split rule, min_ranks) and sends VIEW or ABORT to every member it
 * accepted. It holds one pcb per accepted JOIN until then: a coordinating
 * lwIP rank takes at most TR_LWIP_EL_CONNS other members (and needs
 * MEMP_NUM_TCP_PCB >= TR_LWIP_EL_CONNS + 4); raise both for larger rings.
 * As the view's lowest rank between rounds it keeps a process started again
 * waiting (tr_lwip_elastic_service counts them: ask for a change with
 * tr_train_request_change) and admits it in the next round.
 *
 * A board that reboots rejoins: tr_lwip_elastic_find (after start, instead
 * of tr_lwip_connect) asks the table's other ranks in ascending order with
 * a joiner's JOIN; accepted, it listens and tr_lwip_elastic_reform(el, 0,
 * &round) waits for the VIEW of the next round (a process that joins calls
 * tr_train_begin(t, NULL, 0), then tr_train_reform with the round's rank,
 * world and source).
 *
 * RAM (caller's, static): struct tr_lwip_elastic, 1352 bytes on Cortex-M4F
 * with TR_LWIP_MAX_WORLD 16 (36 bytes per member of the bound: the view,
 * the ring's address table, a VIEW being received, per-round flags; 4 JOIN
 * slots of 96; a 264-byte receive buffer); no allocation, no lwIP heap
 * beyond one small segment per message. port/lwip/README.md has the
 * measured sizes. */
#include "tr_elastic.h"

#ifndef TR_LWIP_MAX_WORLD
#define TR_LWIP_MAX_WORLD 16u      /* the largest job (original world) an elastic
                                    * lwIP rank takes part in */
#endif
#ifndef TR_LWIP_EL_CONNS
#define TR_LWIP_EL_CONNS 4u        /* JOINs held at once on the listener (as the
                                    * coordinator: the other members it can take) */
#endif
/* the longest message this port reads: a VIEW of TR_LWIP_MAX_WORLD members */
#define TR_LWIP_EL_MSG_MAX (TR_EL_HEAD_BYTES + TR_EL_VIEW_BYTES(TR_LWIP_MAX_WORLD))

struct tr_lwip_elastic_config {
    uint32_t timeout_ms;           /* a member that has not answered a round by
                                    * then is dropped (the coordinator's), the
                                    * wait for a verdict and the new ring's link
                                    * deadline; the same on every rank of the
                                    * job (mnist_ring: --timeout);
                                    * 0 = TR_EL_DEFAULT_TIMEOUT_MS */
    uint32_t handshake_ms;         /* a connect must be answered, and a JOIN sent
                                    * to this rank arrive whole, within this;
                                    * 0 = TR_EL_DEFAULT_HANDSHAKE_MS */
    unsigned min_ranks;            /* coordinating: a view with fewer members is
                                    * not formed (ABORT, TR_EL_BELOW_MIN); the
                                    * same on every rank; 0 is taken as 1 */
};

/* A connection accepted on the listener that carries a JOIN (internal). */
struct tr_lwip_el_conn {
    struct tr_lwip_elastic *el;    /* back pointer (tcp_arg) */
    struct tcp_pcb *pcb;           /* NULL: a free slot */
    uint8_t  state;                /* reading, pending (the JOIN is whole), or
                                    * accepted (coordinating: ACCEPT sent, the
                                    * verdict follows on it) */
    uint8_t  got;                  /* bytes of buf so far */
    uint32_t since;                /* sys_now() when taken */
    uint8_t  buf[TR_EL_HEAD_BYTES + TR_EL_JOIN_BYTES];
    uint32_t epoch;                /* the JOIN's, once whole */
    struct tr_el_join join;        /* the JOIN, once whole */
};

/* This rank's connection asking a member (internal). */
struct tr_lwip_el_ask {
    struct tr_lwip_elastic *el;    /* back pointer (tcp_arg) */
    struct tcp_pcb *pcb;           /* NULL when none */
    int      state;                /* connecting, open, closed, dead */
    int      eof;                  /* the member closed its side */
    int      err;                  /* lwIP's err_t when the pcb died (ERR_RST
                                    * while connecting: refused) */
    uint32_t since;                /* sys_now() of the connect */
    size_t   got;                  /* bytes in buf */
    uint8_t  buf[TR_EL_HEAD_BYTES + TR_EL_REPLY_BYTES + TR_LWIP_EL_MSG_MAX];
                                   /* a REPLY and the VIEW after it */
};

/* Caller-owned state of an elastic lwIP rank. Read-only for callers. */
struct tr_lwip_elastic {
    struct tr_lwip_elastic_config cfg;   /* copied, defaults filled */
    struct tr_lwip *lw;            /* the port state whose listener is kept */
    uint32_t rank, world;          /* original rank and world (lw's at start) */
    uint64_t job_token;            /* the job's (lw's at start) */
    uint32_t my_addr;              /* where this rank listens: IPv4 network order */
    uint16_t my_port;
    /* the view: epoch, members in ascending original rank, this rank's index */
    uint32_t epoch, n, source;
    uint64_t step;
    struct tr_el_member m[TR_LWIP_MAX_WORLD];
    int      index;
    struct tr_lwip_addr table[TR_LWIP_MAX_WORLD]; /* the ring's addresses by index
                                    * (lw->cfg.table after a reform) */
    struct tr_el_member next[TR_LWIP_MAX_WORLD]; /* a VIEW being received */
    uint8_t  dead[TR_LWIP_MAX_WORLD];   /* this round: members known dead */
    uint8_t  answered[TR_LWIP_MAX_WORLD];  /* coordinating: members whose JOIN
                                    * was accepted (and this rank) */
    uint32_t probe_at[TR_LWIP_MAX_WORLD];  /* coordinating: next probe (sys_now) */
    int      probe_k;              /* coordinating: member being probed on ask, or -1 */
    uint32_t probe_next;           /* coordinating: round-robin start */
    int      following;            /* 1: in a round, following `coord` */
    int      coordinating;         /* 1: in a round, deciding it */
    int      joining;              /* 1: accepted by find, its VIEW comes on ask */
    uint32_t refusal;              /* find: the REPLY answer that refused it */
    uint32_t coord;                /* the coordinator of the round */
    struct tr_lwip_el_conn conn[TR_LWIP_EL_CONNS];
    struct tr_lwip_el_ask ask;
    uint32_t redirected;           /* JOINs answered NOT_COORD (statistics) */
};

/* What the last round decided, for the caller's messages and its reform. */
struct tr_lwip_elastic_round {
    int      verdict;              /* enum tr_el_verdict; TR_EL_GO on success */
    uint32_t epoch;                /* the new view's epoch */
    int      rank, world, source;  /* for tr_train_reform: my index in the new
                                    * view, its size, the source's index */
    uint64_t step;                 /* the source's position */
    uint32_t coordinator;          /* original rank that decided */
    uint32_t left[TR_LWIP_MAX_WORLD], n_left; /* original ranks that left */
    uint32_t answer;               /* a refusal's REPLY answer (TR_ERR_MISMATCH) */
    int      coordinated;          /* 1: this rank decided the round */
    struct tr_el_abort why;        /* verdict != TR_EL_GO: the counts */
    uint32_t rounds;               /* membership rounds the call ran */
    uint32_t ms;                   /* how long the call took */
};

/* Make lw (after tr_lwip_init, before tr_lwip_connect) a member of an
 * elastic job: the view of epoch 0 is lw's table (original rank = its rank,
 * world = its world, at most TR_LWIP_MAX_WORLD), its listener stays open.
 * Returns 0 or TR_ERR_INVAL. */
int tr_lwip_elastic_start(struct tr_lwip_elastic *el, const struct tr_lwip_elastic_config *cfg,
                          struct tr_lwip *lw);

/* After TR_TRAIN_LOST or TR_TRAIN_CHANGE: one membership round (see above),
 * then the new ring's links. Returns 0 with out filled (pass out->rank,
 * world, source to tr_train_reform; tr_lwip_transport's tp stays valid),
 * or: TR_ERR_CLOSED (the coordinator's ABORT: out->verdict, out->why),
 * TR_ERR_INVAL (not started, or closed),
 * TR_ERR_MISMATCH (refused: out->answer), TR_ERR_TIMEOUT (no coordinator
 * answered in time, or the new links never came up in 4 rounds),
 * TR_ERR_NOMEM (a view of more than TR_LWIP_MAX_WORLD), TR_ERR_PROTO,
 * TR_ERR_NOBUFS (lwIP's pools). */
int tr_lwip_elastic_reform(struct tr_lwip_elastic *el, uint64_t position,
                           struct tr_lwip_elastic_round *out);

/* A process started again (its ring's state lost), after
 * tr_lwip_elastic_start and instead of tr_lwip_connect: is its job running?
 * Asks the other ranks of the table in ascending order (following NOT_COORD
 * hints), each for at most wait_ms. Returns 1 (a coordinator accepted it:
 * tr_lwip_elastic_reform(el, 0, &round) next, which waits for the VIEW and
 * opens the links), 0 (no job is running: tr_lwip_connect as a fresh
 * start), TR_ERR_MISMATCH (refused: el->refusal, e.g. TR_EL_DUPLICATE, a
 * live member holds this rank), TR_ERR_TIMEOUT (a process took the JOIN but
 * no coordinator answered), TR_ERR_INVAL (not right after start). It does
 * not listen while it asks (a fresh job's peers find it absent). */
int tr_lwip_elastic_find(struct tr_lwip_elastic *el, uint32_t wait_ms);

/* Between steps (every rank may call it; only the view's lowest rank has
 * anything to do): answers what arrived, and returns how many processes
 * started again wait to be admitted (then ask for a change:
 * tr_train_request_change; the next round admits them). */
int tr_lwip_elastic_service(struct tr_lwip_elastic *el);

/* Close the membership connections, the listener and the ring links
 * (tr_lwip_close with linger_ms). */
void tr_lwip_elastic_close(struct tr_lwip_elastic *el, uint32_t linger_ms);

#endif /* TR_LWIP_H */
