# apps/board_mps2: Cortex-M4F firmware images for QEMU's mps2-an386.
#
#   make test-board    build the images, run them under qemu-system-arm, compare
#                      the board's training losses with the host's (and the ring)
#   make cross-board   text/data/bss of core alone, core + lwIP port, whole image
#
# core/ is compiled again for the board with the project's strict flags and the
# board's architecture flags; nothing here changes the host build.

BOARD_DIR   := apps/board_mps2
BOARD_OUT   := $(BUILD)/board
BOARD_CC    ?= arm-none-eabi-gcc
BOARD_AR    ?= arm-none-eabi-ar
BOARD_SIZE  ?= arm-none-eabi-size
BOARD_NM    ?= arm-none-eabi-nm
BOARD_QEMU  ?= qemu-system-arm
BOARD_ARCH  := -mcpu=cortex-m4 -mthumb -mfpu=fpv4-sp-d16 -mfloat-abi=hard
# core for the board: the project's core flags at -O2, plus the architecture;
# section per function so the image keeps only what it calls.
BOARD_CORE_CFLAGS := $(filter-out -O3,$(CORE_CFLAGS)) -O2 $(BOARD_ARCH) \
                     -ffunction-sections -fdata-sections
# board support and images: gnu99, same float rules as core
BOARD_CFLAGS := -std=gnu99 -Wall -Wextra -Werror -O2 -g -ffp-contract=off \
                -ffreestanding $(BOARD_ARCH) -ffunction-sections -fdata-sections \
                -Icore -I$(BOARD_DIR) -I$(BOARD_OUT)
BOARD_LDFLAGS := $(BOARD_ARCH) -nostartfiles --specs=nano.specs -T $(BOARD_DIR)/mps2.ld \
                 -Wl,--gc-sections -Wl,--no-warn-rwx-segments
BOARD_LIBS  := -lc -lgcc

BOARD_BSP_SRCS := startup.c semihost.c clock.c console.c fmt.c
BOARD_BSP_OBJS := $(BOARD_BSP_SRCS:%.c=$(BOARD_OUT)/bsp/%.o)
BOARD_CORE_OBJS := $(CORE_SRCS:core/%.c=$(BOARD_OUT)/core/%.o)
BOARD_CORE_LIB := $(BOARD_OUT)/libtinyring_m4.a

$(BOARD_OUT)/core/%.o: core/%.c $(CORE_HDRS)
	@mkdir -p $(dir $@)
	$(BOARD_CC) $(BOARD_CORE_CFLAGS) -c $< -o $@

$(BOARD_CORE_LIB): $(BOARD_CORE_OBJS)
	@rm -f $@
	$(BOARD_AR) rcs $@ $^

$(BOARD_OUT)/bsp/%.o: $(BOARD_DIR)/%.c $(wildcard $(BOARD_DIR)/*.h)
	@mkdir -p $(dir $@)
	$(BOARD_CC) $(BOARD_CFLAGS) -c $< -o $@

# link: no heap exists, so anything that needs one fails on _sbrk here
define board_link
	$(BOARD_CC) $(BOARD_LDFLAGS) -Wl,-Map,$(basename $@).map -o $@ $^ $(BOARD_LIBS)
endef

$(BOARD_OUT)/hello.elf: $(BOARD_OUT)/bsp/hello_main.o $(BOARD_BSP_OBJS) $(BOARD_DIR)/mps2.ld
	$(BOARD_CC) $(BOARD_LDFLAGS) -Wl,-Map,$(basename $@).map -o $@ $(filter %.o,$^) $(BOARD_LIBS)

$(BOARD_OUT)/nettest.elf: $(BOARD_OUT)/bsp/nettest_main.o $(BOARD_OUT)/bsp/lan9118.o \
                          $(BOARD_BSP_OBJS) $(BOARD_DIR)/mps2.ld
	$(BOARD_CC) $(BOARD_LDFLAGS) -Wl,-Map,$(basename $@).map -o $@ $(filter %.o,$^) $(BOARD_LIBS)

BOARD_IMAGES := $(BOARD_OUT)/hello.elf $(BOARD_OUT)/nettest.elf

.PHONY: test-board cross-board board-images
board-images: $(BOARD_IMAGES)

test-board: $(BOARD_IMAGES)
	@BUILD=$(BUILD) BOARD_QEMU=$(BOARD_QEMU) bash test/board/test_board.sh

cross-board: $(BOARD_IMAGES)
	@BUILD=$(BUILD) BOARD_SIZE=$(BOARD_SIZE) bash $(BOARD_DIR)/sizes.sh

TEST_TARGETS  += test-board
CROSS_TARGETS += cross-board
