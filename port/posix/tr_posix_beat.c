/* tinyring POSIX port: the elastic ring's heartbeats (tr_posix.h has the
 * datagram and the rule). A thread per process, so that a rank computing a
 * step still beats and only a stopped process (SIGSTOP, a lost host, a dead
 * kernel) falls silent. The thread owns the UDP socket; the main thread
 * hands it each new view and asks it who is dead, under beat.mu. It never
 * touches a ring link: a death is announced through the wake pipe, which the
 * transport's poll() watches (tr_posix_io.c), so every descriptor of the
 * ring stays the main thread's alone. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tr_error.h"
#include "tr_posix_int.h"
#include "tr_util.h"

#define BEAT_BYTES 24u
static const uint8_t beat_magic[4] = { 'T', 'R', 'H', '1' };

#define BEAT_BYE   1u      /* flags: the sender leaves (closes its links itself) */

static void put_beat(struct tr_posix_elastic *el, uint32_t epoch, uint16_t flags, uint8_t *b)
{
    memcpy(b, beat_magic, 4);
    tr_put_le32(b + 4, el->cfg.rank);
    tr_put_le64(b + 8, el->cfg.job_token);
    tr_put_le32(b + 16, epoch);
    tr_put_le16(b + 20, el->my_port);
    tr_put_le16(b + 22, flags);
}

/* One datagram from port `from`: stamps its sender if it is a member of the
 * view (this job's token, the member's rank and listening port). */
static void take_beat(struct tr_posix_beat *b, uint64_t token, const uint8_t *d, ssize_t n,
                      uint16_t from, uint32_t now)
{
    uint32_t rank, k, flags;
    if (n != (ssize_t)BEAT_BYTES || memcmp(d, beat_magic, 4) != 0 ||
        tr_get_le64(d + 8) != token || tr_get_le16(d + 20) != from ||
        ((flags = tr_get_le16(d + 22)) & ~BEAT_BYE))
        return;
    rank = tr_get_le32(d + 4);
    for (k = 0; k < b->n; k++) {
        if (b->m[k].rank != rank || b->m[k].port != from || k == b->index || b->dead[k])
            continue;
        if (flags & BEAT_BYE) {      /* it ends by itself: its links say so, not silence */
            b->heard[k] = 0;
            continue;
        }
        if (b->heard[k] && now - b->last[k] > b->max_gap_ms)
            b->max_gap_ms = now - b->last[k];
        b->last[k] = now;
        b->heard[k] = 1;
    }
}

/* Declares the members silent longer than dead_ms + slack dead; the first
 * one wakes the ring. slack: how late this thread itself has lately woken (a
 * host that kept it off the CPU kept the senders off it too). */
static void judge(struct tr_posix_beat *b, uint32_t now, uint32_t slack)
{
    uint32_t k;
    for (k = 0; k < b->n; k++) {
        uint32_t silent = now - b->last[k];
        if (k == b->index || !b->heard[k] || b->dead[k] || silent <= b->dead_ms + slack)
            continue;
        b->dead[k] = 1;
        if (b->dead_rank == TR_EL_NO_RANK) {
            char one = 1;
            b->dead_rank = b->m[k].rank;
            b->dead_silent_ms = silent;
            if (write(b->wake[1], &one, 1) < 0) {
                /* a full pipe is already readable */
            }
        }
    }
}

static void send_beats(struct tr_posix_elastic *el, struct tr_posix_beat *b, int bye)
{
    uint8_t d[BEAT_BYTES];
    uint32_t k;
    put_beat(el, b->epoch, bye ? BEAT_BYE : 0, d);
    for (k = 0; k < b->n; k++) {
        struct sockaddr_in sa;
        if (k == b->index || b->dead[k] || !b->m[k].port)
            continue;
        memset(&sa, 0, sizeof sa);
        sa.sin_family = AF_INET;
        sa.sin_addr.s_addr = b->m[k].addr ? b->m[k].addr : htonl(INADDR_LOOPBACK);
        sa.sin_port = htons(b->m[k].port);
        /* best effort: a full buffer or an ICMP error costs one beat */
        sendto(b->fd, d, sizeof d, MSG_DONTWAIT | MSG_NOSIGNAL, (struct sockaddr *)&sa,
               sizeof sa);
    }
}

/* Reads every datagram waiting, then judges: a thread that was itself kept
 * off the CPU sees what arrived meanwhile before it calls anyone silent. */
