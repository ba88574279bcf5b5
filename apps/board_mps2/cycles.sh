#!/usr/bin/env bash
# tinyring board_mps2: `make board-cycles`. Emulated instruction count per
# training sample on the Cortex-M4F, for a few variants and micro-batches.
#
# How: QEMU runs with -icount shift=0, so virtual time advances exactly 1 ns
# per guest instruction; the image times its training loop with SysTick on
# the 25 MHz processor clock (40 ns of virtual time per tick), hence
# instructions = ticks x 40. The hello image's calibration loop (5,000,000
# turns of subs+bne) checks the method. This counts instructions, not cycles
# of real silicon: no wait states, no pipeline stalls, no FPU latencies.
set -eu
B=${BUILD:-build}
QEMU=${BOARD_QEMU:-qemu-system-arm}
work=$(mktemp -d /tmp/tr-cycles.XXXXXX)
trap 'rm -rf "$work"' EXIT
STEPS=2
"${BOARD_OUT:-$B/board}/host_train" samples "$work" 64 >/dev/null
timeout 60 "$QEMU" -M mps2-an386 -display none -monitor none -serial none -icount shift=0 \
  -semihosting-config enable=on,target=native,arg=hello -kernel "${BOARD_OUT:-$B/board}/hello.elf" 2>&1 | grep calib
printf "%-8s %6s %14s %16s\n" variant batch "ticks/sample" "instr/sample"
for v in "16 32 1" "16 32 4" "4 8 1" "4 8 4"; do
  set -- $v
  out=$B/board-cyc-$1x$2b$3
  make --no-print-directory -s BOARD_OUT="$out" BOARD_TRAIN_C1=$1 BOARD_TRAIN_C2=$2 \
    BOARD_TRAIN_BATCH=$3 "$out/train.elf" >/dev/null
  t=$(timeout 300 "$QEMU" -M mps2-an386 -display none -monitor none -serial none -icount shift=0 \
      -semihosting-config enable=on,target=native,arg=train,arg=$work/images.idx,arg=$work/labels.idx,arg=$STEPS,arg=42 \
      -kernel "$out/train.elf" 2>&1 | sed -n 's/^ticks [0-9]* per-sample \([0-9]*\).*/\1/p')
  printf "%-8s %6s %14s %16s\n" "$1/$2" "$3" "$t" "$((t * 40))"
done
