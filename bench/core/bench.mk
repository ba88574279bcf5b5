# bench/core: bench-core (per-layer GFLOP/s, training samples/s vs PyTorch).
# Included from test/core/core_tests.mk.
CORE_BENCH := $(BUILD)/bench/core/bench_core

$(CORE_BENCH): bench/core/bench_core.c $(BUILD)/libtinyring.a $(CORE_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(HOST_CFLAGS) -O3 -o $@ $< $(BUILD)/libtinyring.a

.PHONY: bench-core
bench-core: $(CORE_BENCH)
	@bash bench/core/run.sh $(CORE_BENCH) 100 5 10

BENCH_TARGETS += bench-core
