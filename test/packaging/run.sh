#!/usr/bin/env bash
# test-packaging: tinyring pulled into an out-of-tree project
# (test/packaging/consumer) the ways docs/FIRMWARE.md describes.
#   1. CMake add_subdirectory on the host: core, posix, and the lwIP port
#      against the consumer's own lwIP; the demo trains 5 steps; tinyring adds
#      no install rules and keeps its flags to its own objects.
#   2. FetchContent from a git repository holding the working tree as it is.
#   3. cmake --install (the Makefile's -Werror on) into a temporary prefix;
#      CMake's core flags equal the Makefile's CORE_CFLAGS; find_package and
#      pkg-config consumers build and run.
#   4. The same for Cortex-M4F with an arm-none-eabi toolchain file: the
#      find_package consumer and the Arduino package run under
#      qemu-system-arm and print the host's losses bit for bit.
#   5. The packages `make dist` writes in a clean clone of that repository
#      (Arduino, PlatformIO, ESP-IDF, Zephyr): library.json,
#      library.properties, idf_component.yml, zephyr/module.yml and both
#      Kconfig files; the Zephyr module and the ESP-IDF component run against
#      stand-ins for the functions they call, and what they register is
#      built. The Arduino package is the one step 4 builds.
# usage: run.sh OUTDIR, with from the Makefile: TR_CORE_CFLAGS, TR_HOST_ARCH, TR_M4_ARCH,
# TR_BOARD_SOURCES, TR_LWIP_DIR, TR_LWIP_SOURCES, TR_QEMU. Suite "packaging".
. "$(dirname "$0")/../lib.sh"
out=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
here=$root/test/packaging
py=/usr/bin/python3
unset CFLAGS LDFLAGS CMAKE_PREFIX_PATH
rm -rf "$out"
mkdir -p "$out"
command -v cmake >/dev/null || bash "$root/test/tools/deps.sh"

# step NAME CMD...: run CMD with its output in $out/NAME.log; on failure show
# the log's tail
step() {
  local name=$1; shift
  if "$@" >"$out/$name.log" 2>&1; then return 0; fi
  echo "--- $out/$name.log" >&2; tail -n 15 "$out/$name.log" >&2
  return 1
}
# consumer NAME ARGS...: configure and build the consumer into $out/NAME
consumer() {
  local name=$1; shift
  cmake -S "$here/consumer" -B "$out/$name" -DTR_SOURCE_DIR="$root" "$@" &&
    cmake --build "$out/$name" -j2
}
# qemu_run ELF OUT: the image under QEMU's mps2-an386, its lines in OUT
qemu_run() {
  timeout 60 "${TR_QEMU:-qemu-system-arm}" -M mps2-an386 -display none -monitor none \
    -serial none -semihosting-config enable=on,target=native -kernel "$1" >"$2" 2>&1
}
# installs_nothing BUILD PREFIX: installing the consumer's BUILD into PREFIX
# puts bin/consumer there and nothing else (none of tinyring)
installs_nothing() {
  cmake --install "$1" --prefix "$2" >/dev/null && [ "$(cd "$2" && find . -type f | sort)" = "./bin/consumer" ]
}
# same A B: the loss and params lines of two runs are identical
same() {
  [ -s "$1" ] && [ -s "$2" ] && diff <(grep -E '^(loss|params) ' "$1") <(grep -E '^(loss|params) ' "$2")
}

desc=$(cmake -P "$here/describe.cmake" 2>&1)
version=$(sed -n 's/^version //p' <<<"$desc")
flags=$(sed -n 's/^flags //p' <<<"$desc")
check "port/dist/cmake/tinyring-sources.cmake reads the version from core/include/tinyring.h ($version)" \
  sh -c 'maj=${1%%.*}; min=${1#*.}; min=${min%%.*}; [ "$1" = "$maj.$min.0" ] &&
    grep -Eq "^#define TR_VERSION_MAJOR +$maj\$" "$2" && grep -Eq "^#define TR_VERSION_MINOR +$min\$" "$2"' \
  _ "$version" "$root/core/include/tinyring.h"
lwip_sources=$(tr ' ' ';' <<<"$TR_LWIP_SOURCES")
# the consumer's configuration header (TR_CONFIG_FILE), for add_subdirectory
# and the host install: TR_MAX_LAYERS 40, which core and the demo must agree on
cfg=$here/consumer/config/consumer_tr_config.h
cfg_line="config consumer_tr_config.h TR_MAX_LAYERS 40"
board_sources=$(tr ' ' ';' <<<"$TR_BOARD_SOURCES")

