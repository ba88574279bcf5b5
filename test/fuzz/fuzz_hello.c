/* Fuzz harness: the collectives' hello (core/tr_comm_hello.c, the header
 * and hello codecs of core/tr_comm_wire.c) on both links, verdict ring
 * included.
 *
 * Input: a plan (fuzz_ring.h), the transport's chunk sizes, a byte choosing
 * the link whose stream is edited (bit 0: 0 = left, 1 = right), then edits
 * over that link's hello stream (the other link's stays a correct
 * neighbour's).
 * Invariants: a hello that succeeds read exactly the bytes a correct
 * neighbour sends on each link, no more and no different (every field is
 * checked, reserved ones too); one that fails fails with a code a peer can
 * cause, names a rank of this world, and leaves the communicator broken;
 * nothing hangs.
 */
#include <string.h>

#include "comm_util.h"
#include "fuzz_ring.h"
#include "tr_error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fz in = { data, size };
    struct fz_plan pl;
    struct fz_ref ref;
    struct fz_net net;
    struct fz_stream hello[2];
    struct tr_comm_config cfg;
    struct tr_comm c;
    uint8_t *scratch;
    int side, p, rc;

    fz_plan_read(&pl, &in);
    pl.kind = FZ_BARRIER;                  /* the hello is all this one needs */
    FZ_ASSERT(fz_ref_run(&ref, &pl) == 0, "the reference ring failed");
    fz_net_init(&net, &in);
    side = fz_u8(&in) & 1;
    for (p = 0; p < 2; p++) {
        struct fz empty = { NULL, 0 };
        hello[p] = ref.in[p];
        hello[p].len = ref.hello_len[p];
        fz_stream_edit(&net.in[p], &hello[p], 0, p == side ? &in : &empty);
    }
    job_cfg(&cfg, pl.world, pl.rank, pl.segment, 1000);
    scratch = malloc(tr_comm_scratch_size(&cfg));
    FZ_ASSERT(tr_comm_init(&c, &cfg, &net.tp, scratch, tr_comm_scratch_size(&cfg)) == 0,
              "init");

    rc = tr_comm_hello(&c);
    if (rc == 0) {
        for (p = 0; p < 2; p++) {
            FZ_ASSERT(net.in[p].pos == hello[p].len, "hello passed after reading %zu bytes "
                      "on link %d, a neighbour sends %zu", net.in[p].pos, p, hello[p].len);
            FZ_ASSERT(memcmp(net.in[p].buf, hello[p].buf, hello[p].len) == 0,
                      "hello passed on link %d with bytes a correct neighbour does not send", p);
        }
    } else {
        fz_check_failure(&c, &pl, rc);
    }
    free(scratch);
    fz_net_free(&net);
    fz_ref_free(&ref);
    return 0;
}
