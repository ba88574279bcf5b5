/* tinyring POSIX port: internals shared by its files (not installed). */
#ifndef TR_POSIX_INT_H
#define TR_POSIX_INT_H

#include <stddef.h>
#include <stdint.h>
#include "tr_posix.h"

/* Rendezvous and static tables are both arrays of struct tr_posix_endpoint
 * (tr_posix.h); in the master's table port 0 means "not joined". */

/* A registration, decoded. */
struct tr_posix_intro {
    uint32_t version;     /* TR_POSIX_VERSION */
    uint64_t token;
    uint32_t rank;
    uint32_t world;
    uint32_t addr;        /* the rank's listening IPv4 address, network order */
    uint16_t port;        /* its listening port (never 0) */
};

/* Resolved parameters of one connect call. */
struct tr_posix_plan {
    int      rank, world;
    uint32_t master_addr;          /* network order */
    uint16_t master_port;
    struct tr_posix_endpoint more[TR_POSIX_MAX_MASTERS - 1]; /* tcp://'s further */
    int      n_more;               /* addresses (only --elastic's find uses them) */
    uint32_t local_addr;           /* chosen listening address, 0 = not yet */
    int      any_addr;             /* rank 0 without iface/addr: listen on every
                                    * address; each rank is told the address it
                                    * reached the master at (see rdv finish) */
    uint16_t listen_port;
    uint64_t token;
    uint32_t connect_ms, join_ms, handshake_ms;
    int      sndbuf, rcvbuf;
};

