#!/usr/bin/env bash
# tinyring test-lwip: real lwIP stacks (one per process, NO_SYS=1) on TAP
# devices in a private network namespace, alone and in a ring with POSIX
# ranks. Needs root (network namespaces, TAP devices).
#
#   test/lwip/run.sh BINDIR     (BINDIR holds lwip_rank, posix_rank, lwip_register)
#
# Topology, all inside namespace tr-lwip-<pid>: bridge br0 198.18.0.1/24;
# lwIP rank r on TAP tapN with 198.18.0.(10+N) (its own lwIP stack owns that
# address, the kernel side has none); POSIX rank r with 198.18.0.(20+r) on
# br0. Addresses from the benchmarking range 198.18.0.0/15; nothing has a
# route out of the namespace. Everything is removed on exit.
set -u
SECONDS=0
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
BIN=$(cd "${1:?usage: run.sh BINDIR}" && pwd)
SUITE=lwip
. "$here/netns.sh"

if [ "$(id -u)" -ne 0 ]; then
  echo "lwip: needs root for network namespaces and TAP devices" >&2
  fail "running as root"; report "$SUITE"; exit 1
fi
check "namespace with bridge and 4 TAPs" setup

# 1. the port's byte stream between two lwIP stacks, no collectives
check "stream: 2 lwIP ranks, 4 MiB each way" run_ring stream LL stream --bytes 4194304
grep -h "stream sent" "$LOG"/stream.*.out 2>/dev/null
# receive rings far smaller than the TCP window: lwIP's pbufs wait in the
# port (window shut) until core reads; nothing may be lost or reordered
check "stream: 512-byte receive rings, 2 MiB each way" \
  run_ring smallrx LL stream --bytes 2097152 --rx 1024
grep -h "stream sent" "$LOG"/smallrx.*.out 2>/dev/null

# 1b. a stranger (another job's token) knocks on rank 0 first: it is refused
#     and the real ring of two still forms and runs
stranger_case() {
  local t="198.18.0.10:$PORT,198.18.0.11:$PORT" a b s st
  timeout 30 ip netns exec "$NS" "$BIN/lwip_rank" --tap tap0 --ip 198.18.0.10 --table "$t" \
    --rank 0 --world 2 --token $TOKEN --mode stream --suite lwip-stranger-r0 --bytes 100000 \
    >"$LOG/stranger.0.out" 2>&1 &
  a=$!; PIDS+=($a)
  sleep 0.3                              # rank 0 is up and listening
  t="198.18.0.10:$PORT,198.18.0.12:$PORT"
  timeout 30 ip netns exec "$NS" "$BIN/lwip_rank" --tap tap2 --ip 198.18.0.12 --table "$t" \
    --rank 1 --world 2 --token 0x0bad --mode stream --suite lwip-stranger-x --bytes 1000 \
    --connect-ms 2500 >"$LOG/stranger.x.out" 2>&1 &
  s=$!; PIDS+=($s)
  sleep 1                                # the stranger knocks, is refused, retries
  t="198.18.0.10:$PORT,198.18.0.11:$PORT"
  timeout 30 ip netns exec "$NS" "$BIN/lwip_rank" --tap tap1 --ip 198.18.0.11 --table "$t" \
    --rank 1 --world 2 --token $TOKEN --mode stream --suite lwip-stranger-r1 --bytes 100000 \
    >"$LOG/stranger.1.out" 2>&1 &
  b=$!; PIDS+=($b)
  wait $a; check "stranger: rank 0 ran its stream" test $? -eq 0
  wait $b; check "stranger: rank 1 ran its stream" test $? -eq 0
  wait $s; st=$?
  check "stranger: the other job's process never got a link (exit $st)" test $st -eq 1
  check "stranger: rank 0 refused it" grep -q "links up, [1-9][0-9]* strangers refused" "$LOG/stranger.0.out"
  grep -h "strangers refused\|bootstrap failed" "$LOG"/stranger.*.out
}
stranger_case

