/* tinyring: error code texts. */
#include "tr_config.h"   /* first: limits and the float guard */
#include "tr_error.h"

const char *tr_strerror(int err)
{
    switch (err) {
    case TR_OK:            return "success";
    case TR_ERR_IO:        return "input/output error";
    case TR_ERR_AGAIN:     return "operation would block";
    case TR_ERR_NOMEM:     return "arena or buffer too small";
    case TR_ERR_BUSY:      return "a collective is already in progress";
    case TR_ERR_INVAL:     return "invalid argument";
    case TR_ERR_NOSPC:     return "no space left on device";
    case TR_ERR_FLOAT:     return "core compiled with fused multiply-adds (-ffp-contract=fast): results would differ from other targets";
    case TR_ERR_RANGE:     return "NaN or infinity where a finite value is needed";
    case TR_ERR_MISMATCH:  return "peers disagree (job, world size, layout or count)";
    case TR_ERR_PROTO:     return "protocol error: unexpected bytes from peer";
    case TR_ERR_FORMAT:    return "malformed input data";
    case TR_ERR_ADDRINUSE: return "address already in use";
    case TR_ERR_CLOSED:    return "peer closed the connection";
    case TR_ERR_NOBUFS:    return "network stack out of buffers or memory";
    case TR_ERR_TIMEOUT:   return "timed out waiting for peer";
    case TR_ERR_REFUSED:   return "connection refused";
    case TR_ERR_UNREACH:   return "network unreachable";
    default:               return "unknown error";
    }
}
