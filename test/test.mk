# test/: shared harness. Suites export TR_RESULTS so each records its counts.
export TR_RESULTS := $(abspath $(BUILD)/results)
