#!/usr/bin/env bash
# tinyring test/board: an elastic mixed ring of two mps2-an386 boards (QEMU,
# LAN9118 on a TAP, ring.elf --elastic) and two mnist_ring --elastic
# processes, laid out as in mixed.sh (test/board/lan.sh: rank 0 board
# 198.18.0.10, rank 1 host 198.18.0.1, rank 2 board 198.18.0.11, rank 3 host
# 198.18.0.2), in a network namespace of its own. Host rank 3 is SIGKILLed mid-training: board rank 0,
# the lowest live member, coordinates the membership round (the lwIP port's
# coordinator), host 1 and board 2 follow it, and the three finish their
# epochs in a ring of 3 with equal parameter and BN-statistics hashes.
# Then a board that reboots: board rank 2's QEMU is SIGKILLed and started
# again with the same command line; it finds the running job, board 0
# admits it at the next change, and all four finish equal. Then a board
# below --min-ranks: board 0 and host 1 alone (--min-ranks 2), the host
# killed: the board writes --checkpoint through semihosting and mnist_ring
# --resume goes on from it. Suite "board_elastic".
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"
source test/lib.sh

SUITE=board_elastic
source test/board/lan.sh

flags=(--job-token belastic --batch 2 --epochs 2 --seed 7 --lr 0.01 --debug-param-hash
       --timeout 10 --elastic)

t0=$(date +%s)
board 0 tap0 52:54:00:18:00:10 el "${flags[@]}" & pids+=($!)
host 1 el "${flags[@]}" & pids+=($!)
board 2 tap1 52:54:00:18:00:11 el "${flags[@]}" & pids+=($!)
host 3 el "${flags[@]}" 2>/dev/null & pids+=($!)   # killed: no job notice
for _ in $(seq 900); do grep -q "^param-hash rank 3 step 4 " "$work/el-rank3.log" 2>/dev/null && break; sleep 0.1; done
check "the ring trains (host rank 3 reached step 4)" grep -q "^param-hash rank 3 step 4 " "$work/el-rank3.log"
victim=$(pgrep -f "^$MR --rank 3 --peers $work/peers" | head -1)
check "found host rank 3 (pid ${victim:-none})" test -n "$victim"
[ -n "$victim" ] && kill -9 "$victim"
t1=$(date +%s)
wait
t2=$(date +%s)
for r in 0 1 2; do
  sed "s/^/  rank $r: /" "$work/el-rank$r.log" | grep -v -e param-hash -e loss-bits
  check "rank $r finished (exit $(cat "$work/el-rank$r.rc"))" [ "$(cat "$work/el-rank$r.rc")" = 0 ]
done
echo "  board_elastic: killed after $((t1 - t0)) s, the rest done $((t2 - t1)) s later"
check "host rank 3 was killed before the end" sh -c '! grep -q "^final-hash" "$1"' _ "$work/el-rank3.log"
check "board rank 0 coordinated view 1 without rank 3 (a ring of 3)" \
  grep -q "^elastic: rank 0: view 1 from position [0-9]*: ring rank 0 of 3, .*coordinator rank 0 (this board), 1 left" "$work/el-rank0.log"
check "board rank 2 followed it (ring rank 2 of 3)" \
  grep -q "^elastic: rank 2: view 1 from position [0-9]*: ring rank 2 of 3, .*coordinator rank 0," "$work/el-rank2.log"
f0=$(final_of "$work/el-rank0.log" 0) f1=$(final_of "$work/el-rank1.log" 1) f2=$(final_of "$work/el-rank2.log" 2)
echo "  board_elastic: final hashes: '$f0' '$f1' '$f2'"
check "boards and host end with equal parameters and BN statistics" \
  sh -c '[ -n "$1" ] && [ "$1" = "$2" ] && [ "$2" = "$3" ]' _ "$f0" "$f1" "$f2"

# qemu_of TAP: the pid of the QEMU on that TAP
qemu_of() { pgrep -f "^timeout 240 $QEMU .*ifname=$1," | head -1 | xargs -r pgrep -P; }

# A board that reboots: SIGKILL board rank 2's QEMU at its step 3 and start
# it again at once with the same command line (one epoch: 30 steps at 4).
rj=(--job-token brejoin --batch 2 --epochs 1 --seed 7 --lr 0.01 --debug-param-hash --timeout 10
    --elastic)
t0=$(date +%s)
pids=()
board 0 tap0 52:54:00:18:00:10 rj "${rj[@]}" & pids+=($!)
host 1 rj "${rj[@]}" & pids+=($!)
board 2 tap1 52:54:00:18:00:11 rj "${rj[@]}" 2>/dev/null & b2=$!; pids+=($b2)   # killed: no notice
host 3 rj "${rj[@]}" & pids+=($!)
for _ in $(seq 900); do grep -q "^param-hash rank 2 step 3 " "$work/rj-rank2.log" 2>/dev/null && break; sleep 0.1; done
victim=$(qemu_of tap1)
check "board rank 2 trains (step 3), its QEMU found (pid ${victim:-none})" \
  sh -c '[ -n "$1" ] && grep -q "^param-hash rank 2 step 3 " "$2"' _ "$victim" "$work/rj-rank2.log"
