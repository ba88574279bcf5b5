/* tinyring: error codes.
 *
 * Every function that can fail returns a negative tr_err, or a non-negative
 * value (0 or a count) on success. Values mirror errno where one exists, as
 * littlefs does, so they read naturally in a debugger. Core never prints:
 * callers turn codes into text with tr_strerror().
 */
#ifndef TR_ERROR_H
#define TR_ERROR_H

enum tr_err {
    TR_OK           = 0,
    TR_ERR_IO       = -5,    /* a port or file operation failed */
    TR_ERR_AGAIN    = -11,   /* would block / still in progress: not an error */
    TR_ERR_NOMEM    = -12,   /* the caller's arena or buffer is too small */
    TR_ERR_BUSY     = -16,   /* a collective is already in progress */
    TR_ERR_INVAL    = -22,   /* bad argument or model description */
    TR_ERR_NOSPC    = -28,   /* no space left on a device (apps, checkpoints) */
    TR_ERR_FLOAT    = -33,   /* core was compiled to fuse multiply-adds
                              * (-ffp-contract=fast where the guard in
                              * tr_config.h cannot stop it): its results would
                              * differ from other targets' (tr_model_init) */
    TR_ERR_RANGE    = -34,   /* a value a lossy codec refuses to encode (NaN or
                              * infinity in a gradient, or a sum that overflowed) */
    TR_ERR_MISMATCH = -52,   /* peers disagree: job token, world size, layout, count */
    TR_ERR_PROTO    = -71,   /* a peer sent bytes that break the wire protocol */
    TR_ERR_FORMAT   = -84,   /* malformed input data (IDX file, checkpoint) */
    TR_ERR_ADDRINUSE = -98,  /* the port to listen on is taken */
    TR_ERR_CLOSED   = -104,  /* the peer closed or reset the connection */
    TR_ERR_NOBUFS   = -105,  /* the system or the TCP/IP stack ran out of buffers
                              * or memory (ENOBUFS, ENOMEM, lwIP's ERR_MEM) */
    TR_ERR_TIMEOUT  = -110,  /* no progress within the deadline */
    TR_ERR_REFUSED  = -111,  /* connection refused / peer not there */
    TR_ERR_UNREACH  = -113   /* no route / interface down */
};

/* A short, static, human-readable text for a code ("peer closed the
 * connection"). Never NULL; unknown codes give "unknown error". */
const char *tr_strerror(int err);

#endif /* TR_ERROR_H */
