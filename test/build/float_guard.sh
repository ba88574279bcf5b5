#!/usr/bin/env bash
# test/build: core's float guard (core/include/tr_config.h), checked the way
# a project that copies core/ into its own tree builds it: core's sources and
# the packaging consumer's demo compiled with the project's flags alone (the
# GNU dialect GCC defaults to, -march=native so the host has fused
# multiply-add), none of tinyring's.
#   - every core source includes tr_config.h first;
#   - -ffast-math, -Ofast, -funsafe-math-optimizations, -ffinite-math-only:
#     refused at compile time, naming tr_config.h;
#   - -ffp-contract=fast: core and the demo build, and the demo's losses and
#     parameter hash equal those of core built with tinyring's flags;
#   - -ffp-contract=fast where the pragma cannot act (GCC in an ISO dialect,
#     Clang): the demo stops at tr_model_init with TR_ERR_FLOAT (the guard's
#     run-time half, tr_model.c) or gives the reference's bits; never others;
#   - the control: a multiply-add compiled with -ffp-contract=fast without
#     the guard is fused on this host (so the comparison above can fail),
#     and with the guard it is not.
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

# shellcheck disable=SC2086
refused() { ! $CC -O2 "$1" $arch -Icore/include -fsyntax-only core/tr_sgd.c 2>"$t/err" && grep -q tr_config.h "$t/err"; }
for fl in -ffast-math -Ofast -funsafe-math-optimizations -ffinite-math-only; do
  check "$fl: refused at compile time, naming tr_config.h" refused "$fl"
done

# the control: a*b+c where one rounding differs from two
printf '#include "tr_config.h"\nfloat mad(float a, float b, float c) { return a * b + c; }\n' >"$t/g.c"
printf 'float mad(float a, float b, float c) { return a * b + c; }\n' >"$t/u.c"
printf '#include <stdio.h>\nfloat mad(float, float, float);\nint main(void) { volatile float a = 1.0f + 0x1p-12f, c = -(1.0f + 0x1p-11f); return mad(a, a, c) != 0.0f; }\n' >"$t/m.c"
# shellcheck disable=SC2086
fused() { $CC -O2 -ffp-contract=fast $arch -Icore/include -o "$t/$1" "$t/$1.c" "$t/m.c" && ! "$t/$1"; }
check "control: -ffp-contract=fast fuses a multiply-add on this host without the guard" fused u
not_fused() { $CC -O2 -ffp-contract=fast $arch -Icore/include -o "$t/$1" "$t/$1.c" "$t/m.c" && "$t/$1"; }
check "control: with tr_config.h the same multiply-add is not fused" not_fused g

# shellcheck disable=SC2086
check "reference: the demo on core built with tinyring's flags" \
  sh -c '$1 -O2 $2 $3 -o "$4/ref" $5 "$6/libtinyring.a" && "$4/ref" >"$4/ref.out" && grep -q "^loss 0 " "$4/ref.out"' \
  _ "$CC" "$arch" "$inc" "$t" "$demo" "$B"
# core/*.c with -ffp-contract=fast into $3/, two files at a time, by
# compiler $1 in dialect $2 (empty: the compiler's default); -lm at the
# link: without -fno-math-errno, tr_sqrtf keeps a call to libm's sqrtf
# shellcheck disable=SC2086
core_fast() {
  mkdir -p "$3" &&
    printf '%s\n' core/*.c | xargs -P 2 -I{} sh -c '$0 -O2 $1 -ffp-contract=fast $2 $3 -c "$4" -o "$5/$(basename "$4" .c).o"' \
      "$1" "$2" "$arch" "$inc" {} "$3"
}
# shellcheck disable=SC2086
fast_same() {
  core_fast "$CC" "" "$t/o" &&
    $CC -O2 -ffp-contract=fast $arch $inc -o "$t/fast" $demo "$t"/o/*.o -lm && "$t/fast" >"$t/fast.out" &&
    cmp "$t/ref.out" "$t/fast.out"
}
check "-ffp-contract=fast (GNU dialect): builds, same losses and parameters as the reference" fast_same

# the pragma's blind spots: refused at run time, or the reference's bits.
# $1 compiler, $2 dialect flag, $3 output name
# shellcheck disable=SC2086
fast_refused_or_same() {
  core_fast "$1" "$2" "$t/$3" &&
    $CC -O2 $arch $inc -o "$t/$3/demo" $demo "$t/$3"/*.o -lm || return 1
  if "$t/$3/demo" >"$t/$3.out" 2>"$t/$3.err"; then
    cmp "$t/ref.out" "$t/$3.out"
  else
    grep -q "fused multiply-adds" "$t/$3.err"
  fi
}
check "-ffp-contract=fast, GCC -std=c99: refused at init or the reference's bits" \
  fast_refused_or_same "$CC" -std=c99 gcc_iso
if command -v clang >/dev/null; then
  check "-ffp-contract=fast, Clang: refused at init or the reference's bits" \
    fast_refused_or_same clang -std=gnu99 clang_fast
fi
# the run-time half can fail: with -ffp-contract=fast in an ISO dialect this
# host fuses, so the demo must be the one refused (not merely the same bits)
check "control: GCC -std=c99 -ffp-contract=fast is refused at init on this host" \
  grep -q "fused multiply-adds" "$t/gcc_iso.err"
report float_guard
