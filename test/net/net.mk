# test/net: ranks on shaped links, one network namespace per rank
# (test/testnet.sh, shared with test/bench/net). test-net-shaped: 2 ranks over a
# tbf-shaped veth, a few steps under every mnist_ring setting, bit-identical
# (needs root and iproute2).
.PHONY: test-net-shaped
TEST_TARGETS += test-net-shaped
test-net-shaped: $(BUILD)/mnist_ring $(BUILD)/test/app/gen_idx
	@mkdir -p $(TR_RESULTS)
	timeout 120 bash test/net/test_shaped.sh $(BUILD)
