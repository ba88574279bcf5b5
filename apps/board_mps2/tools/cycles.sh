#!/usr/bin/env bash
# tinyring: `make board-cycles`. Instructions per training sample (forward,
# loss, backward, SGD with momentum) on the Cortex-M4F (mps2-an386), RV32IMAFC
# (virt) and Cortex-M55 with MVE (mps3-an547), for the seed net and the
# narrow one at micro-batch 1 and 4, on the fast and the lean execution plan,
# measured under QEMU.
#
# How: the minimal core images of test/core/cross (variant
# C1-C2-BATCH-STEPS-0-PLAN: no checks, a synthetic batch) run under QEMU with -icount shift=0, where
# virtual time advances exactly 1 ns per guest instruction. RV32 reads
# minstret, which then counts instructions exactly; the Arm images read
# SysTick on the processor clock and convert ticks with a calibration loop
# of 2^21 instructions timed at start (40 instructions per tick at 25 MHz,
# 31.25 at 32 MHz). These are instructions, not cycles of real silicon: no
# wait states, no pipeline stalls, no FPU or MVE beat latencies.
# usage: MAKE=make BUILD=build cycles.sh
set -eu
B=${BUILD:-build}
MK=${MAKE:-make}
STEPS=${CYCLES_STEPS:-2}
here=$(cd "$(dirname "$0")/../../.." && pwd)
. "$here/test/core/cross/qemu.sh"
variants="16-32-1 16-32-4 4-8-1 4-8-4"
plans="0 1"
targets="m4 rv32 m55"
elfs=
for t in $targets; do
  for v in $variants; do
    for p in $plans; do elfs="$elfs $B/cross/$t/$v-$STEPS-0-$p.elf"; done
  done
done
$MK --no-print-directory -s $elfs >/dev/null
printf "%-18s %-6s %-5s %6s %16s %14s\n" target net plan batch "instr/sample" "instr/MAC"
for t in $targets; do
  for v in $variants; do
   for p in $plans; do
    set -- $(echo "$v" | tr - ' ')
    out=$(cross_qemu "$t" "$B/cross/$t/$v-$STEPS-0-$p.elf" 600) || { echo "$t $v plan $p: the image failed:"; echo "$out"; exit 1; }
    n=$(printf '%s\n' "$out" | sed -n 's/^# instructions per sample \([0-9]*\).*/\1/p')
    # multiply-accumulates per sample: conv1 fwd + dw, conv2 fwd + dw + dx, linear x3
    macs=$(( 784*25*$1*2 + 196*25*$1*$2*3 + 49*$2*10*3 ))
    case $t in m4) name="Cortex-M4F";; rv32) name="RV32IMAFC";; m55) name="Cortex-M55 (MVE)";; esac
    printf "%-18s %-6s %-5s %6s %16s %14s\n" "$name" "$1/$2" "$([ $p = 0 ] && echo fast || echo lean)" "$3" "$n" \
      "$(awk -v a="$n" -v b="$macs" 'BEGIN{printf "%.2f", a/b}')"
   done
  done
  printf '%s\n' "$out" | grep '^# SysTick' | sed "s/^# /  ($t: /; s/\$/)/" || true
done
