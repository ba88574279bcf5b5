# test/comm: the collectives on the simulated transport (test-comm).
COMM_TEST_BIN := $(BUILD)/test/comm/test_comm
COMM_TEST_SRCS := test/comm/test_comm.c test/comm/sim_transport.c

$(COMM_TEST_BIN): $(COMM_TEST_SRCS) test/comm/sim_transport.h test/harness.h $(BUILD)/libtinyring.a
	@mkdir -p $(dir $@)
	$(CC) $(HOST_CFLAGS) -Itest -Itest/comm $(COMM_TEST_SRCS) $(BUILD)/libtinyring.a -o $@

.PHONY: test-comm
test-comm: $(COMM_TEST_BIN)
	timeout 300 $(COMM_TEST_BIN)

TEST_TARGETS += test-comm
