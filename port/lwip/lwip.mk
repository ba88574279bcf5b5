# port/lwip: the transport over lwIP's raw TCP API (NO_SYS=1), and lwIP itself.
#
# lwIP is not vendored: LWIP_DIR is an lwIP 2.1 source tree. The default,
# third_party/lwip (gitignored), is fetched on first use by port/lwip/get-lwip.sh
# from Debian's source package. Point LWIP_DIR elsewhere to use your own tree.
#
# For firmware builds (apps/board_mps2) these are meant to be reused as-is
# with a cross compiler:
#   LWIP_INCLUDES    -I flags: the port (lwipopts.h, arch/cc.h) and lwIP's headers
#   LWIP_CORE_SRCS   the lwIP sources the port needs (IPv4, ARP, ICMP, TCP, Ethernet)
#   TR_LWIP_SRCS     the port itself (freestanding C99)
#   LWIP_STAMP       a file that exists once LWIP_DIR is populated (order-only prerequisite)
# The application provides sys_now() (ms clock), tr_lwip_platform_assert()
# and its netif driver.

LWIP_DIR      ?= third_party/lwip
LWIP_PORT_DIR := port/lwip
LWIP_DEFS     ?=
LWIP_INCLUDES := -I$(LWIP_PORT_DIR) -I$(LWIP_DIR)/src/include $(LWIP_DEFS)
LWIP_STAMP    := $(LWIP_DIR)/src/include/lwip/init.h
LWIP_CORE_SRCS := $(addprefix $(LWIP_DIR)/src/, \
    core/init.c core/def.c core/inet_chksum.c core/ip.c core/mem.c core/memp.c \
    core/netif.c core/pbuf.c core/sys.c core/stats.c core/timeouts.c \
    core/tcp.c core/tcp_in.c core/tcp_out.c \
    core/ipv4/etharp.c core/ipv4/icmp.c core/ipv4/ip4.c core/ipv4/ip4_addr.c \
    netif/ethernet.c)
