/* tinyring: the POSIX TCP port (host processes).
 *
 * One call does the rendezvous and opens the two ring links; another fills a
 * struct tr_transport that core's collectives drive:
 *
 *   struct tr_posix_config pc;  struct tr_posix px;  struct tr_transport tp;
 *   char err[256];
 *   tr_posix_config_default(&pc);
 *   pc.init_method = "tcp://127.0.0.1:29500"; pc.rank = r; pc.world = n;
 *   pc.job_token = tr_posix_token("my-job");
 *   if (tr_posix_connect(&px, &pc, err, sizeof err) < 0) { print err; exit }
 *   tr_posix_transport(&px, &tp);     // then tr_comm_init(..., &tp, ...)
 *   ...
 *   tr_posix_close(&px);
 *
 * The caller owns struct tr_posix (no allocation in the port); the port uses
 * libc and prints nothing: every failure is a negative tr_err plus a message
 * in the caller's err buffer.
 *
 * IPv4 only. Linux/BSD sockets, poll(), CLOCK_MONOTONIC.
 *
 * Rendezvous (init_method "tcp://HOST:PORT" or "env://"):
 *   1. rank 0 listens on HOST:PORT (the master port); TR_ERR_ADDRINUSE if taken.
 *   2. every rank (rank 0 too) listens on its own port (listen_port, default
 *      ephemeral) on the selected local address (iface / addr / the address
 *      the master is reached from).
 *   3. every rank but 0 connects to the master, retrying until
 *      connect_timeout_ms, and sends a registration (below). Rank 0 registers
 *      itself internally.
 *   4. the master checks each registration within handshake_ms of the
 *      connection; garbage, silence or a wrong job token close that
 *      connection only (a wrong token gets a refusal first). A different
 *      world size or a rank registered twice aborts the job (TR_ERR_MISMATCH
 *      on every rank). When all `world` ranks have joined, the master sends
 *      every rank the full table; if join_timeout_ms passes first, it sends
 *      TR_ERR_TIMEOUT and the table of who joined, so every rank can name
 *      the missing ranks.
 *   5. each rank connects to its right neighbour's listening port and
 *      accepts its left neighbour; both sides exchange a link hello (token,
 *      rank, world) so the accepting side refuses anyone but its left
 *      neighbour of this job, again without disturbing the job.
 *   Core's tr_comm_hello then checks version, token, world and layout.
 *
 * Wire format (all integers little-endian, fixed size):
 *   registration, rank -> master, 32 bytes:
 *     "TRR1" | u32 version=1 | u64 job_token | u32 rank | u32 world |
 *     4 bytes IPv4 address (network order) | u16 listen port | u16 0
 *   answer, master -> rank, 24 bytes + n * 8:
 *     "TRT1" | i32 status (0 or a tr_err) | u32 world (the master's) |
 *     u32 reason (TR_POSIX_WHY_*) | u32 n | u32 0 |
 *     n entries: 4 bytes IPv4 (network order) | u16 port (0 = not joined) | u16 0
 *   link hello, both directions on a ring link: core/include/tr_link.h (24 bytes,
 *     "TRL1" | u32 version=1 | u64 job_token | u32 rank (sender) | u32 world).
 *   The connecting side (rank r -> rank r+1) sends first; the accepting side
 *   checks it and answers with its own. A well-formed hello from anyone else
 *   (another job, another world, the wrong rank) also gets the answer, then
 *   the connection is closed, so that sender can say why it was refused;
 *   garbage or silence is just closed.
 *
 * Static table (tr_posix_connect_table), for rings with boards, which have
 * no rendezvous client: every rank is given the same table of IPv4
 * address:port per rank; a rank listens on its own entry and does step 5
 * above directly (no master, no registration), retrying its right
 * neighbour until the deadline. The lwIP port speaks the same link hello, so board and host ranks mix in one ring.
 */
#ifndef TR_POSIX_H
#define TR_POSIX_H

#include <stddef.h>
#include <stdint.h>
#include "tr_transport.h"

#define TR_POSIX_MAX_WORLD   256     /* rendezvous table size bound */
#define TR_POSIX_MAX_MASTERS 4       /* tcp://H:P,H:P,...: rendezvous addresses */
#define TR_POSIX_VERSION     1u      /* of the registration */
#define TR_POSIX_REG_BYTES   32u
#define TR_POSIX_ANS_BYTES   24u

