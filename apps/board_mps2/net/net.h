/* tinyring board_mps2: the ring links the trainer runs over. net_lwip.c
 * brings up the LAN9118, lwIP (NO_SYS=1) and the tr_lwip port; net_none.c
 * is the image without a network (a single rank). */
#ifndef BOARD_NET_H
#define BOARD_NET_H

#include "settings.h"
#include "tr_transport.h"

/* 0: an image without --elastic (net_lwip.c keeps no membership state:
 * 1.5 KiB of RAM the 256 KiB image needs; board.mk) */
#ifndef BOARD_ELASTIC
#define BOARD_ELASTIC 1
#endif

/* Where this board is in the ring: board_net_up's and board_net_reform's
 * answer (the arguments of tr_train_init and tr_train_reform). */
struct board_ring {
    int rank, world;     /* this board's index in the ring, the ring's size */
    int source;          /* the index of the rank whose state the ring takes */
    int joined;          /* board_net_up: 1 = it joined a running job (take
                          * the state: tr_train_reform from source) */
    int holds_latest;    /* board_net_reform failed below --min-ranks and
                          * this board holds the latest state (write the
                          * checkpoint) */
};

/* This board's address is s->table[s->rank] (netmask /24, no gateway).
 * Connects both ring links (waiting up to --timeout for the neighbours).
 * With --elastic it first looks for a running job of its table (a board
 * does not know it rebooted): for a moment per rank, asked again while a
 * member holds the question unanswered (the ring has not dropped this
 * board's old life yet, or a fresh ring waits for it) for up to --timeout
 * / 4; no job taking it: the fresh start.
 * Returns the transport with *ring filled, or 0 after printing why. */
const struct tr_transport *board_net_up(const struct board_settings *s,
                                        struct board_ring *ring);

/* --elastic (board_net_up kept its listener): after TR_TRAIN_LOST or
 * TR_TRAIN_CHANGE, the membership round and the new ring's links over the
 * same transport (port/lwip: tr_lwip_elastic_reform; this rank may
 * coordinate). Returns 0 with ring's rank, world and source for
 * tr_train_reform, or a tr_err after printing why (ring->holds_latest
 * set when the job stopped below --min-ranks and this board holds the
 * state to keep). */
int board_net_reform(uint64_t position, struct board_ring *ring);

/* --elastic, between steps: > 0 when a process started again waits to be
 * admitted (ask for a change: tr_train_request_change). */
int board_net_service(void);

/* One line of counters (frames, errors, interrupts) for the log. */
void board_net_report(void);

/* Drive the stack until what was sent is acknowledged (at most linger_ms),
 * then close the links. */
void board_net_down(uint32_t linger_ms);

#endif /* BOARD_NET_H */
