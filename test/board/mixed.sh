#!/usr/bin/env bash
# tinyring test/board: two mps2-an386 boards (QEMU, LAN9118 on a TAP, ring.elf)
# and two mnist_ring processes in one ring, over lwIP on the boards and Linux
# TCP on the hosts, inside a network namespace of its own (test/board/lan.sh:
# bridge br0, 198.18.0.0/24; nothing leaves the namespace). Every rank reads
# the same --peers table; ranks alternate board/host, so every ring link
# joins a board and a host.
# All four run core's trainer with the same flags on the same IDX files (the
# seed ConvNet, batch 2 per rank, a few steps). Checked: every rank ends with
# the parameter and BN-statistics hashes of four mnist_ring processes alone
# (--nproc 4), after every step too; each board's loss bits equal those of
# the same rank in that host-only run; then a board killed mid-run makes both
# mnist_ring ranks exit with a message naming it. Suite "board_mixed".
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"
STEPS=${BOARD_MIXED_STEPS:-3}
source test/lib.sh

SUITE=${BOARD_MIXED_SUITE:-board_mixed}
source test/board/lan.sh

# the capped images (board.mk, board-ring-<cap>k) set the batch, the
# momentum and the stack reserve each board must stay within
BATCH=${BOARD_MIXED_BATCH:-2}
flags=(--job-token mixed --batch "$BATCH" --max-steps "$STEPS" --seed 7 --lr 0.01 --debug-param-hash)
[ -n "${BOARD_MIXED_MOMENTUM:-}" ] && flags+=(--momentum "$BOARD_MIXED_MOMENTUM")

# --- 1. two boards and two mnist_ring processes train together
t0=$(date +%s)
board 0 tap0 52:54:00:18:00:10 ring "${flags[@]}" & pids+=($!)
host 1 ring "${flags[@]}" & pids+=($!)
board 2 tap1 52:54:00:18:00:11 ring "${flags[@]}" & pids+=($!)
host 3 ring "${flags[@]}" & pids+=($!)
wait
t1=$(date +%s)
for r in 0 1 2 3; do
  sed "s/^/  rank $r: /" "$work/ring-rank$r.log"
  check "rank $r exit 0 (got $(cat "$work/ring-rank$r.rc"))" [ "$(cat "$work/ring-rank$r.rc")" = 0 ]
done
echo "  $SUITE: $STEPS steps at batch $BATCH on $TRAIN_N samples in $((t1 - t0)) s"
if [ -n "${BOARD_MIXED_STACK:-}" ]; then
  for r in 0 2; do
    used=$(sed -n 's/^stack used \([0-9]*\) bytes$/\1/p' "$work/ring-rank$r.log")
    check "board rank $r: stack used ${used:-?} of the $BOARD_MIXED_STACK reserved, 256 to spare" \
      sh -c '[ -n "$1" ] && [ "$1" -le $(($2 - 256)) ]' _ "$used" "$BOARD_MIXED_STACK"
  done
fi

# --- the same job on four mnist_ring processes alone (loopback)
timeout 120 "$MR" --nproc 4 --data "$work/data" --quiet "${flags[@]}" >"$work/ref.out" 2>"$work/ref.err"
check "host-only reference (--nproc 4) exit 0" [ $? -eq 0 ]
ref=$(final_of "$work/ref.err" 0)
echo "  $SUITE: final hashes: reference '$ref'"
for r in 0 1 2 3; do
  f=$(final_of "$work/ring-rank$r.log" $r)
  check "rank $r ends with the host-only run's params and BN statistics ($f)" \
    sh -c '[ -n "$1" ] && [ "$1" = "$2" ]' _ "$f" "$ref"
done
steps_of() { sed -n "s/^param-hash rank $2 //p" "$1"; }
for r in 0 1 2 3; do
  check "rank $r: parameter hash after each of $STEPS steps == host-only run's" \
    sh -c '[ "$(echo "$1" | grep -c step)" -eq "$3" ] && [ "$1" = "$2" ]' \
    _ "$(steps_of "$work/ring-rank$r.log" $r)" "$(steps_of "$work/ref.err" $r)" "$STEPS"
done
loss_of() { sed -n "s/^loss-bits rank $2 //p" "$1"; }
for r in 0 2; do
  check "board rank $r: loss bits of each step == the host-only run's rank $r (same samples)" \
    sh -c '[ "$(echo "$1" | grep -c step)" -eq "$3" ] && [ "$1" = "$2" ]' \
    _ "$(loss_of "$work/ring-rank$r.log" $r)" "$(loss_of "$work/ref.err" $r)" "$STEPS"
done
check "the ranks trained on different samples (step 1 loss bits of ranks 0 and 1 differ)" \
  sh -c '[ -n "$1" ] && [ "$1" != "$2" ]' _ "$(loss_of "$work/ring-rank0.log" 0 | head -1)" \
  "$(loss_of "$work/ring-rank1.log" 1 | head -1)"