# 1. add_subdirectory, host, with the consumer's lwIP
check "add_subdirectory: host consumer builds (core, posix, lwIP port on the consumer's lwIP)" \
  step subdir consumer subdir -DTR_CONSUME=subdir -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -DTR_LWIP_DIR="$TR_LWIP_DIR" "-DTR_LWIP_SOURCES=$lwip_sources" \
    -DTR_CONFIG_FILE="$cfg"
"$out/subdir/consumer" >"$out/host.out" 2>&1
check "add_subdirectory: the consumer trains 5 steps, the loss falls" \
  sh -c '"$1" "$2" losses "$3" && grep -qx "posix endpoint parsed" "$3"' _ "$py" "$here/checks.py" "$out/host.out"
check "add_subdirectory: TR_CONFIG_FILE reaches core and the consumer (TR_MAX_LAYERS 40, the same losses below)" \
  grep -qx "$cfg_line" "$out/host.out"
check "add_subdirectory: tinyring::lwip runs, compiled with the project's lwipopts.h" \
  step lwip-run "$out/subdir/lwip_consumer"
check "add_subdirectory: core's flags stay on core's objects, no -Werror anywhere" \
  "$py" "$here/checks.py" private "$root" "$out/subdir/compile_commands.json"
check "add_subdirectory: installing the consumer installs nothing of tinyring" \
  installs_nothing "$out/subdir" "$out/subdir-prefix"

# 2. FetchContent from a repository holding the working tree as it is
# (tracked and untracked files, not ignored ones), made without touching the
# checkout's index, refs or files
snap=$(cd "$root" && idx="$out/snapshot.index" &&
  GIT_INDEX_FILE="$idx" git add -A . && tree=$(GIT_INDEX_FILE="$idx" git write-tree) &&
  GIT_AUTHOR_NAME=test-packaging GIT_AUTHOR_EMAIL=test@localhost \
  GIT_COMMITTER_NAME=test-packaging GIT_COMMITTER_EMAIL=test@localhost \
  git commit-tree -m "test-packaging: the working tree" "$tree") 2>"$out/snapshot.log"
check "FetchContent: a repository with the working tree in it" \
  sh -c '[ -n "$1" ] && git init -q --bare "$2" && git -C "$3" push -q "$2" "$1:refs/heads/snapshot"' \
  _ "$snap" "$out/src.git" "$root"
check "FetchContent: host consumer builds" \
  step fetch consumer fetch -DTR_CONSUME=fetch -DCMAKE_BUILD_TYPE=Release \
    -DTR_GIT_REPOSITORY="$out/src.git" -DTR_GIT_TAG="$snap"
check "FetchContent: the fetched sources are the checkout's (core/, port/, CMakeLists.txt)" \
  sh -c 'for d in core port CMakeLists.txt; do diff -r "$1/$d" "$2/$d" || exit 1; done' \
  _ "$root" "$out/fetch/_deps/tinyring-src"
"$out/fetch/consumer" >"$out/fetch.out" 2>&1
check "FetchContent: same losses and parameters as add_subdirectory" same "$out/host.out" "$out/fetch.out"
check "FetchContent: installing the consumer installs nothing of tinyring" \
  installs_nothing "$out/fetch" "$out/fetch-prefix"

# 3. install (with the Makefile's warnings as errors), find_package, pkg-config
hp=$out/prefix-host
# core as the Makefile builds it for the host: CORE_CFLAGS and HOST_ARCH
check "install: host build with TINYRING_STRICT and HOST_ARCH, installed into a temporary prefix" \
  step install-host sh -c 'cmake -S "$1" -B "$2" -DCMAKE_BUILD_TYPE=Release -DTINYRING_STRICT=ON \
      "-DCMAKE_C_FLAGS=$4" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -DTR_CONFIG_FILE="$5" &&
      cmake --build "$2" -j2 && cmake --install "$2" --prefix "$3"' \
    _ "$root" "$out/install-host" "$hp" "$TR_HOST_ARCH" "$cfg"
check "install: libraries, headers, package config + version file, tinyring.pc" \
  sh -c 'cd "$1" && for f in lib/libtinyring.a lib/libtinyring_posix.a include/tinyring/tinyring.h \
      include/tinyring/tr_posix.h lib/cmake/tinyring/tinyringConfig.cmake \
      lib/cmake/tinyring/tinyringConfigVersion.cmake lib/pkgconfig/tinyring.pc; do [ -f "$f" ] || exit 1; done' _ "$hp"
