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

$(LWIP_REG): test/lwip/lwip_register.c
	@mkdir -p $(dir $@)
	$(CC) $(HOST_CFLAGS) $< -o $@

.PHONY: test-lwip lwip-test-bins
lwip-test-bins: $(LWIP_RANK) $(LWIP_PXRANK) $(LWIP_REG)

test-lwip: lwip-test-bins
	@mkdir -p $(TR_RESULTS)
	timeout 240 bash test/lwip/run.sh $(LWIPT_DIR)

TEST_TARGETS += test-lwip
