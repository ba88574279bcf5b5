#!/usr/bin/env bash
# test-arm64: core builds for a 64-bit Arm host, the kernels' NEON branches
# (their file-level #ifs take __ARM_NEON there), with core's strict flags,
# by clang's AArch64 target (no Arm host or GCC cross compiler needed; the
# objects are only compiled, nothing runs them).
# usage: arm64_build.sh "CORE_CFLAGS" core/*.c
. "$(dirname "$0")/../lib.sh"
cflags=$1; shift
CLANG=${CLANG:-clang}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
if ! command -v "$CLANG" >/dev/null; then
  fail "$CLANG not installed (test/tools/apt-packages.txt lists clang)"
  report core_arm64; exit 1
fi
check "the AArch64 target has NEON" sh -c \
  "echo '#ifndef __ARM_NEON
#error no NEON
#endif' | $CLANG --target=aarch64-linux-gnu -E - >/dev/null"
for f in "$@"; do
  check "$f builds for AArch64" $CLANG --target=aarch64-linux-gnu $cflags -c "$f" \
    -o "$tmp/$(basename "$f" .c).o"
done
# the check itself must fail on an x86-only asm constraint in a vector branch
printf 'typedef float v4 __attribute__((vector_size(16)));\nv4 tr_f(v4 a){ __asm__("" : "+v"(a)); return a; }\n' > "$tmp/bad.c"
if $CLANG --target=aarch64-linux-gnu $cflags -c "$tmp/bad.c" -o "$tmp/bad.o" 2>/dev/null; then
  fail "self-check: an x86 \"+v\" constraint built for AArch64"
else
  pass
fi
report core_arm64
