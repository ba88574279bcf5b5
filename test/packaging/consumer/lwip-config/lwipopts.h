/* test/packaging consumer: the project's own lwIP options. tinyring's, with a
 * smaller receive window, so lwip_main.c can tell which lwipopts.h the port
 * was compiled with: this one, like lwIP, or port/lwip's (it must not be). */
#ifndef CONSUMER_LWIPOPTS_H
#define CONSUMER_LWIPOPTS_H

#include "../../../../port/lwip/lwipopts.h"

#undef TCP_WND
#define TCP_WND (4 * TCP_MSS)

#endif /* CONSUMER_LWIPOPTS_H */