# 1c. a rank that boots 3 s after its neighbour (no ARP answer, no RST
#     meanwhile): the neighbour keeps trying and the link comes up within
#     about a second of the late rank's start
late_case() {
  local t="198.18.0.10:$PORT,198.18.0.11:$PORT" a b t0 dt
  t0=$(date +%s%N)
  timeout 30 ip netns exec "$NS" "$BIN/lwip_rank" --tap tap0 --ip 198.18.0.10 --table "$t" \
    --rank 0 --world 2 --token $TOKEN --mode stream --suite lwip-late-r0 --bytes 100000 \
    >"$LOG/late.0.out" 2>&1 &
  a=$!; PIDS+=($a)
  sleep 3
  timeout 30 ip netns exec "$NS" "$BIN/lwip_rank" --tap tap1 --ip 198.18.0.11 --table "$t" \
    --rank 1 --world 2 --token $TOKEN --mode stream --suite lwip-late-r1 --bytes 100000 \
    >"$LOG/late.1.out" 2>&1 &
  b=$!; PIDS+=($b)
  wait $a; check "late: rank 0 ran its stream" test $? -eq 0
  wait $b; check "late: rank 1 ran its stream" test $? -eq 0
  dt=$(( ($(date +%s%N) - t0) / 1000000 ))
  check "late: both done $dt ms after the first start (< 7000)" test "$dt" -lt 7000
}
late_case

# 2. the collectives suite over 2, 3 and 4 lwIP ranks
for kinds in LL LLL LLLL; do
  check "collectives over ${#kinds} lwIP ranks" run_ring "coll${#kinds}" "$kinds" coll
done

# 2b. the same with a small board's lwIP sizes (MSS 536, 2-segment window and
#     send buffer: every send hits the queue limits)
check "collectives over a mixed ring P L P L" run_ring collmix PLPL coll

LWIP_RANK_BIN=lwip_rank_small
check "small lwIP sizes: stream with 300-byte rings" \
  run_ring smallstream LL stream --bytes 1000000 --rx 600
check "small lwIP sizes: collectives over 3 lwIP ranks" run_ring smallcoll LLL coll
unset LWIP_RANK_BIN

# 3. training steps: a mixed ring (lwIP and POSIX alternating: every link
#    crosses kinds) against an all-POSIX ring; parameters must be bitwise equal
STEPS=3
check "train: mixed ring P L P L" run_ring trainmix PLPL train --iters $STEPS
check "train: all-POSIX ring" run_ring trainposix PPPP train --iters $STEPS
hashes=$(cat "$LOG"/trainmix.?.out "$LOG"/trainposix.?.out 2>/dev/null | sed -n 's/^params //p' | sort | uniq -c)
echo "$hashes"
n_hash=$(echo "$hashes" | grep -c . || true)
n_ranks=$(echo "$hashes" | awk '{s += $1} END {print s + 0}')
check "8 ranks printed their parameter hash" test "$n_ranks" -eq 8
check "mixed and all-POSIX rings end with bitwise-identical parameters" test "$n_hash" -eq 1

