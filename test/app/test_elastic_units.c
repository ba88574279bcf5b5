/* Unit tests of core/tr_elastic: the coordinator's decision (split-brain
 * rule, --min-ranks, the state's source, the new ranks) and the membership
 * messages (round trips, every kind of garbage refused). */
#include <string.h>

#include "harness.h"
#include "tr_elastic.h"
#include "tr_error.h"

static struct tr_el_view prev, next;

static void view_of(struct tr_el_view *v, unsigned world)
{
    uint32_t addr[16];
    uint16_t port[16];
    for (unsigned i = 0; i < world; i++) {
        addr[i] = 0x0100007fu;
        port[i] = (uint16_t)(5000 + i);
    }
    tr_el_view_initial(v, world, addr, port);
}

static struct tr_el_join member(uint32_t rank, uint64_t step)
{
    struct tr_el_join j;
    memset(&j, 0, sizeof j);
    j.rank = rank;
    j.step = step;
    j.addr = 0x0100007fu;
    j.port = (uint16_t)(5000 + rank);
    return j;
}

static struct tr_el_join joiner(uint32_t rank, uint16_t port)
{
    struct tr_el_join j = member(rank, 0);
    j.flags = TR_EL_JOINER;
    j.port = port;
    return j;
}

static void test_decide(void)
{
    struct tr_el_join j[8];
    struct tr_el_abort why;
    int v;

    /* 4 ranks, rank 2 gone: 3 of 4 go on, new ranks 0,1,2 = old 0,1,3; the
     * source is the highest step (rank 3 finished one more step) */
    view_of(&prev, 4);
    j[0] = member(3, 11); j[1] = member(0, 10); j[2] = member(1, 10);
    v = tr_el_decide(&prev, j, 3, 1, &next, &why);
    TH_CHECK(v == TR_EL_GO, "3 of 4: go (got %d)", v);
    TH_CHECK(next.epoch == 1 && next.n == 3, "epoch %u n %u", next.epoch, next.n);
    TH_CHECK(next.m[0].rank == 0 && next.m[1].rank == 1 && next.m[2].rank == 3,
             "members in ascending rank: %u %u %u", next.m[0].rank, next.m[1].rank, next.m[2].rank);
    TH_CHECK(next.m[2].port == 5003, "address follows the member");
    TH_CHECK(next.source == 2 && next.step == 11, "source = new rank 2 (old 3) at step 11: %u %llu",
             next.source, (unsigned long long)next.step);
    /* ties: the lowest rank */
    j[0] = member(3, 10);
    v = tr_el_decide(&prev, j, 3, 1, &next, &why);
    TH_CHECK(v == TR_EL_GO && next.source == 0 && why.source == 0, "tie: lowest rank is the source");

    /* exactly half: only the half with the previous lowest rank goes on */
    j[0] = member(0, 5); j[1] = member(1, 5);
    TH_CHECK(tr_el_decide(&prev, j, 2, 1, &next, &why) == TR_EL_GO, "half with rank 0 goes on");
    j[0] = member(2, 5); j[1] = member(3, 5);
    v = tr_el_decide(&prev, j, 2, 1, &next, &why);
    TH_CHECK(v == TR_EL_NO_MAJORITY && why.reason == TR_EL_NO_MAJORITY && why.joined == 2 &&
             why.previous == 4, "the other half stops (got %d)", v);
    j[0] = member(3, 5);
    TH_CHECK(tr_el_decide(&prev, j, 1, 1, &next, &why) == TR_EL_NO_MAJORITY, "1 of 4 stops");
    /* 2 ranks: the lower continues alone, the upper never */
    view_of(&prev, 2);
    j[0] = member(0, 7);
    TH_CHECK(tr_el_decide(&prev, j, 1, 1, &next, &why) == TR_EL_GO && next.n == 1,
             "of 2, rank 0 alone goes on");
    j[0] = member(1, 7);
    TH_CHECK(tr_el_decide(&prev, j, 1, 1, &next, &why) == TR_EL_NO_MAJORITY,
             "of 2, rank 1 alone stops");
    /* a view after a change: the lowest of *that* view counts */
    view_of(&prev, 4);
    j[0] = member(1, 3); j[1] = member(2, 3); j[2] = member(3, 3);
    tr_el_decide(&prev, j, 3, 1, &next, &why);     /* 0 left: {1,2,3} */
    prev = next;
    j[0] = member(1, 4); j[1] = member(3, 4);
    TH_CHECK(tr_el_decide(&prev, j, 2, 1, &next, &why) == TR_EL_GO && next.epoch == 2,
             "2 of {1,2,3} go on at epoch 2");
    j[0] = member(2, 4);
    TH_CHECK(tr_el_decide(&prev, j, 1, 1, &next, &why) == TR_EL_NO_MAJORITY,
             "1 of 3 stops");

    /* below --min-ranks: the latest state is named for the checkpoint */
    view_of(&prev, 3);
    j[0] = member(0, 8); j[1] = member(2, 9);
    v = tr_el_decide(&prev, j, 2, 3, &next, &why);
    TH_CHECK(v == TR_EL_BELOW_MIN && why.reason == TR_EL_BELOW_MIN && why.min_ranks == 3 &&
             why.step == 9 && why.source == 2, "below min: step %llu source %u",
             (unsigned long long)why.step, why.source);
    TH_CHECK(tr_el_decide(&prev, j, 2, 2, &next, &why) == TR_EL_GO, "at min: go");

    /* a joiner: counted for min, not for the majority, never the source */
    view_of(&prev, 4);
    j[0] = member(0, 6); j[1] = member(1, 6); j[2] = member(3, 6);
    tr_el_decide(&prev, j, 3, 1, &next, &why);
    prev = next;                                    /* {0,1,3} at epoch 1 */
    j[3] = joiner(2, 6002);
    v = tr_el_decide(&prev, j, 4, 4, &next, &why);
    TH_CHECK(v == TR_EL_GO && next.n == 4 && next.m[2].rank == 2 && next.m[2].port == 6002 &&
             next.source == 0 && next.epoch == 2, "joiner placed at its rank, new address");
    j[0] = joiner(2, 6002);
    v = tr_el_decide(&prev, j, 1, 1, &next, &why);
    TH_CHECK(v == TR_EL_NO_MAJORITY, "joiners alone never go on (got %d)", v);

    /* input that breaks the rules */
    j[0] = member(0, 1); j[1] = member(0, 1);
    TH_CHECK(tr_el_decide(&prev, j, 2, 1, &next, &why) == TR_ERR_INVAL, "duplicate rank");
    j[1] = joiner(1, 7000);
    TH_CHECK(tr_el_decide(&prev, j, 2, 1, &next, &why) == TR_ERR_INVAL, "joiner that is a member");
    j[1] = member(2, 1);
    TH_CHECK(tr_el_decide(&prev, j, 2, 1, &next, &why) == TR_ERR_INVAL, "member flag on a stranger");
}

