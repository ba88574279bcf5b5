# core/: build/libtinyring.a for the host, from core/*.c alone.
CORE_SRCS := $(wildcard core/*.c)
CORE_HDRS := $(wildcard core/*.h)
CORE_OBJS := $(CORE_SRCS:core/%.c=$(BUILD)/core/%.o)

$(BUILD)/core/%.o: core/%.c $(CORE_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CORE_HOST_CFLAGS) -c $< -o $@

$(BUILD)/libtinyring.a: $(CORE_OBJS)
	@rm -f $@
	ar rcs $@ $^

# tests, symbol check, bench and cross build of core (owned with the model)
-include test/core/core_tests.mk
