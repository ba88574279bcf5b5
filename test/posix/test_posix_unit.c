/* tinyring: unit tests of the POSIX port's pieces that need no second
 * process: the rendezvous/link message encoders and their validation, the
 * job token, init-method and environment parsing, interface lookup, and the
 * transport on a socketpair (partial reads, EOF, a peer gone, poll bits). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "harness.h"
#include "tr_error.h"
#include "tr_posix.h"
#include "tr_link.h"
#include "tr_posix_int.h"
#include "tr_util.h"

static void clear_env(void)
{
    static const char *const v[] = { "RANK", "WORLD_SIZE", "OMPI_COMM_WORLD_RANK",
                                     "OMPI_COMM_WORLD_SIZE", "SLURM_PROCID", "SLURM_NTASKS",
                                     "PMI_RANK", "PMI_SIZE", "MASTER_ADDR", "MASTER_PORT", NULL };
    int i;
    for (i = 0; v[i]; i++)
        unsetenv(v[i]);
}

static void test_wire(void)
{
    struct tr_posix_intro a, b;
    struct tr_link_hello lh;
    struct tr_posix_endpoint tab[3] = { { 0x0100007fu, 1000 }, { 0x0200007fu, 0 }, { 0x0300007fu, 65535 } };
    struct tr_posix_endpoint e;
    uint8_t reg[TR_POSIX_REG_BYTES], link[TR_LINK_HELLO_BYTES], ans[TR_POSIX_ANS_BYTES + 24];
    int status;
    uint32_t world, why, n, i;

    memset(&a, 0, sizeof a);
    a.version = TR_POSIX_VERSION;
    a.token = 0x0123456789abcdefull;
    a.rank = 7;
    a.world = 9;
    a.addr = 0x0401a8c0u;          /* 192.168.1.4 in network order */
    a.port = 40001;
    tr_posix_put_reg(reg, &a);
    TH_CHECK(memcmp(reg, "TRR1", 4) == 0, "registration magic");
    TH_CHECK(reg[8] == 0xef && reg[15] == 0x01, "token little-endian");
    TH_CHECK(reg[24] == 0xc0 && reg[27] == 0x04, "address in network order");
    TH_CHECK(tr_posix_get_reg(&b, reg) == 0 && b.token == a.token && b.rank == 7 &&
             b.world == 9 && b.addr == a.addr && b.port == 40001, "registration round trip");
    reg[29] = 0; reg[28] = 0;
    TH_CHECK(tr_posix_get_reg(&b, reg) == TR_ERR_PROTO, "port 0 refused");
    tr_posix_put_reg(reg, &a);
    reg[31] = 1;
    TH_CHECK(tr_posix_get_reg(&b, reg) == TR_ERR_PROTO, "reserved bytes must be 0");
    tr_posix_put_reg(reg, &a);
    reg[0] = 'X';
    TH_CHECK(tr_posix_get_reg(&b, reg) == TR_ERR_PROTO, "bad magic refused");

    lh.version = TR_LINK_VERSION;
    lh.token = a.token;
    lh.rank = 7;
    lh.world = 9;
    tr_link_hello_put(link, &lh);
    memset(reg, 0, sizeof reg);
    memcpy(reg, link, sizeof link);
    TH_CHECK(tr_posix_get_reg(&b, reg) == TR_ERR_PROTO, "a link hello is not a registration");

    tr_posix_put_ans(ans, 0, 3, 0, tab, 3);
    TH_CHECK(tr_posix_get_ans_head(ans, &status, &world, &why, &n) == 0 && status == 0 &&
             world == 3 && n == 3, "answer head round trip");
    for (i = 0; i < 3; i++) {
        TH_CHECK(tr_posix_get_ans_entry(ans + TR_POSIX_ANS_BYTES + 8 * i, &e) == 0 &&
                 e.addr == tab[i].addr && e.port == tab[i].port, "table entry %u", i);
    }
    /* reserved fields (found by test/fuzz/fuzz_rdv): not 0 is not our answer */
    ans[TR_POSIX_ANS_BYTES + 8 + 6] = 1;
    TH_CHECK(tr_posix_get_ans_entry(ans + TR_POSIX_ANS_BYTES + 8, &e) == TR_ERR_PROTO,
             "table entry with a reserved byte set refused");
    ans[20] = 1;
    TH_CHECK(tr_posix_get_ans_head(ans, &status, &world, &why, &n) == TR_ERR_PROTO,
             "answer head with a reserved byte set refused");
    tr_posix_put_ans(ans, TR_ERR_MISMATCH, 4, TR_POSIX_WHY_WORLD, NULL, 0);
    TH_CHECK(tr_posix_get_ans_head(ans, &status, &world, &why, &n) == 0 &&
             status == TR_ERR_MISMATCH && why == TR_POSIX_WHY_WORLD && n == 0, "refusal head");
    tr_put_le32(ans + 16, TR_POSIX_MAX_WORLD + 1);
    TH_CHECK(tr_posix_get_ans_head(ans, &status, &world, &why, &n) == TR_ERR_PROTO,
             "oversized table refused");
    tr_posix_put_ans(ans, 5, 4, 0, NULL, 0);
    TH_CHECK(tr_posix_get_ans_head(ans, &status, &world, &why, &n) == TR_ERR_PROTO,
             "positive status refused");
}

