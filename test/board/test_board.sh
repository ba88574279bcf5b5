#!/usr/bin/env bash
# tinyring test/board: the mps2-an386 firmware images under qemu-system-arm.
#   1. smoke: FPU, .data/.bss, SysTick, semihosting command line and exit status
#   2. LAN9118 driver: PHY loopback and error paths; ping/pong between two QEMUs joined by a
#      socket netdev on 127.0.0.1
#   3. training: the board's per-step losses against the host build's (1e-4)
#      and the final parameters' hash (bitwise)
#   4. the ring (test/board/ring.sh): two boards + two POSIX ranks over lwIP
# Every QEMU runs under timeout. Suite "board" (+ "board_train" from host_train).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"
source test/lib.sh
B=${BOARD_OUT:-${BUILD:-build}/board}
QEMU=${BOARD_QEMU:-qemu-system-arm}
STEPS=${BOARD_TRAIN_STEPS:-4}
C1=${BOARD_TRAIN_C1:-16}; C2=${BOARD_TRAIN_C2:-32}; BATCH=${BOARD_TRAIN_BATCH:-4}
SEED=42
work=$(mktemp -d /tmp/tr-board.XXXXXX)
trap 'rm -rf "$work"' EXIT

# qemu_run TIMEOUT LOG ARGS... -- extra qemu options: semihosting args are the words before --
qemu_run() {
  local t=$1 log=$2; shift 2
  local sh="enable=on,target=native" a
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do sh="$sh,arg=$1"; shift; done
  [ $# -gt 0 ] && shift
  timeout "$t" "$QEMU" -M mps2-an386 -display none -monitor none -serial none \
    -semihosting-config "$sh" "$@" >"$log" 2>&1
}

# 1. smoke: status 7 must come back through SYS_EXIT_EXTENDED
qemu_run 20 "$work/hello.log" hello 7 -- -kernel "$B/hello.elf"; st=$?
check "hello image exits with the status it was given (got $st)" [ "$st" -eq 7 ]
check "hello image reports fpu and clock ok" grep -q "fpu ok, clock ok" "$work/hello.log"
check "hello image saw its command line" grep -q 'cmdline "hello 7"' "$work/hello.log"

# 2. LAN9118: loopback in the PHY, then frames between two emulated boards
#    (pingpong.sh, in a network namespace of its own when unshare allows)
qemu_run 30 "$work/loop.log" nettest loop 40 -- -nic none \
  -kernel "$B/nettest.elf"; st=$?
check "nettest loop exit 0 (got $st)" [ "$st" -eq 0 ]
check "nettest loop: one IRQ 13 per frame once enabled, none before" grep -q "loop irqs 39$" "$work/loop.log"
check "nettest loop: 40 frames out and back, bad lengths refused, a discarded frame leaves the FIFO aligned" grep -q "loop tx 42 rx 41 rx_errors 0 bad 0" "$work/loop.log"
NS=""
unshare --net true 2>/dev/null && NS="unshare --net"
$NS bash "$here/pingpong.sh" "$B" "$QEMU" "$work" 30
st=$(cat "$work/ping.rc" 2>/dev/null || echo none); pst=$(cat "$work/pong.rc" 2>/dev/null || echo none)
check "nettest ping exit 0 (got $st)" [ "$st" = 0 ]
check "nettest pong exit 0 (got $pst)" [ "$pst" = 0 ]
check "ping: 30 echoes of 60..1514 bytes intact" grep -q "ping tx 30 rx 30 rx_errors 0 bad 0" "$work/ping.log"
check "ping used the MAC from the EEPROM" grep -q "mac 00525400:000000b1" "$work/ping.log"

# 3. training: the same samples, seed, variant and batch on the board and the host
if [ -f /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ]; then
  src="/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz /usr/share/datasets/fashion-mnist/train-labels-idx1-ubyte.gz"
else
  src=""  # synthetic samples (host_train samples without files)
fi
"$B/host_train" samples "$work" $((STEPS * (BATCH > 8 ? BATCH : 8))) $src
check "sample files written" [ -s "$work/images.idx" ]
# train_image ELF C1 C2 BATCH: run the image, then the host twin checks it
train_image() {
  local elf=$1 c1=$2 c2=$3 b=$4 log="$work/$1.log" st t0 t1
  t0=$(date +%s.%N)
  qemu_run 120 "$log" train "$work/images.idx" "$work/labels.idx" "$STEPS" "$SEED" -- \
    -kernel "$B/$elf"; st=$?
  t1=$(date +%s.%N)
  check "$elf exit 0 (got $st)" [ "$st" -eq 0 ]
  sed 's/^/  board: /' "$log"
  echo "  board: wall $(awk "BEGIN{printf \"%.1f\", $t1-$t0}") s under TCG"
  "$B/host_train" check "$log" "$work/images.idx" "$work/labels.idx" \
    "$STEPS" "$SEED" "$c1" "$c2" "$b"; st=$?
  check "$elf: board losses match the host build ($c1/$c2 batch $b)" [ "$st" -eq 0 ]
}
train_image train.elf "$C1" "$C2" "$BATCH"
RC1=$(sed -n 's/#define BOARD_RING_C1 \([0-9]*\)u/\1/p' "$B/board_cfg.h")
RC2=$(sed -n 's/#define BOARD_RING_C2 \([0-9]*\)u/\1/p' "$B/board_cfg.h")
RB=$(sed -n 's/#define BOARD_RING_BATCH \([0-9]*\)u/\1/p' "$B/board_cfg.h")
train_image train_narrow.elf "$RC1" "$RC2" "$RB"
for img in train train_narrow ring; do
  check "no heap in $img.elf (no _sbrk, malloc, free)" bash -c "! arm-none-eabi-nm '$B/$img.elf' | grep -qwE '_sbrk|malloc|_malloc_r|free|calloc|realloc'"
done

# 4. the ring
if [ -x "$here/ring.sh" ] || [ -f "$here/ring.sh" ]; then
  bash "$here/ring.sh"; st=$?
  check "ring: two boards + two POSIX ranks end bitwise equal (ring.sh status $st)" [ "$st" -eq 0 ]
fi

report board
