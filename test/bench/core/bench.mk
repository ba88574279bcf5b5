# test/bench/core: bench-core (per-layer GFLOP/s, training samples/s vs PyTorch).
# Included from test/core/core_tests.mk.
CORE_BENCH := $(BUILD)/bench/core/bench_core
CORE_PEAK  := $(BUILD)/bench/core/peak_probe

$(CORE_BENCH): test/bench/core/bench_core.c test/bench/core/bench_clock.h $(BUILD)/libtinyring.a $(CORE_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(HOST_CFLAGS) -O3 -o $@ $< $(BUILD)/libtinyring.a

# the core's limit for separate multiplies and adds at the build's vector
# width, and the seed net's FLOPs per sample (bench-core, bench-train)
$(CORE_PEAK): test/bench/core/peak_probe.c test/bench/core/bench_clock.h $(BUILD)/libtinyring.a $(CORE_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(HOST_CFLAGS) -O2 -o $@ $< $(BUILD)/libtinyring.a

# On an x86-64 host, bench-core also runs core built for other vector
# units in the same rounds, each with its own probe: AVX2 without AVX-512
# (avx2) and, where the host has AVX-512, AVX-512 with 256-bit tiles
# (avx512-256: TR_VEC256, the choice for cores whose AVX-512 datapath is
# 256 bits wide, such as AMD Zen 4). $(BUILD)/bench/core/<name>/
ifeq ($(shell uname -m),x86_64)
BENCH_ISAS := avx2
BENCH_ISA_avx2 := -march=native -mno-avx512f
ifneq ($(shell $(CC) -march=native -dM -E - </dev/null 2>/dev/null | grep -c __AVX512F__),0)
BENCH_ISAS += avx512-256
BENCH_ISA_avx512-256 := -march=native -DTR_VEC256
endif
endif
define BENCH_ISA_RULES
$(BUILD)/bench/core/$(1)/core/%.o: core/%.c $(CORE_HDRS)
	@mkdir -p $$(dir $$@)
	$(CC) $(CORE_CFLAGS) $(BENCH_ISA_$(1)) -c $$< -o $$@
$(BUILD)/bench/core/$(1)/libtinyring.a: $(CORE_SRCS:core/%.c=$(BUILD)/bench/core/$(1)/core/%.o)
	@rm -f $$@
	ar rcs $$@ $$^
$(BUILD)/bench/core/$(1)/bench_core: test/bench/core/bench_core.c test/bench/core/bench_clock.h $(BUILD)/bench/core/$(1)/libtinyring.a
	$(CC) $(filter-out $(HOST_ARCH),$(HOST_CFLAGS)) $(BENCH_ISA_$(1)) -O3 -o $$@ $$< \
	  $(BUILD)/bench/core/$(1)/libtinyring.a
$(BUILD)/bench/core/$(1)/peak_probe: test/bench/core/peak_probe.c test/bench/core/bench_clock.h $(BUILD)/bench/core/$(1)/libtinyring.a
	$(CC) $(filter-out $(HOST_ARCH),$(HOST_CFLAGS)) $(BENCH_ISA_$(1)) -O2 -o $$@ $$< \
	  $(BUILD)/bench/core/$(1)/libtinyring.a
endef
$(foreach i,$(BENCH_ISAS),$(eval $(call BENCH_ISA_RULES,$(i))))
BENCH_ISA_BINS := $(foreach i,$(BENCH_ISAS),$(BUILD)/bench/core/$(i)/bench_core \
                    $(BUILD)/bench/core/$(i)/peak_probe)

.PHONY: bench-core
bench-core: $(CORE_BENCH) $(CORE_PEAK) $(BENCH_ISA_BINS)
	@bash test/bench/core/run.sh 100 5 10 native:$(CORE_BENCH):$(CORE_PEAK) \
	  $(foreach i,$(BENCH_ISAS),$(i):$(BUILD)/bench/core/$(i)/bench_core:$(BUILD)/bench/core/$(i)/peak_probe)

# test/bench/train/bench_train.sh prints its fraction-of-peak line with the probe
bench-train: $(CORE_PEAK)

BENCH_TARGETS += bench-core

# the NEON build's instructions per sample per kernel, counted under
# qemu-user (test/bench/core/a64_count.sh): bench_core built for AArch64
# on core's a64 build (test/core/cross.mk)
A64_BENCH := $(CROSS_DIR)/a64-bench/bench_core
$(A64_BENCH): test/bench/core/bench_core.c test/bench/core/bench_clock.h $(CROSS_DIR)/isa/a64/libtinyring.a $(CORE_HDRS)
	@mkdir -p $(dir $@)
	$(A64_CC) -std=gnu99 -Wall -Wextra -O3 -ffp-contract=off -static -Icore/include -Icore -o $@ $< \
	  $(CROSS_DIR)/isa/a64/libtinyring.a
.PHONY: bench-core-a64
bench-core-a64: $(A64_BENCH)
	@bash test/bench/core/a64_count.sh $(A64_BENCH) 1
BENCH_TARGETS += bench-core-a64