static void test_token(void)
{
    TH_CHECK(tr_posix_token("a") != tr_posix_token("b"), "tokens differ");
    TH_CHECK(tr_posix_token("job-1") == tr_posix_token("job-1"), "token is stable");
    TH_CHECK(tr_posix_token(NULL) == tr_posix_token(""), "NULL is the empty token");
    TH_CHECK(tr_posix_token("") != 0, "never 0");
    /* FNV-1a 64 of "a" (published test vector) */
    TH_CHECK(tr_posix_token("a") == 0xaf63dc4c8601ec8cull, "FNV-1a 64 vector");
}

static void test_plan(void)
{
    struct tr_posix_config c;
    struct tr_posix_plan pl;
    char err[256];
    int r, w;

    tr_posix_config_default(&c);
    c.init_method = "tcp://127.0.0.1:29511";
    c.rank = 2;
    c.world = 4;
    TH_CHECK(tr_posix_plan_make(&pl, &c, err, sizeof err) == 0 && pl.master_port == 29511 &&
             pl.master_addr == htonl(0x7f000001u) && pl.connect_ms == 30000 &&
             pl.join_ms == 60000 && pl.handshake_ms == 3000, "tcp:// plan and defaults");
    c.init_method = "tcp://localhost:1";
    TH_CHECK(tr_posix_plan_make(&pl, &c, err, sizeof err) == 0 &&
             pl.master_addr == htonl(0x7f000001u), "host names resolve");
    c.init_method = "tcp://127.0.0.1:70000";
    TH_CHECK(tr_posix_plan_make(&pl, &c, err, sizeof err) == TR_ERR_INVAL &&
             strstr(err, "port"), "port out of range: %s", err);
    c.init_method = "tcp://127.0.0.1";
    TH_CHECK(tr_posix_plan_make(&pl, &c, err, sizeof err) == TR_ERR_INVAL, "no port");
    c.init_method = "tcp://127.0.0.1:7,10.0.0.2:8,localhost:9";
    TH_CHECK(tr_posix_plan_make(&pl, &c, err, sizeof err) == 0 && pl.master_port == 7 &&
             pl.master_addr == htonl(0x7f000001u) && pl.n_more == 2 &&
             pl.more[0].addr == htonl(0x0a000002u) && pl.more[0].port == 8 &&
             pl.more[1].addr == htonl(0x7f000001u) && pl.more[1].port == 9,
             "tcp:// with three addresses: %s", err);
    c.init_method = "tcp://:1,127.0.0.1:2";
    TH_CHECK(tr_posix_plan_make(&pl, &c, err, sizeof err) == TR_ERR_INVAL &&
             strstr(err, "expected tcp://"), "no first host: %s", err);
    c.init_method = "tcp://127.0.0.1:1,127.0.0.1:";
    TH_CHECK(tr_posix_plan_make(&pl, &c, err, sizeof err) == TR_ERR_INVAL, "an empty port");
    c.init_method = "tcp://127.0.0.1:1,";
    TH_CHECK(tr_posix_plan_make(&pl, &c, err, sizeof err) == TR_ERR_INVAL, "a trailing comma");
    c.init_method = "tcp://127.0.0.1:1,127.0.0.1:2,127.0.0.1:3,127.0.0.1:4,127.0.0.1:5";
    TH_CHECK(tr_posix_plan_make(&pl, &c, err, sizeof err) == TR_ERR_INVAL &&
             strstr(err, "more than 4"), "five addresses: %s", err);
    c.init_method = "udp://x:1";
    TH_CHECK(tr_posix_plan_make(&pl, &c, err, sizeof err) == TR_ERR_INVAL &&
             strstr(err, "unknown init method"), "unknown scheme");
    c.init_method = "tcp://127.0.0.1:5";
    c.rank = 4;
    TH_CHECK(tr_posix_plan_make(&pl, &c, err, sizeof err) == TR_ERR_INVAL &&
             strstr(err, "rank 4"), "rank >= world: %s", err);
    c.rank = 0;
    c.world = TR_POSIX_MAX_WORLD + 1;
    TH_CHECK(tr_posix_plan_make(&pl, &c, err, sizeof err) == TR_ERR_INVAL, "world too big");

    clear_env();
    TH_CHECK(tr_posix_env_rank(&r, &w, err, sizeof err) == TR_ERR_INVAL && strstr(err, "RANK"),
             "no rank in the environment");
    setenv("OMPI_COMM_WORLD_RANK", "3", 1);
    setenv("OMPI_COMM_WORLD_SIZE", "5", 1);
    TH_CHECK(tr_posix_env_rank(&r, &w, err, sizeof err) == 0 && r == 3 && w == 5, "Open MPI");
    setenv("RANK", "1", 1);
    setenv("WORLD_SIZE", "2", 1);
    TH_CHECK(tr_posix_env_rank(&r, &w, err, sizeof err) == 0 && r == 1 && w == 2,
             "torchrun variables win");
    clear_env();
    setenv("SLURM_PROCID", "0", 1);
    setenv("SLURM_NTASKS", "8", 1);
    TH_CHECK(tr_posix_env_rank(&r, &w, err, sizeof err) == 0 && r == 0 && w == 8, "Slurm");
    setenv("SLURM_NTASKS", "8x", 1);
    TH_CHECK(tr_posix_env_rank(&r, &w, err, sizeof err) == TR_ERR_INVAL &&
             strstr(err, "SLURM_NTASKS"), "garbage size named: %s", err);
    setenv("SLURM_NTASKS", "8", 1);
    c.init_method = "env://";
    TH_CHECK(tr_posix_plan_make(&pl, &c, err, sizeof err) == TR_ERR_INVAL &&
             strstr(err, "MASTER_ADDR"), "env:// needs MASTER_ADDR");
    setenv("MASTER_ADDR", "127.0.0.1", 1);
    setenv("MASTER_PORT", "29512", 1);
    TH_CHECK(tr_posix_plan_make(&pl, &c, err, sizeof err) == 0 && pl.rank == 0 &&
             pl.world == 8 && pl.master_port == 29512, "env:// plan");
    clear_env();

    c.init_method = "tcp://127.0.0.1:5";
    c.rank = 0;
    c.world = 2;
    tr_posix_plan_make(&pl, &c, err, sizeof err);
    c.iface = "lo";
    TH_CHECK(tr_posix_pick_local(&pl, &c, -1, err, sizeof err) == 0 &&
             pl.local_addr == htonl(0x7f000001u) && !pl.any_addr, "iface lo is 127.0.0.1");
    c.iface = "tr-none0";
    TH_CHECK(tr_posix_pick_local(&pl, &c, -1, err, sizeof err) == TR_ERR_INVAL &&
             strstr(err, "tr-none0"), "unknown interface named");
    c.iface = NULL;
    c.addr = "127.0.0.9";
    TH_CHECK(tr_posix_pick_local(&pl, &c, -1, err, sizeof err) == 0 &&
             pl.local_addr == htonl(0x7f000009u), "explicit address");
    c.addr = "not-an-ip";
    TH_CHECK(tr_posix_pick_local(&pl, &c, -1, err, sizeof err) == TR_ERR_INVAL, "bad address");
}

