#!/usr/bin/env bash
# port/dist/dist.sh ROOT OUT: `make dist`. Writes one package per ecosystem
# into OUT, each a directory named tinyring holding that ecosystem's manifest
# at its root and the sources it needs, copied from the one tree:
#   OUT/arduino/tinyring     Arduino library 1.5: library.properties, src/
#                            (core/*.c, core/*.h, core/include/*.h, flat: the
#                            IDE compiles src/ only, with only src/ on the path)
#   OUT/platformio/tinyring  PlatformIO: library.json, core/, port/posix, port/lwip
#   OUT/esp-idf/tinyring     ESP-IDF component: CMakeLists.txt (the root's, its
#                            ESP_PLATFORM branch), idf_component.yml, Kconfig,
#                            core/, port/lwip, the CMake helpers
#   OUT/zephyr/tinyring      Zephyr module: zephyr/module.yml, zephyr/CMakeLists.txt,
#                            zephyr/Kconfig, Kconfig, core/, port/lwip, the CMake helpers
# TR_DIST_URL: the project's home, for library.properties' url (else empty).
# Each also gets LICENSE and README.md. Nothing here edits a source: the
# packages hold the files of the checkout as they are.
set -eu
root=$1
out=$2
dist=$root/port/dist
rm -rf "$out"
# put DEST FILE...: copy FILEs (paths relative to the root) into DEST keeping
# their relative paths
put() {
  local dest=$1; shift
  (cd "$root" && for f in "$@"; do mkdir -p "$dest/$(dirname "$f")"; cp "$f" "$dest/$f"; done)
}
common() { put "$1" LICENSE README.md; }
srcs() { (cd "$root" && ls "$@"); }

a=$out/arduino/tinyring
mkdir -p "$a/src"
# url= from TR_DIST_URL, the project's home (there is no public one yet)
url=${TR_DIST_URL:-}
if [ -n "$url" ]; then
  [[ $url =~ ^https?://[^[:space:]/]+\.[^[:space:]/]+(/[^[:space:]]*)?$ ]] ||
    { echo "dist: TR_DIST_URL '$url' is not an http(s) URL" >&2; exit 1; }
  sed "s|^url=\$|url=$url|" "$dist/arduino/library.properties" >"$a/library.properties"
else
  cp "$dist/arduino/library.properties" "$a/"
  echo "dist: arduino/tinyring/library.properties has an empty url (make dist TR_DIST_URL=https://...; the Library Manager needs one)" >&2
fi
# core's files as they are: each .c includes tr_config.h first, whose
# pragma turns contraction off where the IDE passes no -ffp-contract=off
cp "$root"/core/*.c "$root"/core/*.h "$root"/core/include/*.h "$a/src/"
common "$a"

p=$out/platformio/tinyring
mkdir -p "$p"
cp "$dist/platformio/library.json" "$p/"
put "$p" $(srcs core/*.c core/*.h core/include/*.h port/posix/*.c port/posix/*.h port/posix/README.md \
  port/lwip/*.c port/lwip/*.h port/lwip/arch/*.h port/lwip/README.md)
common "$p"

cmake_helpers=$(srcs port/dist/cmake/*)
e=$out/esp-idf/tinyring
mkdir -p "$e"
cp "$dist/esp-idf/idf_component.yml" "$dist/Kconfig" "$e/"
put "$e" CMakeLists.txt $cmake_helpers $(srcs core/*.c core/*.h core/include/*.h port/lwip/*.c \
  port/lwip/*.h port/lwip/arch/*.h)
common "$e"

z=$out/zephyr/tinyring
mkdir -p "$z/zephyr"
cp "$dist"/zephyr/* "$z/zephyr/"
cp "$dist/Kconfig" "$z/"
put "$z" $cmake_helpers $(srcs core/*.c core/*.h core/include/*.h port/lwip/*.c port/lwip/*.h port/lwip/arch/*.h)
common "$z"
echo "dist: $(cd "$out" && ls -d */tinyring | tr '\n' ' ')in $out"
