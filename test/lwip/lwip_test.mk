# test/lwip: lwIP ranks (own lwIP stack on a TAP device) and POSIX ranks in
# one network namespace; -included by port/lwip/lwip.mk.
LWIPT_DIR    := $(BUILD)/test/lwip
LWIP_RANK    := $(LWIPT_DIR)/lwip_rank
LWIP_PXRANK  := $(LWIPT_DIR)/posix_rank
LWIP_REG     := $(LWIPT_DIR)/lwip_register
LWIPT_CFLAGS := $(HOST_CFLAGS) $(LWIP_INCLUDES) -Itest/lwip -Iport/posix
LWIPT_HDRS   := $(wildcard test/lwip/*.h) $(CORE_HDRS) $(TR_LWIP_HDRS)

$(LWIP_RANK): test/lwip/lwip_rank.c test/lwip/tapif.c test/lwip/lwip_host.c test/lwip/ring_job.c \
              $(BUILD)/libtr_lwip.a $(BUILD)/liblwip.a $(BUILD)/libtinyring.a $(LWIPT_HDRS) | $(LWIP_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(LWIPT_CFLAGS) $(filter %.c,$^) -o $@ $(BUILD)/libtr_lwip.a $(BUILD)/liblwip.a $(BUILD)/libtinyring.a

$(LWIP_PXRANK): test/lwip/posix_rank.c test/lwip/ring_job.c $(POSIX_LIB) $(BUILD)/libtinyring.a $(LWIPT_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(LWIPT_CFLAGS) $(filter %.c,$^) -o $@ $(POSIX_LIB) $(BUILD)/libtinyring.a

$(LWIP_REG): test/lwip/lwip_register.c $(POSIX_LIB) $(BUILD)/libtinyring.a $(POSIX_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(HOST_CFLAGS) -Iport/posix $< -o $@ $(POSIX_LIB) $(BUILD)/libtinyring.a

LWIP_UNIT := $(LWIPT_DIR)/test_lwip_unit
$(LWIP_UNIT): test/lwip/test_lwip_unit.c test/lwip/lwip_host.c $(BUILD)/libtr_lwip.a \
              $(BUILD)/liblwip.a $(POSIX_LIB) $(BUILD)/libtinyring.a $(LWIPT_HDRS) | $(LWIP_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(LWIPT_CFLAGS) $(filter %.c,$^) -o $@ $(BUILD)/libtr_lwip.a $(BUILD)/liblwip.a \
	  $(POSIX_LIB) $(BUILD)/libtinyring.a

# The same rank with a small board's sizes (MSS 536, window and send buffer
# 2 x MSS): the port's queue-full and ERR_MEM paths run all the time there.
LWIP_SMALL_DEFS := -DTCP_MSS=536 "-DTCP_WND=(2*TCP_MSS)" "-DTCP_SND_BUF=(2*TCP_MSS)"
LWIP_SMALL_OBJS := $(LWIP_CORE_SRCS:$(LWIP_DIR)/src/%.c=$(BUILD)/lwip/small/lwip/%.o) \
                   $(TR_LWIP_SRCS:$(LWIP_PORT_DIR)/%.c=$(BUILD)/lwip/small/port/%.o)
LWIP_RANK_SMALL := $(LWIPT_DIR)/lwip_rank_small

$(BUILD)/lwip/small/lwip/%.o: $(LWIP_DIR)/src/%.c $(LWIP_PORT_DIR)/lwipopts.h $(LWIP_PORT_DIR)/arch/cc.h | $(LWIP_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(LWIP_HOST_CFLAGS) $(LWIP_SMALL_DEFS) -c $< -o $@
$(BUILD)/lwip/small/port/%.o: $(LWIP_PORT_DIR)/%.c $(TR_LWIP_HDRS) core/include/tr_transport.h core/include/tr_error.h | $(LWIP_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(TR_LWIP_CFLAGS) $(LWIP_SMALL_DEFS) -c $< -o $@
$(LWIP_RANK_SMALL): test/lwip/lwip_rank.c test/lwip/tapif.c test/lwip/lwip_host.c test/lwip/ring_job.c \
                    $(LWIP_SMALL_OBJS) $(BUILD)/libtinyring.a $(LWIPT_HDRS) | $(LWIP_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(LWIPT_CFLAGS) $(LWIP_SMALL_DEFS) $(filter %.c,$^) $(LWIP_SMALL_OBJS) -o $@ $(BUILD)/libtinyring.a

.PHONY: test-lwip lwip-test-bins
lwip-test-bins: $(LWIP_RANK) $(LWIP_PXRANK) $(LWIP_REG) $(LWIP_UNIT) $(LWIP_RANK_SMALL)

test-lwip: lwip-test-bins
	@mkdir -p $(TR_RESULTS)
	@st=0; timeout 20 $(LWIP_UNIT) || st=1; \
	  bash test/lwip/symbols.sh $(BUILD)/libtr_lwip.a || st=1; \
	  timeout 240 bash test/lwip/run.sh $(LWIPT_DIR) || st=1; exit $$st

TEST_TARGETS += test-lwip
