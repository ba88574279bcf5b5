#!/usr/bin/env bash
# test-cross: core and the minimal images build for Cortex-M4F, RV32IMAFC
# and Cortex-M55 (-nostdlib, no libc symbols left); each image runs under
# QEMU, passes its own checks (GEMM fast against reference bitwise on the
# seed's shapes and on subnormal products, a training step fast against the
# reference kernels) and prints exactly what the host twin prints: the
# GEMM results' hashes, the loss bits of every training step and the hashes
# of the parameters and BN statistics after them.
# usage: cross_test.sh MAKE CROSS_DIR VARIANT
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/cross/qemu.sh"
mk=$1; dir=$2; var=$3
check "make cross-core" $mk --no-print-directory cross-core
host=$dir/host/$var
out=$(mktemp -d /tmp/tr-cross.XXXXXX)
trap 'rm -rf "$out"' EXIT
check "host twin runs its checks" sh -c '"$1" > "$2/host.txt"' _ "$host" "$out"
grep -v '^#' "$out/host.txt" > "$out/host.cmp"
check "host twin printed the GEMM checks and 3 training steps" \
  sh -c '[ "$(grep -c "same bits as the reference" "$1")" -ge 30 ] && [ "$(grep -c "^step " "$1")" -eq 3 ] && grep -q "^all checks passed" "$1"' _ "$out/host.cmp"
for t in m4 rv32 m55; do
  elf=$dir/$t/$var.elf
  check "$t image linked" test -s "$elf"
  q=$(cross_qemu_bin $t)
  if ! command -v "$q" >/dev/null; then
    fail "$q missing (tools/apt-packages.txt installs it)"
    continue
  fi
  [ -s "$elf" ] || continue
  check "$t image passes its checks under QEMU (semihosting exit 0)" \
    sh -c '. "$1"; cross_qemu "$2" "$3" 300 > "$4"' _ "$(dirname "$0")/cross/qemu.sh" $t "$elf" "$out/$t.txt"
  grep -v '^#' "$out/$t.txt" > "$out/$t.cmp"
  check "$t prints the host twin's GEMM hashes, loss bits and parameter hash" cmp -s "$out/host.cmp" "$out/$t.cmp"
  cmp -s "$out/host.cmp" "$out/$t.cmp" || diff "$out/host.cmp" "$out/$t.cmp" | head -10 >&2
  grep '^# instructions per sample' "$out/$t.txt" | sed "s/^# /$t: /"
done
report core_cross