/* Why the master refused or aborted (answer field "reason"). */
enum tr_posix_why {
    TR_POSIX_WHY_NONE      = 0,
    TR_POSIX_WHY_TOKEN     = 1,   /* job token differs: not this job */
    TR_POSIX_WHY_WORLD     = 2,   /* world size differs */
    TR_POSIX_WHY_DUPLICATE = 3,   /* two processes claim the same rank */
    TR_POSIX_WHY_VERSION   = 4,   /* rendezvous protocol version differs */
    TR_POSIX_WHY_MISSING   = 5,   /* join deadline passed; table lists who joined */
    TR_POSIX_WHY_RANGE     = 6    /* rank out of range */
};

struct tr_posix_endpoint;           /* below */

struct tr_posix_config {
    const char *init_method;       /* "tcp://HOST:PORT" or "env://" (RANK,
                                    * WORLD_SIZE, MASTER_ADDR, MASTER_PORT;
                                    * rank/size also from OMPI_COMM_WORLD_RANK/
                                    * _SIZE or SLURM_PROCID/SLURM_NTASKS).
                                    * Not copied; read during connect only. */
    int         rank;              /* tcp://: 0..world-1; env://: ignored (-1) */
    int         world;             /* tcp://: 1..TR_POSIX_MAX_WORLD; env://: ignored */
    const char *iface;             /* listen on this interface's IPv4 address
                                    * (e.g. "eth0", "lo"); NULL = not chosen */
    const char *addr;              /* or on this local IPv4 address; NULL = not
                                    * chosen. Neither: the local address the
                                    * master is reached from. */
    uint16_t    listen_port;       /* this rank's ring listening port; 0 = ephemeral */
    uint64_t    job_token;         /* same on every rank of a job (tr_posix_token) */
    uint32_t    connect_timeout_ms;/* keep retrying the master until then;
                                    * 0 = TR_LINK_CONNECT_MS */
    uint32_t    join_timeout_ms;   /* all ranks joined and links up by then;
                                    * 0 = TR_LINK_JOIN_MS */
    uint32_t    handshake_ms;      /* a connection must introduce itself within
                                    * this (registration or link hello);
                                    * 0 = TR_LINK_HANDSHAKE_MS */
    int         sndbuf;            /* SO_SNDBUF bytes on ring links; 0 = default
                                    * (TR_POSIX_DEFAULT_SOCKBUF), < 0 = kernel autotuning */
    int         rcvbuf;            /* SO_RCVBUF bytes, same convention; the
                                    * default also clamps the window offered
                                    * off loopback (TR_POSIX_DEFAULT_WINDOW) */
    uint32_t    spin_us;           /* transport poll(): re-check without sleeping
                                    * for up to this long before it sleeps (saves
                                    * a wake-up when the neighbour answers fast;
                                    * burns the core meanwhile); 0 = sleep at once;
                                    * TR_POSIX_SPIN_AUTO (the default): see
                                    * tr_posix_spin_for */
    int         local_ranks;       /* ranks of this job on this host; 0 = from
                                    * LOCAL_WORLD_SIZE (torchrun),
                                    * OMPI_COMM_WORLD_LOCAL_SIZE (Open MPI) or
                                    * SLURM_NTASKS_PER_NODE, else unknown */
    struct tr_posix_endpoint *table_out; /* optional, world entries (caller's):
                                    * filled by tr_posix_connect on success with
                                    * every rank's listening address from the
                                    * rendezvous answer (what an elastic run's
                                    * tr_posix_elastic_config.table wants);
                                    * NULL = not wanted */
};

#define TR_POSIX_SPIN_AUTO   0xFFFFFFFFu
#define TR_POSIX_SPIN_US     1000u   /* what AUTO spins when cores are free */

#define TR_POSIX_DEFAULT_SOCKBUF (1024 * 1024)   /* SO_SNDBUF/SO_RCVBUF of ring links */
/* TCP_WINDOW_CLAMP of ring links off loopback with the default rcvbuf: the
 * most a peer may have in flight. 32 full frames at a 1500-byte MTU: the
 * bandwidth-delay product of a LAN up to 1 Gbit/s at 0.37 ms round trip,
 * and below the 50 ms queue of a 10 Mbit/s link (test/testnet.sh), which a
 * larger burst overflowed. */
