/* tinyring: the POSIX port's elastic membership across processes.
 *
 * The parent forks one process per rank; each opens its ring (static table
 * or tcp://), adopts it with tr_posix_elastic_start and runs a small fake
 * training: per step one ring allreduce of {rank + 1, change wanted, step}
 * checked against the view's members, and a running sum as its "state".
 * A failed collective or an agreed change runs tr_posix_elastic_reform; the
 * state is then broadcast from the round's source, as the trainer does.
 * Workers report to the parent through one pipe (fixed-size records); the
 * parent kills, freezes and restarts them and checks the reports:
 *   1. 4 ranks, rank 2 SIGKILLed: the others form epoch 1 of 3, re-indexed,
 *      and their allreduces are right
 *   2. rank 0 SIGKILLed: rank 1 coordinates
 *   3. a killed rank started again finds the job (find = 1), the coordinator
 *      sees it, the ring grows back to 4 (static table; and tcp:// with
 *      rank 0 restarted, which finds the master port at rank 1)
 *   4. below min_ranks: every survivor gets the ABORT, TR_EL_BELOW_MIN
 *   5. a SIGSTOPped rank is dropped after timeout_ms, or at once once its
 *      heartbeats stop
 *   6. the round's time on loopback when the OS reports the death
 * and: a second process for a live rank refused; two of five killed at
 * once and 15 ms apart; ranks 0 and 1 of 4 killed (the half without rank 0
 * stops: NO_MAJORITY); a fresh job whose every process calls find first.
 *   test_elastic_posix two-of-five GAP_MS   runs that case alone
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "tr_comm.h"
#include "tr_error.h"
#include "tr_posix.h"

#define MAXW 8

enum { R_READY = 1, R_FIND, R_ROUND, R_ABORT, R_DONE, R_ERROR };

/* One report, written whole to the pipe (well under PIPE_BUF). */
struct report {
    int      kind;
    int      orig;                 /* original rank */
    int      rc;                   /* find's or reform's return */
    int      rank, world, source, verdict;
    uint32_t epoch, ms, coordinator, n_left, n_joined;
    uint32_t left[MAXW], joined[MAXW];
    uint32_t why_reason, why_joined, why_previous;
    uint64_t step;                 /* position (DONE: final step) */
    double   acc;                  /* DONE: the state */
    int      bad;                  /* allreduce results that were wrong */
    int      good;                 /* allreduce results checked right */
    int      fds;                  /* DONE: descriptors open after close - before start */
    char     msg[400];
};

/* What one worker does. */
struct job {
    int      world, tcp;
    struct tr_posix_endpoint table[MAXW];
    uint16_t master_port;
    unsigned min_ranks;
    uint32_t timeout_ms, comm_ms;
    uint32_t beat_ms;              /* tr_posix_elastic_config.beat_ms (0: heartbeats) */
    int      steps, step_ms;
    int      fresh;                /* find answered 0: start the job normally */
    uint32_t find_ms;              /* find's wait_ms (0: 5000) */
    int      quit_after_find;      /* accepted by find: exit at once */
    volatile int *stop;            /* shared with the parent: 1 = finish (the ranks
                                    * agree on it in a step's allreduce) */
    int      report_fd;
};

static uint64_t token;

