#!/usr/bin/env bash
# tinyring test/board: the mps2-an386 firmware images under qemu-system-arm.
#   1. smoke: FPU, .data/.bss, SysTick, semihosting command line and exit status
#   2. LAN9118 driver: PHY loopback and error paths; ping/pong between two QEMUs joined by a
#      socket netdev on 127.0.0.1
#   3. training alone: train.elf against mnist_ring (one rank), bit for bit
#   4. rings (test/board/mixed.sh): two boards + two mnist_ring ranks over lwIP;
#      the same under --compress (test/board/compress.sh)
#   5. an elastic ring (test/board/elastic.sh): the same, a host rank killed
# Every QEMU runs under timeout. Suites "board", "board_mixed", "board_compress" and "board_elastic".
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"
source test/lib.sh
B=${BOARD_OUT:-${BUILD:-build}/board}
QEMU=${BOARD_QEMU:-qemu-system-arm}
STEPS=${BOARD_TRAIN_STEPS:-4}
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

# 3. training alone: train.elf and mnist_ring (one rank) with the same flags on
#    the same IDX files print the same loss bits, parameter hashes after every
#    step, final parameter and BN hashes, and test accuracy
MR=${BUILD:-build}/mnist_ring
GEN=${BUILD:-build}/test/app/gen_idx
mkdir -p "$work/data"
"$GEN" "$work/data" 240 24 7 raw
check "IDX files written" test -s "$work/data/train-images-idx3-ubyte"
flags=(--data "$work/data" --batch 4 --max-steps "$STEPS" --seed 42 --lr 0.01 --debug-param-hash)
t0=$(date +%s.%N)
qemu_run 120 "$work/train.log" train "${flags[@]}" -- -kernel "$B/train.elf"; st=$?
t1=$(date +%s.%N)
sed 's/^/  board: /' "$work/train.log"
echo "  board: wall $(awk "BEGIN{printf \"%.1f\", $t1-$t0}") s under TCG"
check "train.elf exit 0 (got $st)" [ "$st" -eq 0 ]
timeout 60 "$MR" "${flags[@]}" --quiet >"$work/host.out" 2>"$work/host.err"
check "mnist_ring, one rank, same flags: exit 0" [ $? -eq 0 ]
lines() { grep -E "^(loss-bits|param-hash|final-hash) " "$1"; }
check "board and host print $STEPS steps of loss bits and parameter hashes" \
  sh -c '[ "$(grep -c "^loss-bits rank 0 step" "$1")" -eq "$2" ] && [ "$(grep -c "^param-hash rank 0 step" "$1")" -eq "$2" ]' \
  _ "$work/train.log" "$STEPS"
check "board == host: every step's loss bits and parameter hash, final params and BN statistics" \
  diff <(lines "$work/train.log") <(lines "$work/host.err")
acc_b=$(sed -n 's/^epoch 1\/1 .*test acc \([0-9.]*\).*/\1/p' "$work/train.log")
acc_h=$(awk '$1=="epoch" && $3=="loss" { print $13 }' "$work/host.out")
check "board and host evaluate alike (test acc $acc_b / $acc_h)" \
  awk -v a="$acc_b" -v b="$acc_h" 'BEGIN { exit !(a != "" && b != "" && sprintf("%.4f", a) == sprintf("%.4f", b)) }'
qemu_run 30 "$work/bad.log" train --data "$work/nowhere" -- -kernel "$B/train.elf"; st=$?
check "train.elf without data: exit 2 (got $st), naming the file" \
  sh -c '[ "$1" -eq 2 ] && grep -q "nowhere/train-images-idx3-ubyte: cannot open" "$2"' _ $st "$work/bad.log"
qemu_run 30 "$work/badflag.log" train --data "$work/data" --lr x -- -kernel "$B/train.elf"; st=$?
check "train.elf with --lr x: exit 2 (got $st), naming the flag" \
  sh -c '[ "$1" -eq 2 ] && grep -q "^train: --lr: .x. is not a number" "$2"' _ $st "$work/badflag.log"
qemu_run 30 "$work/big.log" train --data "$work/data" --batch 5 -- -kernel "$B/train.elf"; st=$?
check "train.elf with --batch 5, beyond the image's bound of 4: exit 2 (got $st)" [ "$st" -eq 2 ]
for img in train ring; do
  check "no heap in $img.elf (no _sbrk, malloc, free)" bash -c "! arm-none-eabi-nm '$B/$img.elf' | grep -qwE '_sbrk|malloc|_malloc_r|free|calloc|realloc'"
done

# 4. rings of boards and mnist_ring processes (test/board/mixed.sh, suite board_mixed)
bash "$here/mixed.sh"; st=$?
check "board_mixed: boards + mnist_ring ranks (mixed.sh status $st)" [ "$st" -eq 0 ]

# 4b. compressed rings of boards and hosts (test/board/compress.sh, suite
#     board_compress): int8, int4, bf16 + --average-every, a board's checkpoint
bash "$here/compress.sh"; st=$?
check "board_compress: compressed mixed rings (compress.sh status $st)" [ "$st" -eq 0 ]

# 5. an elastic ring of boards and mnist_ring --elastic processes losing a
#    host rank (board rank 0 coordinates), a board that reboots and rejoins,
#    a board's checkpoint below --min-ranks (test/board/elastic.sh, suite board_elastic)
bash "$here/elastic.sh"; st=$?
check "board_elastic: a killed host, a rebooted board, a checkpoint (elastic.sh status $st)" \
  [ "$st" -eq 0 ]

report board