#define TR_POSIX_DEFAULT_WINDOW (32 * 1448)

/* One rank's listening address. */
struct tr_posix_endpoint {
    uint32_t addr;                 /* IPv4, network order */
    uint16_t port;                 /* TCP port, host order */
};

/* A job without rendezvous: every rank's address is known in advance. */
struct tr_posix_table_config {
    const struct tr_posix_endpoint *table; /* world entries, the same on every
                                    * rank; entry `rank` is where this rank
                                    * listens (an address of this host, a
                                    * fixed port, not 0). Not copied; read
                                    * during connect only. */
    int         rank;              /* 0..world-1 */
    int         world;             /* 1..TR_POSIX_MAX_WORLD */
    uint64_t    job_token;         /* same on every rank of a job (tr_posix_token) */
    uint32_t    timeout_ms;        /* both links up by then, counted from the
                                    * call (the right neighbour is retried
                                    * every 50 ms until then: start order
                                    * and booting boards do not matter);
                                    * 0 = TR_LINK_JOIN_MS */
    uint32_t    handshake_ms;      /* an accepted connection must send its link
                                    * hello within this; 0 = TR_LINK_HANDSHAKE_MS */
    int         sndbuf;            /* as in struct tr_posix_config */
    int         rcvbuf;            /* as in struct tr_posix_config */
    uint32_t    spin_us;           /* as in struct tr_posix_config */
    int         local_ranks;       /* as in struct tr_posix_config */
};

/* Caller-owned state of one rank's port. Fields are read-only for callers. */
struct tr_posix {
    int      rank;                 /* this rank (from config or environment) */
    int      world;                /* world size */
    int      fd[2];                /* ring links: fd[TR_LEFT], fd[TR_RIGHT];
                                    * -1 when world == 1 or closed */
    uint32_t addr;                 /* local IPv4 (network order) it listened on */
    uint16_t port;                 /* local ring listening port it used */
    uint64_t job_token;            /* copied from config */
    uint32_t peer_addr[2];         /* IPv4 of the left / right neighbour */
    uint16_t peer_port[2];         /* their listening ports */
    uint32_t spin_us;              /* copied from config (0 when filled by hand) */
    int      beat_on, beat_fd;     /* elastic heartbeats (tr_posix_elastic): when
                                    * beat_on, poll() also watches beat_fd, which
                                    * turns readable once a member of the view is
                                    * declared dead, and then fails with
                                    * TR_ERR_TIMEOUT (0 when filled by hand: off) */
};

/* The spin the port will use for cfg: spin_us itself unless it is
 * TR_POSIX_SPIN_AUTO; then TR_POSIX_SPIN_US when the ranks on this host
 * (local_ranks, or the launcher's environment) are known and no more than
 * the online CPUs, so the core a waiting rank burns is nobody else's (as
 * MPI's shared-memory transports busy-poll); else 0, since an oversubscribed
 * or unknown host needs the core for the rank it is waiting on
 * (port/posix/README.md has what spinning saves). */
uint32_t tr_posix_spin_for(const struct tr_posix_config *cfg);

/* Sets every field to its default (init_method NULL, rank/world -1,
 * spin_us TR_POSIX_SPIN_AUTO). */
void tr_posix_config_default(struct tr_posix_config *cfg);

/* A job token from any string (FNV-1a 64; never 0). NULL or "" gives the
 * token of "" so jobs without a token still agree with each other. */
uint64_t tr_posix_token(const char *s);

/* Rendezvous and open the ring links. Returns 0, or a negative tr_err with a
 * one-line message in err (always NUL-terminated when errlen > 0):
 *   TR_ERR_INVAL      bad init_method, rank, world, environment, interface
 *   TR_ERR_ADDRINUSE  the master port (rank 0) or listen_port is taken
 *   TR_ERR_UNREACH    master not reachable before connect_timeout_ms
 *   TR_ERR_MISMATCH   world size or job token differ, rank claimed twice
 *   TR_ERR_TIMEOUT    ranks never joined (named in the message), or a
 *                     neighbour never connected
 *   TR_ERR_CLOSED     the master or a neighbour died during rendezvous
 *   TR_ERR_IO         any other socket failure (errno text in the message)
 * On failure every socket is closed; px->rank/world are still set. */
int tr_posix_connect(struct tr_posix *px, const struct tr_posix_config *cfg,
                     char *err, size_t errlen);

