# test/packaging: tinyring as firmware and host projects pull it in: CMake
# (add_subdirectory, FetchContent, find_package; host and Cortex-M4F under
# QEMU), pkg-config, and the Zephyr, ESP-IDF, PlatformIO and Arduino
# packages `make dist` writes from a clean checkout (test/packaging/run.sh
# says what each check is).
#   make test-packaging   the suite "packaging" (part of make test)
# run.sh gets the Makefile's own definitions (core flags, the board's
# architecture and support files, the lwIP sources), so neither it nor the
# CMake files hold a second copy of them.
PACKAGING_OUT := $(BUILD)/packaging

.PHONY: test-packaging
test-packaging: | $(LWIP_STAMP)
	@mkdir -p $(TR_RESULTS)
	@CC='$(CC)' TR_CORE_CFLAGS='$(CORE_CFLAGS)' TR_HOST_ARCH='$(HOST_ARCH)' TR_M4_ARCH='$(M4F_ARCH)' \
	  TR_BOARD_SOURCES='$(BOARD_BSP_SRCS)' TR_LWIP_DIR='$(abspath $(LWIP_DIR))' \
	  TR_LWIP_SOURCES='$(abspath $(LWIP_CORE_SRCS))' TR_QEMU='$(BOARD_QEMU)' \
	  timeout 600 bash test/packaging/run.sh $(abspath $(PACKAGING_OUT))

TEST_TARGETS += test-packaging
