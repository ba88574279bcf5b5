/* Fuzz harness: the collectives' message stream (core/tr_comm_engine.c and
 * the header codec of core/tr_comm_wire.c): headers and payloads from the
 * left neighbour of every collective (ring, chain and reduce+broadcast
 * allreduce, reduce, broadcast, barrier).
 *
 * Input: a plan (fuzz_ring.h), the transport's chunk sizes, then edits over
 * the left link's stream after the hello (which stays correct).
 * Invariants: a collective that completes read exactly as many bytes as a
 * correct neighbour sends, with every header byte equal to the correct one
 * (only payload bytes may differ: they are data), and when nothing differed
 * its result is bitwise the reference rank's; one that fails fails with a
 * code a peer can cause, names a rank of this world, and leaves the
 * communicator broken; nothing hangs.
 */
#include <string.h>

#include "comm_util.h"
#include "fuzz_ring.h"
#include "tr_comm_internal.h"
#include "tr_error.h"
#include "tr_util.h"

/* Every header of the reference stream [from, len) equals the same bytes of
 * the stream the rank read, and the rank read exactly that much. */
static void check_headers(const struct fz_stream *got, const struct fz_stream *ref,
                          size_t from)
{
    size_t at = from;
    FZ_ASSERT(got->pos == ref->len, "completed after reading %zu bytes, a neighbour sends %zu",
              got->pos, ref->len);
    while (at < ref->len) {
        FZ_ASSERT(memcmp(got->buf + at, ref->buf + at, TR_WIRE_HDR_BYTES) == 0,
                  "completed with a header at byte %zu a correct neighbour does not send", at);
        at += TR_WIRE_HDR_BYTES + tr_get_le32(ref->buf + at + 24);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fz in = { data, size }, none = { NULL, 0 };
    struct fz_plan pl;
    struct fz_ref ref;
    struct fz_net net;
    struct tr_comm_config cfg;
    struct tr_comm c;
    uint8_t *scratch, *buf;
    size_t from;
    int rc;

    fz_plan_read(&pl, &in);
    FZ_ASSERT(fz_ref_run(&ref, &pl) == 0, "the reference ring failed");
    fz_net_init(&net, &in);
    from = ref.hello_len[TR_LEFT];
    fz_stream_edit(&net.in[TR_LEFT], &ref.in[TR_LEFT], from, &in);
    fz_stream_edit(&net.in[TR_RIGHT], &ref.in[TR_RIGHT], 0, &none);
    job_cfg(&cfg, pl.world, pl.rank, pl.segment, 1000);
    scratch = malloc(tr_comm_scratch_size(&cfg));
    FZ_ASSERT(tr_comm_init(&c, &cfg, &net.tp, scratch, tr_comm_scratch_size(&cfg)) == 0,
              "init");
    FZ_ASSERT(tr_comm_hello(&c) == 0, "an untouched hello failed");
    buf = malloc(ref.bytes + 1);
    fz_fill(buf, &pl, pl.rank);

    rc = fz_finish(&c, fz_start(&c, &pl, buf));
    if (rc == 0) {
        check_headers(&net.in[TR_LEFT], &ref.in[TR_LEFT], from);
        if (memcmp(net.in[TR_LEFT].buf, ref.in[TR_LEFT].buf, ref.in[TR_LEFT].len) == 0)
            FZ_ASSERT(memcmp(buf, ref.result, ref.bytes) == 0,
                      "the correct stream gave another result than the reference");
    } else {
        fz_check_failure(&c, &pl, rc);
    }
    free(buf);
    free(scratch);
    fz_net_free(&net);
    fz_ref_free(&ref);
    return 0;
}
