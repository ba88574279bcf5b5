#!/usr/bin/env bash
# test-cross: core and the minimal images build for Cortex-M4F and RISC-V
# (-nostdlib, no libc symbols left), and the M4F image trains 3 steps in
# QEMU (mps2-an386) and exits through semihosting with success.
# usage: cross_test.sh MAKE CROSS_DIR
. "$(dirname "$0")/../lib.sh"
mk=$1; dir=$2
check "make cross-core" $mk --no-print-directory cross-core
for t in m4 rv32; do
  check "$t image linked" test -s "$dir/$t/image.elf"
done
if [ -s "$dir/m4/image.elf" ]; then
  if command -v qemu-system-arm >/dev/null; then
    check "M4F image runs 3 training steps in QEMU (semihosting exit 0)" \
      timeout 120 qemu-system-arm -M mps2-an386 -nographic -monitor none -serial none \
        -semihosting -kernel "$dir/m4/image.elf"
  else
    fail "qemu-system-arm missing (tools/apt-packages.txt installs it)"
  fi
fi
report core_cross
