# test/bench/net: bench-net, training on shaped links (1 Gbit/s to 1 Mbit/s, N=2 and
# N=4), every mnist_ring setting against PyTorch DDP's comm hooks; the tables
# and the net-ratio / net-efficiency lines (test/bench/net/run.sh says how they
# are measured). Needs root. BENCH_NET_QUICK=1: N=2 and fewer steps.
.PHONY: bench-net
BENCH_TARGETS += bench-net
bench-net: $(BUILD)/mnist_ring
	bash test/bench/net/run.sh $(BUILD)
