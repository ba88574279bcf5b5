/* test/fuzz: the lwIP harnesses' stack. One lwIP (NO_SYS=1, the port's
 * lwipopts.h) in the process, on a netif that loops every packet back into
 * itself (10.0.0.1): what the stack sends is queued (a full queue drops
 * it, as a wire would) until the harness delivers it. Provides what a
 * NO_SYS application must: sys_now, on a clock the harness advances, and
 * the port's assert hook. */
#ifndef FUZZ_LOOPIF_H
#define FUZZ_LOOPIF_H

#include <stdint.h>

extern uint32_t fuzz_lwip_ms;   /* sys_now(); starts at 1 */

/* lwip_init and the netif, once per process */
void fuzz_lwip_setup(void);
/* hands what is queued to the stack (packets it sends meanwhile wait for
 * the next call) */
void fuzz_lwip_deliver(void);
/* forgets what is queued */
void fuzz_lwip_drop(void);

#endif /* FUZZ_LOOPIF_H */
