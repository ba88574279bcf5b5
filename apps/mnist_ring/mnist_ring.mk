# apps/mnist_ring: the host trainer (make run), its tests (test-app) and the
# training benchmark against PyTorch (bench-train).
MR_SRCS := $(wildcard apps/mnist_ring/*.c)
MR_HDRS := $(wildcard apps/mnist_ring/*.h)
MR_OBJS := $(MR_SRCS:apps/mnist_ring/%.c=$(BUILD)/apps/mnist_ring/%.o)
MR_LIB_OBJS := $(filter-out $(BUILD)/apps/mnist_ring/main.o,$(MR_OBJS))
POSIX_LIB ?= $(BUILD)/libtinyring_posix.a

$(BUILD)/apps/mnist_ring/%.o: apps/mnist_ring/%.c $(MR_HDRS) $(CORE_HDRS) $(POSIX_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(HOST_CFLAGS) -Iport/posix -c $< -o $@

$(BUILD)/mnist_ring: $(MR_OBJS) $(POSIX_LIB) $(BUILD)/libtinyring.a
	$(CC) $(HOST_CFLAGS) -o $@ $(MR_OBJS) $(POSIX_LIB) $(BUILD)/libtinyring.a -lz

# unit tests of the app's own modules (IDX, sampler, checkpoint)
$(BUILD)/test/app/test_app_units: test/app/test_app_units.c $(MR_LIB_OBJS) $(POSIX_LIB) $(BUILD)/libtinyring.a test/harness.h
	@mkdir -p $(dir $@)
	$(CC) $(HOST_CFLAGS) -Iapps/mnist_ring -Iport/posix -Itest -o $@ $< $(MR_LIB_OBJS) $(POSIX_LIB) $(BUILD)/libtinyring.a -lz

# unit tests of core's trainer, with rings of simulated ranks (test/comm's transport)
$(BUILD)/test/app/test_train: test/app/test_train.c test/comm/sim_transport.c test/comm/sim_transport.h \
                              test/comm/train_samples.h \
                              $(BUILD)/libtinyring.a test/harness.h
	@mkdir -p $(dir $@)
	$(CC) $(HOST_CFLAGS) -Itest -Itest/comm -o $@ $< test/comm/sim_transport.c $(BUILD)/libtinyring.a -lm

$(BUILD)/test/app/gen_idx: test/app/gen_idx.c
	@mkdir -p $(dir $@)
	$(CC) $(HOST_CFLAGS) -o $@ $< -lz -lm

$(BUILD)/test/app/free_port: test/app/free_port.c
	@mkdir -p $(dir $@)
	$(CC) $(HOST_CFLAGS) -o $@ $<

.PHONY: run test-app bench-train plot mnist_ring
mnist_ring: $(BUILD)/mnist_ring
TEST_TARGETS  += test-app
BENCH_TARGETS += bench-train

RUN_DIR   ?= $(BUILD)/run
RUN_FLAGS ?= --nproc 4 --epochs 12

# make run: build, get the data, 4 local ranks for about two minutes.
run: $(BUILD)/mnist_ring
	@data=$$(bash apps/mnist_ring/get-data.sh) || exit 1; mkdir -p $(RUN_DIR); \
	  plot=; if command -v gnuplot >/dev/null; then plot="--plot $(RUN_DIR)/curves.png"; fi; \
	  cmd="$(BUILD)/mnist_ring --data $$data $(RUN_FLAGS) --metrics $(RUN_DIR)/metrics.csv --save-model $(RUN_DIR)/model.trm $$plot"; \
	  echo "$$cmd"; $$cmd

plot: $(BUILD)/mnist_ring
	$(BUILD)/mnist_ring --plot-from $(RUN_DIR)/metrics.csv --plot $(RUN_DIR)/curves.png
	@echo "plot: $(RUN_DIR)/curves.png"

test-app: $(BUILD)/mnist_ring $(BUILD)/test/app/test_app_units $(BUILD)/test/app/test_train $(BUILD)/test/app/gen_idx $(BUILD)/test/app/free_port
	@mkdir -p $(TR_RESULTS)
	$(BUILD)/test/app/test_app_units
	timeout 120 $(BUILD)/test/app/test_train
	timeout 600 bash test/app/test_app.sh $(BUILD)
	timeout 120 bash test/app/test_app_defects.sh $(BUILD)

bench-train: $(BUILD)/mnist_ring
	bash test/bench/train/bench_train.sh $(BUILD)

# test-elastic: the elastic ring (--elastic): core/tr_elastic's decision and
# messages, then killed, frozen and restarted ranks over POSIX
$(BUILD)/test/app/test_elastic_units: test/app/test_elastic_units.c $(BUILD)/libtinyring.a test/harness.h
	@mkdir -p $(dir $@)
	$(CC) $(HOST_CFLAGS) -Itest -o $@ $< $(BUILD)/libtinyring.a

.PHONY: test-elastic
TEST_TARGETS += test-elastic
test-elastic: $(BUILD)/test/app/test_elastic_units $(BUILD)/mnist_ring $(BUILD)/test/app/gen_idx $(BUILD)/test/app/free_port
	@mkdir -p $(TR_RESULTS)
	$(BUILD)/test/app/test_elastic_units
	timeout 900 bash test/app/test_elastic.sh $(BUILD)
	timeout 300 bash test/app/test_launcher_elastic.sh $(BUILD)
	timeout 120 bash test/app/test_rdv_hosts.sh $(BUILD)
