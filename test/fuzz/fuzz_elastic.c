/* Fuzz harness: the elastic ring's membership messages (core/tr_elastic.c)
 * as a rank reads them from its listening socket or from the coordinator,
 * and the coordinator's decision over JOINs taken from the input.
 *
 * Input: a mode byte (bit 0: 0 = one message as it arrives on the socket,
 * 1 = a decision: a previous view size, min_ranks, then JOIN bodies), then
 * the bytes.
 * Invariants: a message that decodes encodes back to the very bytes and
 * its head announced exactly its length; a decoded VIEW has 1..max members
 * in strictly ascending rank and a source among them; tr_el_decide either
 * refuses the input (TR_ERR_INVAL) or returns a verdict whose view keeps
 * only ranks that joined, holds a strict majority (or the half with the
 * lowest rank) of the previous view, at least min_ranks members, and a
 * source with the highest step of the previous members that joined.
 */
#include <string.h>

#include "fuzz.h"
#include "tr_elastic.h"
#include "tr_error.h"

static void message(const uint8_t *p, size_t n)
{
    static struct tr_el_msg m;
    static uint8_t again[TR_EL_MAX_BYTES];
    size_t total, i;
    if (n < TR_EL_HEAD_BYTES || !tr_el_prefix_ok(p, 4) || tr_el_head_total(p, &total) < 0)
        return;
    FZ_ASSERT(total >= TR_EL_HEAD_BYTES && total <= TR_EL_MAX_BYTES, "head total %zu", total);
    if (n < total || tr_el_decode(p, total, &m) < 0)
        return;
    FZ_ASSERT(tr_el_encode(&m, again, sizeof again) == total && memcmp(again, p, total) == 0,
              "a message that decodes (type %u, %zu bytes) encodes to other bytes", m.type, total);
    if (m.type != TR_EL_VIEW)
        return;
    FZ_ASSERT(m.view.n >= 1 && m.view.n <= TR_EL_MAX_MEMBERS && m.view.source < m.view.n,
              "view of %u members, source %u", m.view.n, m.view.source);
    for (i = 1; i < m.view.n; i++)
        FZ_ASSERT(m.view.m[i].rank > m.view.m[i - 1].rank, "view ranks not ascending");
}

static void decision(struct fz *in)
{
    static struct tr_el_view prev, next;
    static struct tr_el_join j[64];
    struct tr_el_abort why;
    unsigned world = 1 + fz_u8(in) % 16, min = fz_u8(in) % 18, n = fz_u8(in) % 20, i, members = 0;
    uint64_t best = 0;
    int v, lowest = 0;
    tr_el_view_initial(&prev, world, NULL, NULL);
    prev.epoch = fz_u8(in);
    for (i = 0; i < n; i++) {
        j[i].rank = fz_u8(in) % 24;
        j[i].flags = fz_u8(in) & TR_EL_JOINER;
        j[i].step = fz_u8(in);
        j[i].addr = 0;
        j[i].port = fz_u16(in);
    }
    v = tr_el_decide(&prev, j, n, min, &next, &why);
    if (v == TR_ERR_INVAL)
        return;
    FZ_ASSERT(v == TR_EL_GO || v == TR_EL_NO_MAJORITY || v == TR_EL_BELOW_MIN, "verdict %d", v);
    for (i = 0; i < n; i++) {
        FZ_ASSERT((tr_el_view_index(&prev, j[i].rank) >= 0) == !(j[i].flags & TR_EL_JOINER),
                  "accepted a joiner that is a member or a stranger as a member");
        if (j[i].flags & TR_EL_JOINER)
            continue;
        members++;
        lowest |= j[i].rank == 0;
        if (j[i].step > best)
            best = j[i].step;
    }
    FZ_ASSERT((v == TR_EL_NO_MAJORITY) == !(2 * members > world || (2 * members == world && lowest)),
              "split-brain rule: %u of %u, lowest %d, verdict %d", members, world, lowest, v);
    if (v != TR_EL_GO)
        return;
    FZ_ASSERT(next.n == n && n >= min && next.epoch == prev.epoch + 1, "view of %u (min %u)",
              next.n, min);
    FZ_ASSERT(next.step == best && !(tr_el_view_index(&prev, next.m[next.source].rank) < 0),
              "source is not the latest previous member");
    for (i = 0; i < next.n; i++)
        FZ_ASSERT(i == 0 || next.m[i].rank > next.m[i - 1].rank, "view not ascending");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fz in = { data, size };
    uint8_t mode = fz_u8(&in);
    if (mode & 1)
        decision(&in);
    else
        message(in.p, in.n);
    return 0;
}
