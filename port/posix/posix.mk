# port/posix: the POSIX TCP transport + rendezvous (build/libtinyring_posix.a),
# its multi-process tests (test-posix) and the allreduce benchmark against
# Open MPI (bench-comm).
POSIX_SRCS   := $(wildcard port/posix/*.c)
POSIX_HDRS   := $(wildcard port/posix/*.h) core/include/tr_transport.h core/include/tr_error.h
POSIX_OBJS   := $(POSIX_SRCS:port/posix/%.c=$(BUILD)/port/posix/%.o)
POSIX_CFLAGS := $(HOST_CFLAGS) -Iport/posix
POSIX_LIB    := $(BUILD)/libtinyring_posix.a
POSIX_NODE   := $(BUILD)/test/posix/tr_posix_node
POSIX_UNIT   := $(BUILD)/test/posix/test_posix_unit
POSIX_ELASTIC := $(BUILD)/test/posix/test_elastic_posix
COMM_BENCH   := $(BUILD)/bench/comm/tr_bench_comm
COMM_MPI     := $(BUILD)/bench/comm/mpi_bench_comm

$(BUILD)/port/posix/%.o: port/posix/%.c $(POSIX_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(POSIX_CFLAGS) -c $< -o $@

$(POSIX_LIB): $(POSIX_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(POSIX_NODE): test/posix/tr_posix_node.c $(POSIX_LIB) $(BUILD)/libtinyring.a $(POSIX_HDRS) $(CORE_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(POSIX_CFLAGS) $< -o $@ $(POSIX_LIB) $(BUILD)/libtinyring.a

$(POSIX_UNIT): test/posix/test_posix_unit.c $(POSIX_LIB) $(BUILD)/libtinyring.a $(POSIX_HDRS) test/harness.h
	@mkdir -p $(dir $@)
	$(CC) $(POSIX_CFLAGS) -Itest $< -o $@ $(POSIX_LIB) $(BUILD)/libtinyring.a

$(POSIX_ELASTIC): test/posix/test_elastic_posix.c $(POSIX_LIB) $(BUILD)/libtinyring.a $(POSIX_HDRS) test/harness.h
	@mkdir -p $(dir $@)
	$(CC) $(POSIX_CFLAGS) -Itest $< -o $@ $(POSIX_LIB) $(BUILD)/libtinyring.a

$(COMM_BENCH): test/bench/comm/tr_bench_comm.c $(POSIX_LIB) $(BUILD)/libtinyring.a $(POSIX_HDRS) $(CORE_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(POSIX_CFLAGS) -O3 $< -o $@ $(POSIX_LIB) $(BUILD)/libtinyring.a

# The Open MPI peer; built only when mpicc exists (test/bench/comm/run.sh skips it otherwise).
$(COMM_MPI): test/bench/comm/mpi_bench_comm.c
	@mkdir -p $(dir $@)
	mpicc -O2 -Wall $< -o $@

.PHONY: posix-lib test-posix bench-comm
posix-lib: $(POSIX_LIB)

test-posix: $(POSIX_NODE) $(POSIX_UNIT) $(POSIX_ELASTIC)
	@mkdir -p $(TR_RESULTS)
	timeout 60 $(POSIX_UNIT)
	timeout 90 $(POSIX_ELASTIC)
	timeout 300 bash test/posix/run.sh $(POSIX_NODE)

bench-comm: $(COMM_BENCH)
	@if command -v mpicc >/dev/null 2>&1; then $(MAKE) --no-print-directory $(COMM_MPI) || \
	  echo "bench-comm: the Open MPI peer did not build (mpi.h: libopenmpi-dev); no MPI columns"; fi
	bash test/bench/comm/run.sh $(COMM_BENCH) $(COMM_MPI)

TEST_TARGETS  += test-posix
BENCH_TARGETS += bench-comm
