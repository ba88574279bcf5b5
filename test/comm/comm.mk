# test/comm: the collectives on the simulated transport (test-comm).
#   test_comm         every collective over worlds 1..8 and many counts
#   test_comm_faults  every fault gives its code; hello checks; API edges
#   test_wire         byte helpers, link hello, message header: exact bytes
#   test_train_buckets the trainer's gradient by buckets: in-place and full
#                     ranks bit-identical in one ring; the trainer's arena
#   test_codec        the gradient codecs and the compressed ring allreduce
COMM_DIR    := $(BUILD)/test/comm
COMM_COMMON := test/comm/comm_util.c test/comm/sim_transport.c
COMM_DEPS   := $(COMM_COMMON) test/comm/sim_transport.h test/comm/comm_util.h test/comm/train_samples.h \
               test/harness.h $(BUILD)/libtinyring.a

$(COMM_DIR)/%: test/comm/%.c $(COMM_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(HOST_CFLAGS) -Itest -Itest/comm $< $(COMM_COMMON) $(BUILD)/libtinyring.a -lm -o $@

.PHONY: test-comm
test-comm: $(COMM_DIR)/test_comm $(COMM_DIR)/test_comm_faults $(COMM_DIR)/test_wire \
           $(COMM_DIR)/test_train_buckets $(COMM_DIR)/test_codec
	timeout 20 $(COMM_DIR)/test_wire
	timeout 60 $(COMM_DIR)/test_codec
	timeout 120 $(COMM_DIR)/test_comm
	timeout 60 $(COMM_DIR)/test_comm_faults
	timeout 120 $(COMM_DIR)/test_train_buckets

TEST_TARGETS += test-comm
