#!/usr/bin/env bash
# bench-core-a64: the NEON build's instructions per sample, per row of
# bench-core's table (each layer's kernels forward and backward, the fused
# BN blocks, a whole training step), counted under qemu-user: QEMU runs one
# guest instruction per translation block and logs each block it executes
# (-d exec,nochain) with its function's name; bench_core's "count" mode
# calls mark_<row> before each kernel (and mark_31 after), so the log's
# lines between two marks are that row's instructions, libc's included
# (the kernels call none). Exact counts of a deterministic program: any
# change in a NEON kernel's code shows, unlike a timing under emulation.
# usage: a64_count.sh BENCH_CORE_A64 [batch]
set -eu
bin=$1; batch=${2:-1}
command -v qemu-aarch64 >/dev/null || { echo "qemu-aarch64 missing (test/tools/apt-packages.txt)"; exit 1; }
one=-singlestep
qemu-aarch64 -h | grep -q -- -one-insn-per-tb && one=-one-insn-per-tb
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
qemu-aarch64 $one -d exec,nochain -D /dev/fd/3 "$bin" "$batch" 1 count 3>&1 1>"$tmp/out" |
  awk '$NF ~ /^mark_[0-9]+$/ { row = substr($NF, 6); next } { n[row]++ }
       END { for (r in n) print r, n[r] }' > "$tmp/counts"
grep -q '^mark ' "$tmp/out" || { echo "no marks in bench_core's output"; cat "$tmp/out"; exit 1; }
echo "NEON build (AArch64 under qemu-user): instructions per sample at batch $batch"
printf '%-4s %-3s %-18s %14s\n' row "#" kernel "instr/sample"
awk -v b="$batch" 'NR == FNR { c[$1] = $2; next }
     $1 == "mark" { printf "%-4s %-3s %-18s %14.0f\n", $2, $3, $4 ($2 % 2 ? " bwd" : " fwd"), c[$2] / b }' \
  "$tmp/counts" "$tmp/out" | sed 's/training_step fwd/training_step/'
