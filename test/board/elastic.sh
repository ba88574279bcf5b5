#!/usr/bin/env bash
# tinyring test/board: an elastic mixed ring of two mps2-an386 boards (QEMU,
# LAN9118 on a TAP, ring.elf --elastic) and two mnist_ring --elastic
# processes, laid out as in mixed.sh (test/board/lan.sh: rank 0 board
# 198.18.0.10, rank 1 host 198.18.0.1, rank 2 board 198.18.0.11, rank 3 host
# 198.18.0.2), in a network namespace of its own. Host rank 3 is SIGKILLed mid-training: board rank 0,
# the lowest live member, coordinates the membership round (the lwIP port's
# coordinator), host 1 and board 2 follow it, and the three finish their
# epochs in a ring of 3 with equal parameter and BN-statistics hashes.
# Suite "board_elastic".
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"
source test/lib.sh

SUITE=board_elastic
source test/board/lan.sh

flags=(--job-token belastic --batch 2 --epochs 2 --seed 7 --lr 0.01 --debug-param-hash
       --timeout 6 --elastic)

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
report "$SUITE"
