/* test/fuzz: the lwIP harnesses' stack. One lwIP (NO_SYS=1, the port's
 * lwipopts.h) in the process, on a netif that loops every packet back into
 * itself (10.0.0.1): what the stack sends is queued (a full queue drops
 * it, as a wire would) until the harness delivers it. Provides what a
 * NO_SYS application must: sys_now, on a clock the harness advances, and
 * the port's assert hook. */
#ifndef FUZZ_LOOPIF_H
#define FUZZ_LOOPIF_H

#include <stddef.h>
#include <stdint.h>

struct pbuf;

extern uint32_t fuzz_lwip_ms;   /* sys_now(); starts at 1 */

/* lwip_init and the netif, once per process */
void fuzz_lwip_setup(void);
/* hands what is queued to the stack (packets it sends meanwhile wait for
 * the next call) */
void fuzz_lwip_deliver(void);
/* forgets what is queued */
void fuzz_lwip_drop(void);
/* After a harness closed its port: every pcb lwIP still holds aborted (or
 * closed: listeners), the queue dropped; then the pbuf pool must be whole
 * again (FZ_ASSERT), or the port leaked one. */
void fuzz_lwip_reset(void);

/* The next chain of pbufs cut from stream[*fed, len): 1 + per_chain[*chains
 * % 4] % 4 pieces, piece k of size_of(piece[(*chains + k) % 8]) bytes (at
 * most a pool buffer's and what is left), *fed and *chains moved on; NULL
 * when all is fed or the pool is dry (lwIP would drop that frame). */
struct pbuf *fuzz_lwip_chain(const uint8_t *stream, size_t len, size_t *fed,
                             const uint8_t per_chain[4], const uint8_t piece[8],
                             unsigned *chains, size_t (*size_of)(uint8_t));

#endif /* FUZZ_LOOPIF_H */