acc_ref=$(awk '$1=="epoch" && $3=="loss" { print $13 }' "$work/ref.out")
acc_b=$(sed -n 's/^epoch 1\/1 .*test acc \([0-9.]*\).*/\1/p' "$work/ring-rank0.log")
check "board rank 0 prints the epoch line with the ring's test accuracy ($acc_b / $acc_ref)" \
  awk -v a="$acc_b" -v b="$acc_ref" 'BEGIN { exit !(a != "" && b != "" && sprintf("%.4f", a) == sprintf("%.4f", b)) }'

# --- an image without room for a codec (BOARD_MIXED_NOCODEC=1: the capped
# images, BOARD_CODECS=none) refuses a lossy --compress at start-up, saying so
if [ "${BOARD_MIXED_NOCODEC:-0}" = 1 ]; then
  board 0 tap0 52:54:00:18:00:10 nocodec "${flags[@]}" --compress int8
  check "this image refuses --compress int8: exit 2 (got $(cat "$work/nocodec-rank0.rc")), naming the residual" \
    sh -c '[ "$1" = 2 ] && grep -q "^train: --compress int8: this image has no room for a codec" "$2"' \
    _ "$(cat "$work/nocodec-rank0.rc")" "$work/nocodec-rank0.log"
fi

# --- an image that takes --elastic (BOARD_MIXED_ELASTIC=1: the 384 KiB one)
# has the arena for it: its two boards alone, --elastic, 2 steps, equal.
# (Not with a host: a board on the in-place gradient and a host in an
# elastic ring disagree at the hello, a limit of core's bucket mode.)
if [ "${BOARD_MIXED_ELASTIC:-0}" = 1 ]; then
  printf '0 198.18.0.10:5000\n1 198.18.0.11:5002\n' >"$work/peers2"
  ef=(--job-token mixed-el --batch "$BATCH" --max-steps 2 --seed 7 --lr 0.01 --debug-param-hash
      --elastic --timeout 10 --peers "$work/peers2")
  [ -n "${BOARD_MIXED_MOMENTUM:-}" ] && ef+=(--momentum "$BOARD_MIXED_MOMENTUM")
  board 0 tap0 52:54:00:18:00:10 el "${ef[@]}" & pids+=($!)
  board 1 tap1 52:54:00:18:00:11 el "${ef[@]}" & pids+=($!)
  wait
  grep "^train: .*\(needs\|failed\)" "$work"/el-rank[01].log | sed 's/^/  elastic: /'
  check "--elastic on this image: two boards train 2 steps and end equal (exit $(cat "$work/el-rank0.rc") $(cat "$work/el-rank1.rc"))" \
    sh -c '[ "$1" = 0 ] && [ "$2" = 0 ] && [ -n "$3" ] && [ "$3" = "$4" ]' _ "$(cat "$work/el-rank0.rc")" \
    "$(cat "$work/el-rank1.rc")" "$(final_of "$work/el-rank0.log" 0)" "$(final_of "$work/el-rank1.log" 1)"
fi

# --- 2. a board killed mid-run: both mnist_ring ranks stop, naming it
# (BOARD_MIXED_KILL=0 skips it: the 512 KiB image's run checks the training)
if [ "${BOARD_MIXED_KILL:-1}" = 0 ]; then
  report "$SUITE"
  exit $?
fi
kflags=(--job-token killed --batch 2 --epochs 2 --seed 7 --lr 0.01 --debug-param-hash --timeout 6)
board 0 tap0 52:54:00:18:00:10 kill "${kflags[@]}" & b0=$!
host 1 kill "${kflags[@]}" & h1=$!
board 2 tap1 52:54:00:18:00:11 kill "${kflags[@]}" & b2=$!
host 3 kill "${kflags[@]}" & h3=$!
pids+=($b0 $h1 $b2 $h3)
for _ in $(seq 600); do grep -q "^param-hash rank 1 step 2 " "$work/kill-rank1.log" 2>/dev/null && break; sleep 0.1; done
check "the second ring trains (step 2 reached)" grep -q "^param-hash rank 1 step 2 " "$work/kill-rank1.log"
victim=$(pgrep -f "^$QEMU .*arg=--rank,arg=2,arg=--peers,.*arg=killed" | head -1)
check "found board rank 2's QEMU (pid ${victim:-none})" test -n "$victim"
t0=$(date +%s)
[ -n "$victim" ] && kill -9 "$victim"
wait $h1 $h3
t1=$(date +%s)
wait $b0 $b2 2>/dev/null
for r in 1 3; do
  rc=$(cat "$work/kill-rank$r.rc")
  sed "s/^/  killed ring, rank $r: /" "$work/kill-rank$r.log" | grep -v -e param-hash -e loss-bits
  check "killed board: mnist_ring rank $r exits 1 (got $rc), not by the test's timeout" [ "$rc" = 1 ]
  check "killed board: mnist_ring rank $r names rank 2" \
    grep -Eq "rank $r: .* failed: .*(peer rank 2\)|rank 2 \(right neighbour\) has acknowledged nothing)" "$work/kill-rank$r.log"
done
check "killed board: the hosts stopped within 20 s ($((t1 - t0)) s; --timeout 6)" [ $((t1 - t0)) -le 20 ]
report "$SUITE"
