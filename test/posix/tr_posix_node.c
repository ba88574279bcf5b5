/* tinyring: one rank of the POSIX multi-process tests (test/posix/run.sh
 * starts it N times under `timeout`).
 *
 *   tr_posix_node free-port                 print a free loopback TCP port
 *   tr_posix_node hold PORT SECONDS         keep PORT listening (port-in-use test)
 *   tr_posix_node [options] OP              one rank: rendezvous, then OP
 *
 * OP: none       rendezvous and links only
 *     xfer       raw transport: COUNT bytes of a rank-seeded pattern to the
 *                right while checking the left neighbour's (send/recv/poll)
 *     allreduce  ITERS allreduces (--algo ring|chain|rb) of COUNT floats,
 *                checked against the serial sum; writes the result hash
 *     bcast      ITERS broadcasts of COUNT floats from --root, checked
 *     barrier    ITERS barriers
 * Options: --init M --rank R --world N --token S --iface NAME --addr A
 *          --table IP:PORT,IP:PORT,... (static table instead of --init:
 *          tr_posix_connect_table; world = entries, --join-ms = its timeout)
 *          --listen-port P --count C --iters K --algo A --root R
 *          --timeout-ms T (collectives) --join-ms J --connect-ms C
 *          --handshake-ms H --segment B --out FILE (hash line; %r = rank)
 *          --pid-file FILE (this process id, for the kill tests)
 *
 * Exit status: 0 on success, 1 on a wrong result, else -tr_err (e.g. 98
 * port in use, 52 mismatch, 110 timeout, 104 peer closed, 113 unreachable).
 * The message goes to stderr as "rank R: ...".
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tinyring.h"
#include "tr_posix.h"
#include "tr_util.h"

static int die(int rank, int code, const char *what)
{
    fprintf(stderr, "rank %d: %s (%s)\n", rank, what, tr_strerror(code));
    return code < 0 ? -code : 1;
}

static int free_port(void)
{
    struct sockaddr_in sa;
    socklen_t len = sizeof sa;
    int s = socket(AF_INET, SOCK_STREAM, 0);
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (s < 0 || bind(s, (struct sockaddr *)&sa, sizeof sa) < 0 ||
        getsockname(s, (struct sockaddr *)&sa, &len) < 0)
        return 1;
    printf("%u\n", ntohs(sa.sin_port));
    close(s);
    return 0;
}

static int hold(int port, int secs)
{
    struct sockaddr_in sa;
    int one = 1, s = socket(AF_INET, SOCK_STREAM, 0);
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sa.sin_port = htons((uint16_t)port);
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(s, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(s, 4) < 0)
        return 1;
    printf("holding\n");
    fflush(stdout);
    sleep((unsigned)secs);
    close(s);
    return 0;
}

static uint32_t mix(uint32_t x)
{
    x ^= x >> 16; x *= 0x7feb352du; x ^= x >> 15; x *= 0x846ca68bu; x ^= x >> 16;
    return x;
}

/* Rank r's input: quarters in [-64, 64), so every partial sum of up to 8
 * ranks is exact in float whatever the order; `rough` adds a non-exact
 * fraction so the order matters and bitwise agreement between ranks means
 * something (checked within tolerance against the serial sum). */
static float input(int r, size_t i, int rough)
{
    uint32_t h = mix((uint32_t)i * 2654435761u ^ (uint32_t)(r + 1) * 0x9e3779b9u);
    float v = (float)((int)(h & 511u) - 256) * 0.25f;
    if (rough)
        v += (float)((h >> 9) & 0xffffu) * (1.0f / 65536.0f) * 0.001f;
    return v;
}

static unsigned char pattern(int r, size_t i)
{
    return (unsigned char)(mix((uint32_t)i ^ (uint32_t)r * 0x01000193u) >> 24);
}

