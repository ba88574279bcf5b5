# test/bench/lwip: allreduce busbw over lwIP ranks vs POSIX ranks (ratio); needs root.
.PHONY: bench-lwip
bench-lwip: lwip-test-bins
	timeout 300 bash test/bench/lwip/run.sh $(LWIPT_DIR) 10

BENCH_TARGETS += bench-lwip
