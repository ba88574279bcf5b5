# test/: the host suites that exercise core's kernels and collectives and the
# app's file parsers (IDX, checkpoints), rebuilt with AddressSanitizer and
# UndefinedBehaviorSanitizer: a write past a buffer, a use of freed memory or
# an overflow fails the run. Suites report as "asan-<suite>".
SAN_DIR    := $(BUILD)/asan
SAN_CFLAGS := -std=gnu99 -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all \
              -fno-omit-frame-pointer -Icore/include -Icore -Itest
SAN_CORE   := $(wildcard core/*.c)
SAN_BINS   := $(CORE_TESTS:%=$(SAN_DIR)/%) $(SAN_DIR)/test_comm $(SAN_DIR)/test_comm_faults \
              $(SAN_DIR)/test_wire $(SAN_DIR)/test_app_units

$(SAN_DIR)/test_%: test/core/test_%.c $(SAN_CORE) $(CORE_HDRS) test/harness.h
	@mkdir -p $(dir $@)
	$(CC) $(SAN_CFLAGS) -Itest/core -o $@ $< $(SAN_CORE) -lm

# includes core/tr_kernel_gemm.c itself, built with the plain-C tiles
$(SAN_DIR)/test_gemm_plain: test/core/test_gemm_plain.c $(SAN_CORE) $(CORE_HDRS) test/harness.h
	@mkdir -p $(dir $@)
	$(CC) $(SAN_CFLAGS) -Itest/core -o $@ $< $(filter-out core/tr_kernel_gemm.c,$(SAN_CORE)) -lm

# includes core/tr_layer_band.c, tr_kernel_gemm.c and tr_layer_bn.c, plain-C branches
$(SAN_DIR)/test_lean_plain: test/core/test_lean_plain.c $(SAN_CORE) $(CORE_HDRS) test/harness.h
	@mkdir -p $(dir $@)
	$(CC) $(SAN_CFLAGS) -Itest/core -o $@ $< \
	  $(filter-out core/tr_layer_band.c core/tr_kernel_gemm.c core/tr_layer_bn.c,$(SAN_CORE)) -lm

SAN_COMM_SRCS := test/comm/sim_transport.c test/comm/comm_util.c
$(SAN_DIR)/test_comm $(SAN_DIR)/test_comm_faults $(SAN_DIR)/test_wire: $(SAN_DIR)/%: test/comm/%.c $(SAN_COMM_SRCS) \
                                                  $(SAN_CORE) $(CORE_HDRS) test/harness.h
	@mkdir -p $(dir $@)
	$(CC) $(SAN_CFLAGS) -Itest/comm -o $@ $< $(SAN_COMM_SRCS) $(SAN_CORE) -lm

$(SAN_DIR)/test_app_units: test/app/test_app_units.c $(filter-out apps/mnist_ring/main.c,$(MR_SRCS)) \
                           $(wildcard port/posix/*.c) $(SAN_CORE) $(CORE_HDRS) test/harness.h
	@mkdir -p $(dir $@)
	$(CC) $(SAN_CFLAGS) -Iapps/mnist_ring -Iport/posix -o $@ $< \
	  $(filter-out apps/mnist_ring/main.c,$(MR_SRCS)) $(wildcard port/posix/*.c) $(SAN_CORE) -lz -lm

.PHONY: test-sanitize
test-sanitize: $(SAN_BINS)
	@mkdir -p $(TR_RESULTS)
	@st=0; for t in $(SAN_BINS); do \
	  TR_SUITE_TAG=asan- timeout 300 $$t test/fixtures >/dev/null || { echo "FAILED under sanitizers: $$t"; st=1; }; \
	done; grep -h '^asan-' $(TR_RESULTS)/asan-*.txt 2>/dev/null | awk '{print $$1": "$$2" passed, "$$3" failed"}'; exit $$st

TEST_TARGETS += test-sanitize
