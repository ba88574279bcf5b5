#!/usr/bin/env bash
# test-cross: core and the minimal images build for Cortex-M4F, RV32IMAFC
# and Cortex-M55 (-nostdlib, no libc symbols left); each image runs under
# QEMU, passes its own checks (GEMM fast against reference bitwise on the
# seed's shapes and on subnormal products, a training step fast against the
# reference kernels) and prints exactly what the host twin prints: the
# GEMM results' hashes, the sampler's deals (hashes of the indices), the
# loss bits of every training step and the hashes of the parameters and BN
# statistics after them. The variants after the
# first train on other execution plans: their training lines must equal the
# first variant's too (the plans compute the same bits). On an x86-64 host
# the host twin built again for AVX2 and for SSE2 prints the same lines,
# and so does the twin built for AArch64 (NEON), run by qemu-aarch64.
# usage: cross_test.sh MAKE CROSS_DIR VARIANT...
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/cross/qemu.sh"
mk=$1; dir=$2; shift 2
first=$1
check "make cross-core" $mk --no-print-directory cross-core
out=$(mktemp -d /tmp/tr-cross.XXXXXX)
trap 'rm -rf "$out"' EXIT
for var in "$@"; do
  host=$dir/host/$var
  check "$var: host twin runs its checks" sh -c '"$1" > "$2"' _ "$host" "$out/host-$var.txt"
  grep -v '^#' "$out/host-$var.txt" > "$out/host-$var.cmp"
  check "$var: host twin trained 3 steps and passed its checks" \
    sh -c '[ "$(grep -c "^step " "$1")" -eq 3 ] && grep -q "^all checks passed" "$1"' _ "$out/host-$var.cmp"
  if [ "$var" = "$first" ]; then
    check "$var: host twin printed the sampler's deals" sh -c '[ "$(grep -c "^sampler n=" "$1")" -eq 8 ]' _ "$out/host-$var.cmp"
    check "$var: host twin ran the GEMM checks" sh -c '[ "$(grep -c "same bits as the reference" "$1")" -ge 30 ]' _ "$out/host-$var.cmp"
  else
    check "$var: trains to the same bits as $first (another plan)" \
      bash -c 'diff <(grep -e "^step " -e "^params hash" "$1") <(grep -e "^step " -e "^params hash" "$2") >/dev/null' \
      _ "$out/host-$first.cmp" "$out/host-$var.cmp"
  fi
  for twin in "$dir"/host-*/"$var"; do    # core built for AVX2, for SSE2; for AArch64
    [ -x "$twin" ] || continue
    isa=$(basename "$(dirname "$twin")")
    run=
    if [ "$isa" = host-a64 ]; then
      run=qemu-aarch64
      command -v $run >/dev/null || { fail "$run missing (test/tools/apt-packages.txt installs it)"; continue; }
    fi
    check "$isa $var: the host twin on core built for $isa prints the same lines" \
      bash -c '$1 "$2" | grep -v "^#" | cmp -s - "$3"' _ "$run" "$twin" "$out/host-$var.cmp"
  done
  for t in m4 rv32 m55; do
    elf=$dir/$t/$var.elf
    check "$t $var: image linked" test -s "$elf"
    q=$(cross_qemu_bin $t)
    if ! command -v "$q" >/dev/null; then
      fail "$q missing (test/tools/apt-packages.txt installs it)"
      continue
    fi
    [ -s "$elf" ] || continue
    check "$t $var: image passes its checks under QEMU (semihosting exit 0)" \
      sh -c '. "$1"; cross_qemu "$2" "$3" 300 > "$4"' _ "$(dirname "$0")/cross/qemu.sh" $t "$elf" "$out/$t-$var.txt"
    grep -v '^#' "$out/$t-$var.txt" > "$out/$t-$var.cmp"
    check "$t $var: prints the host twin's lines (GEMM hashes, loss bits, parameter hash)" \
      cmp -s "$out/host-$var.cmp" "$out/$t-$var.cmp"
    cmp -s "$out/host-$var.cmp" "$out/$t-$var.cmp" || diff "$out/host-$var.cmp" "$out/$t-$var.cmp" | head -10 >&2
    grep '^# instructions per sample' "$out/$t-$var.txt" | sed "s/^# /$t: /"
  done
done
report core_cross