/* tr_posix_util.c */
int      tr_posix_fail(char *err, size_t errlen, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
uint32_t tr_posix_clock_ms(void);
int      tr_posix_left_ms(uint32_t deadline);       /* ms until deadline, >= 0 */
int      tr_posix_errno_code(int e);                /* errno -> tr_err */
int      tr_posix_nonblock(int fd);
void     tr_posix_link_opts(int fd, int sndbuf, int rcvbuf);
/* TCP_WINDOW_CLAMP of TR_POSIX_DEFAULT_WINDOW on a link socket not yet
 * connected (listening, or before connect) whose address (network order: the
 * one it listens on, or the peer's) is not loopback or any, with the
 * default rcvbuf (0); otherwise nothing (tr_posix_util.c). */
void     tr_posix_link_clamp(int fd, uint32_t addr, int rcvbuf);
const char *tr_posix_ntoa(uint32_t addr, char *buf, size_t len);
void     tr_posix_close_fd(int *fd);
/* Whole-buffer transfers on a non-blocking socket, bounded by a deadline
 * (tr_posix_clock_ms based): 0, TR_ERR_TIMEOUT, TR_ERR_CLOSED or TR_ERR_IO. */
int      tr_posix_send_all(int fd, const void *buf, size_t len, uint32_t deadline);
int      tr_posix_recv_all(int fd, void *buf, size_t len, uint32_t deadline);

/* tr_posix_wire.c */
void tr_posix_put_reg(uint8_t out[TR_POSIX_REG_BYTES], const struct tr_posix_intro *r);
int  tr_posix_get_reg(struct tr_posix_intro *r, const uint8_t in[TR_POSIX_REG_BYTES]);
void tr_posix_put_ans(uint8_t *out, int status, uint32_t world, uint32_t why,
                      const struct tr_posix_endpoint *table, uint32_t n);
int  tr_posix_get_ans_head(const uint8_t in[TR_POSIX_ANS_BYTES], int *status,
                           uint32_t *world, uint32_t *why, uint32_t *n);
/* Reserved fields must be 0: TR_ERR_PROTO otherwise (a message that decodes
 * encodes back to the same bytes). */
int  tr_posix_get_ans_entry(const uint8_t in[8], struct tr_posix_endpoint *p);

/* tr_posix_addr.c */
int tr_posix_plan_make(struct tr_posix_plan *pl, const struct tr_posix_config *cfg,
                       char *err, size_t errlen);
int tr_posix_pick_local(struct tr_posix_plan *pl, const struct tr_posix_config *cfg,
                        int master_fd, char *err, size_t errlen);

/* tr_posix_rdv.c: the master (rank 0) and the client side. Both fill table. */
int tr_posix_master_open(const struct tr_posix_plan *pl, int *fd, char *err, size_t errlen);
int tr_posix_master_serve(const struct tr_posix_plan *pl, int master_fd,
                          struct tr_posix_endpoint *table, char *err, size_t errlen);
int tr_posix_master_dial(const struct tr_posix_plan *pl, int *fd, char *err, size_t errlen);
int tr_posix_client_join(const struct tr_posix_plan *pl, int fd,
                         struct tr_posix_endpoint *table, char *err, size_t errlen);

/* tr_posix_link.c: listening socket and the two ring links. */
int tr_posix_listen_open(const struct tr_posix_plan *pl, int *fd, uint16_t *port,
                         char *err, size_t errlen);
int tr_posix_links_open(struct tr_posix *px, const struct tr_posix_plan *pl,
                        int listen_fd, const struct tr_posix_endpoint *table,
                        char *err, size_t errlen);

/* tr_posix_elastic.c: the membership's connections, shared with the round
 * (tr_posix_elastic_round.c). */
struct pollfd;
enum { TR_POSIX_EL_READING = 0, TR_POSIX_EL_PENDING = 1, TR_POSIX_EL_ACCEPTED = 2 };
#define TR_POSIX_EL_SLOT_LISTEN (-1)   /* poll set entries that are not conns */
#define TR_POSIX_EL_SLOT_MASTER (-2)
#define TR_POSIX_EL_SLOT_OTHER  (-3)   /* and below: the caller's own */
/* entries tr_posix_el_poll_set may fill: conns, listen_fd, master_fd[] */
#define TR_POSIX_EL_POLL (TR_POSIX_EL_CONNS + 1 + TR_POSIX_MAX_MASTERS)
/* tr_posix_el_ask's outcomes besides 0 (answered) */
#define TR_EL_ASK_DEAD   1             /* refused or unreachable: not there */
#define TR_EL_ASK_CLOSED 2             /* closed unanswered */
#define TR_EL_ASK_SILENT 3             /* took the JOIN, no answer in time */
#define TR_POSIX_EL_SLICE_MS 50        /* the round's waits look at the heartbeats this often */

void tr_posix_el_sleep(int ms);
int  tr_posix_el_is_coord(const struct tr_posix_elastic *el);
int  tr_posix_el_send(int fd, const struct tr_el_msg *m, uint32_t deadline);
void tr_posix_el_join_msg(const struct tr_posix_elastic *el, struct tr_el_msg *m,
                          uint32_t epoch, uint32_t flags, uint64_t step);
void tr_posix_el_reply(const struct tr_posix_elastic *el, int *fd, uint32_t answer,
                       uint32_t coord);
int  tr_posix_el_read_step(int fd, uint8_t *buf, size_t *got, size_t *total,
                           uint64_t token, struct tr_el_msg *m);
int  tr_posix_el_dial(uint32_t addr, uint16_t port, int *fd);
/* rank: the original rank asked (its heartbeats' death ends the wait), or
 * TR_EL_NO_RANK */
int  tr_posix_el_ask(struct tr_posix_elastic *el, uint32_t rank, uint32_t addr, uint16_t port,
                     const struct tr_el_msg *m, uint32_t dial_end, uint32_t reply_end,
                     int *fd, struct tr_el_msg *reply);
/* pending conns (and the listeners when `listeners`) into pf/slot, closing
 * the silent ones and shortening *wait to the next such deadline; then act
 * on revents. A member waiting for its VIEW leaves the listeners alone: the
 * new ring's link hellos may arrive there before the VIEW does. */
int  tr_posix_el_poll_set(struct tr_posix_elastic *el, struct pollfd *pf, int *slot, int *wait,
                          int listeners);
void tr_posix_el_pump(struct tr_posix_elastic *el, const struct pollfd *pf, const int *slot,
                      int np);
void tr_posix_el_redirect(struct tr_posix_elastic *el, uint32_t hint, int all);
void tr_posix_el_master(struct tr_posix_elastic *el, int force);

/* A joiner of original rank `rank` waits (tr_posix.h, bar_until). */
int  tr_posix_el_barred(const struct tr_posix_elastic *el, uint32_t rank);

/* tr_posix_beat.c: the heartbeat thread (tr_posix.h). init: defaults, no
 * thread (el_init); view: el->view/index are new (starts the thread the
 * first time; every member gets a full allowance); dead: the heartbeats
 * declared original rank `rank` of the view dead; stop: joins the thread. */
void tr_posix_beat_init(struct tr_posix_elastic *el);
void tr_posix_beat_view(struct tr_posix_elastic *el);
int  tr_posix_beat_dead(struct tr_posix_elastic *el, uint32_t rank);
/* 1 once rank's heartbeats were heard in this view (a POSIX process; an
 * lwIP rank or a board never beats: only its links and --timeout judge it) */
int  tr_posix_beat_heard(struct tr_posix_elastic *el, uint32_t rank);
void tr_posix_beat_stop(struct tr_posix_elastic *el);

#endif /* TR_POSIX_INT_H */
