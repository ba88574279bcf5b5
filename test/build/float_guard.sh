#!/usr/bin/env bash
# test/build: core's float guard (core/tr_config.h), checked the way a
# project that copies core/ into its own tree builds it: every core/*.c and
# the packaging consumer's demo compiled with the project's flags alone (the
# GNU dialect GCC defaults to, -march=native so the host has fused
# multiply-add), none of tinyring's.
#   - -ffast-math, -Ofast, -funsafe-math-optimizations, -ffinite-math-only:
#     every core source is refused at compile time;
#   - -ffp-contract=fast: builds, and the demo's losses and parameter hash
#     equal those of core built with tinyring's flags, bit for bit;
#   - the control: the same build in an ISO dialect (-std=c99), where GCC
#     does not take the optimize pragma (tr_config.h says why), has other
#     bits, so the comparison above can fail.
# usage: float_guard.sh BUILD   (BUILD/libtinyring.a: core with its own flags)
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
. "$here/test/lib.sh"
cd "$here"
B=$1
CC=${CC:-cc}
arch=${HOST_ARCH:--march=native}
t=$(mktemp -d /tmp/tr_float_guard.XXXXXX)
trap 'rm -rf "$t"' EXIT
demo="test/packaging/consumer/demo.c test/packaging/consumer/host_main.c"
inc="-Icore/include -Itest/packaging/consumer"

first=$(for c in core/*.c; do
  [ "$(grep -m1 '^#include' "$c")" = '#include "tr_config.h"   /* first: limits and the float guard */' ] || echo "$c"
done | tr '\n' ' ')
check "every core source includes tr_config.h first (not: ${first:-none})" test -z "$first"

for fl in -ffast-math -Ofast -funsafe-math-optimizations -ffinite-math-only; do
  check "$fl: every core source refused at compile time, naming tr_config.h" \
    sh -c 'for c in core/*.c; do
        if $1 -O2 $2 $3 -Icore/include -fsyntax-only "$c" 2>"$4/err"; then echo "$c compiled"; exit 1; fi
        grep -q "tr_config.h" "$4/err" || { cat "$4/err"; exit 1; }
      done' _ "$CC" "$fl" "$arch" "$t"
done

# build NAME FLAGS...: core/*.c and the demo with FLAGS only, run, losses in $t/NAME.out
build() {
  local name=$1; shift
  # shellcheck disable=SC2086
  # -lm: without -fno-math-errno, tr_sqrtf keeps a call to libm's sqrtf
  $CC -O2 "$@" $arch $inc -o "$t/$name" core/*.c $demo -lm 2>"$t/$name.err" && "$t/$name" >"$t/$name.out"
}
same_bits() { build "$@" && cmp "$t/ref.out" "$t/$1.out"; }
other_bits() { build "$@" && ! cmp -s "$t/ref.out" "$t/$1.out"; }
# shellcheck disable=SC2086
check "reference: the demo on core built with tinyring's flags" \
  sh -c '$1 -O2 $2 $3 -o "$4/ref" $5 "$6/libtinyring.a" && "$4/ref" >"$4/ref.out" && grep -q "^loss 0 " "$4/ref.out"' \
  _ "$CC" "$arch" "$inc" "$t" "$demo" "$B"
check "-ffp-contract=fast (GNU dialect): builds, same losses and parameters as the reference" \
  same_bits fast -ffp-contract=fast
check "control: -std=c99 -ffp-contract=fast (no pragma) gives other bits, so the comparison can fail" \
  other_bits iso -std=c99 -ffp-contract=fast
report float_guard
