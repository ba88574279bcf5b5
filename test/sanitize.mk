# test/: the host suites that exercise core's kernels and collectives and the
# app's file parsers (IDX, checkpoints), rebuilt with AddressSanitizer and
# UndefinedBehaviorSanitizer: a write past a buffer, a use of freed memory or
# an overflow fails the run. Suites report as "asan-<suite>".
SAN_DIR    := $(BUILD)/asan
SAN_CFLAGS := -std=gnu99 -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all \
              -fno-omit-frame-pointer -Icore/include -Icore -Itest
SAN_CORE   := $(wildcard core/*.c)
# core compiled once with the sanitizers (each test binary used to compile
# all of core again: 14 times 30 s of CPU in make test)
SAN_OBJS   := $(SAN_CORE:core/%.c=$(SAN_DIR)/core/%.o)
SAN_BINS   := $(CORE_TESTS:%=$(SAN_DIR)/%) $(SAN_DIR)/test_comm $(SAN_DIR)/test_comm_faults \
              $(SAN_DIR)/test_wire $(SAN_DIR)/test_app_units

$(SAN_DIR)/core/%.o: core/%.c $(CORE_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(SAN_CFLAGS) -c $< -o $@

$(SAN_DIR)/test_%: test/core/test_%.c $(SAN_OBJS) $(CORE_HDRS) test/harness.h
	@mkdir -p $(dir $@)
	$(CC) $(SAN_CFLAGS) -Itest/core -o $@ $< $(SAN_OBJS) -lm

# includes core/tr_kernel_gemm.c itself, built with the plain-C tiles
$(SAN_DIR)/test_gemm_plain: test/core/test_gemm_plain.c $(SAN_OBJS) $(CORE_HDRS) test/harness.h
	@mkdir -p $(dir $@)
	$(CC) $(SAN_CFLAGS) -Itest/core -o $@ $< $(filter-out %/tr_kernel_gemm.o,$(SAN_OBJS)) -lm

# includes core/tr_layer_band.c, tr_kernel_gemm.c and tr_layer_bn.c, plain-C branches
$(SAN_DIR)/test_lean_plain: test/core/test_lean_plain.c $(SAN_OBJS) $(CORE_HDRS) test/harness.h
	@mkdir -p $(dir $@)
	$(CC) $(SAN_CFLAGS) -Itest/core -o $@ $< \
	  $(filter-out %/tr_layer_band.o %/tr_kernel_gemm.o %/tr_layer_bn.o,$(SAN_OBJS)) -lm

SAN_COMM_SRCS := test/comm/sim_transport.c test/comm/comm_util.c
$(SAN_DIR)/test_comm $(SAN_DIR)/test_comm_faults $(SAN_DIR)/test_wire: $(SAN_DIR)/%: test/comm/%.c $(SAN_COMM_SRCS) \
                                                  $(SAN_OBJS) $(CORE_HDRS) test/harness.h
	@mkdir -p $(dir $@)
	$(CC) $(SAN_CFLAGS) -Itest/comm -o $@ $< $(SAN_COMM_SRCS) $(SAN_OBJS) -lm

$(SAN_DIR)/test_app_units: test/app/test_app_units.c $(filter-out apps/mnist_ring/main.c,$(MR_SRCS)) \
                           $(wildcard port/posix/*.c) $(SAN_OBJS) $(CORE_HDRS) test/harness.h
	@mkdir -p $(dir $@)
	$(CC) $(SAN_CFLAGS) -Iapps/mnist_ring -Iport/posix -o $@ $< \
	  $(filter-out apps/mnist_ring/main.c,$(MR_SRCS)) $(wildcard port/posix/*.c) $(SAN_OBJS) -lz -lm -lpthread

.PHONY: test-sanitize
test-sanitize:
	@$(MAKE) --no-print-directory -j2 $(SAN_BINS)
	@mkdir -p $(TR_RESULTS)
	@st=0; for t in $(SAN_BINS); do \
	  TR_SUITE_TAG=asan- timeout 300 $$t test/fixtures >/dev/null || { echo "FAILED under sanitizers: $$t"; st=1; }; \
	done; grep -h '^asan-' $(TR_RESULTS)/asan-*.txt 2>/dev/null | awk '{print $$1": "$$2" passed, "$$3" failed"}'; exit $$st

TEST_TARGETS += test-sanitize
