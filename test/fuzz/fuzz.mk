# test/fuzz: libFuzzer harnesses for every parser of outside bytes (clang's
# -fsanitize=fuzzer with AddressSanitizer and UBSan). See test/fuzz/README.md.
#
#   make fuzz          each harness for FUZZ_S seconds (default 60) from the
#                      committed corpus; prints execs and coverage per harness;
#                      findings land in build/fuzz/findings/<harness>/
#   make test-fuzz     (part of make test) every committed input again, then a
#                      few seconds of fuzzing per harness (FUZZ_TEST_S)
#   make fuzz-corpus   rewrites the generated seeds of test/fuzz/corpus
FUZZ_DIR    := $(BUILD)/fuzz
FUZZ_CC     ?= clang
FUZZ_S      ?= 60
FUZZ_TEST_S ?= 3
FUZZ_HARNESSES := idx ckpt link rdv hello comm lwip elastic lwip_elastic codec
# lwIP for the harness: the port's lwipopts.h, with room for the harness's
# own peer (a second listener and its connections)
FUZZ_LWIP_DEFS := -DMEMP_NUM_TCP_PCB=8 -DMEMP_NUM_TCP_PCB_LISTEN=2
FUZZ_CFLAGS := -std=gnu99 -g -O1 -fno-omit-frame-pointer \
               -fsanitize=address,undefined -fno-sanitize-recover=all \
               -Icore/include -Icore -Itest -Itest/fuzz -Itest/comm -Iapps/mnist_ring -Iport/posix \
               $(LWIP_INCLUDES) $(FUZZ_LWIP_DEFS)
FUZZ_HDRS   := $(CORE_HDRS) $(wildcard test/fuzz/*.h test/comm/*.h apps/mnist_ring/*.h \
               port/posix/*.h) $(TR_LWIP_HDRS)

# every object with coverage instrumentation; only the link adds libFuzzer
$(FUZZ_DIR)/obj/%.o: %.c $(FUZZ_HDRS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -w -c $< -o $@
$(FUZZ_DIR)/lwip/%.o: $(LWIP_DIR)/src/%.c $(FUZZ_HDRS) | $(LWIP_STAMP)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -w -c $< -o $@

fuzz_objs = $(patsubst %.c,$(FUZZ_DIR)/obj/%.o,$(1))
FUZZ_CORE := $(call fuzz_objs,$(CORE_SRCS))
FUZZ_RING := $(call fuzz_objs,test/fuzz/fuzz_ring.c test/comm/sim_transport.c test/comm/comm_util.c)
FUZZ_LWIP := $(LWIP_CORE_SRCS:$(LWIP_DIR)/src/%.c=$(FUZZ_DIR)/lwip/%.o)
FUZZ_LOOPIF := $(call fuzz_objs,test/fuzz/fuzz_loopif.c) $(FUZZ_LWIP)

$(FUZZ_DIR)/fuzz_idx:   $(call fuzz_objs,test/fuzz/fuzz_idx.c apps/mnist_ring/idx.c)
$(FUZZ_DIR)/fuzz_ckpt:  $(call fuzz_objs,test/fuzz/fuzz_ckpt.c)
$(FUZZ_DIR)/fuzz_link:  $(call fuzz_objs,test/fuzz/fuzz_link.c)
$(FUZZ_DIR)/fuzz_rdv:   $(call fuzz_objs,test/fuzz/fuzz_rdv.c port/posix/tr_posix_wire.c)
$(FUZZ_DIR)/fuzz_hello: $(call fuzz_objs,test/fuzz/fuzz_hello.c) $(FUZZ_RING)
$(FUZZ_DIR)/fuzz_comm:  $(call fuzz_objs,test/fuzz/fuzz_comm.c) $(FUZZ_RING)
$(FUZZ_DIR)/fuzz_lwip:  $(call fuzz_objs,test/fuzz/fuzz_lwip.c port/lwip/tr_lwip.c) $(FUZZ_LOOPIF)
$(FUZZ_DIR)/fuzz_elastic: $(call fuzz_objs,test/fuzz/fuzz_elastic.c)
$(FUZZ_DIR)/fuzz_codec: $(call fuzz_objs,test/fuzz/fuzz_codec.c)
$(FUZZ_DIR)/fuzz_lwip_elastic: $(call fuzz_objs,test/fuzz/fuzz_lwip_elastic.c port/lwip/tr_lwip.c \
                                port/lwip/tr_lwip_elastic.c) $(FUZZ_LOOPIF)

FUZZ_BINS := $(FUZZ_HARNESSES:%=$(FUZZ_DIR)/fuzz_%)
$(FUZZ_BINS): $(FUZZ_CORE)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $^ -lz -lm

# the seeds: written by gen_corpus with the project's own encoders
$(FUZZ_DIR)/gen_corpus: test/fuzz/gen_corpus.c port/posix/tr_posix_wire.c \
                        $(BUILD)/libtinyring.a $(FUZZ_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(HOST_CFLAGS) -Iport/posix -Itest/fuzz -o $@ test/fuzz/gen_corpus.c \
	  port/posix/tr_posix_wire.c $(BUILD)/libtinyring.a -lm

.PHONY: fuzz test-fuzz fuzz-corpus fuzz-bins
fuzz-bins: $(FUZZ_BINS)

fuzz-corpus: $(FUZZ_DIR)/gen_corpus
	$(FUZZ_DIR)/gen_corpus test/fuzz/corpus

fuzz: $(FUZZ_BINS)
	@bash test/fuzz/run.sh long $(FUZZ_DIR) $(FUZZ_S) $(FUZZ_HARNESSES)

test-fuzz: $(FUZZ_BINS)
	@mkdir -p $(TR_RESULTS)
	@timeout 600 bash test/fuzz/run.sh test $(FUZZ_DIR) $(FUZZ_TEST_S) $(FUZZ_HARNESSES)

TEST_TARGETS += test-fuzz
