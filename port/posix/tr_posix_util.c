/* tinyring POSIX port: messages, clock, errno mapping, socket options. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "tr_error.h"
#include "tr_posix_int.h"

/* Writes the message (if there is room) and returns code, so callers can
 * `return tr_posix_fail(err, errlen, TR_ERR_X, "...", ...)`. */
int tr_posix_fail(char *err, size_t errlen, int code, const char *fmt, ...)
{
    va_list ap;
    if (err && errlen) {
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return code;
}

uint32_t tr_posix_clock_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint32_t)((uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u);
}

int tr_posix_left_ms(uint32_t deadline)
{
    int32_t d = (int32_t)(deadline - tr_posix_clock_ms());
    return d > 0 ? (int)d : 0;
}

int tr_posix_errno_code(int e)
{
    switch (e) {
    case EAGAIN:
#if EWOULDBLOCK != EAGAIN
    case EWOULDBLOCK:
#endif
    case EINPROGRESS:   return TR_ERR_AGAIN;
    case EPIPE:
    case ECONNRESET:
    case ECONNABORTED:
    case ENOTCONN:      return TR_ERR_CLOSED;
    case ECONNREFUSED:  return TR_ERR_REFUSED;
    case ETIMEDOUT:     return TR_ERR_TIMEOUT;
    case EADDRINUSE:    return TR_ERR_ADDRINUSE;
    case ENETUNREACH:
    case EHOSTUNREACH:
    case ENETDOWN:
    case EHOSTDOWN:
    case EADDRNOTAVAIL: return TR_ERR_UNREACH;
    case ENOMEM:
    case ENOBUFS:       return TR_ERR_NOBUFS;   /* the kernel's, not the arena */
    default:            return TR_ERR_IO;
    }
}

int tr_posix_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL, 0);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
        return -1;
    return 0;
}

/* Ring link options: no Nagle (headers and small segments go at once),
 * buffers large enough to keep a pipelined segment or two in flight, and one
 * keepalive probe after a second without traffic. A peer whose stack is gone
 * (a board lost power, a host vanished) leaves that probe unanswered, which
 * the kernel's TCP_INFO shows (tcpi_probes) even when every byte sent was
 * acknowledged; a live stack answers at once. The next probe, and the
 * kernel's own verdict on the link, come only after TR_POSIX_KEEPINTVL_S:
 * the collective's timeout decides, not the kernel. */
#define TR_POSIX_KEEPIDLE_S  1
#define TR_POSIX_KEEPINTVL_S 32767      /* Linux's largest */

void tr_posix_link_opts(int fd, int sndbuf, int rcvbuf)
{
    int one = 1, idle = TR_POSIX_KEEPIDLE_S, intvl = TR_POSIX_KEEPINTVL_S;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof intvl);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &one, sizeof one);
    if (sndbuf == 0)
        sndbuf = TR_POSIX_DEFAULT_SOCKBUF;
    if (rcvbuf == 0)
        rcvbuf = TR_POSIX_DEFAULT_SOCKBUF;
    if (sndbuf > 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
    if (rcvbuf > 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
}

/* The window a ring link offers, at most TR_POSIX_DEFAULT_WINDOW, so the
 * peer never has more than that unacknowledged (the rest of a message waits
 * in its send buffer, not in the network). Without it a bucket went out as
 * one burst, paced (BBR) at a bandwidth estimated from tiny exchanges: on a
 * 10 Mbit/s link with a 50 ms queue (65.5 KB) the 62.7 KB bucket overflowed
 * it, and the retransmissions took bench-net's --compress none at 10 Mbit/s
 * from ~1,800 down to 600-1,700 samples/s from run to run. Set before the
 * connection exists (on the listening socket, whose links inherit it, or
 * before connect): the first window and the window scale are chosen then,
 * and a window once offered is never taken back. Not on loopback, whose
 * 64 KiB segments it would starve (a 1 MiB allreduce took 2-3x as long),
 * nor when the caller chose its own rcvbuf. Unread data still fills the
 * whole receive buffer: the clamp bounds the bytes in flight, not the bytes
 * buffered. */
void tr_posix_link_clamp(int fd, uint32_t addr, int rcvbuf)
{
    int clamp = TR_POSIX_DEFAULT_WINDOW;
    if (rcvbuf != 0 || addr == htonl(INADDR_ANY) || (ntohl(addr) >> 24) == 127u)
        return;
    setsockopt(fd, IPPROTO_TCP, TCP_WINDOW_CLAMP, &clamp, sizeof clamp);
}

const char *tr_posix_ntoa(uint32_t addr, char *buf, size_t len)
{
    struct in_addr a;
    a.s_addr = addr;
    if (!inet_ntop(AF_INET, &a, buf, (socklen_t)len))
        snprintf(buf, len, "?");
    return buf;
}

void tr_posix_close_fd(int *fd)
{
    if (*fd >= 0) {
        close(*fd);
        *fd = -1;
    }
}

int tr_posix_send_all(int fd, const void *buf, size_t len, uint32_t deadline)
{
    const uint8_t *p = buf;
    while (len) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            p += n;
            len -= (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            struct pollfd pf = { fd, POLLOUT, 0 };
            int left = tr_posix_left_ms(deadline);
            if (left == 0)
                return TR_ERR_TIMEOUT;
            poll(&pf, 1, left);
            continue;
        }
        return n < 0 ? tr_posix_errno_code(errno) : TR_ERR_IO;
    }
    return 0;
}

int tr_posix_recv_all(int fd, void *buf, size_t len, uint32_t deadline)
{
    uint8_t *p = buf;
    while (len) {
        ssize_t n = recv(fd, p, len, MSG_DONTWAIT);
        if (n > 0) {
            p += n;
            len -= (size_t)n;
            continue;
        }
        if (n == 0)
            return TR_ERR_CLOSED;
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            struct pollfd pf = { fd, POLLIN, 0 };
            int left = tr_posix_left_ms(deadline);
            if (left == 0)
                return TR_ERR_TIMEOUT;
            poll(&pf, 1, left);
            continue;
        }
        return tr_posix_errno_code(errno);
    }
    return 0;
}
