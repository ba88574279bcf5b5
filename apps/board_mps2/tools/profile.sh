#!/usr/bin/env bash
# tinyring: `make board-profile`. Instructions per function of one
# board-cycles image (test/core/cross variant C1-C2-BATCH-STEPS-0-PLAN) on one
# target under QEMU, exact and without instrumenting the image: QEMU logs
# every translated block's instructions (-d in_asm) and every execution of
# a block with its function (-d exec,nochain, so that no chained block goes
# unlogged); a block's executions times its instructions (profile_blocks.awk:
# on Arm, decoded again from the block's halfwords, not the log's lines),
# summed per function, is what the function executed. The whole run is counted: start
# up, the synthetic batch and every step (board-cycles divides a step's
# count by the micro-batch; this does not).
# usage: MAKE=make BUILD=build profile.sh [TARGET m4|m55|rv32] [VARIANT] [LINES]
set -eu
B=${BUILD:-build}
MK=${MAKE:-make}
t=${1:-m4}
v=${2:-16-32-1-2-0-1}
lines=${3:-25}
here=$(cd "$(dirname "$0")/../../.." && pwd)
. "$here/test/core/cross/qemu.sh"
elf=$B/cross/$t/$v.elf
$MK --no-print-directory -s "$elf" >/dev/null
T=$(mktemp -d /tmp/tr_board_profile.XXXXXX)
trap 'rm -rf "$T"' EXIT
CROSS_QEMU_ARGS="-d in_asm,nochain -D $T/asm.log" cross_qemu "$t" "$elf" 600 >/dev/null ||
  { echo "board-profile: $elf failed under QEMU" >&2; exit 1; }
CROSS_QEMU_ARGS="-d exec,nochain -D $T/exec.log" cross_qemu "$t" "$elf" 600 >"$T/out" ||
  { echo "board-profile: $elf failed under QEMU" >&2; exit 1; }
grep '^# instructions per sample' "$T/out" || true
# asm.log: "IN: sym", then a line "0x<pc>: ..." per instruction of the block
# (profile_blocks.awk counts them: Armv8.1-M's loop instructions print as two).
# exec.log: "Trace N: host [flags/<pc>/flags/cflags] sym", pc in 8 hex digits.
thumb=1; [ "$t" = rv32 ] && thumb=0
awk -v thumb=$thumb -f "$here/apps/board_mps2/tools/profile_blocks.awk" "$T/asm.log" >"$T/blocks"
awk '
  FNR == NR { n[$1] = $2; next }
  $1 == "Trace" {
    split($0, a, "[[/]"); sym = $0; sub(/^[^]]*] ?/, "", sym)
    k = (a[3] in n) ? n[a[3]] : 1
    per[sym == "" ? "?" : sym] += k
  }
  END { for (s in per) print per[s], s }' "$T/blocks" "$T/exec.log" | sort -rn >"$T/per"
awk -v lines="$lines" '
  { c[NR] = $1; s[NR] = $2; total += $1 }
  END {
    for (i = 1; i <= NR && i <= lines; i++) printf "%14d %6.2f%%  %s\n", c[i], 100 * c[i] / total, s[i]
    printf "%14d instructions in all (%d functions)\n", total, NR
  }' "$T/per"