static void test_transport(void)
{
    struct tr_posix px;
    struct tr_transport tp;
    int sv[2], sw[2];
    char buf[64];
    long n;
    int ready;

    TH_CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0 &&
             socketpair(AF_UNIX, SOCK_STREAM, 0, sw) == 0, "socketpairs");
    memset(&px, 0, sizeof px);        /* filled by hand, as the board tests do */
    px.fd[TR_LEFT] = sv[0];
    px.fd[TR_RIGHT] = sw[0];
    tr_posix_transport(&px, &tp);
    TH_CHECK(tp.recv(tp.ctx, TR_LEFT, buf, sizeof buf) == TR_ERR_AGAIN, "nothing yet: AGAIN");
    TH_CHECK(tp.poll(tp.ctx, TR_POLL_RECV(TR_LEFT), 0) == 0, "poll: nothing readable");
    TH_CHECK(write(sv[1], "hello", 5) == 5, "peer writes");
    ready = tp.poll(tp.ctx, TR_POLL_RECV(TR_LEFT) | TR_POLL_RECV(TR_RIGHT), 1000);
    TH_CHECK(ready == (int)TR_POLL_RECV(TR_LEFT), "poll: left readable only (%d)", ready);
    n = tp.recv(tp.ctx, TR_LEFT, buf, 3);
    TH_CHECK(n == 3 && memcmp(buf, "hel", 3) == 0, "partial read");
    n = tp.recv(tp.ctx, TR_LEFT, buf, sizeof buf);
    TH_CHECK(n == 2 && memcmp(buf, "lo", 2) == 0, "rest");
    n = tp.send(tp.ctx, TR_RIGHT, "abc", 3);
    TH_CHECK(n == 3, "small send accepted");
    TH_CHECK(tp.poll(tp.ctx, 0, 0) == 0, "poll with nothing wanted");
    TH_CHECK(read(sw[1], buf, sizeof buf) == 3 && memcmp(buf, "abc", 3) == 0,
             "small send arrives");
    ready = tp.poll(tp.ctx, TR_POLL_SEND(TR_RIGHT), 1000);
    TH_CHECK(ready == (int)TR_POLL_SEND(TR_RIGHT), "room to write");
    close(sv[1]);
    ready = tp.poll(tp.ctx, TR_POLL_RECV(TR_LEFT), 1000);
    TH_CHECK(ready == (int)TR_POLL_RECV(TR_LEFT), "EOF is readable");
    TH_CHECK(tp.recv(tp.ctx, TR_LEFT, buf, sizeof buf) == TR_ERR_CLOSED, "EOF: CLOSED");
    close(sw[1]);
    n = tp.send(tp.ctx, TR_RIGHT, buf, sizeof buf);
    TH_CHECK(n == TR_ERR_CLOSED, "send to a closed peer: CLOSED, no SIGPIPE (%ld)", n);
    TH_CHECK(tp.send(tp.ctx, 5, buf, 1) == TR_ERR_INVAL, "bad peer index");
    tr_posix_close(&px);
    TH_CHECK(px.fd[0] == -1 && px.fd[1] == -1, "close resets the fds");
    tr_posix_close(&px);               /* idempotent */
}

