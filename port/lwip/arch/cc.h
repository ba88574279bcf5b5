/* tinyring: lwIP's compiler/platform header for the lwIP port.
 *
 * Shared by the host tests and the firmware build: GCC on a little-endian
 * target with <stdint.h> (glibc, newlib). Assertions and diagnostics go to a
 * function the application provides, so the port itself needs no stdio:
 *
 *   void tr_lwip_platform_assert(const char *msg, const char *file, int line);
 *
 * (host: print and abort; board: record and halt). Define LWIP_NOASSERT to
 * compile the checks out. lwIP's random numbers (LWIP_RAND: TCP's first
 * local port, and the secret of its initial sequence numbers, tr_lwip.h)
 * come from another:
 *
 *   unsigned tr_lwip_rand(void);
 *
 * A process or board started again must not reuse the local ports of the
 * connections it had before: its peers may still hold those connections,
 * and a SYN on one of them is not answered as a new connection.
 */
#ifndef TR_LWIP_ARCH_CC_H
#define TR_LWIP_ARCH_CC_H

#ifndef BYTE_ORDER
#define BYTE_ORDER LITTLE_ENDIAN
#endif

/* lwIP's packed-struct macros for GCC */
#define PACK_STRUCT_FIELD(x)  x
#define PACK_STRUCT_STRUCT    __attribute__((packed))
#define PACK_STRUCT_BEGIN
#define PACK_STRUCT_END

void tr_lwip_platform_assert(const char *msg, const char *file, int line);

unsigned tr_lwip_rand(void);

#define LWIP_RAND()                    ((u32_t)tr_lwip_rand())
#define LWIP_PLATFORM_DIAG(x)          do { } while (0)
#define LWIP_PLATFORM_ASSERT(x)        tr_lwip_platform_assert((x), __FILE__, __LINE__)

#endif /* TR_LWIP_ARCH_CC_H */