/* Sets every field of a table config to its default (table NULL, rank/world
 * -1, spin_us TR_POSIX_SPIN_AUTO, the rest 0). */
void tr_posix_table_config_default(struct tr_posix_table_config *cfg);

/* Parse "A.B.C.D:PORT" (dotted IPv4, port 1..65535) into e. Returns 0 or
 * TR_ERR_INVAL with a message in err. */
int tr_posix_endpoint_parse(struct tr_posix_endpoint *e, const char *s,
                            char *err, size_t errlen);

/* Open the ring links from a static table: listen on table[rank], connect to
 * table[rank+1] (retrying until timeout_ms) and accept table[rank-1], with
 * the link hello on both (strangers, other jobs and wrong ranks on the
 * listening port are refused and the wait goes on). Returns 0 or a negative
 * tr_err with a one-line message in err:
 *   TR_ERR_INVAL      bad rank, world or table (port 0, two ranks on one
 *                     address:port)
 *   TR_ERR_ADDRINUSE  this rank's table port is taken
 *   TR_ERR_UNREACH    this rank's table address is not one of this host's
 *   TR_ERR_TIMEOUT    a neighbour never came (its rank and address named;
 *                     a refused hello of another job is mentioned)
 *   TR_ERR_MISMATCH   the right neighbour answered as another job (token),
 *                     another world or another rank
 *   TR_ERR_CLOSED     the right neighbour closed during the hello
 *   TR_ERR_IO         any other socket failure
 * On failure every socket is closed; px->rank/world are still set. Use
 * tr_posix_transport and tr_posix_close as after tr_posix_connect. */
int tr_posix_connect_table(struct tr_posix *px, const struct tr_posix_table_config *cfg,
                           char *err, size_t errlen);

/* Fill tp so core drives px's two links. tp->ctx = px. */
void tr_posix_transport(struct tr_posix *px, struct tr_transport *tp);

/* Close both links (idempotent), gracefully: shutdown for writing, then
 * discard what arrives until each neighbour closes too (at most 2 s), so no
 * neighbour loses the last bytes of the last collective to a reset. */
void tr_posix_close(struct tr_posix *px);

/* Check cfg's init method as tr_posix_connect would (URL, master port and
 * host, env:// variables, rank and world) without connecting; rank and
 * world (from the environment for env://) into *rank, *world. Returns 0 or
 * TR_ERR_INVAL with the message tr_posix_connect would give. */
int tr_posix_config_check(const struct tr_posix_config *cfg, int *rank, int *world,
                          char *err, size_t errlen);

/* Rank and world for env:// without connecting (what connect would use).
 * Returns 0 or TR_ERR_INVAL with a message. */
int tr_posix_env_rank(int *rank, int *world, char *err, size_t errlen);

/* ---- elastic membership (issue 12) ----------------------------------------
 *
 * A job whose ring survives a lost process and takes a restarted one back.
 * Each process keeps its original rank (0..world-1) for the whole job; the
 * ring of the moment is a view (core/include/tr_elastic.h): an epoch and its members
 * in ascending original rank, a member's ring rank being its index. The
 * membership messages (JOIN, REPLY, VIEW, ABORT) travel on each process's
 * listening port, the one its ring links are accepted on, kept open for the
 * whole run; a tcp:// job's master port is served by the coordinator (the
 * view's lowest rank) so that a restarted process finds the job there.
 *
 *   tr_posix_connect_table(&px, &tc, ...)    or tr_posix_connect with table_out
 *   tr_posix_elastic_start(&el, &ec, &px, ...)
 *   for each step:  train over tr_posix_transport(&el.px, &tp);
 *                   if (tr_posix_elastic_service(&el) > 0) ask for a change;
 *                   on a failed collective or an agreed change:
 *                   tr_posix_elastic_reform(&el, position, &round, ...)
 *   tr_posix_elastic_close(&el);
 *
 * A process started again with the job's command line calls
 * tr_posix_elastic_find first: 1 = a running job accepted it (then
 * tr_posix_elastic_reform), 0 = no job is running (start normally).
 * port/posix/README.md has the protocol, its deadlines and the split rule. */
#include <pthread.h>
#include "tr_elastic.h"

