# tinyring: one entry point.
#
#   make            build/libtinyring.a from core/ alone
#   make run        train the seed ConvNet on 4 local ranks (apps/mnist_ring)
#   make test       every host test (installs what it needs first)
#   make bench      kernels, collectives and training, side by side with peers
#   make cross      core (and ports, images) for Cortex-M4F, RISC-V and Cortex-M55, with sizes
#   make dist       the Arduino, PlatformIO, ESP-IDF and Zephyr packages (port/dist)
#
# Each directory owns a fragment (*.mk) that adds its rules and appends to
# TEST_TARGETS, BENCH_TARGETS and CROSS_TARGETS; this file only ties them up.
# Fragments are included with `include`: a missing or renamed one stops make
# instead of silently dropping its tests.

BUILD    ?= build
CC       ?= cc
HOST_ARCH ?= -march=native

# host programs, ports and tests: POSIX C (core's own flags: core/core.mk)
HOST_CFLAGS := -std=gnu99 -Wall -Wextra -O2 -g -Icore/include -Icore $(HOST_ARCH)

TEST_TARGETS  :=
BENCH_TARGETS :=
CROSS_TARGETS :=

.PHONY: all test bench bench-deps cross run deps clean
all: $(BUILD)/libtinyring.a

include core/core.mk
include test/test.mk
include port/posix/posix.mk
include test/comm/comm.mk
include apps/mnist_ring/mnist_ring.mk
include port/lwip/lwip.mk
include apps/board_mps2/board.mk
include test/sanitize.mk
include test/build/build.mk
include test/packaging/packaging.mk
include test/fuzz/fuzz.mk
include test/net/net.mk
include test/bench/net/net.mk
include test/bench/acc/acc.mk
include test/chaos/chaos.mk
include port/dist/dist.mk

# Installs the system packages the tests need (apt-get; root or sudo).
deps:
	@bash test/tools/deps.sh

# Every test target runs even if one fails; the summary line counts them all.
test: deps
	@rm -rf $(BUILD)/results; mkdir -p $(BUILD)/results
	@st=0; $(MAKE) --no-print-directory -k $(TEST_TARGETS) || st=$$?; \
	  bash test/summary.sh $(BUILD)/results || st=1; exit $$st

# The benchmarks' peers (PyTorch, Open MPI's headers) besides the tests'
# packages. Not fatal: without root, the benchmarks leave out the peers
# they cannot run, and say so.
bench-deps:
	-@bash test/tools/deps.sh test/tools/apt-packages.txt test/tools/apt-packages-bench.txt

bench: $(BENCH_TARGETS)
$(BENCH_TARGETS): bench-deps

cross: $(CROSS_TARGETS)

clean:
	rm -rf $(BUILD)