check "install: only public headers (core/include/*.h, tr_posix.h, the TR_CONFIG_FILE), none of core's or the port's internal ones" \
  sh -c 'cd "$1/include/tinyring" && [ -f consumer_tr_config.h ] && for h in *.h; do
        [ -f "$2/core/include/$h" ] || [ "$h" = tr_posix.h ] || [ "$h" = consumer_tr_config.h ] ||
          { echo "installed: $h"; exit 1; }; done &&
      for h in "$2"/core/*.h "$2"/port/posix/tr_posix_int.h; do
        [ ! -e "$(basename "$h")" ] || { echo "installed: $h"; exit 1; }; done' _ "$hp" "$root"
check "CMake compiles core with the Makefile's CORE_CFLAGS (less -O, -I)" \
  "$py" "$here/checks.py" flags "$root" "$TR_CORE_CFLAGS" "$TR_HOST_ARCH" "$out/install-host/compile_commands.json"
check "find_package(tinyring 0.1 COMPONENTS posix): host consumer builds" \
  step package consumer package -DTR_CONSUME=package -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$hp"
"$out/package/consumer" >"$out/package.out" 2>&1
check "find_package: same losses and parameters as add_subdirectory" same "$out/host.out" "$out/package.out"
check "find_package: the installed TR_CONFIG_FILE reaches the consumer; tinyring::posix brings Threads::Threads" \
  sh -c 'grep -qx "$1" "$2" && grep -q "INTERFACE_LINK_LIBRARIES \"tinyring::core;Threads::Threads\"" "$3"' \
  _ "$cfg_line" "$out/package.out" "$hp/lib/cmake/tinyring/tinyringTargets.cmake"
check "find_package(tinyring 9.9) is refused (version file)" \
  sh -c '! cmake -S "$1/consumer" -B "$2" -DTR_SOURCE_DIR="$3" -DTR_CONSUME=package \
      -DTR_TINYRING_VERSION=9.9 -DCMAKE_PREFIX_PATH="$4" >"$2.log" 2>&1 && grep -q "tinyringConfig.cmake, version: 0.1.0" "$2.log"' \
  _ "$here" "$out/package-9.9" "$root" "$hp"
export PKG_CONFIG_PATH=$hp/lib/pkgconfig
check "pkg-config: tinyring $version" sh -c '[ "$(pkg-config --modversion tinyring)" = "$1" ]' _ "$version"
check "pkg-config: cc \$(pkg-config --cflags --libs tinyring) builds the consumer" \
  step pkgconfig sh -c '${CC:-cc} -O2 -DCONSUMER_POSIX $(pkg-config --cflags tinyring) -o "$1" \
      "$2/demo.c" "$2/host_main.c" $(pkg-config --libs tinyring)' \
    _ "$out/pc-consumer" "$here/consumer"
"$out/pc-consumer" >"$out/pkgconfig.out" 2>&1
check "pkg-config: same losses and parameters as add_subdirectory" same "$out/host.out" "$out/pkgconfig.out"
check "pkg-config: its Cflags carry the TR_CONFIG_FILE" grep -qx "$cfg_line" "$out/pkgconfig.out"
unset PKG_CONFIG_PATH

# 4. Cortex-M4F: install with the toolchain file, find_package, the Arduino layout
export TR_M4_ARCH
tc=$here/arm-none-eabi.cmake
mp=$out/prefix-m4
check "install: Cortex-M4F build (arm-none-eabi toolchain file, TINYRING_STRICT) into a prefix" \
  step install-m4 sh -c 'cmake -S "$1" -B "$2" -DCMAKE_TOOLCHAIN_FILE="$3" -DCMAKE_BUILD_TYPE=Release \
      -DTINYRING_STRICT=ON && cmake --build "$2" -j2 && cmake --install "$2" --prefix "$4"' \
    _ "$root" "$out/install-m4" "$tc" "$mp"
check "find_package: Cortex-M4F image with apps/board_mps2's startup and mps2.ld" \
  step package-m4 consumer package-m4 -DTR_CONSUME=package -DCMAKE_TOOLCHAIN_FILE="$tc" \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_FIND_ROOT_PATH="$mp" "-DTR_BOARD_SOURCES=$board_sources"
check "find_package: the image runs under qemu-system-arm mps2-an386" \
  qemu_run "$out/package-m4/consumer.elf" "$out/m4.out"
check "find_package: Cortex-M4F losses and parameters equal the host's bit for bit" \
  same "$out/host.out" "$out/m4.out"
# the packages, from a clean checkout of the repository step 2 made
dist=$out/clean-build/dist
check "make dist in a clean clone writes the Arduino, PlatformIO, ESP-IDF and Zephyr packages" \
  step dist sh -c 'git clone -q -b snapshot "$1" "$2" && make -C "$2" --no-print-directory dist BUILD="$3" &&
      for p in arduino/tinyring/library.properties platformio/tinyring/library.json \
          esp-idf/tinyring/idf_component.yml zephyr/tinyring/zephyr/module.yml; do
        [ -f "$3/dist/$p" ] || { echo "no $p"; exit 1; }; done' _ "$out/src.git" "$out/clean" "$out/clean-build"
check "Arduino: the package's src/ holds exactly core/*.c, core/*.h and core/include/*.h" \
  sh -c '[ "$(cd "$1/src" && ls)" = "$(cd "$2/core" && ls *.c *.h include/*.h | sed "s|^include/||" | sort)" ]' _ "$dist/arduino/tinyring" "$root"
check "Arduino: src/ built as the IDE does (only src/ on the path, gnu11 -Os, no tinyring flags)" \
  step arduino-m4 consumer arduino-m4 -DTR_CONSUME=arduino -DTR_PACKAGE_DIR="$dist/arduino/tinyring" \
    -DCMAKE_TOOLCHAIN_FILE="$tc" \
    -DCMAKE_BUILD_TYPE=MinSizeRel -DCMAKE_C_STANDARD=11 "-DTR_BOARD_SOURCES=$board_sources"
check "Arduino: the image runs under QEMU" qemu_run "$out/arduino-m4/consumer.elf" "$out/arduino.out"
check "Arduino: losses and parameters equal the host's bit for bit" same "$out/host.out" "$out/arduino.out"

# 5. the other ecosystems' descriptions
check "library.json (PlatformIO): JSON, version, core's flags, srcFilter selects core/*.c, paths exist" \
  "$py" "$here/checks.py" pio "$dist/platformio/tinyring" "$version" "$flags"
check "library.properties (Arduino 1.5): fields, version, category, includes exists, url= empty (no TR_DIST_URL)" \
  "$py" "$here/checks.py" arduino "$dist/arduino/tinyring" "$version"
home=https://tinyring.example/home
check "dist with TR_DIST_URL: library.properties' url is it; a URL that is not http(s) is refused" \
  sh -c 'TR_DIST_URL="$4" bash "$1/port/dist/dist.sh" "$1" "$2/dist-url" >/dev/null 2>&1 &&
      "$5" "$6" arduino "$2/dist-url/arduino/tinyring" "$3" "$4" &&
      ! TR_DIST_URL=ftp://x.org bash "$1/port/dist/dist.sh" "$1" "$2/dist-bad" >/dev/null 2>&1' \
  _ "$root" "$out" "$version" "$home" "$py" "$here/checks.py"
check "idf_component.yml: YAML, version, files patterns name existing directories" \
  "$py" "$here/checks.py" idf "$dist/esp-idf/tinyring" "$version"
check "zephyr/module.yml: YAML, build.cmake and build.kconfig exist" \
  "$py" "$here/checks.py" zephyr "$dist/zephyr/tinyring"
check "Kconfig, zephyr/Kconfig: kconfiglib parses them; transport none by default, lwIP selectable" \
  "$py" "$here/checks.py" kconfig "$dist/zephyr/tinyring" "$out"
check "ESP-IDF: early requirement expansion (cmake -P) runs the component file; requires lwip" \
  sh -c 'cmake -DTR_SOURCE_DIR="$1" -DTR_RECORD="$2" -P "$3" && grep -qx "PRIV_REQUIRES=lwip" "$2"' \
  _ "$dist/esp-idf/tinyring" "$out/idf-early.txt" "$here/mock/esp-idf/early.cmake"
# standin NAME PACKAGE DIR ARGS...: configure and build a stand-in project
# (DIR) for the package `make dist` wrote as PACKAGE, with kconfiglib's
# CONFIG_ values (NAME); the sources it registers are listed in $out/NAME.txt
standin() {
  local name=$1 pkg=$2 dir=$3; shift 3
  cmake -S "$dir" -B "$out/$name" -DTR_SOURCE_DIR="$dist/$pkg/tinyring" -DTR_CONFIG="$out/$name.cmake" \
    -DTR_RECORD="$out/$name.txt" "$@" && cmake --build "$out/$name" -j2
}
lwip_inc="$TR_LWIP_DIR/src/include;$root/port/lwip"
check "ESP-IDF: the component (lwIP transport) registers and builds against a stand-in" \
  step idf standin idf esp-idf "$here/mock/esp-idf" "-DTR_LWIP_INCLUDE=$lwip_inc"
check "ESP-IDF: registered sources are core/*.c and port/lwip/*.c" \
  "$py" "$here/checks.py" registered "$out/idf.txt" "$dist/esp-idf/tinyring" 1
check "Zephyr: the module (lwIP transport) registers and builds against stand-ins" \
  step zephyr standin zephyr zephyr "$here/mock/zephyr" "-DTINYRING_LWIP_INCLUDE_DIRS=$lwip_inc"
check "Zephyr: registered sources are core/*.c and port/lwip/*.c" \
  "$py" "$here/checks.py" registered "$out/zephyr.txt" "$dist/zephyr/tinyring" 1

report packaging
