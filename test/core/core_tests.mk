# test/core: the core model's host tests and symbol check, plus the bench and
# cross fragments. Included from core/core.mk.
#   test-core     math/RNG/SGD, arena and descriptions, gradient checks,
#                 fast == reference kernels, PyTorch goldens
#   test-symbols  no allocation / stdio / exit in core objects; tr_ prefix only
#   test-cross    make cross-core, recorded as a test
#   bench-core    per-layer GFLOP/s and training samples/s vs PyTorch
#   cross-core    core + a minimal image for Cortex-M4F and RISC-V, sizes
CORE_TESTS    := test_math test_model_api test_grad test_fast test_golden test_gemm_plain \
                 test_lean_kernels test_lean test_lean_plain test_buckets
CORE_TEST_DIR := $(BUILD)/test/core
CORE_TEST_BINS := $(CORE_TESTS:%=$(CORE_TEST_DIR)/%)
CORE_TEST_HDRS := test/harness.h $(wildcard test/core/*.h) $(CORE_HDRS)

$(CORE_TEST_DIR)/%: test/core/%.c $(BUILD)/libtinyring.a $(CORE_TEST_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(HOST_CFLAGS) -Itest -Itest/core -o $@ $< $(BUILD)/libtinyring.a -lm

# test_gemm_plain compiles core's GEMM into itself: core's float rules; as
# test_gemm_plain its scalar-FPU branch, as test_gemm_isa_<isa> the vector branch
# with the host's flags and again without AVX-512 and without AVX
$(CORE_TEST_DIR)/test_gemm_plain: HOST_CFLAGS += -ffp-contract=off
# test_lean_plain compiles the one-plane conv kernels into itself, plain branch
$(CORE_TEST_DIR)/test_lean_plain: HOST_CFLAGS += -ffp-contract=off
GEMM_ISAS := native:-march=native no-avx512:-mno-avx512f no-avx:-mno-avx vec256:-DTR_VEC256
GEMM_ISA_BINS := $(foreach v,$(GEMM_ISAS),$(CORE_TEST_DIR)/test_gemm_isa_$(firstword $(subst :, ,$(v))))
$(CORE_TEST_DIR)/test_gemm_isa_%: test/core/test_gemm_plain.c $(CORE_TEST_HDRS) core/tr_kernel_gemm.c
	@mkdir -p $(dir $@)
	$(CC) $(HOST_CFLAGS) -ffp-contract=off -DTEST_GEMM_VECTOR $(lastword $(subst :, ,$(filter $*:%,$(GEMM_ISAS)))) \
	  '-DTEST_SUITE="core_gemm_$*"' -Itest -Itest/core -o $@ $<

# test_lean_plain again with the one-plane kernels' vector branch, for each
# of those ISAs, against the library's fast conv
LEAN_ISA_BINS := $(foreach v,$(GEMM_ISAS),$(CORE_TEST_DIR)/test_lean_isa_$(firstword $(subst :, ,$(v))))
$(CORE_TEST_DIR)/test_lean_isa_%: test/core/test_lean_plain.c $(CORE_TEST_HDRS) $(BUILD)/libtinyring.a
	@mkdir -p $(dir $@)
	$(CC) $(HOST_CFLAGS) -ffp-contract=off -DTEST_LEAN_VECTOR $(lastword $(subst :, ,$(filter $*:%,$(GEMM_ISAS)))) \
	  '-DTEST_SUITE="core_lean_$*"' -Itest -Itest/core -o $@ $< $(BUILD)/libtinyring.a -lm

.PHONY: test-core test-symbols test-cross bench-core cross-core core-sizes
test-core: $(CORE_TEST_BINS) $(GEMM_ISA_BINS) $(LEAN_ISA_BINS)
	@mkdir -p $(TR_RESULTS)
	@st=0; for t in $(CORE_TEST_BINS) $(GEMM_ISA_BINS) $(LEAN_ISA_BINS); do \
	  timeout 300 $$t test/fixtures || { echo "FAILED: $$t"; st=1; }; done; exit $$st

test-symbols: $(CORE_OBJS)
	@mkdir -p $(TR_RESULTS)
	timeout 60 bash test/core/symbols.sh $(CORE_OBJS)

# core's NEON branches build for AArch64 (clang's target, compile only)
.PHONY: test-arm64
test-arm64:
	@mkdir -p $(TR_RESULTS)
	timeout 300 bash test/core/arm64_build.sh "$(CORE_CFLAGS)" $(CORE_SRCS)

TEST_TARGETS += test-core test-symbols test-arm64

include test/core/cross.mk
include test/bench/core/bench.mk

# `make cross`: the arena bytes of both execution plans (seed and narrow
# nets, micro-batch 1/2/4/8), from the size query
.PHONY: cross-arena
cross-arena: $(ARENA_SIZES)
	@$(ARENA_SIZES) lines
CROSS_TARGETS += cross-arena