static void drain(struct tr_posix_elastic *el, struct tr_posix_beat *b)
{
    for (;;) {
        uint8_t d[BEAT_BYTES + 1];
        struct sockaddr_in sa;
        socklen_t len = sizeof sa;
        ssize_t n = recvfrom(b->fd, d, sizeof d, MSG_DONTWAIT, (struct sockaddr *)&sa, &len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            break;
        pthread_mutex_lock(&b->mu);
        take_beat(b, el->cfg.job_token, d, n, ntohs(sa.sin_port), tr_posix_clock_ms());
        pthread_mutex_unlock(&b->mu);
    }
}

static void *beat_main(void *arg)
{
    struct tr_posix_elastic *el = arg;
    struct tr_posix_beat *b = &el->beat;
    uint32_t next = tr_posix_clock_ms(), slack = 0, prev = next;
    struct sched_param sp;
    /* Where the process may (root, CAP_SYS_NICE, RLIMIT_RTPRIO), beat at the
     * lowest real-time priority, as corosync's totem does: the thread wakes
     * for microseconds every beat_ms, and then no load on the host delays
     * it. Else it stays as it is, and dead_ms plus the slack must cover its
     * scheduling delays. */
    memset(&sp, 0, sizeof sp);
    sp.sched_priority = 1;
    b->realtime = pthread_setschedparam(pthread_self(), SCHED_RR, &sp) == 0;
    for (;;) {
        struct pollfd pf[2];
        uint32_t now = tr_posix_clock_ms(), late;
        int wait = (int32_t)(next - now) > 0 ? (int)(next - now) : 0, rc;
        if (wait > (int)b->dead_ms / 4)
            wait = (int)b->dead_ms / 4;        /* judge often enough */
        pf[0].fd = b->fd; pf[0].events = POLLIN; pf[0].revents = 0;
        pf[1].fd = b->stop[0]; pf[1].events = POLLIN; pf[1].revents = 0;
        rc = poll(pf, 2, wait);
        if (rc > 0 && pf[1].revents)
            break;
        drain(el, b);
        /* how late this wake-up came (a timeout due at now + wait); the
         * slack decays by the time that passes */
        late = rc == 0 && (int32_t)(tr_posix_clock_ms() - now - (uint32_t)wait) > 0
             ? tr_posix_clock_ms() - now - (uint32_t)wait : 0;
        now = tr_posix_clock_ms();
        slack = slack > now - prev ? slack - (now - prev) : 0;
        if (late > slack)
            slack = late;
        prev = now;
        pthread_mutex_lock(&b->mu);
        if ((int32_t)(now - next) >= 0) {
            send_beats(el, b, 0);
            next = (int32_t)(now - next) > (int32_t)b->period_ms ? now + b->period_ms
                                                                 : next + b->period_ms;
        }
        judge(b, now, slack);
        pthread_mutex_unlock(&b->mu);
    }
    return NULL;
}

static int pipe_open(int p[2])
{
    if (pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0) {
        p[0] = p[1] = -1;
        return -1;
    }
    return 0;
}

/* The UDP socket on this process's listening address and port (any address
 * when that one is not this host's). -1 when it cannot be had: this
 * process then neither beats nor judges, and its peers judge it by the
 * membership timeout. */
static int beat_socket(const struct tr_posix_elastic *el)
{
    struct sockaddr_in sa;
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), b;
    if (s < 0)
        return -1;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = el->my_addr;
    sa.sin_port = htons(el->my_port);
    b = bind(s, (struct sockaddr *)&sa, sizeof sa);
    if (b < 0 && errno == EADDRNOTAVAIL) {
        sa.sin_addr.s_addr = htonl(INADDR_ANY);
        b = bind(s, (struct sockaddr *)&sa, sizeof sa);
    }
    if (b < 0) {
        close(s);
        return -1;
    }
    return s;
}

void tr_posix_beat_init(struct tr_posix_elastic *el)
{
    struct tr_posix_beat *b = &el->beat;
    b->fd = b->wake[0] = b->wake[1] = b->stop[0] = b->stop[1] = -1;
    b->running = 0;
    b->n = 0;
    b->dead_rank = TR_EL_NO_RANK;
    b->period_ms = el->cfg.beat_ms ? el->cfg.beat_ms : TR_POSIX_BEAT_MS;
    b->dead_ms = el->cfg.beat_dead_ms ? el->cfg.beat_dead_ms : TR_POSIX_BEAT_DEAD_MS;
    if (b->dead_ms < 4)
        b->dead_ms = 4;
}

/* Starts the thread (first view); 0 when it runs, else heartbeats stay off. */
static int beat_start(struct tr_posix_elastic *el)
{
    struct tr_posix_beat *b = &el->beat;
    if (el->cfg.beat_ms == TR_POSIX_BEAT_OFF || !el->my_port)
        return -1;
    if ((b->fd = beat_socket(el)) < 0 || pipe_open(b->wake) < 0 || pipe_open(b->stop) < 0 ||
        pthread_mutex_init(&b->mu, NULL) != 0)
        goto off;
    if (pthread_create(&b->thread, NULL, beat_main, el) != 0) {
        pthread_mutex_destroy(&b->mu);
        goto off;
    }
    b->running = 1;
    return 0;
off:
    tr_posix_close_fd(&b->fd);
    tr_posix_close_fd(&b->wake[0]); tr_posix_close_fd(&b->wake[1]);
    tr_posix_close_fd(&b->stop[0]); tr_posix_close_fd(&b->stop[1]);
    return -1;
}

