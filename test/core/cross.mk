# test/core/cross.mk: core for Cortex-M4F and RV32IMAFC, each linked into a
# minimal bare-metal image (test/core/cross/), with text/data/bss sizes.
#   cross-core   build both, print sizes (appended to CROSS_TARGETS)
#   test-cross   cross-core as a test, plus the M4F image run in QEMU
#                (mps2-an386, semihosting exit status)
CROSS_DIR     := $(BUILD)/cross
CROSS_CFLAGS  := $(CORE_MCU_CFLAGS)
CROSS_IMAGE_NET := 4 8 4
# the startup files cast the stack symbol into the vector table: not -pedantic
CROSS_IMG_CFLAGS := $(filter-out -pedantic,$(CROSS_CFLAGS))
M4_CC   := arm-none-eabi-gcc
M4_SIZE := arm-none-eabi-size
RV_CC   := riscv64-unknown-elf-gcc
RV_SIZE := riscv64-unknown-elf-size
RV_ARCH := -march=rv32imafc -mabi=ilp32f -mcmodel=medany

CROSS_M4_OBJS := $(CORE_SRCS:core/%.c=$(CROSS_DIR)/m4/core/%.o)
CROSS_RV_OBJS := $(CORE_SRCS:core/%.c=$(CROSS_DIR)/rv32/core/%.o)
ARENA_SIZES   := $(BUILD)/test/core/arena_sizes

$(ARENA_SIZES): test/core/arena_sizes.c $(BUILD)/libtinyring.a $(CORE_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(HOST_CFLAGS) -o $@ $< $(BUILD)/libtinyring.a

$(CROSS_DIR)/image_arena.h: $(ARENA_SIZES)
	@mkdir -p $(dir $@)
	$(ARENA_SIZES) -h $(CROSS_IMAGE_NET) > $@

$(CROSS_DIR)/m4/core/%.o: core/%.c $(CORE_HDRS)
	@mkdir -p $(dir $@)
	$(M4_CC) $(CROSS_CFLAGS) $(M4F_ARCH) -c $< -o $@

$(CROSS_DIR)/rv32/core/%.o: core/%.c $(CORE_HDRS)
	@mkdir -p $(dir $@)
	$(RV_CC) $(CROSS_CFLAGS) $(RV_ARCH) -c $< -o $@

$(CROSS_DIR)/m4/libtinyring.a: $(CROSS_M4_OBJS)
	@rm -f $@
	arm-none-eabi-ar rcs $@ $^

$(CROSS_DIR)/rv32/libtinyring.a: $(CROSS_RV_OBJS)
	@rm -f $@
	riscv64-unknown-elf-ar rcs $@ $^

CROSS_IMG_SRCS := test/core/cross/image.c $(CROSS_DIR)/image_arena.h

$(CROSS_DIR)/m4/image.elf: $(CROSS_IMG_SRCS) test/core/cross/start_m4.c test/core/cross/m4.ld $(CROSS_DIR)/m4/libtinyring.a
	$(M4_CC) $(CROSS_IMG_CFLAGS) $(M4F_ARCH) -I$(CROSS_DIR) -nostdlib -nostartfiles \
	  -T test/core/cross/m4.ld -Wl,--gc-sections -o $@ test/core/cross/start_m4.c \
	  test/core/cross/image.c $(CROSS_DIR)/m4/libtinyring.a -lgcc

$(CROSS_DIR)/rv32/image.elf: $(CROSS_IMG_SRCS) test/core/cross/start_rv.S test/core/cross/rv.ld $(CROSS_DIR)/rv32/libtinyring.a
	$(RV_CC) $(CROSS_IMG_CFLAGS) $(RV_ARCH) -I$(CROSS_DIR) -nostdlib -nostartfiles \
	  -T test/core/cross/rv.ld -Wl,--gc-sections,--no-warn-rwx-segments -o $@ test/core/cross/start_rv.S \
	  test/core/cross/image.c $(CROSS_DIR)/rv32/libtinyring.a -lgcc

.PHONY: cross-core test-cross
cross-core: $(CROSS_DIR)/m4/image.elf $(CROSS_DIR)/rv32/image.elf
	@echo "== core, Cortex-M4F ($(M4F_ARCH)), -O2: library objects (total) and image"
	@$(M4_SIZE) -t $(CROSS_DIR)/m4/libtinyring.a | tail -1 | sed 's/(TOTALS)/libtinyring.a (all objects)/'
	@$(M4_SIZE) $(CROSS_DIR)/m4/image.elf | tail -1
	@echo "== core, RISC-V ($(RV_ARCH)), -O2: library objects (total) and image"
	@$(RV_SIZE) -t $(CROSS_DIR)/rv32/libtinyring.a | tail -1 | sed 's/(TOTALS)/libtinyring.a (all objects)/'
	@$(RV_SIZE) $(CROSS_DIR)/rv32/image.elf | tail -1
	@echo "(image bss holds the static arena for conv $(word 1,$(CROSS_IMAGE_NET))/$(word 2,$(CROSS_IMAGE_NET)) at batch $(word 3,$(CROSS_IMAGE_NET)))"

# the host pieces are built first, so the sub-make below only builds the
# cross objects (nothing shared with a parallel outer make)
test-cross: $(ARENA_SIZES) $(BUILD)/libtinyring.a
	@mkdir -p $(TR_RESULTS)
	timeout 600 bash test/core/cross_test.sh $(MAKE) $(CROSS_DIR)

CROSS_TARGETS += cross-core
TEST_TARGETS  += test-cross

# the arena table of docs/DESIGN.md, from the size query
.PHONY: core-sizes
core-sizes: $(ARENA_SIZES)
	@$(ARENA_SIZES)