struct tr_posix_elastic_config {
    uint64_t job_token;            /* the job's token (tr_posix_token), the same on
                                    * every process; membership messages with
                                    * another token are closed unanswered */
    uint32_t rank;                 /* this process's original rank, 0..world-1 */
    uint32_t world;                /* the job's original world, 1..TR_POSIX_MAX_WORLD */
    const struct tr_posix_endpoint *table; /* world entries: every original rank's
                                    * listening address (the static table, or
                                    * tr_posix_config.table_out). NULL for a
                                    * process that joins a tcp:// job (it learns
                                    * the addresses from the VIEW). Not copied;
                                    * read only during start and find. */
    uint32_t listen_addr;          /* table == NULL (a tcp:// joiner): where it
                                    * listens, IPv4 network order; 0 = every
                                    * address, and the others reach it at the
                                    * address the coordinator saw its JOIN from */
    uint16_t listen_port;          /* ... and its port; 0 = ephemeral */
    uint32_t master_addr;          /* tcp:// (env://) jobs, members and joiners
                                    * alike: the rendezvous address (network
                                    * order; tr_posix_elastic_master); find asks
                                    * there, the coordinator serves it. 0 = none
                                    * (static table) */
    uint16_t master_port;          /* its port, host order */
    struct tr_posix_endpoint master_more[TR_POSIX_MAX_MASTERS - 1];
    unsigned n_master_more;        /* tcp://H:P,H2:P2,...: the further addresses,
                                    * for a job whose rank 0 (process or host)
                                    * may be gone when a process comes back. The
                                    * coordinator serves each one its host owns
                                    * (beside master_addr, which it serves as
                                    * before); find asks them all, in turn */
    unsigned min_ranks;            /* a view with fewer members is not formed
                                    * (ABORT, TR_EL_BELOW_MIN); 0 is taken as 1 */
    uint32_t timeout_ms;           /* a member that has not answered a round by
                                    * then (from the round's start) is dropped;
                                    * 0 = TR_EL_DEFAULT_TIMEOUT_MS */
    uint32_t handshake_ms;         /* a connection must send its JOIN within this;
                                    * a coordinator that becomes one late still
                                    * waits this long for the others; the new
                                    * ring's links must be up within it (else a
                                    * member died after the VIEW: another round);
                                    * 0 = TR_EL_DEFAULT_HANDSHAKE_MS */
    int      sndbuf;               /* as in struct tr_posix_table_config */
    int      rcvbuf;
    uint32_t spin_us;
    int      local_ranks;
    uint32_t beat_ms;              /* heartbeat period (below); 0 = TR_POSIX_BEAT_MS,
                                    * TR_POSIX_BEAT_OFF = no heartbeats (a frozen
                                    * member is then dropped only at timeout_ms) */
    uint32_t beat_dead_ms;         /* a member heard from before and silent this
                                    * long is dead; 0 = TR_POSIX_BEAT_DEAD_MS */
};

/* Heartbeats. A thread of each member sends a 24-byte UDP datagram
 * ("TRH1" | u32 rank | u64 job_token | u32 epoch | u16 port | u16 flags) every
 * beat_ms to every other member of its view, from and to the member's
 * listening port number (UDP: the TCP listener's port, same number), and
 * stamps what it receives. It runs while the main thread computes a step, so
 * a busy rank keeps beating; SIGSTOP or a lost host stop it (a process that
 * closes sends flags 1 first: its links, not its silence, tell the rest).
 * Where the process may, the thread runs at real-time priority 1 (SCHED_RR).
 * A member that was heard at least once and then stays silent beat_dead_ms
 * (plus however late the judging thread itself lately woke: a starved host
 * starves the senders too) is declared dead: the ring's poll() fails
 * (TR_ERR_TIMEOUT) once nothing is left to move on the links, and the
 * membership round skips it at once instead of waiting timeout_ms for it. A
 * member never heard (a port without heartbeats: lwIP, boards) is judged by
 * timeout_ms only. */
#define TR_POSIX_BEAT_MS      50u
#define TR_POSIX_BEAT_DEAD_MS 500u
#define TR_POSIX_BEAT_OFF     0xFFFFFFFFu

