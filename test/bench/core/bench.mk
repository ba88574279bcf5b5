# test/bench/core: bench-core (per-layer GFLOP/s, training samples/s vs PyTorch).
# Included from test/core/core_tests.mk.
CORE_BENCH := $(BUILD)/bench/core/bench_core
CORE_PEAK  := $(BUILD)/bench/core/peak_probe

$(CORE_BENCH): test/bench/core/bench_core.c $(BUILD)/libtinyring.a $(CORE_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(HOST_CFLAGS) -O3 -o $@ $< $(BUILD)/libtinyring.a

# the core's limit for separate multiplies and adds at the build's vector
# width, and the seed net's FLOPs per sample (bench-core, bench-train)
$(CORE_PEAK): test/bench/core/peak_probe.c $(BUILD)/libtinyring.a $(CORE_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(HOST_CFLAGS) -O2 -o $@ $< $(BUILD)/libtinyring.a

.PHONY: bench-core
bench-core: $(CORE_BENCH) $(CORE_PEAK)
	@bash test/bench/core/run.sh $(CORE_BENCH) 100 5 10 $(CORE_PEAK)

# test/bench/train/bench_train.sh prints its fraction-of-peak line with the probe
bench-train: $(CORE_PEAK)

BENCH_TARGETS += bench-core