/* Raw transport check: count bytes to the right, count bytes from the left. */
static int xfer(struct tr_transport *tp, int rank, int world, size_t count, uint32_t timeout)
{
    static unsigned char out[65536], in[65536];
    size_t sent = 0, got = 0, i;
    int left = (rank - 1 + world) % world;
    uint32_t last = tp->now_ms(tp->ctx);
    while (sent < count || got < count) {
        unsigned want = 0;
        int moved = 0, rc;
        if (sent < count) {
            size_t n = count - sent < sizeof out ? count - sent : sizeof out;
            long k;
            for (i = 0; i < n; i++)
                out[i] = pattern(rank, sent + i);
            k = tp->send(tp->ctx, TR_RIGHT, out, n);
            if (k > 0) {
                sent += (size_t)k;
                moved = 1;
            } else if (k != TR_ERR_AGAIN) {
                return die(rank, (int)k, "xfer: send to the right failed");
            }
            want |= TR_POLL_SEND(TR_RIGHT);
        }
        if (got < count) {
            size_t n = count - got < sizeof in ? count - got : sizeof in;
            long k = tp->recv(tp->ctx, TR_LEFT, in, n);
            if (k > 0) {
                for (i = 0; i < (size_t)k; i++)
                    if (in[i] != pattern(left, got + i)) {
                        fprintf(stderr, "rank %d: xfer: byte %zu from rank %d is wrong\n",
                                rank, got + i, left);
                        return 1;
                    }
                got += (size_t)k;
                moved = 1;
            } else if (k != TR_ERR_AGAIN) {
                return die(rank, (int)k, "xfer: receive from the left failed");
            }
            want |= TR_POLL_RECV(TR_LEFT);
        }
        if (moved) {
            last = tp->now_ms(tp->ctx);
            continue;
        }
        if ((uint32_t)(tp->now_ms(tp->ctx) - last) > timeout)
            return die(rank, TR_ERR_TIMEOUT, "xfer: no progress");
        rc = tp->poll(tp->ctx, want, 100);
        if (rc < 0)
            return die(rank, rc, "xfer: poll failed");
    }
    return 0;
}

static int comm_fail(struct tr_comm *c, int rank, int rc, const char *what)
{
    const struct tr_comm_fault *f = tr_comm_last_fault(c);
    fprintf(stderr, "rank %d: %s failed: %s (phase %s, %s link, peer rank %d, seq %u)\n",
            rank, what, tr_strerror(rc), tr_comm_phase_name(f->phase),
            f->peer == TR_LEFT ? "left" : f->peer == TR_RIGHT ? "right" : "no",
            f->peer_rank, (unsigned)f->seq);
    return -rc;
}

/* the command line of one rank */
struct node {
    struct tr_posix_config pc;
    const char *op, *out, *table_s;
    enum tr_algo algo;
    size_t count;
    long iters;
    int root;
    uint32_t ctimeout, segment;
};

/* Parses the options into n. Returns 0, or the exit status (2: usage). */
static int parse_args(struct node *n, int argc, char **argv)
{
    const char *algo_s = "ring";
    int a;

    memset(n, 0, sizeof *n);
    tr_posix_config_default(&n->pc);
    n->pc.job_token = tr_posix_token(getenv("TINYRING_JOB"));
    n->count = 1000;
    n->iters = 1;
    n->ctimeout = 10000;
    for (a = 1; a < argc; a++) {
        const char *k = argv[a], *v = a + 1 < argc ? argv[a + 1] : NULL;
        if (k[0] != '-' || k[1] != '-') {
            n->op = k;
            continue;
        }
        if (!v) {
            fprintf(stderr, "%s needs a value\n", k);
            return 2;
        }
        a++;
        if (!strcmp(k, "--init")) n->pc.init_method = v;
        else if (!strcmp(k, "--rank")) n->pc.rank = atoi(v);
        else if (!strcmp(k, "--world")) n->pc.world = atoi(v);
        else if (!strcmp(k, "--token")) n->pc.job_token = tr_posix_token(v);
        else if (!strcmp(k, "--iface")) n->pc.iface = v;
        else if (!strcmp(k, "--table")) n->table_s = v;
        else if (!strcmp(k, "--addr")) n->pc.addr = v;
        else if (!strcmp(k, "--listen-port")) n->pc.listen_port = (uint16_t)atoi(v);
        else if (!strcmp(k, "--join-ms")) n->pc.join_timeout_ms = (uint32_t)atol(v);
        else if (!strcmp(k, "--connect-ms")) n->pc.connect_timeout_ms = (uint32_t)atol(v);
        else if (!strcmp(k, "--handshake-ms")) n->pc.handshake_ms = (uint32_t)atol(v);
        else if (!strcmp(k, "--timeout-ms")) n->ctimeout = (uint32_t)atol(v);
        else if (!strcmp(k, "--segment")) n->segment = (uint32_t)atol(v);
        else if (!strcmp(k, "--count")) n->count = (size_t)atol(v);
        else if (!strcmp(k, "--iters")) n->iters = atol(v);
        else if (!strcmp(k, "--algo")) algo_s = v;
        else if (!strcmp(k, "--root")) n->root = atoi(v);
        else if (!strcmp(k, "--out")) n->out = v;
        else if (!strcmp(k, "--pid-file")) {       /* so the driver can SIGKILL this rank */
            FILE *f = fopen(v, "w");
            if (f) {
                fprintf(f, "%d\n", (int)getpid());
                fclose(f);
            }
        }
        else {
            fprintf(stderr, "unknown option %s\n", k);
            return 2;
        }
    }
    if (!n->op) {
        fprintf(stderr, "usage: see the comment at the top of test/posix/tr_posix_node.c\n");
        return 2;
    }
    n->algo = !strcmp(algo_s, "chain") ? TR_ALGO_CHAIN
            : !strcmp(algo_s, "rb")    ? TR_ALGO_REDUCE_BCAST : TR_ALGO_RING;
    return 0;
}

