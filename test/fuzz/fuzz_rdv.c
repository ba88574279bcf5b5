/* Fuzz harness: the POSIX port's rendezvous messages (port/posix/
 * tr_posix_wire.c): the registration a rank sends the master and the
 * master's answer (head and table) a rank reads.
 *
 * Input: a mode byte (bit 0: 0 = registration, 1 = answer), then the bytes
 * as they arrive on the socket.
 * Invariants: a message that decodes encodes back to the very bytes (no
 * field, reserved ones included, is silently ignored); a registration that
 * decodes names a listening port; an answer head that decodes has a status
 * of 0 or a tr_err and at most TR_POSIX_MAX_WORLD entries.
 */
#include <string.h>

#include "fuzz.h"
#include "tr_error.h"
#include "tr_posix_int.h"

#define ANS_MAX (TR_POSIX_ANS_BYTES + 8u * TR_POSIX_MAX_WORLD)

static void registration(const uint8_t *p, size_t n)
{
    struct tr_posix_intro r;
    uint8_t again[TR_POSIX_REG_BYTES];
    if (n < TR_POSIX_REG_BYTES)
        return;                          /* the master waits for the rest */
    if (tr_posix_get_reg(&r, p) < 0)
        return;
    FZ_ASSERT(r.port != 0, "a registration without a listening port decoded");
    tr_posix_put_reg(again, &r);
    FZ_ASSERT(memcmp(again, p, sizeof again) == 0,
              "a registration that decodes encodes to other bytes");
}

static void answer(const uint8_t *p, size_t n)
{
    static struct tr_posix_endpoint table[TR_POSIX_MAX_WORLD];
    static uint8_t again[ANS_MAX];
    uint32_t world, why, k, i;
    int status;
    if (n < TR_POSIX_ANS_BYTES || tr_posix_get_ans_head(p, &status, &world, &why, &k) < 0)
        return;
    FZ_ASSERT(status <= 0 && k <= TR_POSIX_MAX_WORLD, "head decoded with status %d, %u entries",
              status, k);
    if (n < TR_POSIX_ANS_BYTES + 8u * k)
        return;                          /* the rank waits for the rest */
    for (i = 0; i < k; i++)
        if (tr_posix_get_ans_entry(p + TR_POSIX_ANS_BYTES + 8 * i, &table[i]) < 0)
            return;
    tr_posix_put_ans(again, status, world, why, table, k);
    FZ_ASSERT(memcmp(again, p, TR_POSIX_ANS_BYTES + 8u * k) == 0,
              "an answer that decodes (%u entries) encodes to other bytes", k);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fz in = { data, size };
    uint8_t mode = fz_u8(&in);
    if (mode & 1)
        answer(in.p, in.n);
    else
        registration(in.p, in.n);
    return 0;
}