TR_LWIP_SRCS  := $(LWIP_PORT_DIR)/tr_lwip.c $(LWIP_PORT_DIR)/tr_lwip_elastic.c
TR_LWIP_HDRS  := $(wildcard $(LWIP_PORT_DIR)/*.h $(LWIP_PORT_DIR)/arch/*.h)

# The port is held to core's standard (strict C99, -Werror); lwIP is third
# party and built as its authors intend, warnings left to them.
TR_LWIP_CFLAGS := -std=c99 -Wall -Wextra -Werror -pedantic -O2 -g -Icore/include -Icore $(LWIP_INCLUDES)
LWIP_HOST_CFLAGS := -std=gnu99 -O2 -g -w $(LWIP_INCLUDES)

$(LWIP_STAMP):
	bash port/lwip/get-lwip.sh $(abspath $(LWIP_DIR))
$(LWIP_CORE_SRCS): | $(LWIP_STAMP) ;

LWIP_HOST_OBJS := $(LWIP_CORE_SRCS:$(LWIP_DIR)/src/%.c=$(BUILD)/lwip/host/%.o)
TR_LWIP_HOST_OBJS := $(TR_LWIP_SRCS:$(LWIP_PORT_DIR)/%.c=$(BUILD)/lwip/port/%.o)

$(BUILD)/lwip/host/%.o: $(LWIP_DIR)/src/%.c $(LWIP_PORT_DIR)/lwipopts.h $(LWIP_PORT_DIR)/arch/cc.h | $(LWIP_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(LWIP_HOST_CFLAGS) -c $< -o $@

$(BUILD)/lwip/port/%.o: $(LWIP_PORT_DIR)/%.c $(TR_LWIP_HDRS) core/include/tr_transport.h core/include/tr_error.h core/include/tr_elastic.h | $(LWIP_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(TR_LWIP_CFLAGS) -c $< -o $@

# lwIP for the host (liblwip.a) and the port (libtr_lwip.a)
$(BUILD)/liblwip.a: $(LWIP_HOST_OBJS)
	@rm -f $@
	ar rcs $@ $^
$(BUILD)/libtr_lwip.a: $(TR_LWIP_HOST_OBJS)
	@rm -f $@
	ar rcs $@ $^

.PHONY: lwip lwip-fetch
lwip: $(BUILD)/liblwip.a $(BUILD)/libtr_lwip.a
lwip-fetch: $(LWIP_STAMP)

include test/lwip/lwip_test.mk
include test/bench/lwip/lwip_bench.mk

# Cortex-M4F objects of lwIP + the port with the same lwipopts.h, and their
# sizes (text/data/bss per object: bss is lwIP's static pools and heap).
LWIP_CM4_CC     ?= arm-none-eabi-gcc
LWIP_CM4_FLAGS  := $(M4F_ARCH) -Os \
                   -ffunction-sections -fdata-sections
LWIP_CM4_OBJS   := $(LWIP_CORE_SRCS:$(LWIP_DIR)/src/%.c=$(BUILD)/lwip/cm4/lwip/%.o)
TR_LWIP_CM4_OBJS := $(TR_LWIP_SRCS:$(LWIP_PORT_DIR)/%.c=$(BUILD)/lwip/cm4/port/%.o)

$(BUILD)/lwip/cm4/lwip/%.o: $(LWIP_DIR)/src/%.c $(LWIP_PORT_DIR)/lwipopts.h $(LWIP_PORT_DIR)/arch/cc.h | $(LWIP_STAMP)
	@mkdir -p $(dir $@)
	$(LWIP_CM4_CC) $(LWIP_CM4_FLAGS) -std=gnu99 -w $(LWIP_INCLUDES) -c $< -o $@
$(BUILD)/lwip/cm4/port/%.o: $(LWIP_PORT_DIR)/%.c $(TR_LWIP_HDRS) | $(LWIP_STAMP)
	@mkdir -p $(dir $@)
	$(LWIP_CM4_CC) $(LWIP_CM4_FLAGS) -std=c99 -Wall -Wextra -Werror -pedantic -Icore/include -Icore $(LWIP_INCLUDES) -c $< -o $@

.PHONY: cross-lwip
cross-lwip: $(LWIP_CM4_OBJS) $(TR_LWIP_CM4_OBJS)
	@echo "lwIP 2.1 + tinyring lwIP port for Cortex-M4F (-Os), port/lwip/lwipopts.h:"
	@arm-none-eabi-size -t $(LWIP_CM4_OBJS) | tail -n 1 | awk '{ printf "  lwIP        text %7d  data %6d  bss %7d\n", $$1, $$2, $$3 }'
	@arm-none-eabi-size -t $(TR_LWIP_CM4_OBJS) | tail -n 1 | awk '{ printf "  port        text %7d  data %6d  bss %7d\n", $$1, $$2, $$3 }'
	@arm-none-eabi-size $(BUILD)/lwip/cm4/lwip/core/memp.o $(BUILD)/lwip/cm4/lwip/core/mem.o | tail -n 2 | \
	  awk '{ n = $$6; sub(".*/", "", n); printf "  %-10s  bss %7d  (%s)\n", n, $$3, n == "memp.o" ? "static pools" : "static heap, MEM_SIZE" }'
	@printf '#include "tr_lwip.h"\nstruct tr_lwip tr_lwip_state_probe;\n' | \
	  $(LWIP_CM4_CC) $(LWIP_CM4_FLAGS) -std=c99 -Icore/include -Icore $(LWIP_INCLUDES) -x c - -c -o $(BUILD)/lwip/cm4/state.o
	@arm-none-eabi-size $(BUILD)/lwip/cm4/state.o | tail -n 1 | awk '{ printf "  struct tr_lwip  %d bytes (caller-owned; plus the rx rings, e.g. 2 x TCP_WND)\n", $$3 }'

CROSS_TARGETS += cross-lwip