/* What the last round decided, for the caller's messages and its resync. */
struct tr_posix_elastic_round {
    int      verdict;              /* enum tr_el_verdict; TR_EL_GO on success */
    uint32_t epoch;                /* the new view's epoch (GO), else the one refused */
    int      rank, world, source;  /* my index in the new view, its size, the index
                                    * of the member whose state is the latest (pass
                                    * them to tr_train_reform) */
    uint64_t step;                 /* the source's position (its JOIN's step) */
    uint32_t left[TR_EL_MAX_MEMBERS], n_left;     /* original ranks of the view before
                                    * the call that are not in the new one */
    uint32_t joined[TR_EL_MAX_MEMBERS], n_joined; /* original ranks new in this view
                                    * (processes started again) */
    uint32_t coordinator;          /* original rank that decided */
    struct tr_el_abort why;        /* the counts, when verdict != TR_EL_GO */
    uint32_t ms;                   /* how long the call took */
};

#define TR_POSIX_EL_CONNS (TR_POSIX_MAX_WORLD + 16)   /* connections held at once */

/* A connection on the listening or master port that is sending a JOIN, or
 * whose JOIN waits for a round (internal; read-only). */
struct tr_posix_el_conn {
    int      fd;                   /* -1: free slot */
    uint32_t since;                /* accepted at (ms, CLOCK_MONOTONIC) */
    uint8_t  state;                /* 0 reading, 1 JOIN whole (pending), 2 accepted
                                    * in the running round */
    uint8_t  got;                  /* bytes of buf so far */
    uint8_t  buf[TR_EL_HEAD_BYTES + TR_EL_JOIN_BYTES];
    uint32_t epoch;                /* the JOIN's epoch, once whole */
    struct tr_el_join join;        /* the JOIN, once whole (addr 0: the peer's) */
};

/* The heartbeat thread's state (internal; read-only). */
struct tr_posix_beat {
    int      fd;                   /* UDP on the listening port; -1: no heartbeats */
    int      wake[2];              /* pipe: readable once a member is declared dead */
    int      stop[2];              /* pipe: the thread ends when it is readable */
    int      running;              /* the thread runs (mu, thread valid) */
    pthread_t thread;
    pthread_mutex_t mu;            /* guards the rest */
    uint32_t period_ms, dead_ms;
    uint32_t epoch, n, index;      /* the view beaten to (n = 0: none yet) */
    struct tr_el_member m[TR_EL_MAX_MEMBERS];
    uint32_t last[TR_EL_MAX_MEMBERS];   /* ms of the latest datagram from m[k] */
    uint8_t  heard[TR_EL_MAX_MEMBERS];  /* m[k] beats (heard at least once) */
    uint8_t  dead[TR_EL_MAX_MEMBERS];   /* declared dead */
    uint32_t dead_rank;            /* the first member declared dead in this view, */
    uint32_t dead_silent_ms;       /* ... how long it had been silent then */
    uint32_t max_gap_ms;           /* the longest silence of a member not declared dead */
    int      realtime;             /* the thread got SCHED_RR (else it runs as the process) */
    uint32_t prev_n;               /* the view before the latest change: its members' */
    uint32_t prev_rank[TR_EL_MAX_MEMBERS];  /* ranks, */
    uint32_t prev_last[TR_EL_MAX_MEMBERS];  /* last datagram (ms), */
    uint8_t  prev_heard[TR_EL_MAX_MEMBERS]; /* and whether they beat */
};

/* Caller-owned state of one process's membership (about 37 KiB, most of it
 * the pending connections). Fields are read-only for callers. */
struct tr_posix_elastic {
    struct tr_posix_elastic_config cfg;  /* copied (table not used after start/find) */
    struct tr_posix px;            /* the current ring's links: tr_posix_transport(&el->px,
                                    * &tp). px.rank/world are the ring's (index, view.n);
                                    * px.job_token is the job's (cfg.job_token) */
    struct tr_el_view view;        /* the current view (n = 0 after find, before reform) */
    int      index;                /* this process's index in view; -1 before a VIEW */
    int      listen_fd;            /* kept open for the whole run: link hellos
                                    * and membership messages */
    int      master_fd[TR_POSIX_MAX_MASTERS]; /* tcp://: the master ports
                                    * (master_addr, then master_more), served by
                                    * the coordinator where it can bind them; -1 */
    uint32_t my_addr;              /* where this process listens (its JOIN's address) */
    uint16_t my_port;
    int      coord_fd;             /* after find: the connection whose coordinator
                                    * ACCEPTed this process; else -1 */
    uint32_t coord_rank;           /* that coordinator's original rank */
    uint32_t master_retry;         /* next attempt to bind the master port (ms) */
    struct tr_posix_el_conn conn[TR_POSIX_EL_CONNS];
    /* coordinating: a joiner admitted whose rank the next round drops (it
     * never opened its links, or died at once) is barred for bar_ms (4 s,
     * doubling to 60 s): its JOINs wait unanswered meanwhile, so a JOIN that
     * cannot follow through costs the ring one failed round now and then,
     * never a stall (by original rank) */
    uint32_t admitted[TR_POSIX_MAX_WORLD];  /* epoch + 1 of the view that took it in, 0 */
    uint32_t bar_until[TR_POSIX_MAX_WORLD]; /* ms; 0 = not barred */
    uint32_t bar_ms[TR_POSIX_MAX_WORLD];    /* the last bar's length, 0 = none yet */
    struct tr_posix_beat beat;
};

