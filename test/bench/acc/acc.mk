# test/bench/acc: bench-acc, the test accuracy of every mnist_ring setting
# (each --compress value, each --average-every K) after 1 epoch and after
# `make run`'s 12, on 4 ranks, against --compress none (test/bench/acc/run.sh).
# BENCH_ACC_EPOCHS=N: another number of epochs.
.PHONY: bench-acc
BENCH_TARGETS += bench-acc
bench-acc: $(BUILD)/mnist_ring
	bash test/bench/acc/run.sh $(BUILD)