/* The window clamp of a fresh socket after tr_posix_link_clamp(addr, rcvbuf),
 * or -1. */
static int clamp_after(uint32_t addr, int rcvbuf)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0), v = -1;
    socklen_t ol = sizeof v;
    if (fd < 0)
        return -1;
    tr_posix_link_clamp(fd, addr, rcvbuf);
    if (getsockopt(fd, IPPROTO_TCP, TCP_WINDOW_CLAMP, &v, &ol) != 0)
        v = -1;
    close(fd);
    return v;
}

/* Ring links off loopback with the default receive buffer offer at most
 * TR_POSIX_DEFAULT_WINDOW; loopback, any address, or a caller's own rcvbuf
 * keep the kernel's window; a listening socket's clamp reaches the links it
 * accepts. */
static void test_link_window(void)
{
    struct sockaddr_in sa;
    socklen_t len = sizeof sa, ol = sizeof(int);
    int l, c, a = -1, got = 0, ok = 0, v;
    const uint32_t lan = htonl(0x0a4d000bu);   /* 10.77.0.11 */

    TH_CHECK((v = clamp_after(lan, 0)) == TR_POSIX_DEFAULT_WINDOW, "a LAN link: clamped (%d)", v);
    TH_CHECK((v = clamp_after(htonl(INADDR_LOOPBACK), 0)) != TR_POSIX_DEFAULT_WINDOW,
             "loopback: not clamped (%d)", v);
    TH_CHECK((v = clamp_after(htonl(0x7f000105u), 0)) != TR_POSIX_DEFAULT_WINDOW,
             "127.0.1.5: not clamped (%d)", v);
    TH_CHECK((v = clamp_after(htonl(INADDR_ANY), 0)) != TR_POSIX_DEFAULT_WINDOW,
             "any address: not clamped (%d)", v);
    TH_CHECK((v = clamp_after(lan, 256 * 1024)) != TR_POSIX_DEFAULT_WINDOW &&
                 clamp_after(lan, -1) != TR_POSIX_DEFAULT_WINDOW,
             "a caller's rcvbuf or autotuning: not clamped (%d)", v);
    /* inheritance: a listener clamped as if for a LAN address, on loopback */
    l = socket(AF_INET, SOCK_STREAM, 0);
    c = socket(AF_INET, SOCK_STREAM, 0);
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (l >= 0 && c >= 0) {
        tr_posix_link_opts(l, 0, 0);
        tr_posix_link_clamp(l, lan, 0);
        if (bind(l, (struct sockaddr *)&sa, sizeof sa) == 0 && listen(l, 1) == 0 &&
            getsockname(l, (struct sockaddr *)&sa, &len) == 0 &&
            connect(c, (struct sockaddr *)&sa, sizeof sa) == 0 && (a = accept(l, NULL, NULL)) >= 0 &&
            getsockopt(a, IPPROTO_TCP, TCP_WINDOW_CLAMP, &got, &ol) == 0)
            ok = 1;
    }
    TH_CHECK(ok && got == TR_POSIX_DEFAULT_WINDOW, "an accepted link inherits the clamp (%d)", got);
    if (a >= 0)
        close(a);
    if (c >= 0)
        close(c);
    if (l >= 0)
        close(l);
}

