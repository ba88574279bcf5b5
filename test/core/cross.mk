# test/core/cross.mk: core for Cortex-M4F, RV32IMAFC and Cortex-M55 (with
# the M-profile vector extension), each linked into a minimal bare-metal
# image (test/core/cross/), with text/data/bss sizes.
#   cross-core   build the three libraries and test images, print sizes
#                (appended to CROSS_TARGETS)
#   test-cross   the images run under QEMU (mps2-an386, virt, mps3-an547)
#                and must print exactly what the host twin prints
#   board-cycles instructions per training sample on the three targets
#                (apps/board_mps2/tools/cycles.sh; the target lives in board.mk)
#
# An image is named by its variant C1-C2-BATCH-STEPS-CHECKS[-PLAN]: the
# net's channels, the micro-batch, the training steps, whether the GEMM and
# fast-vs-reference checks run first, and the execution plan (0 fast, the
# default; 1 lean). $(CROSS_DIR)/<target>/<variant>.elf; the host twin is
# $(CROSS_DIR)/host/<variant>.
CROSS_DIR     := $(BUILD)/cross
comma := ,
CROSS_CFLAGS  := $(CORE_MCU_CFLAGS)
CROSS_TEST_VARIANTS := 4-8-4-3-1 4-8-4-3-0-1
# the startup files cast the stack symbol into the vector table: not -pedantic
CROSS_IMG_CFLAGS := $(filter-out -pedantic,$(CROSS_CFLAGS))
CROSS_ARCHS := m4 rv32 m55

m4_CC     := arm-none-eabi-gcc
m4_AR     := arm-none-eabi-ar
m4_SIZE   := arm-none-eabi-size
m4_ARCH   := $(M4F_ARCH)
m4_PORT   := test/core/cross/port_arm.c
m4_LD     := test/core/cross/m4.ld
m4_LDFLAGS :=
m4_NAME   := Cortex-M4F
rv32_CC   := riscv64-unknown-elf-gcc
rv32_AR   := riscv64-unknown-elf-ar
rv32_SIZE := riscv64-unknown-elf-size
rv32_ARCH := -march=rv32imafc -mabi=ilp32f -mcmodel=medany
rv32_PORT := test/core/cross/port_rv.c test/core/cross/start_rv.S
rv32_LD   := test/core/cross/rv.ld
rv32_LDFLAGS := -Wl,--no-warn-rwx-segments
rv32_NAME := RV32IMAFC
m55_CC    := arm-none-eabi-gcc
m55_AR    := arm-none-eabi-ar
m55_SIZE  := arm-none-eabi-size
# MVE floating-point instructions compute with the standard FPSCR value
# (subnormals flushed to zero), unlike the scalar FPU and every other
# target: core's loops stay scalar (no auto-vectorisation); only the GEMM
# uses MVE, and redoes a tile on the scalar FPU when a flush happened.
m55_ARCH  := -mcpu=cortex-m55 -mthumb -mfloat-abi=hard -fno-tree-vectorize
m55_PORT  := test/core/cross/port_arm.c
m55_LD    := test/core/cross/m55.ld
m55_LDFLAGS :=
m55_NAME  := Cortex-M55 (MVE)

ARENA_SIZES   := $(BUILD)/test/core/arena_sizes
CROSS_IMG_SRCS := test/core/cross/image.c test/core/cross/image.h test/core/cross/mini_libc.c

