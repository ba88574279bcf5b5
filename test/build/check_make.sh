#!/usr/bin/env bash
# test/build: the make files follow their own rules (suite "build").
#   - every fragment is pulled in with `include`, never `-include` (a renamed
#     fragment would otherwise silently drop its tests);
#   - every fragment named by an include exists;
#   - each shared build setting has one definition: core's flags, the
#     Cortex-M4F architecture flags, the core test list;
#   - the Cortex-M4F flags are spelled out in one place only.
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
. "$here/test/lib.sh"
cd "$here"
mk=$(git ls-files 'Makefile' '*.mk' 2>/dev/null || find . -name Makefile -o -name '*.mk')
# shellcheck disable=SC2086
soft=$(grep -nE '^[[:space:]]*-include[[:space:]]' $mk)
check "no fragment is included with -include (${soft:-none})" test -z "$soft"
# shellcheck disable=SC2086
for f in $(sed -nE 's/^[[:space:]]*include[[:space:]]+([^$][^[:space:]]*).*/\1/p' $mk); do
  check "included fragment $f exists" test -f "$f"
done
for v in CORE_CFLAGS CORE_HOST_CFLAGS CORE_MCU_CFLAGS M4F_ARCH HOST_CFLAGS CORE_TESTS; do
  # shellcheck disable=SC2086
  n=$(grep -hcE "^$v[[:space:]]*[:?]?=" $mk | awk '{ s += $1 } END { print s }')
  check "$v is defined once (found $n)" test "$n" -eq 1
done
# shellcheck disable=SC2086
n=$(grep -hc 'test_math test_model_api' $mk | awk '{ s += $1 } END { print s }')
check "the core test list is written once (found $n)" test "$n" -eq 1
# shellcheck disable=SC2086
n=$(grep -hc -- '-mcpu=cortex-m4 ' $mk | awk '{ s += $1 } END { print s }')
check "the Cortex-M4F flags are written once (found $n)" test "$n" -eq 1
report build