/* The spin policy: explicit values win; AUTO spins only when the ranks on
 * this host are known and fit the online CPUs. */
static void test_spin_policy(void)
{
    struct tr_posix_config pc;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    char many[32];

    unsetenv("LOCAL_WORLD_SIZE");
    unsetenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    unsetenv("SLURM_NTASKS_PER_NODE");
    tr_posix_config_default(&pc);
    TH_CHECK(pc.spin_us == TR_POSIX_SPIN_AUTO, "default spin is AUTO");
    TH_CHECK(tr_posix_spin_for(&pc) == 0, "AUTO, local ranks unknown: no spin");
    pc.local_ranks = 1;
    TH_CHECK(tr_posix_spin_for(&pc) == TR_POSIX_SPIN_US, "AUTO, 1 local rank: spin");
    pc.local_ranks = (int)cpus + 1;
    TH_CHECK(tr_posix_spin_for(&pc) == 0, "AUTO, more local ranks than CPUs: no spin");
    pc.local_ranks = 0;
    setenv("LOCAL_WORLD_SIZE", "1", 1);
    TH_CHECK(tr_posix_spin_for(&pc) == TR_POSIX_SPIN_US, "AUTO from LOCAL_WORLD_SIZE");
    unsetenv("LOCAL_WORLD_SIZE");
    snprintf(many, sizeof many, "%ld", cpus + 1);
    setenv("OMPI_COMM_WORLD_LOCAL_SIZE", many, 1);
    TH_CHECK(tr_posix_spin_for(&pc) == 0, "AUTO from Open MPI's local size, oversubscribed");
    unsetenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    setenv("SLURM_NTASKS_PER_NODE", "1(x4)", 1);
    TH_CHECK(tr_posix_spin_for(&pc) == TR_POSIX_SPIN_US, "AUTO from Slurm's tasks per node");
    unsetenv("SLURM_NTASKS_PER_NODE");
    pc.spin_us = 0;
    pc.local_ranks = 1;
    TH_CHECK(tr_posix_spin_for(&pc) == 0, "explicit 0 is kept");
    pc.spin_us = 7;
    TH_CHECK(tr_posix_spin_for(&pc) == 7, "explicit value is kept");
}

/* "A.B.C.D:PORT" for static tables, and what connect_table refuses before
 * it opens any socket. */
/* the kernel running out of socket buffers or memory is not the caller's
 * arena being too small: its own code, and a text that says so */
