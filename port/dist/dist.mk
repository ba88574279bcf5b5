# port/dist: the packages for the ecosystems that want their manifest at a
# package's root (Arduino, PlatformIO, ESP-IDF, Zephyr), generated from the one
# tree rather than kept beside it (port/dist/dist.sh says what each holds).
#   make dist    writes $(BUILD)/dist/{arduino,platformio,esp-idf,zephyr}/tinyring
#                (TR_DIST_URL=https://...: the project's home, for the Arduino
#                library.properties' url)
# CMake needs no package: CMakeLists.txt at the root serves add_subdirectory,
# FetchContent and `cmake --install` (find_package, pkg-config) from a checkout.
.PHONY: dist
dist:
	@TR_DIST_URL='$(TR_DIST_URL)' bash port/dist/dist.sh $(CURDIR) $(abspath $(BUILD))/dist