/* A process of a running job: adopts the ring px that tr_posix_connect or
 * tr_posix_connect_table just opened (moved into el->px; *px is left closed),
 * view = epoch 0 from cfg->table, listens again on table[rank] (SO_REUSEADDR;
 * the connect call closed its own listener), and takes the master port when
 * master_addr is given, this rank coordinates and the port can be bound.
 * Returns 0, TR_ERR_INVAL (bad config, px not of this rank and world),
 * TR_ERR_ADDRINUSE, TR_ERR_IO; on failure el is closed and *px untouched. */
int tr_posix_elastic_start(struct tr_posix_elastic *el, const struct tr_posix_elastic_config *cfg,
                           struct tr_posix *px, char *err, size_t errlen);

/* A process started (again) with the job's command line: is a running job
 * there? Sends JOIN (TR_EL_JOINER, epoch TR_EL_ANY_EPOCH, step 0) to
 * master_addr:port (tcp://) or to every other entry of the table at once
 * (static table; a NOT_COORD answer names the entry to ask again), waiting
 * wait_ms at most. A running job answers within a step or two; a fresh
 * job's ranks never do (a fresh static job's last rank waits wait_ms here
 * once: keep it well under the connect and collective timeouts). Returns
 *   1  a coordinator ACCEPTed: el is set up and listening; call
 *      tr_posix_elastic_reform next (it waits for the VIEW, opens the links);
 *   0  no running job answered (refused, or closed unanswered, as a fresh
 *      job's rendezvous or link listener does): el is closed, start normally;
 *   TR_ERR_MISMATCH  DUPLICATE ("rank r is a live member of the job") or
 *      EXCLUDED (rank not of this job), message in err;
 *   TR_ERR_ADDRINUSE static table: this rank's entry is held, by a live
 *      member of the same rank ("rank r is a live member of the job") or
 *      another process (checked first, by a bind that never listens); a
 *      tcp:// joiner of a live rank learns DUPLICATE at the next round;
 *   TR_ERR_TIMEOUT   a job answered but no coordinator accepted within wait_ms
 *      (a coordinator accepts a joiner when the round starts: wait_ms must
 *      cover a training step);
 *   TR_ERR_INVAL, TR_ERR_IO.  On < 0 el is closed. */
int tr_posix_elastic_find(struct tr_posix_elastic *el, const struct tr_posix_elastic_config *cfg,
                          uint32_t wait_ms, char *err, size_t errlen);

/* Between training steps, never blocking: accepts on listen_fd/master_fd and
 * reads JOINs (partial reads kept; garbage, another job's token and silence
 * past handshake_ms closed, unanswered). Whole JOINs are kept unanswered
 * for the next round (a member's JOIN of this epoch means a round started
 * elsewhere: this process's ring fails soon). A non-coordinator answers a
 * joiner NOT_COORD (hint view.m[0].rank) and closes. The coordinator of a
 * tcp:// job retries binding the master port (every 100 ms at most).
 * Returns the number of pending joiners whose rank is not a member of the
 * view when this process coordinates (view.m[0] is it), else 0: the caller
 * then asks every rank for a change (tr_train_request_change). */
int tr_posix_elastic_service(struct tr_posix_elastic *el);