/* --table's entries into table. Returns how many, or -(the exit status). */
static int parse_table(const struct node *n, struct tr_posix_endpoint *table)
{
    char one[64], err[256];
    const char *p = n->table_s;
    int k = 0;

    while (*p) {
        size_t len = strcspn(p, ",");
        if (len >= sizeof one || k == TR_POSIX_MAX_WORLD) {
            fprintf(stderr, "rank %d: --table entry too long or too many\n", n->pc.rank);
            return -2;
        }
        memcpy(one, p, len);
        one[len] = 0;
        if (tr_posix_endpoint_parse(&table[k++], one, err, sizeof err) < 0) {
            fprintf(stderr, "rank %d: --table: %s\n", n->pc.rank, err);
            return TR_ERR_INVAL;
        }
        p += len + (p[len] == ',');
    }
    if (n->pc.world > 0 && n->pc.world != k) {
        fprintf(stderr, "rank %d: --world %d but --table has %d entries\n", n->pc.rank,
                n->pc.world, k);
        return -2;
    }
    return k;
}

/* The ring's links: a static --table or the --init rendezvous. Returns 0
 * or the exit status. */
static int connect_node(const struct node *n, struct tr_posix *px)
{
    struct tr_posix_endpoint table[TR_POSIX_MAX_WORLD];
    char err[512];
    int rc;

    if (n->table_s) {
        struct tr_posix_table_config tc;
        int k = parse_table(n, table);
        if (k < 0)
            return -k;
        tr_posix_table_config_default(&tc);
        tc.table = table;
        tc.rank = n->pc.rank;
        tc.world = k;
        tc.job_token = n->pc.job_token;
        tc.timeout_ms = n->pc.join_timeout_ms;
        tc.handshake_ms = n->pc.handshake_ms;
        rc = tr_posix_connect_table(px, &tc, err, sizeof err);
    } else {
        rc = tr_posix_connect(px, &n->pc, err, sizeof err);
    }
    if (rc < 0) {
        fprintf(stderr, "rank %d: %s\n", px->rank, err);
        return -rc;
    }
    return 0;
}

/* ITERS allreduces, alternately of rough inputs (any order of the sums
 * within 1e-3, the result hashed: the ranks agree bit for bit) and of
 * exact ones (the serial sum exactly). Returns the wrong elements, or
 * -(the exit status). */
static long run_allreduce(const struct node *n, struct tr_comm *c, int rank, int world,
                          float *buf, float *want, uint64_t *hash)
{
    long it, bad = 0;
    size_t i;
    int r, rc;

    for (it = 0; it < n->iters; it++) {
        int rough = !(it & 1);          /* iteration 0 rough, 1 exact, ... */
        for (i = 0; i < n->count; i++) {
            buf[i] = input(rank, i + (size_t)it, rough);
            want[i] = 0.0f;
            for (r = 0; r < world; r++)         /* the serial sum, rank order */
                want[i] += input(r, i + (size_t)it, rough);
        }
        rc = tr_allreduce(c, buf, n->count, TR_OP_SUM, n->algo);
        if (rc < 0)
            return -comm_fail(c, rank, rc, "allreduce");
        for (i = 0; i < n->count; i++) {
            float d = buf[i] - want[i];
            if ((rough ? (d > 1e-3f || d < -1e-3f) : buf[i] != want[i]) && bad++ < 5)
                fprintf(stderr, "rank %d: allreduce iter %ld [%zu] = %.9g, serial sum %.9g\n",
                        rank, it, i, buf[i], want[i]);
        }
        if (rough)
            *hash = tr_fnv1a64(TR_FNV64_INIT, buf, n->count * sizeof *buf);
    }
    return bad;
}

/* ITERS broadcasts from --root. Returns as run_allreduce. */
static long run_bcast(const struct node *n, struct tr_comm *c, int rank, float *buf,
                      float *want, uint64_t *hash)
{
    size_t i;
    long it;
    int rc;

    for (i = 0; i < n->count; i++) {
        buf[i] = rank == n->root ? input(n->root, i, 1) : -1.0f;
        want[i] = input(n->root, i, 1);
    }
    for (it = 0; it < n->iters; it++) {
        rc = tr_broadcast(c, buf, n->count * sizeof *buf, n->root);
        if (rc < 0)
            return -comm_fail(c, rank, rc, "broadcast");
    }
    *hash = tr_fnv1a64(TR_FNV64_INIT, buf, n->count * sizeof *buf);
    if (memcmp(buf, want, n->count * sizeof *buf) != 0) {
        fprintf(stderr, "rank %d: broadcast result differs from rank %d's data\n", rank,
                n->root);
        return 1;
    }
    return 0;
}