void tr_posix_beat_view(struct tr_posix_elastic *el)
{
    struct tr_posix_beat *b = &el->beat;
    uint32_t now = tr_posix_clock_ms(), k, j;
    uint8_t heard[TR_EL_MAX_MEMBERS];
    char sink[64];
    if (!b->running && beat_start(el) < 0)
        return;
    pthread_mutex_lock(&b->mu);
    for (k = 0; k < el->view.n; k++) {
        heard[k] = 0;
        for (j = 0; j < b->n && !heard[k]; j++)    /* the same process, heard before */
            heard[k] = b->heard[j] && !b->dead[j] && b->m[j].rank == el->view.m[k].rank &&
                       b->m[j].port == el->view.m[k].port;
    }
    b->prev_n = b->n;
    for (k = 0; k < b->n; k++) {
        b->prev_rank[k] = b->m[k].rank;
        b->prev_last[k] = b->last[k];
        b->prev_heard[k] = b->heard[k];
    }
    memcpy(b->heard, heard, el->view.n);
    b->epoch = el->view.epoch;
    b->n = el->view.n;
    b->index = (uint32_t)el->index;
    memcpy(b->m, el->view.m, el->view.n * sizeof b->m[0]);
    for (k = 0; k < b->n; k++) {
        b->last[k] = now;                      /* everyone starts with a full allowance */
        b->dead[k] = 0;
    }
    b->dead_rank = TR_EL_NO_RANK;
    while (read(b->wake[0], sink, sizeof sink) > 0)
        ;
    pthread_mutex_unlock(&b->mu);
    el->px.beat_on = 1;
    el->px.beat_fd = b->wake[0];
}

/* original rank's dead[] or heard[] flag in the current view; 0 without
 * heartbeats */
static int beat_flag(struct tr_posix_elastic *el, uint32_t rank, int heard)
{
    struct tr_posix_beat *b = &el->beat;
    uint32_t k;
    int v = 0;
    if (!b->running)
        return 0;
    pthread_mutex_lock(&b->mu);
    for (k = 0; k < b->n; k++)
        if (b->m[k].rank == rank)
            v = heard ? b->heard[k] : b->dead[k];
    pthread_mutex_unlock(&b->mu);
    return v;
}

int tr_posix_beat_dead(struct tr_posix_elastic *el, uint32_t rank)
{
    return beat_flag(el, rank, 0);
}

int tr_posix_beat_heard(struct tr_posix_elastic *el, uint32_t rank)
{
    return beat_flag(el, rank, 1);
}

void tr_posix_beat_stop(struct tr_posix_elastic *el)
{
    struct tr_posix_beat *b = &el->beat;
    if (b->running) {
        char one = 1;
        pthread_mutex_lock(&b->mu);
        send_beats(el, b, 1);                  /* leaving: judge me by my links */
        pthread_mutex_unlock(&b->mu);
        if (write(b->stop[1], &one, 1) < 0) {
            /* cannot fail on an empty pipe */
        }
        pthread_join(b->thread, NULL);
        pthread_mutex_destroy(&b->mu);
        b->running = 0;
        tr_posix_close_fd(&b->fd);
        tr_posix_close_fd(&b->wake[0]); tr_posix_close_fd(&b->wake[1]);
        tr_posix_close_fd(&b->stop[0]); tr_posix_close_fd(&b->stop[1]);
    }
    b->n = 0;
    el->px.beat_on = 0;
}

int tr_posix_elastic_detected(struct tr_posix_elastic *el, uint32_t *rank, uint32_t *silent_ms)
{
    struct tr_posix_beat *b = &el->beat;
    int found = 0;
    if (!b->running)
        return 0;
    pthread_mutex_lock(&b->mu);
    if (b->dead_rank != TR_EL_NO_RANK) {
        *rank = b->dead_rank;
        *silent_ms = b->dead_silent_ms;
        found = 1;
    }
    pthread_mutex_unlock(&b->mu);
    return found;
}

uint32_t tr_posix_elastic_beat_gap(struct tr_posix_elastic *el)
{
    struct tr_posix_beat *b = &el->beat;
    uint32_t g;
    if (!b->running)
        return 0;
    pthread_mutex_lock(&b->mu);
    g = b->max_gap_ms;
    pthread_mutex_unlock(&b->mu);
    return g;
}

uint32_t tr_posix_elastic_clock_ms(void)
{
    return tr_posix_clock_ms();
}

int tr_posix_elastic_last_beat(struct tr_posix_elastic *el, uint32_t rank, uint32_t *at)
{
    struct tr_posix_beat *b = &el->beat;
    uint32_t k;
    int found = 0;
    if (!b->running)
        return 0;
    pthread_mutex_lock(&b->mu);
    for (k = 0; k < b->prev_n; k++)
        if (b->prev_rank[k] == rank && b->prev_heard[k]) {
            *at = b->prev_last[k];
            found = 1;
        }
    pthread_mutex_unlock(&b->mu);
    return found;
}