static void roundtrip(const struct tr_el_msg *m, const char *what)
{
    static uint8_t buf[TR_EL_MAX_BYTES], again[TR_EL_MAX_BYTES];
    static struct tr_el_msg d;
    size_t n = tr_el_encode(m, buf, sizeof buf), total = 0;
    TH_CHECK(n == tr_el_size(m) && n > 0, "%s: encodes (%zu)", what, n);
    TH_CHECK(tr_el_head_total(buf, &total) == 0 && total == n, "%s: head says %zu", what, total);
    TH_CHECK(tr_el_decode(buf, n, &d) == 0, "%s: decodes", what);
    TH_CHECK(tr_el_encode(&d, again, sizeof again) == n && memcmp(buf, again, n) == 0,
             "%s: decode+encode is the identity", what);
    TH_CHECK(d.type == m->type && d.token == m->token, "%s: type and token", what);
    TH_CHECK(tr_el_decode(buf, n - 1, &d) < 0 && tr_el_decode(buf, n + 0, &d) == 0,
             "%s: a short message is refused", what);
    TH_CHECK(tr_el_encode(m, buf, n - 1) == 0, "%s: a short buffer is refused", what);
    /* any single flipped byte of the head's fixed part is refused */
    for (size_t i = 0; i < 8; i++) {
        buf[i] ^= 0x40;
        TH_CHECK(tr_el_decode(buf, n, &d) < 0, "%s: head byte %zu flipped accepted", what, i);
        buf[i] ^= 0x40;
    }
    buf[20] ^= 1;                                   /* body length */
    TH_CHECK(tr_el_decode(buf, n, &d) < 0, "%s: wrong body length accepted", what);
    buf[20] ^= 1;
}