$(ARENA_SIZES): test/core/arena_sizes.c $(BUILD)/libtinyring.a $(CORE_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(HOST_CFLAGS) -o $@ $< $(BUILD)/libtinyring.a

# a variant's static arena, from the size query: C1 C2 BATCH [PLAN] of the stem
$(CROSS_DIR)/var/%/image_arena.h: $(ARENA_SIZES)
	@mkdir -p $(dir $@)
	$(ARENA_SIZES) -h $(wordlist 1,3,$(subst -, ,$*)) $(word 6,$(subst -, ,$*)) > $@

cross_steps  = -DIMAGE_STEPS=$(word 4,$(subst -, ,$(1))) -DIMAGE_CHECKS=$(word 5,$(subst -, ,$(1)))

# per target: core objects, the library, images of any variant
define CROSS_ARCH_RULES
CROSS_$(1)_OBJS := $$(CORE_SRCS:core/%.c=$$(CROSS_DIR)/$(1)/core/%.o)

$$(CROSS_DIR)/$(1)/core/%.o: core/%.c $$(CORE_HDRS)
	@mkdir -p $$(dir $$@)
	$$($(1)_CC) $$(CROSS_CFLAGS) $$($(1)_ARCH) -c $$< -o $$@

$$(CROSS_DIR)/$(1)/libtinyring.a: $$(CROSS_$(1)_OBJS)
	@rm -f $$@
	$$($(1)_AR) rcs $$@ $$^

$$(CROSS_DIR)/$(1)/%.elf: $$(CROSS_DIR)/var/%/image_arena.h $$(CROSS_IMG_SRCS) $$($(1)_PORT) \
                          $$($(1)_LD) $$(CROSS_DIR)/$(1)/libtinyring.a
	$$($(1)_CC) $$(CROSS_IMG_CFLAGS) $$($(1)_ARCH) -Icore/include -Icore -I$$(CROSS_DIR)/var/$$* \
	  $$(call cross_steps,$$*) -nostdlib -nostartfiles -T $$($(1)_LD) -Wl,--gc-sections \
	  $$($(1)_LDFLAGS) -o $$@ $$($(1)_PORT) test/core/cross/image.c test/core/cross/mini_libc.c \
	  $$(CROSS_DIR)/$(1)/libtinyring.a -lgcc
endef
$(foreach a,$(CROSS_ARCHS),$(eval $(call CROSS_ARCH_RULES,$(a))))

# the host twin: the same image.c on the host library
# host_twin(CFLAGS, LIBRARY[, COMPILER]): the recipe, for the variant in the
# target's stem (the compiler: the host's CC unless given)
host_twin = $(or $(3),$(CC)) $(filter-out -ffreestanding,$(1)) -Icore/include -Icore -I$(CROSS_DIR)/var/$* \
	  $(call cross_steps,$*) -o $@ test/core/cross/port_host.c test/core/cross/image.c $(2)
$(CROSS_DIR)/host/%: $(CROSS_DIR)/var/%/image_arena.h $(CROSS_IMG_SRCS) test/core/cross/port_host.c \
                     $(BUILD)/libtinyring.a
	@mkdir -p $(dir $@)
	$(call host_twin,$(CORE_HOST_CFLAGS),$(BUILD)/libtinyring.a)

# On an x86-64 host, the host twin again on core built for narrower vector
# units (AVX2 without AVX-512; SSE2 only): the kernels' other #if branches
# must print the same lines. $(CROSS_DIR)/host-<isa>/<variant>
# (and where the host has AVX-512, AVX-512 with 256-bit tiles, TR_VEC256;
# a comma in an ISA's flags stands for a space)
ifeq ($(shell uname -m),x86_64)
CROSS_HOST_ISAS := avx2:-march=x86-64-v3 sse2:-march=x86-64
ifneq ($(shell $(CC) -march=native -dM -E - </dev/null 2>/dev/null | grep -c __AVX512F__),0)
CROSS_HOST_ISAS += avx512-256:-march=x86-64-v4,-DTR_VEC256
endif
endif
# (1) the ISA's name, (2) its compiler flags; for another architecture (3)
# its compiler and (4) its ar (default: the host's)
define CROSS_ISA_RULES
$(CROSS_DIR)/isa/$(1)/%.o: core/%.c $(CORE_HDRS)
	@mkdir -p $$(dir $$@)
	$(or $(3),$(CC)) $(CORE_CFLAGS) $(2) -c $$< -o $$@
$(CROSS_DIR)/isa/$(1)/libtinyring.a: $(CORE_SRCS:core/%.c=$(CROSS_DIR)/isa/$(1)/%.o)
	@rm -f $$@
	$(or $(4),ar) rcs $$@ $$^
$(CROSS_DIR)/host-$(1)/%: $(CROSS_DIR)/var/%/image_arena.h $(CROSS_IMG_SRCS) \
                          test/core/cross/port_host.c $(CROSS_DIR)/isa/$(1)/libtinyring.a
	@mkdir -p $$(dir $$@)
	$$(call host_twin,$(CORE_CFLAGS) $(2),$(CROSS_DIR)/isa/$(1)/libtinyring.a,$(3))
endef
$(foreach i,$(CROSS_HOST_ISAS),$(eval $(call CROSS_ISA_RULES,$(firstword $(subst :, ,$(i))),$(subst $(comma), ,$(lastword $(subst :, ,$(i)))))))

# A 64-bit Arm host (the kernels' NEON branches): the host twin on core
# built by the AArch64 cross compiler, static, run under QEMU's user mode
# (cross_test.sh); it must print the same lines. $(CROSS_DIR)/host-a64/<variant>
A64_CC := aarch64-linux-gnu-gcc
A64_AR := aarch64-linux-gnu-ar
$(eval $(call CROSS_ISA_RULES,a64,-static,$(A64_CC),$(A64_AR)))

# test-core-a64: test-core's kernel suites (fast against reference, the
# lean plan against the fast one, the PyTorch goldens; the vector GEMM and
# one-plane conv branches) again on that core, run by qemu-aarch64, each
# under its own suite name (core_*_a64)
A64_TEST_DIR := $(CROSS_DIR)/a64-tests
A64_TEST_CFLAGS := -std=gnu99 -Wall -Wextra -O2 -ffp-contract=off -static -Icore/include -Icore -Itest -Itest/core
A64_SUITES := fast lean_kernels lean golden
A64_TEST_BINS := $(A64_SUITES:%=$(A64_TEST_DIR)/test_%) $(A64_TEST_DIR)/test_gemm_vector \
                 $(A64_TEST_DIR)/test_lean_vector
$(A64_TEST_DIR)/test_%: test/core/test_%.c $(CROSS_DIR)/isa/a64/libtinyring.a $(CORE_TEST_HDRS)
	@mkdir -p $(dir $@)
	$(A64_CC) $(A64_TEST_CFLAGS) '-DTEST_SUITE="core_$*_a64"' -o $@ $< \
	  $(CROSS_DIR)/isa/a64/libtinyring.a -lm
$(A64_TEST_DIR)/test_gemm_vector: test/core/test_gemm_plain.c core/tr_kernel_gemm.c $(CORE_TEST_HDRS)
	@mkdir -p $(dir $@)
	$(A64_CC) $(A64_TEST_CFLAGS) -DTEST_GEMM_VECTOR '-DTEST_SUITE="core_gemm_a64"' -o $@ $< -lm
$(A64_TEST_DIR)/test_lean_vector: test/core/test_lean_plain.c $(CROSS_DIR)/isa/a64/libtinyring.a \
                                  $(CORE_TEST_HDRS)
	@mkdir -p $(dir $@)
	$(A64_CC) $(A64_TEST_CFLAGS) -DTEST_LEAN_VECTOR '-DTEST_SUITE="core_lean_plane_a64"' -o $@ $< \
	  $(CROSS_DIR)/isa/a64/libtinyring.a -lm

# test-core-isa: the same kernel suites on core built for each narrower
# x86 vector unit of CROSS_HOST_ISAS (AVX2 without AVX-512; SSE2 only),
# each under its own suite name (core_*_avx2, core_*_sse2): the kernels'
# other branches against the reference and the goldens, on this host
ISA_SUITES := fast lean_kernels lean golden
ISA_TEST_BINS := $(foreach i,$(CROSS_HOST_ISAS),$(ISA_SUITES:%=$(CROSS_DIR)/isa-tests/$(firstword $(subst :, ,$(i)))/test_%))
define ISA_TEST_RULES
$(CROSS_DIR)/isa-tests/$(1)/test_%: test/core/test_%.c $(CROSS_DIR)/isa/$(1)/libtinyring.a $(CORE_TEST_HDRS)
	@mkdir -p $$(dir $$@)
	$(CC) -std=gnu99 -Wall -Wextra -O2 -ffp-contract=off $(2) -Icore/include -Icore -Itest -Itest/core \
	  '-DTEST_SUITE="core_$$*_$(1)"' -o $$@ $$< $(CROSS_DIR)/isa/$(1)/libtinyring.a -lm
endef
$(foreach i,$(CROSS_HOST_ISAS),$(eval $(call ISA_TEST_RULES,$(firstword $(subst :, ,$(i))),$(subst $(comma), ,$(lastword $(subst :, ,$(i)))))))

.PHONY: test-core-isa
test-core-isa: $(ISA_TEST_BINS)
	@mkdir -p $(TR_RESULTS)
	@st=0; for t in $(ISA_TEST_BINS); do \
	  timeout 300 $$t test/fixtures || { echo "FAILED: $$t"; st=1; }; done; exit $$st

TEST_TARGETS += test-core-isa

.PHONY: test-core-a64
test-core-a64: $(A64_TEST_BINS)
	@mkdir -p $(TR_RESULTS)
	@command -v qemu-aarch64 >/dev/null || { echo "FAILED: qemu-aarch64 missing (test/tools/apt-packages.txt installs it)"; exit 1; }
	@st=0; for t in $(A64_TEST_BINS); do \
	  timeout 600 qemu-aarch64 $$t test/fixtures || { echo "FAILED: $$t"; st=1; }; done; exit $$st

TEST_TARGETS += test-core-a64

CROSS_TEST_IMAGES := $(foreach v,$(CROSS_TEST_VARIANTS),$(CROSS_ARCHS:%=$(CROSS_DIR)/%/$(v).elf) \
                       $(CROSS_DIR)/host/$(v) $(CROSS_DIR)/host-a64/$(v) \
                       $(foreach i,$(CROSS_HOST_ISAS),$(CROSS_DIR)/host-$(firstword $(subst :, ,$(i)))/$(v)))
CROSS_TEST_VARIANT := $(firstword $(CROSS_TEST_VARIANTS))

.PHONY: cross-core test-cross cross-images
cross-images: $(CROSS_TEST_IMAGES)

cross-core: cross-images
	@$(foreach a,$(CROSS_ARCHS),\
	  echo "== core, $($(a)_NAME) ($($(a)_ARCH)), -O2: library objects (total) and test image"; \
	  $($(a)_SIZE) -t $(CROSS_DIR)/$(a)/libtinyring.a | tail -1 | sed 's/(TOTALS)/libtinyring.a (all objects)/'; \
	  $($(a)_SIZE) $(CROSS_DIR)/$(a)/$(CROSS_TEST_VARIANT).elf | tail -1;)
	@echo "(image bss: the static arena for net, batch and the GEMM checks of variant $(CROSS_TEST_VARIANT) = C1-C2-BATCH-STEPS-CHECKS)"

# the host pieces are built first, so the sub-make below only builds the
# cross objects (nothing shared with a parallel outer make)
test-cross: $(ARENA_SIZES) $(BUILD)/libtinyring.a
	@mkdir -p $(TR_RESULTS)
	timeout 900 bash test/core/cross_test.sh $(MAKE) $(CROSS_DIR) $(CROSS_TEST_VARIANTS)

CROSS_TARGETS += cross-core
TEST_TARGETS  += test-cross

# the arena table of docs/DESIGN.md, from the size query
.PHONY: core-sizes
core-sizes: $(ARENA_SIZES)
	@$(ARENA_SIZES)
