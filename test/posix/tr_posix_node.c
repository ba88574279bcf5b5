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

int main(int argc, char **argv)
{
    struct tr_posix_config pc;
    struct tr_posix px;
    struct tr_transport tp;
    struct tr_comm_config cc;
    struct tr_comm comm;
    const char *op = NULL, *out = NULL, *algo_s = "ring", *table_s = NULL;
    struct tr_posix_table_config tc;
    struct tr_posix_endpoint table[TR_POSIX_MAX_WORLD];
    size_t count = 1000, i;
    long iters = 1, it;
    int root = 0, rc, a, bad = 0;
    uint32_t ctimeout = 10000, segment = 0;
    uint64_t hash = 0;
    char err[512];
    enum tr_algo algo = TR_ALGO_RING;
    float *buf, *want;
    void *scratch;

    if (argc >= 2 && !strcmp(argv[1], "free-port"))
        return free_port();
    if (argc >= 4 && !strcmp(argv[1], "hold"))
        return hold(atoi(argv[2]), atoi(argv[3]));

    tr_posix_config_default(&pc);
    pc.job_token = tr_posix_token(getenv("TINYRING_JOB"));
    for (a = 1; a < argc; a++) {
        const char *k = argv[a], *v = a + 1 < argc ? argv[a + 1] : NULL;
        if (k[0] != '-' || k[1] != '-') {
            op = k;
            continue;
        }
        if (!v) {
            fprintf(stderr, "%s needs a value\n", k);
            return 2;
        }
        a++;
        if (!strcmp(k, "--init")) pc.init_method = v;
        else if (!strcmp(k, "--rank")) pc.rank = atoi(v);
        else if (!strcmp(k, "--world")) pc.world = atoi(v);
        else if (!strcmp(k, "--token")) pc.job_token = tr_posix_token(v);
        else if (!strcmp(k, "--iface")) pc.iface = v;
        else if (!strcmp(k, "--table")) table_s = v;
        else if (!strcmp(k, "--addr")) pc.addr = v;
        else if (!strcmp(k, "--listen-port")) pc.listen_port = (uint16_t)atoi(v);
        else if (!strcmp(k, "--join-ms")) pc.join_timeout_ms = (uint32_t)atol(v);
        else if (!strcmp(k, "--connect-ms")) pc.connect_timeout_ms = (uint32_t)atol(v);
        else if (!strcmp(k, "--handshake-ms")) pc.handshake_ms = (uint32_t)atol(v);
        else if (!strcmp(k, "--timeout-ms")) ctimeout = (uint32_t)atol(v);
        else if (!strcmp(k, "--segment")) segment = (uint32_t)atol(v);
        else if (!strcmp(k, "--count")) count = (size_t)atol(v);
        else if (!strcmp(k, "--iters")) iters = atol(v);
        else if (!strcmp(k, "--algo")) algo_s = v;
        else if (!strcmp(k, "--root")) root = atoi(v);
        else if (!strcmp(k, "--out")) out = v;
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
    if (!op) {
        fprintf(stderr, "usage: see the comment at the top of test/posix/tr_posix_node.c\n");
        return 2;
    }
    if (!strcmp(algo_s, "chain")) algo = TR_ALGO_CHAIN;
    else if (!strcmp(algo_s, "rb")) algo = TR_ALGO_REDUCE_BCAST;

    if (table_s) {
        char one[64];
        const char *p = table_s;
        int n = 0;
        tr_posix_table_config_default(&tc);
        while (*p) {
            size_t len = strcspn(p, ",");
            if (len >= sizeof one || n == TR_POSIX_MAX_WORLD) {
                fprintf(stderr, "rank %d: --table entry too long or too many\n", pc.rank);
                return 2;
            }
            memcpy(one, p, len);
            one[len] = 0;
            if (tr_posix_endpoint_parse(&table[n++], one, err, sizeof err) < 0) {
                fprintf(stderr, "rank %d: --table: %s\n", pc.rank, err);
                return -TR_ERR_INVAL;
            }
            p += len + (p[len] == ',');
        }
        if (pc.world > 0 && pc.world != n) {
            fprintf(stderr, "rank %d: --world %d but --table has %d entries\n", pc.rank,
                    pc.world, n);
            return 2;
        }
        tc.table = table;
        tc.rank = pc.rank;
        tc.world = n;
        tc.job_token = pc.job_token;
        tc.timeout_ms = pc.join_timeout_ms;
        tc.handshake_ms = pc.handshake_ms;
        rc = tr_posix_connect_table(&px, &tc, err, sizeof err);
    } else {
        rc = tr_posix_connect(&px, &pc, err, sizeof err);
    }
    if (rc < 0) {
        fprintf(stderr, "rank %d: %s\n", px.rank, err);
        return -rc;
    }
    tr_posix_transport(&px, &tp);
    if (!strcmp(op, "none"))
        return 0;
    if (!strcmp(op, "xfer")) {
        rc = px.world == 1 ? 0 : xfer(&tp, px.rank, px.world, count, ctimeout);
        if (rc == 0 && out) {                   /* every rank checked its bytes */
            FILE *f = fopen(out, "w");
            if (f) {
                fprintf(f, "xfer %zu ok\n", count);
                fclose(f);
            }
        }
        return rc;
    }

    memset(&cc, 0, sizeof cc);
    cc.rank = px.rank;
    cc.world = px.world;
    cc.timeout_ms = ctimeout;
    cc.segment_bytes = segment;
    cc.job_token = px.job_token;
    cc.layout_hash = 0x7e57u;
    scratch = aligned_alloc(16, (tr_comm_scratch_size(&cc) + 15) & ~(size_t)15);
    buf = malloc((count ? count : 1) * sizeof *buf);
    want = malloc((count ? count : 1) * sizeof *want);
    if (!scratch || !buf || !want)
        return die(px.rank, TR_ERR_NOMEM, "out of memory");
    rc = tr_comm_init(&comm, &cc, px.world > 1 ? &tp : NULL, scratch, tr_comm_scratch_size(&cc));
    if (rc < 0)
        return die(px.rank, rc, "tr_comm_init");
    rc = tr_comm_hello(&comm);
    if (rc < 0)
        return comm_fail(&comm, px.rank, rc, "hello");

    if (!strcmp(op, "allreduce")) {
        for (it = 0; it < iters; it++) {
            int rough = !(it & 1);          /* iteration 0 rough, 1 exact, ... */
            int r;
            for (i = 0; i < count; i++) {
                buf[i] = input(px.rank, i + (size_t)it, rough);
                want[i] = 0.0f;
                for (r = 0; r < px.world; r++)      /* the serial sum, rank order */
                    want[i] += input(r, i + (size_t)it, rough);
            }
            rc = tr_allreduce(&comm, buf, count, TR_OP_SUM, algo);
            if (rc < 0)
                return comm_fail(&comm, px.rank, rc, "allreduce");
            for (i = 0; i < count; i++) {
                float d = buf[i] - want[i];
                if (rough ? (d > 1e-3f || d < -1e-3f) : buf[i] != want[i]) {
                    if (bad++ < 5)
                        fprintf(stderr, "rank %d: allreduce iter %ld [%zu] = %.9g, serial sum %.9g\n",
                                px.rank, it, i, buf[i], want[i]);
                }
            }
            if (rough)                              /* ranks must agree bit for bit */
                hash = tr_fnv1a64(TR_FNV64_INIT, buf, count * sizeof *buf);
        }
    } else if (!strcmp(op, "bcast")) {
        for (i = 0; i < count; i++) {
            buf[i] = px.rank == root ? input(root, i, 1) : -1.0f;
            want[i] = input(root, i, 1);
        }
        for (it = 0; it < iters; it++) {
            rc = tr_broadcast(&comm, buf, count * sizeof *buf, root);
            if (rc < 0)
                return comm_fail(&comm, px.rank, rc, "broadcast");
        }
        if (memcmp(buf, want, count * sizeof *buf) != 0) {
            fprintf(stderr, "rank %d: broadcast result differs from rank %d's data\n", px.rank, root);
            bad++;
        }
        hash = tr_fnv1a64(TR_FNV64_INIT, buf, count * sizeof *buf);
    } else if (!strcmp(op, "barrier")) {
        for (it = 0; it < iters; it++) {
            rc = tr_barrier(&comm);
            if (rc < 0)
                return comm_fail(&comm, px.rank, rc, "barrier");
        }
        hash = (uint64_t)iters;
    } else {
        fprintf(stderr, "unknown op %s\n", op);
        return 2;
    }
    if (out) {
        char path[512];
        const char *pr = strstr(out, "%r");  /* "%r" -> rank (one command line for mpirun) */
        FILE *f;
        if (pr)
            snprintf(path, sizeof path, "%.*s%d%s", (int)(pr - out), out, px.rank, pr + 2);
        else
            snprintf(path, sizeof path, "%s", out);
        f = fopen(path, "w");
        if (!f)
            return die(px.rank, TR_ERR_IO, "cannot write --out file");
        fprintf(f, "%016llx\n", (unsigned long long)hash);
        fclose(f);
    }
    tr_posix_close(&px);
    free(buf);
    free(want);
    free(scratch);
    return bad ? 1 : 0;
}