[ -n "$victim" ] && kill -9 "$victim"
wait "$b2"
mv "$work/rj-rank2.log" "$work/rj-killed.log"
t1=$(date +%s)
board 2 tap1 52:54:00:18:00:11 rj "${rj[@]}" & pids+=($!)
wait
t2=$(date +%s)
grep -h "^elastic:\|^done" "$work"/rj-rank[02].log | sed 's/^/  /'
echo "  board_elastic: board 2 killed and started again after $((t1 - t0)) s, all done $((t2 - t1)) s later"
check "board rank 2's first life ended before the end" \
  sh -c 'grep -q "^param-hash rank 2 step 3 " "$1" && ! grep -q "^final-hash" "$1"' _ "$work/rj-killed.log"
check "board rank 2 started again found the job and was admitted by board 0 (ring of 4)" \
  grep -q "^elastic: rank 2: rejoined the running job as ring rank 2 of 4 (view [0-9]*, state from ring rank [0-9], coordinator rank 0," "$work/rj-rank2.log"
for r in 0 1 2 3; do
  check "rejoin: rank $r finished (exit $(cat "$work/rj-rank$r.rc"))" [ "$(cat "$work/rj-rank$r.rc")" = 0 ]
done
h=$(for r in 0 1 2 3; do final_of "$work/rj-rank$r.log" $r; done)
echo "$h" | sed 's/^/  rejoin: final /'
check "rejoin: all four (the board started again included) end with equal hashes" \
  sh -c '[ "$(echo "$1" | grep -c "^params ")" = 4 ] && [ "$(echo "$1" | sort -u | wc -l)" = 1 ]' _ "$h"

# Below --min-ranks: board 0 and host 1 (--min-ranks 2, --checkpoint-every
# 2: board 0, ring rank 0, writes at step 2); the host is killed at step 3;
# the board, alone, holds the latest state and writes it.
printf '0 198.18.0.10:5000\n1 198.18.0.1:5001\n' >"$work/peers2"
ck=(--job-token bckpt --batch 2 --epochs 1 --seed 7 --lr 0.01 --timeout 6 --elastic
    --min-ranks 2 --checkpoint-every 2 --peers "$work/peers2")
t0=$(date +%s)
pids=()
board 0 tap0 52:54:00:18:00:10 ck "${ck[@]}" --checkpoint "$work/board.ckpt" & pids+=($!)
host 1 ck "${ck[@]}" --checkpoint "$work/host.ckpt" --debug-param-hash 2>/dev/null & pids+=($!)
for _ in $(seq 900); do grep -q "^param-hash rank 1 step 3 " "$work/ck-rank1.log" 2>/dev/null && break; sleep 0.1; done
victim=$(pgrep -f "^$MR --rank 1 --peers $work/peers " | head -1)
check "host rank 1 trains with board 0 (step 3; pid ${victim:-none})" test -n "$victim"
check "board 0 (ring rank 0) wrote the checkpoint of step 2 before step 3" test -s "$work/board.ckpt"
[ -n "$victim" ] && kill -9 "$victim"
wait
sed 's/^/  ck rank 0: /' "$work/ck-rank0.log" | grep -v -e param-hash -e loss-bits
check "below --min-ranks: board 0 stopped (exit $(cat "$work/ck-rank0.rc"))" [ "$(cat "$work/ck-rank0.rc")" = 1 ]
done_n=$(sed -n 's/^train: rank 0: checkpoint of the last completed step (\([0-9]*\) steps done) written to .*/\1/p' "$work/ck-rank0.log")
check "board 0 wrote the checkpoint of step ${done_n:-none} (no .tmp left)" \
  sh -c '[ -n "$1" ] && [ -s "$2" ] && [ ! -e "$2.tmp" ]' _ "$done_n" "$work/board.ckpt"
timeout 60 "$MR" --data "$work/data" --quiet --batch 2 --epochs 1 --seed 7 --lr 0.01 --elastic \
  --checkpoint-every 2 --checkpoint "$work/board.ckpt" --resume >"$work/resume.log" 2>&1; st=$?
t1=$(date +%s)
sed 's/^/  resume: /' "$work/resume.log"
echo "  board_elastic: the checkpoint case took $((t1 - t0)) s"
check "mnist_ring --resume went on from the board's checkpoint (step ${done_n:-none}) to the end" \
  sh -c '[ "$1" = 0 ] && grep -q "^resuming from .*board.ckpt: epoch 1, step [0-9]* ($2 steps done)" "$3" && grep -q "^done" "$3"' \
  _ "$st" "$done_n" "$work/resume.log"
report "$SUITE"