/* The result hash into --out ("%r" in it: this rank, so one command line
 * serves every rank under mpirun). Returns 0 or the exit status. */
static int write_out(const char *out, int rank, uint64_t hash)
{
    char path[512];
    const char *pr = strstr(out, "%r");
    FILE *f;

    if (pr)
        snprintf(path, sizeof path, "%.*s%d%s", (int)(pr - out), out, rank, pr + 2);
    else
        snprintf(path, sizeof path, "%s", out);
    f = fopen(path, "w");
    if (!f)
        return die(rank, TR_ERR_IO, "cannot write --out file");
    fprintf(f, "%016llx\n", (unsigned long long)hash);
    fclose(f);
    return 0;
}

/* OP xfer: the raw transport; --out says every rank checked its bytes */
static int run_xfer(const struct node *n, struct tr_posix *px)
{
    struct tr_transport tp;
    int rc;

    tr_posix_transport(px, &tp);
    rc = px->world == 1 ? 0 : xfer(&tp, px->rank, px->world, n->count, n->ctimeout);
    if (rc == 0 && n->out) {
        FILE *f = fopen(n->out, "w");
        if (f) {
            fprintf(f, "xfer %zu ok\n", n->count);
            fclose(f);
        }
    }
    return rc;
}

/* OP allreduce, bcast or barrier over a tr_comm on px. Returns the exit
 * status. */
static int run_collective(const struct node *n, struct tr_posix *px)
{
    struct tr_transport tp;
    struct tr_comm_config cc;
    struct tr_comm comm;
    size_t cells = n->count ? n->count : 1;
    float *buf = malloc(cells * sizeof *buf), *want = malloc(cells * sizeof *want);
    void *scratch;
    uint64_t hash = 0;
    long bad = 0, it;
    int rc;

    tr_posix_transport(px, &tp);
    memset(&cc, 0, sizeof cc);
    cc.rank = px->rank;
    cc.world = px->world;
    cc.timeout_ms = n->ctimeout;
    cc.segment_bytes = n->segment;
    cc.job_token = px->job_token;
    cc.layout_hash = 0x7e57u;
    scratch = aligned_alloc(16, (tr_comm_scratch_size(&cc) + 15) & ~(size_t)15);
    if (!scratch || !buf || !want)
        return die(px->rank, TR_ERR_NOMEM, "out of memory");
    rc = tr_comm_init(&comm, &cc, px->world > 1 ? &tp : NULL, scratch, tr_comm_scratch_size(&cc));
    if (rc < 0)
        return die(px->rank, rc, "tr_comm_init");
    rc = tr_comm_hello(&comm);
    if (rc < 0)
        return comm_fail(&comm, px->rank, rc, "hello");

    if (!strcmp(n->op, "allreduce")) {
        bad = run_allreduce(n, &comm, px->rank, px->world, buf, want, &hash);
    } else if (!strcmp(n->op, "bcast")) {
        bad = run_bcast(n, &comm, px->rank, buf, want, &hash);
    } else if (!strcmp(n->op, "barrier")) {
        for (it = 0; it < n->iters && bad == 0; it++)
            if ((rc = tr_barrier(&comm)) < 0)
                bad = -comm_fail(&comm, px->rank, rc, "barrier");
        hash = (uint64_t)n->iters;
    } else {
        fprintf(stderr, "unknown op %s\n", n->op);
        return 2;
    }
    if (bad < 0)
        return (int)-bad;
    if (n->out && (rc = write_out(n->out, px->rank, hash)) != 0)
        return rc;
    tr_posix_close(px);
    free(buf);
    free(want);
    free(scratch);
    return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
    struct node n;
    struct tr_posix px;
    int rc;

    if (argc >= 2 && !strcmp(argv[1], "free-port"))
        return free_port();
    if (argc >= 4 && !strcmp(argv[1], "hold"))
        return hold(atoi(argv[2]), atoi(argv[3]));
    if ((rc = parse_args(&n, argc, argv)) != 0)
        return rc;
    if ((rc = connect_node(&n, &px)) != 0)
        return rc;
    if (!strcmp(n.op, "none"))
        return 0;
    if (!strcmp(n.op, "xfer"))
        return run_xfer(&n, &px);
    return run_collective(&n, &px);
}