static void test_wire(void)
{
    static struct tr_el_msg m, d;
    static uint8_t buf[TR_EL_MAX_BYTES];
    size_t n;

    memset(&m, 0, sizeof m);
    m.type = TR_EL_JOIN;
    m.token = 0x1122334455667788ull;
    m.epoch = 3;
    m.join = joiner(2, 6002);
    m.join.step = 0x0102030405ull;
    roundtrip(&m, "JOIN");
    n = tr_el_encode(&m, buf, sizeof buf);
    tr_el_decode(buf, n, &d);
    TH_CHECK(d.epoch == 3 && d.join.rank == 2 && d.join.flags == TR_EL_JOINER &&
             d.join.step == 0x0102030405ull && d.join.port == 6002 && d.join.addr == 0x0100007fu,
             "JOIN fields");
    buf[TR_EL_HEAD_BYTES + 4] |= 2;                 /* unknown flag */
    TH_CHECK(tr_el_decode(buf, n, &d) < 0, "JOIN with an unknown flag refused");
    buf[TR_EL_HEAD_BYTES + 4] &= (uint8_t)~2;
    buf[TR_EL_HEAD_BYTES + 23] = 1;                 /* reserved */
    TH_CHECK(tr_el_decode(buf, n, &d) < 0, "JOIN with a reserved byte set refused");

    m.type = TR_EL_REPLY;
    m.answer = TR_EL_EXCLUDED;
    m.coord = 1;
    roundtrip(&m, "REPLY");
    m.answer = 9;
    n = tr_el_encode(&m, buf, sizeof buf);
    TH_CHECK(tr_el_decode(buf, n, &d) < 0, "REPLY with an unknown answer refused");

    m.type = TR_EL_ABORT;
    m.abort.reason = TR_EL_BELOW_MIN;
    m.abort.joined = 1; m.abort.previous = 2; m.abort.min_ranks = 2;
    m.abort.step = 77; m.abort.source = 1;
    roundtrip(&m, "ABORT");
    m.abort.reason = TR_EL_GO;
    n = tr_el_encode(&m, buf, sizeof buf);
    TH_CHECK(tr_el_decode(buf, n, &d) < 0, "ABORT with reason GO refused");

    m.type = TR_EL_VIEW;
    view_of(&m.view, 5);
    m.view.epoch = 4;
    m.view.source = 3;
    m.view.step = 1234;
    roundtrip(&m, "VIEW");
    n = tr_el_encode(&m, buf, sizeof buf);
    tr_el_decode(buf, n, &d);
    TH_CHECK(d.view.n == 5 && d.view.epoch == 4 && d.view.source == 3 && d.view.step == 1234 &&
             d.view.m[4].port == 5004, "VIEW fields");
    buf[TR_EL_HEAD_BYTES + 16 + 12] = 0;            /* entry 1's rank = entry 0's */
    TH_CHECK(tr_el_decode(buf, n, &d) < 0, "VIEW with ranks not ascending refused");
    buf[TR_EL_HEAD_BYTES + 16 + 12] = 1;
    buf[TR_EL_HEAD_BYTES + 4] = 5;                  /* source = n */
    TH_CHECK(tr_el_decode(buf, n, &d) < 0, "VIEW whose source is not a member refused");
    m.view.n = 0;
    TH_CHECK(tr_el_size(&m) == 0 && tr_el_encode(&m, buf, sizeof buf) == 0, "empty VIEW not encodable");
    m.view.n = TR_EL_MAX_MEMBERS + 1;
    TH_CHECK(tr_el_encode(&m, buf, sizeof buf) == 0, "oversized VIEW not encodable");

    /* garbage */
    memcpy(buf, "TRL1", 4);
    TH_CHECK(!tr_el_prefix_ok(buf, 4) && tr_el_prefix_ok((const uint8_t *)"TR", 2),
             "prefix: a link hello is not a membership message");
    memset(&m, 0, sizeof m);
    m.type = TR_EL_JOIN;
    n = tr_el_encode(&m, buf, sizeof buf);
    buf[6] = 9;                                     /* unknown type */
    TH_CHECK(tr_el_head_total(buf, &n) < 0, "unknown type refused");
    m.type = 0;
    TH_CHECK(tr_el_encode(&m, buf, sizeof buf) == 0, "type 0 not encodable");
}

static void test_token(void)
{
    uint64_t t = 0xabcdef;
    TH_CHECK(tr_el_link_token(t, 0) == t, "epoch 0: the job's token");
    TH_CHECK(tr_el_link_token(t, 1) != t && tr_el_link_token(t, 1) != tr_el_link_token(t, 2) &&
             tr_el_link_token(t, 1) != 0, "later epochs: other tokens");
    TH_CHECK(tr_el_link_token(t, 1) == tr_el_link_token(t, 1), "deterministic");
}

int main(void)
{
    test_decide();
    test_wire();
    test_token();
    return th_report("elastic_units");
}
