#!/usr/bin/env bash
# test-board: make board-profile's count per translated block
# (apps/board_mps2/tools/profile_blocks.awk) equals the instructions
# arm-none-eabi-objdump decodes over the same addresses, for every block the
# Cortex-M55 image (MVE, Armv8.1-M loop instructions, which QEMU's
# disassembler prints as two lines) translates under QEMU. Counting the
# log's lines, 110 of its 1081 blocks differ and the run is overcounted by
# 8.5%. Usage: BUILD=build test_profile.sh
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
. "$here/test/lib.sh"
. "$here/test/core/cross/qemu.sh"
B=${BUILD:-build}
MK=${MAKE:-make}
v=4-8-1-2-0-1      # the narrow net, batch 1, 2 steps, lean plan
T=$(mktemp -d /tmp/tr_test_profile.XXXXXX)
trap 'rm -rf "$T"' EXIT
for t in m55; do
  elf=$B/cross/$t/$v.elf
  if ! $MK --no-print-directory -s "$elf" >/dev/null; then fail "$t: build $elf"; continue; fi
  CROSS_QEMU_ARGS="-d in_asm,nochain -D $T/$t.asm" cross_qemu "$t" "$elf" 300 >/dev/null ||
    { fail "$t: $elf under QEMU"; continue; }
  awk -v thumb=1 -f "$here/apps/board_mps2/tools/profile_blocks.awk" "$T/$t.asm" >"$T/$t.blocks"
  # objdump's instruction addresses, as QEMU writes them (8 hex digits)
  arm-none-eabi-objdump -d "$elf" |
    awk -F: '/^ +[0-9a-f]+:\t/ { gsub(/ /, "", $1); while (length($1) < 8) $1 = "0" $1; print $1 }' |
    sort -u >"$T/$t.insn"
  # per block: objdump's instructions from its first address to its last
  # (binary search over the sorted addresses; compared as strings)
  awk 'function first_ge(x,   lo, hi, mid) {
         lo = 1; hi = m + 1
         while (lo < hi) { mid = int((lo + hi) / 2); if (("x" a[mid]) < ("x" x)) lo = mid + 1; else hi = mid }
         return lo
       }
       FNR == NR { a[++m] = $1; next }
       { k = first_ge($3 "g") - first_ge($1)
         blocks++; ours += $2; theirs += k
         if (k != $2 && ++bad <= 5) printf "  block %s..%s: %d counted, objdump %d\n", $1, $3, $2, k > "/dev/stderr" }
       END { printf "%d %d %d %d\n", blocks, bad, ours, theirs }' "$T/$t.insn" "$T/$t.blocks" >"$T/$t.cmp"
  read -r blocks bad ours theirs <"$T/$t.cmp"
  echo "board-profile $t: $blocks blocks, $ours instructions counted, objdump $theirs"
  check "board-profile $t: every block's count is objdump's ($bad of $blocks differ)" \
    sh -c '[ "$1" -gt 0 ] && [ "$2" -eq 0 ]' _ "$blocks" "$bad"
done
report board_profile