static void test_errno_codes(void)
{
    TH_CHECK(tr_posix_errno_code(ENOBUFS) == TR_ERR_NOBUFS, "ENOBUFS -> %d", tr_posix_errno_code(ENOBUFS));
    TH_CHECK(tr_posix_errno_code(ENOMEM) == TR_ERR_NOBUFS, "ENOMEM -> %d", tr_posix_errno_code(ENOMEM));
    TH_CHECK(strstr(tr_strerror(tr_posix_errno_code(ENOBUFS)), "arena") == NULL &&
             strstr(tr_strerror(tr_posix_errno_code(ENOBUFS)), "network") != NULL,
             "ENOBUFS reads '%s'", tr_strerror(tr_posix_errno_code(ENOBUFS)));
    TH_CHECK(tr_posix_errno_code(ECONNRESET) == TR_ERR_CLOSED, "ECONNRESET");
    TH_CHECK(tr_posix_errno_code(EAGAIN) == TR_ERR_AGAIN, "EAGAIN");
    TH_CHECK(tr_posix_errno_code(EACCES) == TR_ERR_IO, "EACCES");
}

static void test_table(void)
{
    static const char *const bad[] = { "", ":80", "127.0.0.1", "127.0.0.1:", "127.0.0.1:0",
                                       "127.0.0.1:65536", "127.0.0.1:8x", "localhost:80",
                                       "1.2.3:80", "127.0.0.1:-5", NULL };
    struct tr_posix_endpoint e, t[3];
    struct tr_posix_table_config tc;
    struct tr_posix px;
    char err[256];
    int i;

    TH_CHECK(tr_posix_endpoint_parse(&e, "198.18.0.10:5001", err, sizeof err) == 0 &&
             e.addr == htonl(0xc612000au) && e.port == 5001, "endpoint parses");
    TH_CHECK(tr_posix_endpoint_parse(&e, "127.0.0.1:65535", err, sizeof err) == 0 &&
             e.port == 65535, "port 65535");
    for (i = 0; bad[i]; i++)
        TH_CHECK(tr_posix_endpoint_parse(&e, bad[i], err, sizeof err) == TR_ERR_INVAL &&
                 strstr(err, "IPV4:PORT"), "bad endpoint refused with a message");
    TH_CHECK(tr_posix_endpoint_parse(&e, NULL, err, sizeof err) == TR_ERR_INVAL, "NULL refused");

    tr_posix_table_config_default(&tc);
    TH_CHECK(tc.rank == -1 && tc.world == -1 && !tc.table && tc.spin_us == TR_POSIX_SPIN_AUTO &&
             tc.timeout_ms == 0, "table config defaults");
    t[0].addr = t[1].addr = t[2].addr = htonl(0x7f000001u);
    t[0].port = 1; t[1].port = 2; t[2].port = 3;
    tc.table = t; tc.world = 3; tc.rank = 3;
    TH_CHECK(tr_posix_connect_table(&px, &tc, err, sizeof err) == TR_ERR_INVAL &&
             px.fd[0] == -1 && px.fd[1] == -1 && strstr(err, "rank 3"), "rank out of range");
    tc.rank = 0; tc.world = 0;
    TH_CHECK(tr_posix_connect_table(&px, &tc, err, sizeof err) == TR_ERR_INVAL, "world 0");
    tc.world = TR_POSIX_MAX_WORLD + 1;
    TH_CHECK(tr_posix_connect_table(&px, &tc, err, sizeof err) == TR_ERR_INVAL, "world too big");
    tc.world = 3; tc.table = NULL;
    TH_CHECK(tr_posix_connect_table(&px, &tc, err, sizeof err) == TR_ERR_INVAL, "no table");
    tc.table = t; t[2].port = 1;
    TH_CHECK(tr_posix_connect_table(&px, &tc, err, sizeof err) == TR_ERR_INVAL &&
             strstr(err, "ranks 0 and 2 share"), "duplicate entry");
    t[2].port = 3; t[1].addr = 0;
    TH_CHECK(tr_posix_connect_table(&px, &tc, err, sizeof err) == TR_ERR_INVAL &&
             strstr(err, "rank 1"), "entry without an address");
    /* world 1: no sockets, nothing to wait for */
    tc.world = 1; tc.rank = 0; tc.spin_us = 7;
    TH_CHECK(tr_posix_connect_table(&px, &tc, err, sizeof err) == 0 && px.world == 1 &&
             px.fd[0] == -1 && px.fd[1] == -1 && px.spin_us == 7, "world 1");
}

int main(void)
{
    signal(SIGPIPE, SIG_DFL);          /* a SIGPIPE would kill the test: MSG_NOSIGNAL */
    test_wire();
    test_token();
    test_plan();
    test_transport();
    test_link_window();
    test_spin_policy();
    test_table();
    test_errno_codes();
    return th_report("posix_unit");
}
