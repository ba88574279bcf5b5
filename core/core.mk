# core/: build/libtinyring.a for the host, from core/*.c alone, and the
# compiler flags every build of core uses (host, make cross, the board).

# core/: freestanding C99, strict. -ffp-contract=off keeps float results the
# same on every target (SGD and the collectives rely on it for bitwise-equal
# ranks across boards and hosts).
CORE_CFLAGS := -std=c99 -Wall -Wextra -Werror -pedantic -O3 -ffp-contract=off \
               -fno-math-errno -ffreestanding -Icore/include
CORE_HOST_CFLAGS := $(CORE_CFLAGS) -g $(HOST_ARCH)
# core for a microcontroller: the same rules at -O2, a section per function
# so that an image keeps only what it calls
CORE_MCU_CFLAGS := $(filter-out -O3,$(CORE_CFLAGS)) -O2 -ffunction-sections -fdata-sections
# Cortex-M4F with its single-precision FPU (make cross, the mps2-an386 board,
# lwIP's size table)
M4F_ARCH := -mcpu=cortex-m4 -mthumb -mfpu=fpv4-sp-d16 -mfloat-abi=hard

CORE_SRCS := $(wildcard core/*.c)
CORE_HDRS := $(wildcard core/*.h core/include/*.h)
CORE_OBJS := $(CORE_SRCS:core/%.c=$(BUILD)/core/%.o)

$(BUILD)/core/%.o: core/%.c $(CORE_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CORE_HOST_CFLAGS) -c $< -o $@

$(BUILD)/libtinyring.a: $(CORE_OBJS)
	@rm -f $@
	ar rcs $@ $^

# tests, symbol check, bench and cross build of core (owned with the model)
include test/core/core_tests.mk
