/* tinyring: the link hello, the first bytes on every ring connection.
 *
 * Byte-compatible with the POSIX port (port/posix/tr_posix.h), so lwIP and
 * POSIX ranks accept each other in one ring. 24 bytes, integers
 * little-endian:
 *   "TRL1" | u32 version = 1 | u64 job_token | u32 rank (sender) | u32 world
 * The connecting side (rank r -> rank r+1) sends first; the accepting side
 * checks it and answers with its own; anyone else is just disconnected.
 * Freestanding: no lwIP, no libc beyond memcpy/memcmp.
 */
#ifndef TR_LINK_HS_H
#define TR_LINK_HS_H

#include <stdint.h>

#define TR_LINK_HS_BYTES   24u
#define TR_LINK_HS_VERSION 1u

/* Encode this rank's hello into out[TR_LINK_HS_BYTES]. */
void tr_link_hs_put(uint8_t *out, uint64_t job_token, uint32_t rank, uint32_t world);

/* Check a received hello: 0 if it is from rank want_rank of this job,
 * TR_ERR_PROTO for bad magic, TR_ERR_MISMATCH for another version, token,
 * world or rank. */
int tr_link_hs_check(const uint8_t *in, uint64_t job_token, uint32_t world,
                     uint32_t want_rank);

#endif /* TR_LINK_HS_H */