/* A membership round. Blocking; each coordinator tried costs at most about
 * timeout_ms + 2 handshake_ms, and the call loops by itself when the new
 * ring's links fail to open. Closes the ring links (the ring is broken), then
 *  - a member asks the view's members in ascending rank (a refused connect
 *    or no REPLY within timeout_ms + handshake_ms: that one is dead, next;
 *    closed unanswered: again after 20 ms) with JOIN{view.epoch, step =
 *    position}; NOT_COORD(hint) sends it to hint; ACCEPT: it waits for VIEW
 *    or ABORT on that connection (closed: it searches again). Reaching
 *    itself, it coordinates:
 *  - the coordinator accepts every valid JOIN at once (another epoch: STALE,
 *    or EXCLUDED for a rank the view dropped; a second process for a
 *    member's rank: DUPLICATE; a joiner whose rank is still a member waits
 *    for a later round), until every member answered, or each missing one
 *    is known dead (its listening port refuses a probe connect), or
 *    timeout_ms from the round's start (handshake_ms from becoming the
 *    coordinator, when later: a frozen process is dropped then); decides
 *    with tr_el_decide and sends VIEW or ABORT to everyone it accepted;
 *  - on GO: el->view, el->index, and the new ring's links over listen_fd
 *    (link token tr_el_link_token(job_token, epoch)); a failure there starts
 *    another round. The new coordinator takes the master port (tcp://).
 * position: the caller's state ordinal (0 = holds no state; larger = further),
 * sent as JOIN.step; the member with the largest is the source.
 * Returns 0 with *out filled (rank, world, source for tr_train_reform), or
 *   TR_ERR_CLOSED    ABORT: out->verdict TR_EL_NO_MAJORITY or TR_EL_BELOW_MIN,
 *                    out->why the counts, err e.g. "membership: 1 of 4 ranks
 *                    left, below --min-ranks 2 ..."; also a joiner whose
 *                    coordinator closed before the VIEW (find again)
 *   TR_ERR_TIMEOUT   no coordinator answered in time
 *   TR_ERR_MISMATCH  STALE/EXCLUDED/DUPLICATE: this process was dropped, or
 *                    its rank is claimed twice
 *   TR_ERR_IO, TR_ERR_PROTO.
 * Also for a process after tr_posix_elastic_find returned 1 (it waits for
 * its VIEW; position is ignored: it holds no state). */
int tr_posix_elastic_reform(struct tr_posix_elastic *el, uint64_t position,
                            struct tr_posix_elastic_round *out, char *err, size_t errlen);

/* What the heartbeats found in the current view: 1 with the original rank of
 * the first member declared dead and how long it had been silent then (ms),
 * else 0. Read it before tr_posix_elastic_reform, which starts a new view. */
int tr_posix_elastic_detected(struct tr_posix_elastic *el, uint32_t *rank, uint32_t *silent_ms);

/* The port's clock (CLOCK_MONOTONIC, ms; wraps at 2^32). */
uint32_t tr_posix_elastic_clock_ms(void);

/* When original rank `rank`, a member of the view before the latest change,
 * was last heard (tr_posix_elastic_clock_ms time): 1 with *at, or 0 (it
 * never beat, or no such member). With the moment the ring was lost, the
 * time it took to notice that rank stopped (its last sign of life to the
 * lost ring: the detection time, at most one beat_ms more than since it
 * stopped). */
int tr_posix_elastic_last_beat(struct tr_posix_elastic *el, uint32_t rank, uint32_t *at);

/* The longest a live member of any view so far went without being heard
 * (ms): how close the heartbeats came to a false alarm. */
uint32_t tr_posix_elastic_beat_gap(struct tr_posix_elastic *el);

/* Closes the links (gracefully, as tr_posix_close), pending connections,
 * listen_fd, master_fd. Idempotent. */
void tr_posix_elastic_close(struct tr_posix_elastic *el);

/* The master addresses that cfg's init method names ("tcp://HOST:PORT" or
 * "tcp://HOST:PORT,HOST2:PORT2,..." up to TR_POSIX_MAX_MASTERS, or env://'s
 * MASTER_ADDR and MASTER_PORT), resolved as tr_posix_connect does, into
 * ec->master_addr/_port (the first) and ec->master_more/n_master_more.
 * Returns 0 or TR_ERR_INVAL with a message (as tr_posix_connect's). */
int tr_posix_elastic_master(const struct tr_posix_config *cfg,
                            struct tr_posix_elastic_config *ec, char *err, size_t errlen);

#endif /* TR_POSIX_H */