# 4. a rank whose interface goes down, and a rank that is killed: the others
#    report a clear error (phase, link, peer rank) within the timeout, no hang
fault_case() {  # NAME KINDS VICTIM ACTION
  local name=$1 kinds=$2 victim=$3 action=$4 r t0 dt st ok=0
  start_ring "$name" "$kinds" loop --iters 1000000 --timeout 2000
  for ((t0 = 0; t0 < 100; t0++)); do           # until every rank is looping
    ok=$(cat "$LOG/$name".?.out 2>/dev/null | grep -c "looping")
    [ "$ok" -eq ${#kinds} ] && break
    sleep 0.1
  done
  check "$name: all ${#kinds} ranks looping" test "$ok" -eq ${#kinds}
  t0=$(date +%s%N)
  if [ "$action" = down ]; then nsx ip link set "tap$victim" down
  else   # the rank itself (the child of timeout); disowned: no job notice
    disown "${RANKPID[victim]}"; kill -9 $(pgrep -P "${RANKPID[victim]}"); fi
  for r in "${!RANKPID[@]}"; do
    if [ "$r" -eq "$victim" ] && [ "$action" = kill ]; then
      while kill -0 "${RANKPID[r]}" 2>/dev/null; do sleep 0.05; done; continue
    fi
    wait "${RANKPID[r]}"; st=$?
    dt=$(( ($(date +%s%N) - t0) / 1000000 ))
    check "$name: rank $r stopped with an error (exit $st), not killed by timeout" test "$st" -eq 3
    check "$name: rank $r gave up within 8 s ($dt ms)" test "$dt" -lt 8000
    check "$name: rank $r names the failure" grep -q "allreduce failed: .*(phase .*peer rank" "$LOG/$name.$r.out"
    grep -h "allreduce failed" "$LOG/$name.$r.out" | head -n1
  done
  [ "$action" = down ] && nsx ip link set "tap$victim" up
  return 0
}
fault_case down LLL 2 down
check "interface down: the rank itself reports its link unreachable" \
  grep -q "no route\|unreach\|interface down" "$LOG/down.2.out"
fault_case kill LLL 1 kill
# a POSIX rank killed in a mixed ring: its kernel resets the connections, so
# the lwIP neighbours see the link close (tcp_err / FIN) rather than a timeout
fault_case killmix PLPL 2 kill
check "killmix: the lwIP neighbours report the closed link" \
  grep -q "peer closed the connection (phase .*peer rank 2" "$LOG/killmix.1.out" "$LOG/killmix.3.out"

# 5. elastic: a mixed ring P L P L trains with core's trainer (cfg.elastic);
#    POSIX rank 2 is SIGKILLed mid-training; the lwIP ranks take part in the
#    membership round as members and the three survivors finish equal
. "$here/elastic.sh"
elastic_cases

# 6. compressed gradients (--compress): core's trainer (ring_job's elastic
#    mode, nobody killed) on a mixed ring P L P L and an all-POSIX ring
#    P P P P under int8 and int4: per codec all eight ranks end with equal
#    parameters and BN statistics, and the codecs train bits of their own;
#    then case 1 under int8 (POSIX rank 2 killed: the survivors, lwIP ranks
#    among them, resync the residual and end equal)
cz_ring() {  # NAME KINDS: every rank to the end; prints nothing itself
  local r
  el_start "$1" "$2" 5000 -1
  for r in "${!EL_PID[@]}"; do wait "${EL_PID[r]}"; done
}
EL_SAVE=("${EL_ARGS[@]}")
cz_hashes=()
for codec in int8 int4; do
  EL_ARGS=(--iters 1 --samples 256 --compress "$codec")
  cz_ring "cz$codec-mix" PLPL
  cz_ring "cz$codec-posix" PPPP
  h=$(cat "$LOG/cz$codec-mix".?.out "$LOG/cz$codec-posix".?.out 2>/dev/null | sed -n 's/^params //p' | sort | uniq -c)
  echo "compress $codec: $h"
  check "compress $codec: 8 ranks (P L P L and P P P P) end with one hash" \
    sh -c '[ "$(echo "$1" | awk "{s += \$1} END {print s + 0}")" -eq 8 ] && [ "$(echo "$1" | grep -c .)" -eq 1 ]' _ "$h"
  check "compress $codec: the lwIP ranks ran the codec" \
    grep -q "lwip rank 1: compress $codec, arena" "$LOG/cz$codec-mix.1.out"
  cz_hashes+=("$(echo "$h" | awk '{print $2}')")
done
check "int8 and int4 train different bits" \
  sh -c '[ -n "$1" ] && [ -n "$2" ] && [ "$1" != "$2" ]' _ "${cz_hashes[@]}"
EL_ARGS=(--iters 2 --samples 1536 --compress int8)
el_start czelastic PLPL 5000 2
el_killed czelastic PLPL 2
EL_ARGS=("${EL_SAVE[@]}")

echo "lwip: done in $SECONDS s"
report "$SUITE"