static uint32_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint32_t)(ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

static void sleep_ms(int ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

static uint16_t free_port(void)
{
    struct sockaddr_in sa;
    socklen_t len = sizeof sa;
    int s = socket(AF_INET, SOCK_STREAM, 0);
    uint16_t p = 0;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (s >= 0 && bind(s, (struct sockaddr *)&sa, sizeof sa) == 0 &&
        getsockname(s, (struct sockaddr *)&sa, &len) == 0)
        p = ntohs(sa.sin_port);
    if (s >= 0)
        close(s);
    return p;
}

/* A free port none of used[0..n) has: each free_port() socket is closed
 * before the next call, so two calls may be given the same port. */
static uint16_t other_free_port(const uint16_t *used, int n)
{
    for (int tries = 0; tries < 100; tries++) {
        uint16_t p = free_port();
        int i = 0;
        while (i < n && used[i] != p)
            i++;
        if (p && i == n)
            return p;
    }
    return 0;
}

/* ---- the worker -------------------------------------------------------------- */

static void say(const struct job *j, struct report *r)
{
    if (write(j->report_fd, r, sizeof *r) != (ssize_t)sizeof *r)
        _exit(3);
}

static void say_error(const struct job *j, int orig, int rc, const char *what, const char *err)
{
    struct report r;
    memset(&r, 0, sizeof r);
    r.kind = R_ERROR;
    r.orig = orig;
    r.rc = rc;
    snprintf(r.msg, sizeof r.msg, "%s: %s", what, err);
    say(j, &r);
}

/* The ring of a fresh job: static table or tcp://, then elastic start. */
static int worker_open(const struct job *j, int orig, struct tr_posix_elastic *el,
                       struct tr_posix_elastic_config *ec, char *err, size_t errlen)
{
    struct tr_posix px;
    struct tr_posix_endpoint got[MAXW];
    int rc;
    if (j->tcp) {
        struct tr_posix_config pc;
        char url[64];
        tr_posix_config_default(&pc);
        snprintf(url, sizeof url, "tcp://127.0.0.1:%u", j->master_port);
        pc.init_method = url;
        pc.rank = orig;
        pc.world = j->world;
        pc.job_token = token;
        pc.table_out = got;
        rc = tr_posix_connect(&px, &pc, err, errlen);
        ec->table = got;
    } else {
        struct tr_posix_table_config tc;
        tr_posix_table_config_default(&tc);
        tc.table = j->table;
        tc.rank = orig;
        tc.world = j->world;
        tc.job_token = token;
        tc.timeout_ms = 10000;
        rc = tr_posix_connect_table(&px, &tc, err, errlen);
    }
    if (rc == 0)
        rc = tr_posix_elastic_start(el, ec, &px, err, errlen);
    return rc;
}

/* A communicator over the current view's ring, after hello. */
static int comm_open(const struct job *j, struct tr_posix_elastic *el, struct tr_comm *c,
                     struct tr_transport *tp, void *scratch, size_t size)
{
    struct tr_comm_config cc;
    int rc;
    memset(&cc, 0, sizeof cc);
    cc.rank = el->px.rank;
    cc.world = el->px.world;
    cc.timeout_ms = j->comm_ms;
    cc.segment_bytes = 4096;
    cc.job_token = token;
    cc.layout_hash = 0xe1a5u;
    tr_posix_transport(&el->px, tp);
    rc = tr_comm_init(c, &cc, cc.world > 1 ? tp : NULL, scratch, size);
    if (rc == 0)
        rc = tr_comm_hello_start(c);
    while (rc == TR_ERR_AGAIN) {     /* serving the port meanwhile, as an app does */
        tr_posix_elastic_service(el);
        rc = tr_comm_progress(c);
        if (rc == TR_ERR_AGAIN)
            tp->poll(tp->ctx, tr_comm_want(c), 20);
    }
    return rc;
}

/* The sum of (rank + 1) over the view's members: every allreduce's want. */
static float view_sum(const struct tr_el_view *v)
{
    float s = 0;
    uint32_t i;
    for (i = 0; i < v->n; i++)
        s += (float)(v->m[i].rank + 1);
    return s;
}

/* The worker's state: position and a running sum (the "model"). */
struct state {
    double   acc;
    uint64_t step;
    int      good, bad;
};

/* One reform: round, report, new communicator, the state from the source.
 * Returns 0, TR_ERR_AGAIN (the new ring failed at once: reform again), or
 * the round's error (reported: stop). */
static int worker_reform(const struct job *j, struct tr_posix_elastic *el, struct state *st,
                         struct tr_comm *c, struct tr_transport *tp, void *scratch,
                         size_t size)
{
    struct tr_posix_elastic_round out;
    struct report r;
    char err[256];
    int rc = tr_posix_elastic_reform(el, st->step, &out, err, sizeof err);
    memset(&r, 0, sizeof r);
    r.kind = rc == 0 ? R_ROUND : out.verdict != TR_EL_GO ? R_ABORT : R_ERROR;
    r.orig = (int)el->cfg.rank;
    r.rc = rc;
    r.rank = out.rank; r.world = out.world; r.source = out.source; r.verdict = out.verdict;
    r.epoch = out.epoch; r.ms = out.ms; r.coordinator = out.coordinator;
    r.n_left = out.n_left < MAXW ? out.n_left : MAXW;
    r.n_joined = out.n_joined < MAXW ? out.n_joined : MAXW;
    memcpy(r.left, out.left, r.n_left * sizeof r.left[0]);
    memcpy(r.joined, out.joined, r.n_joined * sizeof r.joined[0]);
    r.why_reason = out.why.reason; r.why_joined = out.why.joined;
    r.why_previous = out.why.previous;
    r.step = out.step;
    snprintf(r.msg, sizeof r.msg, "%s", rc < 0 ? err : "");
    say(j, &r);
    if (rc < 0)
        return rc;
    rc = comm_open(j, el, c, tp, scratch, size);
    if (rc == 0)
        rc = tr_broadcast(c, st, sizeof st->acc + sizeof st->step, out.source);
    return rc < 0 ? TR_ERR_AGAIN : 0;     /* the new ring failed: again */
}

/* One step: allreduce {rank+1, change, step}; checks it. Returns 1 when the
 * ranks agreed on a change, 0, or the collective's error. */
static int worker_step(const struct job *j, struct tr_posix_elastic *el, struct state *st,
                       struct tr_comm *c)
{
    float v[4];
    int waiting = tr_posix_elastic_service(el), rc;
    v[0] = (float)(el->cfg.rank + 1);
    v[1] = waiting > 0 ? 1.0f : 0.0f;
    v[2] = (float)st->step;
    v[3] = *j->stop ? 1.0f : 0.0f;
    rc = tr_allreduce(c, v, 4, TR_OP_SUM, TR_ALGO_RING);
    if (rc < 0)
        return rc;
    if (v[0] == view_sum(&el->view) && v[2] == (float)st->step * (float)el->view.n)
        st->good++;
    else
        st->bad++;
    st->acc += v[0];
    st->step++;
    if (v[3] > 0.0f)
        return 2;                    /* the parent said stop: all stop after this step */
    return v[1] > 0.0f;
}

/* Open descriptors of this process. */
static int fd_count(void)
{
    int n = 0, fd;
    for (fd = 0; fd < 1024; fd++)
        n += fcntl(fd, F_GETFD) >= 0;
    return n;
}

static int worker_run(const struct job *j, struct tr_posix_elastic *el, struct state *st,
                      int need_reform, int fds0)
{
    static uint8_t scratch[65536];
    struct tr_comm c;
    struct tr_transport tp;
    struct report r;
    int rc = need_reform ? 1 : comm_open(j, el, &c, &tp, scratch, sizeof scratch), rounds = 0;
    while ((int)st->step < j->steps) {
        if (rc != 0) {
            if (rounds++ == 10)
                return 1;
            rc = worker_reform(j, el, st, &c, &tp, scratch, sizeof scratch);
            if (rc == TR_ERR_AGAIN)            /* the new ring failed at once */
                rc = 1;
            else if (rc < 0)
                return 1;
            continue;
        }
        rc = worker_step(j, el, st, &c);
        if (rc == 2)
            break;
        sleep_ms(j->step_ms);
    }
    memset(&r, 0, sizeof r);
    r.kind = R_DONE;
    r.orig = (int)el->cfg.rank;
    r.world = (int)el->view.n;
    r.epoch = el->view.epoch;
    r.step = st->step;
    r.acc = st->acc;
    r.good = st->good;
    r.bad = st->bad;
    tr_posix_elastic_close(el);
    r.fds = fd_count() - fds0;
    say(j, &r);
    return 0;
}

static void worker_config(const struct job *j, int orig, struct tr_posix_elastic_config *ec)
{
    memset(ec, 0, sizeof *ec);
    ec->job_token = token;
    ec->rank = (uint32_t)orig;
    ec->world = (uint32_t)j->world;
    ec->table = j->tcp ? NULL : j->table;
    if (j->tcp) {                    /* what the job's command line names */
        struct tr_posix_config pc;
        char url[64], err[128];
        tr_posix_config_default(&pc);
        snprintf(url, sizeof url, "tcp://localhost:%u", j->master_port);
        pc.init_method = url;
        pc.rank = orig;
        pc.world = j->world;
        if (tr_posix_elastic_master(&pc, ec, err, sizeof err) < 0)
            _exit(4);
    }
    ec->min_ranks = j->min_ranks;
    ec->timeout_ms = j->timeout_ms;
    ec->beat_ms = j->beat_ms;
    ec->handshake_ms = 1000;
    ec->spin_us = 0;
}

/* A process of the job; again = started again (find first). */
static int worker(const struct job *j, int orig, int again)
{
    static struct tr_posix_elastic el;
    struct tr_posix_elastic_config ec;
    struct state st;
    struct report r;
    char err[256];
    int rc, fds0 = fd_count();
    memset(&st, 0, sizeof st);
    worker_config(j, orig, &ec);
    if (again) {
        uint32_t t0 = now_ms();
        rc = tr_posix_elastic_find(&el, &ec, j->find_ms ? j->find_ms : 5000, err, sizeof err);
        memset(&r, 0, sizeof r);
        r.kind = R_FIND;
        r.orig = orig;
        r.rc = rc;
        r.ms = now_ms() - t0;
        snprintf(r.msg, sizeof r.msg, "%s", rc < 0 ? err : "");
        say(j, &r);
        if (rc == 1 && j->quit_after_find)
            _exit(0);
        if (rc == 1)
            return worker_run(j, &el, &st, 1, fds0);
        if (rc < 0 || !j->fresh)
            return 1;
        /* no job running: start it, as the application does */
    }
    rc = worker_open(j, orig, &el, &ec, err, sizeof err);
    if (rc < 0) {
        say_error(j, orig, rc, "open", err);
        return 1;
    }
    memset(&r, 0, sizeof r);
    r.kind = R_READY;
    r.orig = orig;
    say(j, &r);
    return worker_run(j, &el, &st, 0, fds0);
}

/* ---- the parent ------------------------------------------------------------------ */

struct scene {
    struct job j;
    pid_t    pid[2 * MAXW];          /* [orig]; [MAXW + orig]: a second process */
    int      rd;                     /* the pipe's read end */
    struct report got[64];
    int      n;
};

/* A process of rank orig; again: started again (find first), in pid slot
 * `slot`. */
static pid_t spawn(struct scene *s, int orig, int again, int slot)
{
    pid_t p = fork();
    if (p == 0) {
        close(s->rd);
        _exit(worker(&s->j, orig, again));
    }
    s->pid[slot] = p;
    return p;
}

static void scene_begin(struct scene *s, int world, int tcp)
{
    uint16_t used[TR_POSIX_MAX_WORLD + 1];
    int fds[2], i;
    memset(s, 0, sizeof *s);
    if (pipe(fds) < 0)
        exit(2);
    s->rd = fds[0];
    s->j.report_fd = fds[1];
    s->j.world = world;
    s->j.tcp = tcp;
    s->j.master_port = free_port();
    used[0] = s->j.master_port;
    for (i = 0; i < world; i++) {
        s->j.table[i].addr = htonl(INADDR_LOOPBACK);
        s->j.table[i].port = used[i + 1] = other_free_port(used, i + 1);
    }
    s->j.stop = mmap(NULL, sizeof *s->j.stop, PROT_READ | PROT_WRITE,
                     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (s->j.stop == MAP_FAILED)
        exit(2);
    *s->j.stop = 0;
    s->j.min_ranks = 1;
    s->j.timeout_ms = 5000;
    s->j.comm_ms = 3000;
    s->j.steps = 4000;              /* at most: the parent stops the job */
    s->j.step_ms = 5;
}

static void scene_start(struct scene *s)
{
    int i;
    for (i = 0; i < s->j.world; i++)
        spawn(s, i, 0, i);
}

/* Reads reports until `count` of kind have come (from distinct senders
 * when several), or ms pass. Returns how many came. */
static int wait_for(struct scene *s, int kind, int count, int ms)
{
    uint32_t end = now_ms() + (uint32_t)ms;
    int have = 0, i;
    for (i = 0; i < s->n; i++)
        have += s->got[i].kind == kind;
    while (have < count && (int32_t)(end - now_ms()) > 0) {
        struct pollfd p = { s->rd, POLLIN, 0 };
        if (poll(&p, 1, (int)(end - now_ms())) <= 0)
            continue;
        if (s->n < 64 && read(s->rd, &s->got[s->n], sizeof s->got[0]) == sizeof s->got[0]) {
            if (s->got[s->n].kind == R_ERROR)
                fprintf(stderr, "  (rank %d says: %s)\n", s->got[s->n].orig, s->got[s->n].msg);
            if (getenv("TR_EL_DEBUG"))
                fprintf(stderr, "  [report kind %d rank %d rc %d epoch %u world %d ms %u: %s]\n",
                        s->got[s->n].kind, s->got[s->n].orig, s->got[s->n].rc,
                        s->got[s->n].epoch, s->got[s->n].world, s->got[s->n].ms,
                        s->got[s->n].msg);
            have += s->got[s->n++].kind == kind;
        }
    }
    return have;
}

/* The last report of kind from orig, or NULL. */
static const struct report *report_of(const struct scene *s, int kind, int orig)
{
    int i;
    for (i = s->n - 1; i >= 0; i--)
        if (s->got[i].kind == kind && s->got[i].orig == orig)
            return &s->got[i];
    return NULL;
}

static void scene_end(struct scene *s)
{
    int i;
    for (i = 0; i < 2 * MAXW; i++)
        if (s->pid[i] > 0) {
            kill(s->pid[i], SIGKILL);
            waitpid(s->pid[i], NULL, 0);
        }
    close(s->rd);
    close(s->j.report_fd);
    munmap((void *)s->j.stop, sizeof *s->j.stop);
}

static void kill_rank(struct scene *s, int orig, int sig)
{
    kill(s->pid[orig], sig);
    if (sig == SIGKILL) {
        waitpid(s->pid[orig], NULL, 0);
        s->pid[orig] = 0;
    }
}

/* The survivors' reports of the first round after a loss. */
static void check_round(const struct scene *s, const char *name, const int *alive, int n,
                        int lost, uint32_t epoch, uint32_t coord, uint32_t *max_ms)
{
    int i;
    *max_ms = 0;
    for (i = 0; i < n; i++) {
        const struct report *r = report_of(s, R_ROUND, alive[i]);
        TH_CHECK(r != NULL, "%s: rank %d reported no round", name, alive[i]);
        if (!r)
            continue;
        TH_CHECK(r->epoch == epoch && r->world == n && r->rank == i,
                 "%s: rank %d: epoch %u world %d index %d, want %u %d %d", name, alive[i],
                 r->epoch, r->world, r->rank, epoch, n, i);
        TH_CHECK(r->coordinator == coord, "%s: rank %d: coordinator %u, want %u", name,
                 alive[i], r->coordinator, coord);
        if (lost >= 0)
            TH_CHECK(r->n_left == 1 && r->left[0] == (uint32_t)lost,
                     "%s: rank %d: %u left (first %u), want rank %d", name, alive[i],
                     r->n_left, r->n_left ? r->left[0] : 0, lost);
        if (r->ms > *max_ms)
            *max_ms = r->ms;
    }
}

/* Every process in alive[] finished with world n, right allreduces and the
 * same state. */
static void check_done(struct scene *s, const char *name, const int *alive, int n)
{
    const struct report *r0;
    int i;
    *s->j.stop = 1;
    TH_CHECK(wait_for(s, R_DONE, n, 15000) >= n, "%s: not every rank finished", name);
    r0 = report_of(s, R_DONE, alive[0]);
    for (i = 0; i < n; i++) {
        const struct report *r = report_of(s, R_DONE, alive[i]);
        TH_CHECK(r && r->world == n && r->bad == 0 && r->good > 0,
                 "%s: rank %d finished with world %d, %d wrong / %d right allreduces", name,
                 alive[i], r ? r->world : -1, r ? r->bad : -1, r ? r->good : -1);
        TH_CHECK(r && r0 && r->acc == r0->acc && r->step == r0->step,
                 "%s: rank %d's state differs from rank %d's", name, alive[i], alive[0]);
        TH_CHECK(r && r->fds == 0, "%s: rank %d: %d descriptors left open after close", name,
                 alive[i], r ? r->fds : -1);
    }
}

/* 1, 2, 6: one rank SIGKILLed; the others form epoch 1 and go on. */
static void case_kill(int victim, uint32_t coord, uint32_t *ms)
{
    struct scene s;
    int alive[MAXW], n = 0, i;
    char name[64];
    snprintf(name, sizeof name, "kill rank %d of 4", victim);
    for (i = 0; i < 4; i++)
        if (i != victim)
            alive[n++] = i;
    scene_begin(&s, 4, 0);
    scene_start(&s);
    TH_CHECK(wait_for(&s, R_READY, 4, 10000) == 4, "%s: the ring did not form", name);
    sleep_ms(150);
    kill_rank(&s, victim, SIGKILL);
    TH_CHECK(wait_for(&s, R_ROUND, 3, 8000) == 3, "%s: not every survivor reformed", name);
    check_round(&s, name, alive, n, victim, 1, coord, ms);
    check_done(&s, name, alive, n);
    scene_end(&s);
}

/* A second process for live rank orig (static table): find refuses it. */
static void check_duplicate(struct scene *s, int orig)
{
    const struct report *f;
    uint32_t t0 = now_ms();
    spawn(s, orig, 1, MAXW + orig);
    wait_for(s, R_FIND, 1, 8000);
    f = report_of(s, R_FIND, orig);
    TH_CHECK(f && f->rc == TR_ERR_ADDRINUSE && strstr(f->msg, "is a live member of the job"),
             "a second rank %d: find returned %d (%s)", orig, f ? f->rc : -999,
             f ? f->msg : "no report");
    TH_CHECK(now_ms() - t0 < 2000, "a second rank %d: refused after %u ms", orig, now_ms() - t0);
    s->n = 0;                        /* forget the report: rank orig is a member */
}

/* Reports of kind so far. */
static int count_of(const struct scene *s, int kind)
{
    int i, n = 0;
    for (i = 0; i < s->n; i++)
        n += s->got[i].kind == kind;
    return n;
}

/* victim killed, then started again: the ring of 4 loses it (epoch e,
 * coordinator coord) and takes it back (epoch e + 1). */
static void lose_and_rejoin(struct scene *s, const char *name, int victim, uint32_t e,
                            uint32_t coord)
{
    const struct report *f;
    int alive[MAXW], n = 0, i, base = count_of(s, R_ROUND), finds = count_of(s, R_FIND);
    uint32_t ms;
    for (i = 0; i < 4; i++)
        if (i != victim)
            alive[n++] = i;
    kill_rank(s, victim, SIGKILL);
    TH_CHECK(wait_for(s, R_ROUND, base + 3, 8000) == base + 3,
             "%s: not every survivor reformed", name);
    check_round(s, name, alive, n, victim, e, coord, &ms);
    spawn(s, victim, 1, victim);
    wait_for(s, R_FIND, finds + 1, 8000);
    f = report_of(s, R_FIND, victim);
    TH_CHECK(f && f->rc == 1, "%s: find returned %d (%s)", name, f ? f->rc : -999,
             f ? f->msg : "no report");
    TH_CHECK(wait_for(s, R_ROUND, base + 7, 8000) == base + 7,
             "%s: the growing round did not reach all 4", name);
    for (i = 0; i < 4; i++) {
        const struct report *r = report_of(s, R_ROUND, i);
        TH_CHECK(r && r->epoch == e + 1 && r->world == 4 && r->rank == i,
                 "%s: rank %d: epoch %u world %d index %d, want %u 4 %d", name, i,
                 r ? r->epoch : 0, r ? r->world : 0, r ? r->rank : -1, e + 1, i);
        TH_CHECK(r && r->n_joined == 1 && r->joined[0] == (uint32_t)victim,
                 "%s: rank %d: %u joined, want rank %d", name, i, r ? r->n_joined : 0, victim);
    }
    printf("  %s: the round without it took %u ms, the growing round %u ms (rank 3's call)\n",
           name, ms, report_of(s, R_ROUND, 3) ? report_of(s, R_ROUND, 3)->ms : 0);
}

/* 3: a killed rank started again finds the job and the ring grows back.
 * tcp://: rank 0 (the master port's holder) first, found at rank 1, then
 * rank 1, found at rank 0 again (the port went back to it). */
static void case_rejoin(int tcp)
{
    static const int all[4] = { 0, 1, 2, 3 };
    struct scene s;
    scene_begin(&s, 4, tcp);
    scene_start(&s);
    TH_CHECK(wait_for(&s, R_READY, 4, 10000) == 4, "rejoin: the ring did not form");
    sleep_ms(150);
    if (!tcp) {
        check_duplicate(&s, 1);
        lose_and_rejoin(&s, "table: rank 2 killed and started again", 2, 1, 0);
    } else {
        lose_and_rejoin(&s, "tcp://: rank 0 killed and started again", 0, 1, 1);
        lose_and_rejoin(&s, "tcp://: then rank 1", 1, 3, 0);
    }
    check_done(&s, tcp ? "tcp:// rejoins" : "table rejoin", all, 4);
    scene_end(&s);
}

/* A fresh job whose every process asks find first (as a restarted one
 * would): nobody answers, each starts normally, the job runs. Rank `last`
 * starts 300 ms after the others: by then ranks that do not neighbour it
 * are up (static table) and serve their port, and ranks with their left
 * link leave their listener unread; a view that still names `last` keeps
 * its JOIN unanswered, so find hears nothing from a running job, waits its
 * wait_ms once (not once per entry) and says 0. */
static void case_fresh(int tcp, int world, int last)
{
    static const int all[MAXW] = { 0, 1, 2, 3, 4, 5, 6, 7 };
    struct scene s;
    const struct report *f;
    char name[64];
    int i, zero = 0;
    snprintf(name, sizeof name, "%s fresh job of %d, rank %d last", tcp ? "tcp://" : "table",
             world, last);
    scene_begin(&s, world, tcp);
    s.j.fresh = 1;
    s.j.find_ms = 1500;
    for (i = world - 1; i >= 0; i--) {
        if (i == last)
            continue;
        spawn(&s, i, 1, i);
        sleep_ms(30);
    }
    sleep_ms(300);
    spawn(&s, last, 1, last);
    wait_for(&s, R_FIND, world, 10000);
    for (i = 0; i < world; i++)
        zero += report_of(&s, R_FIND, i) && report_of(&s, R_FIND, i)->rc == 0;
    TH_CHECK(zero == world, "%s: find returned 0 on %d of %d ranks", name, zero, world);
    f = report_of(&s, R_FIND, last);
    if (f)
        printf("  %s: its find took %u ms (wait_ms 1500)\n", name, f->ms);
    TH_CHECK(f && f->ms < 1500u + 500u, "%s: its find took %u ms", name, f ? f->ms : 0);
    check_done(&s, name, all, world);
    scene_end(&s);
}

/* Waits (ms at most) until the last round of every rank in alive[] formed
 * a ring of n. Returns 1 when it did. */
static int wait_world(struct scene *s, const int *alive, int n, int ms)
{
    uint32_t end = now_ms() + (uint32_t)ms;
    for (;;) {
        int i, done = 0;
        for (i = 0; i < n; i++) {
            const struct report *r = report_of(s, R_ROUND, alive[i]);
            done += r && r->world == n;
        }
        if (done == n)
            return 1;
        if ((int32_t)(end - now_ms()) <= 0)
            return 0;
        wait_for(s, R_ROUND, count_of(s, R_ROUND) + 1, 100);
    }
}

/* Two of five killed gap_ms apart (the second may die during the first's
 * round or while the new ring opens its links): the other three end
 * together in one ring of 3 with the same state. */
static void case_two_of_five(int gap_ms)
{
    static const int alive[3] = { 0, 1, 3 };
    struct scene s;
    const struct report *r;
    char name[64];
    snprintf(name, sizeof name, "ranks 2 and 4 of 5 killed %d ms apart", gap_ms);
    scene_begin(&s, 5, 0);
    scene_start(&s);
    TH_CHECK(wait_for(&s, R_READY, 5, 10000) == 5, "%s: the ring did not form", name);
    sleep_ms(150);
    kill(s.pid[2], SIGKILL);
    if (gap_ms)
        sleep_ms(gap_ms);
    kill(s.pid[4], SIGKILL);
    TH_CHECK(wait_world(&s, alive, 3, 10000), "%s: no ring of the 3 others", name);
    check_done(&s, name, alive, 3);
    r = report_of(&s, R_DONE, 0);
    TH_CHECK(r && (r->epoch == 1 || r->epoch == 2), "%s: ended at epoch %u, want 1 or 2",
             name, r ? r->epoch : 0);
    printf("  %s: %s (epoch %u)\n", name, r && r->epoch == 1 ? "one round" : "two rounds",
           r ? r->epoch : 0);
    scene_end(&s);
}

/* A restarted process that dies as soon as it is accepted: the round
 * goes on without it (or the next one, when its links fail). */
static void case_joiner_dies(void)
{
    static const int alive[2] = { 0, 1 };
    struct scene s;
    const struct report *f;
    uint32_t ms;
    scene_begin(&s, 3, 0);
    scene_start(&s);
    TH_CHECK(wait_for(&s, R_READY, 3, 10000) == 3, "joiner dies: the ring did not form");
    sleep_ms(150);
    kill_rank(&s, 2, SIGKILL);
    TH_CHECK(wait_for(&s, R_ROUND, 2, 8000) == 2, "joiner dies: no round without rank 2");
    check_round(&s, "joiner dies", alive, 2, 2, 1, 0, &ms);
    s.j.quit_after_find = 1;
    spawn(&s, 2, 1, 2);
    wait_for(&s, R_FIND, 1, 8000);
    f = report_of(&s, R_FIND, 2);
    TH_CHECK(f && f->rc == 1, "joiner dies: find returned %d", f ? f->rc : -999);
    TH_CHECK(wait_for(&s, R_ROUND, 4, 8000) == 4, "joiner dies: no round after the find");
    check_done(&s, "joiner dies after find", alive, 2);
    f = report_of(&s, R_ROUND, 0);
    printf("  joiner dies after find: rank 0 ended at epoch %u; its last round took %u ms\n",
           report_of(&s, R_DONE, 0) ? report_of(&s, R_DONE, 0)->epoch : 0, f ? f->ms : 0);
    scene_end(&s);
}

/* A connection from the parent to e, or -1. */
static int dial(const struct tr_posix_endpoint *e)
{
    struct sockaddr_in sa;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = e->addr;
    sa.sin_port = htons(e->port);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* Bytes read from fd until EOF or ms (-1 if it stayed open). */
static int read_until_eof(int fd, uint8_t *buf, int cap, int ms)
{
    uint32_t end = now_ms() + (uint32_t)ms;
    int got = 0;
    while ((int32_t)(end - now_ms()) > 0) {
        struct pollfd p = { fd, POLLIN, 0 };
        ssize_t n;
        if (poll(&p, 1, (int)(end - now_ms())) <= 0)
            continue;
        n = recv(fd, buf + got, (size_t)(cap - got), 0);
        if (n <= 0)
            return got;
        got += (int)n;
        if (got == cap)
            return got;
    }
    return -1;
}

/* A joiner's JOIN for rank, with tok. */
static size_t join_bytes(uint8_t *out, uint64_t tok, uint32_t rank, const struct tr_posix_endpoint *e)
{
    struct tr_el_msg m;
    memset(&m, 0, sizeof m);
    m.type = TR_EL_JOIN;
    m.token = tok;
    m.epoch = TR_EL_ANY_EPOCH;
    m.join.rank = rank;
    m.join.flags = TR_EL_JOINER;
    m.join.addr = e->addr;
    m.join.port = e->port;
    return tr_el_encode(&m, out, TR_EL_MAX_BYTES);
}

/* Strangers on a running member's port never stall the job: garbage and
 * another job's JOIN are closed unanswered, silence after handshake_ms;
 * a JOIN sent one byte at a time is assembled and answered. */
static void case_strangers(void)
{
    static const int alive[3] = { 0, 1, 2 };
    struct scene s;
    uint8_t buf[TR_EL_MAX_BYTES];
    struct tr_el_msg m;
    size_t n, i;
    int silent, fd, got, ok;
    uint32_t ms;
    scene_begin(&s, 4, 0);
    scene_start(&s);
    TH_CHECK(wait_for(&s, R_READY, 4, 10000) == 4, "strangers: the ring did not form");
    silent = dial(&s.j.table[0]);
    fd = dial(&s.j.table[0]);
    TH_CHECK(fd >= 0 && write(fd, "GET / HTTP/1.0\r\n\r\n", 18) == 18 &&
             read_until_eof(fd, buf, sizeof buf, 3000) == 0, "strangers: garbage not closed");
    close(fd);
    fd = dial(&s.j.table[0]);
    n = join_bytes(buf, token ^ 1, 3, &s.j.table[3]);
    TH_CHECK(fd >= 0 && write(fd, buf, n) == (ssize_t)n &&
             read_until_eof(fd, buf, sizeof buf, 3000) == 0,
             "strangers: another job's JOIN was not closed unanswered");
    close(fd);
    TH_CHECK(silent >= 0 && read_until_eof(silent, buf, sizeof buf, 3000) == 0,
             "strangers: a silent connection was not closed after handshake_ms");
    close(silent);
    kill_rank(&s, 3, SIGKILL);
    TH_CHECK(wait_for(&s, R_ROUND, 3, 8000) == 3, "strangers: no round without rank 3");
    check_round(&s, "strangers", alive, 3, 3, 1, 0, &ms);
    fd = dial(&s.j.table[0]);
    n = join_bytes(buf, token, 3, &s.j.table[3]);
    for (i = 0, ok = fd >= 0; ok && i < n; i++) {      /* one byte every 10 ms */
        ok = write(fd, buf + i, 1) == 1;
        sleep_ms(10);
    }
    got = ok ? read_until_eof(fd, buf, TR_EL_HEAD_BYTES + TR_EL_REPLY_BYTES, 5000) : -2;
    TH_CHECK(got == TR_EL_HEAD_BYTES + TR_EL_REPLY_BYTES &&
             tr_el_decode(buf, (size_t)got, &m) == 0 && m.type == TR_EL_REPLY &&
             m.answer == TR_EL_ACCEPT && m.coord == 0,
             "strangers: a JOIN sent byte by byte was not accepted (%d bytes)", got);
    if (fd >= 0)
        close(fd);                    /* the fake joiner leaves */
    check_done(&s, "strangers", alive, 3);
    scene_end(&s);
}

/* 4: fewer survivors than min_ranks: every one of them gets the ABORT. */
static void case_below_min(void)
{
    static const int alive[3] = { 0, 1, 2 };
    struct scene s;
    int i;
    scene_begin(&s, 4, 0);
    s.j.min_ranks = 4;
    scene_start(&s);
    TH_CHECK(wait_for(&s, R_READY, 4, 10000) == 4, "below min: the ring did not form");
    sleep_ms(150);
    kill_rank(&s, 3, SIGKILL);
    TH_CHECK(wait_for(&s, R_ABORT, 3, 8000) == 3, "below min: not every survivor got ABORT");
    for (i = 0; i < 3; i++) {
        const struct report *r = report_of(&s, R_ABORT, alive[i]);
        TH_CHECK(r && r->verdict == TR_EL_BELOW_MIN && r->rc == TR_ERR_CLOSED &&
                 r->why_joined == 3 && r->why_previous == 4,
                 "below min: rank %d: verdict %d rc %d counts %u/%u", alive[i],
                 r ? r->verdict : -1, r ? r->rc : 0, r ? r->why_joined : 0,
                 r ? r->why_previous : 0);
        TH_CHECK(r && strstr(r->msg, "3 of 4 ranks left, below --min-ranks 4"),
                 "below min: rank %d said \"%s\"", alive[i], r ? r->msg : "");
    }
    if (report_of(&s, R_ABORT, 0))
        printf("  below min: rank 0 says: %s\n", report_of(&s, R_ABORT, 0)->msg);
    scene_end(&s);
}

/* Split rule: ranks 0 and 1 killed at once; 2 and 3 are half of the view
 * without its lowest rank, so they must not go on as the job. */
static void case_split(void)
{
    static const int alive[2] = { 2, 3 };
    struct scene s;
    int i;
    scene_begin(&s, 4, 0);
    scene_start(&s);
    TH_CHECK(wait_for(&s, R_READY, 4, 10000) == 4, "split: the ring did not form");
    sleep_ms(150);
    kill(s.pid[0], SIGKILL);
    kill(s.pid[1], SIGKILL);
    TH_CHECK(wait_for(&s, R_ABORT, 2, 8000) == 2, "split: ranks 2 and 3 did not both stop");
    for (i = 0; i < 2; i++) {
        const struct report *r = report_of(&s, R_ABORT, alive[i]);
        TH_CHECK(r && r->verdict == TR_EL_NO_MAJORITY && r->why_joined == 2 &&
                 r->why_previous == 4 && r->coordinator == 2 && strstr(r->msg, "not a majority"),
                 "split: rank %d: verdict %d, %u of %u, coordinator %u: %s", alive[i],
                 r ? r->verdict : -1, r ? r->why_joined : 0, r ? r->why_previous : 0,
                 r ? r->coordinator : 99, r ? r->msg : "no report");
    }
    TH_CHECK(report_of(&s, R_ROUND, 2) == NULL && report_of(&s, R_ROUND, 3) == NULL,
             "split: a minority formed a view");
    scene_end(&s);
}

/* 5: a frozen (SIGSTOPped) rank accepts connects but never answers.
 * Without heartbeats it is dropped after timeout_ms; with them (the
 * default) its silence is noticed after 500 ms and the round skips it at
 * once. */
static void case_frozen(int beats)
{
    static const int alive[3] = { 0, 1, 3 };
    const char *name = beats ? "frozen rank 2, heartbeats" : "frozen rank 2, no heartbeats";
    struct scene s;
    uint32_t ms, t0, dropped;
    scene_begin(&s, 4, 0);
    s.j.timeout_ms = 1500;
    s.j.comm_ms = 700;
    s.j.beat_ms = beats ? 0 : TR_POSIX_BEAT_OFF;
    scene_start(&s);
    TH_CHECK(wait_for(&s, R_READY, 4, 10000) == 4, "%s: the ring did not form", name);
    sleep_ms(150);
    t0 = now_ms();
    kill_rank(&s, 2, SIGSTOP);
    TH_CHECK(wait_for(&s, R_ROUND, 3, 10000) == 3, "%s: not every other rank reformed", name);
    dropped = now_ms() - t0;
    check_round(&s, name, alive, 3, 2, 1, 0, &ms);
    printf("  %s (timeout_ms 1500, collective timeout 700 ms): dropped %u ms after SIGSTOP, "
           "the round took %u ms\n", name, dropped, ms);
    if (beats)
        TH_CHECK(ms < 1000, "%s: the round took %u ms, want well under timeout_ms (1500)",
                 name, ms);
    else
        TH_CHECK(ms >= 1300 && ms < 4000, "%s: the round took %u ms, want about timeout_ms "
                 "(1500)", name, ms);
    kill(s.pid[2], SIGCONT);         /* it wakes up: the job went on without it */
    wait_for(&s, R_ERROR, 1, 8000);
    TH_CHECK(report_of(&s, R_ERROR, 2) && report_of(&s, R_ERROR, 2)->rc == TR_ERR_MISMATCH &&
             strstr(report_of(&s, R_ERROR, 2)->msg, "went on without it"),
             "%s woken up: %s", name, report_of(&s, R_ERROR, 2) ?
             report_of(&s, R_ERROR, 2)->msg : "no report (want EXCLUDED)");
    check_done(&s, name, alive, 3);
    scene_end(&s);
}

int main(int argc, char **argv)
{
    uint32_t ms2, ms0;
    char t[64];
    snprintf(t, sizeof t, "test-elastic-posix-%d", (int)getpid());
    token = tr_posix_token(t);
    signal(SIGPIPE, SIG_IGN);
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc == 3 && !strcmp(argv[1], "two-of-five")) {  /* repeat one case by hand */
        case_two_of_five(atoi(argv[2]));
        return th_report("posix-elastic-two-of-five");
    }
    if (argc == 5 && !strcmp(argv[1], "fresh")) {
        case_fresh(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
        return th_report("posix-elastic-fresh");
    }
    case_kill(2, 0, &ms2);
    case_kill(0, 1, &ms0);
    printf("  round after SIGKILL (loopback, slowest survivor): rank 2 killed %u ms, rank 0 "
           "killed %u ms\n", ms2, ms0);
    TH_CHECK(ms2 < 1000 && ms0 < 1000, "rounds after a death the OS reports: %u and %u ms, "
             "want < 1000", ms2, ms0);
    case_rejoin(0);
    case_rejoin(1);
    case_fresh(0, 4, 0);
    case_fresh(0, 5, 2);
    case_fresh(1, 4, 0);
    case_two_of_five(0);
    case_two_of_five(15);
    case_joiner_dies();
    case_strangers();
    case_below_min();
    case_split();
    case_frozen(0);
    case_frozen(1);
    return th_report("posix-elastic");
}
