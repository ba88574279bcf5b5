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
NS=tr-lwip-$$
LOG=$(mktemp -d /tmp/tr-lwip.XXXXXX)
PIDS=()
TOKEN=0x7e57a11ce0ff1ce5
PORT=7000

cleanup() {
  local p
  for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
  wait 2>/dev/null
  ip netns del "$NS" 2>/dev/null
  if [ "$TH_FAILED" -eq 0 ]; then rm -rf "$LOG"; else echo "lwip: logs kept in $LOG" >&2; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ "$(id -u)" -ne 0 ]; then
  echo "lwip: needs root for network namespaces and TAP devices" >&2
  fail "running as root"; report "$SUITE"; exit 1
fi
[ -c /dev/net/tun ] || { mkdir -p /dev/net; mknod /dev/net/tun c 10 200 2>/dev/null; }

nsx() { ip netns exec "$NS" "$@"; }

setup() {
  ip netns add "$NS" || return 1
  nsx ip link set lo up &&
  nsx ip link add br0 type bridge &&
  nsx ip link set br0 type bridge stp_state 0 forward_delay 0 &&
  nsx ip addr add 198.18.0.1/24 dev br0 &&
  nsx ip link set br0 up || return 1
  local i
  for i in 0 1 2 3; do
    nsx ip tuntap add dev "tap$i" mode tap &&
    nsx ip link set "tap$i" master br0 &&
    nsx ip link set "tap$i" up || return 1
    nsx ip addr add "198.18.0.$((20 + i))/24" dev br0 || return 1
  done
}
check "namespace with bridge and 4 TAPs" setup

# A ring described by a string of kinds, one letter per rank: L = lwIP, P = POSIX.
# table_for KINDS -> the static address table every lwIP rank gets
table_for() {
  local kinds=$1 r t=
  for ((r = 0; r < ${#kinds}; r++)); do
    if [ "${kinds:r:1}" = L ]; then t+="198.18.0.$((10 + r)):$PORT,"; else t+="198.18.0.$((20 + r)):$PORT,"; fi
  done
  echo "${t%,}"
}

# start_ring NAME KINDS MODE [extra args...]: starts every rank in the
# background (PIDS, RANKPID[r]); logs in $LOG/NAME.r.out
declare -a RANKPID
start_ring() {
  local name=$1 kinds=$2 mode=$3; shift 3
  local world=${#kinds} table r reg=()
  table=$(table_for "$kinds")
  RANKPID=()
  for ((r = 0; r < world; r++)); do
    if [ "${kinds:r:1}" = L ]; then
      timeout 120 ip netns exec "$NS" "$BIN/lwip_rank" --tap "tap$r" --ip "198.18.0.$((10 + r))" \
        --table "$table" --rank $r --world "$world" --token $TOKEN --mode "$mode" \
        --suite "lwip-$name-r$r" "$@" >"$LOG/$name.$r.out" 2>&1 &
      reg+=(--rank $r --at "198.18.0.$((10 + r)):$PORT")
    else
      timeout 120 ip netns exec "$NS" "$BIN/posix_rank" --master "198.18.0.20:29500" \
        --addr "198.18.0.$((20 + r))" --port $PORT --rank $r --world "$world" --token $TOKEN \
        --mode "$mode" --suite "lwip-$name-r$r" "$@" >"$LOG/$name.$r.out" 2>&1 &
    fi
    RANKPID[r]=$!
    PIDS+=($!)
  done
  # a mixed ring: POSIX rank 0 is the rendezvous master; register the lwIP ranks
  if [ "${kinds:0:1}" = P ] && [ ${#reg[@]} -gt 0 ]; then
    timeout 60 ip netns exec "$NS" "$BIN/lwip_register" --master 198.18.0.20:29500 \
      --token $TOKEN --world "$world" "${reg[@]}" >"$LOG/$name.reg.out" 2>&1 &
    PIDS+=($!)
  fi
}

# wait_ring NAME: 0 if every rank exited 0
wait_ring() {
  local name=$1 r st=0
  for r in "${!RANKPID[@]}"; do
    if ! wait "${RANKPID[r]}"; then
      echo "lwip: $name rank $r failed:" >&2; tail -n 5 "$LOG/$name.$r.out" >&2; st=1
    fi
  done
  return $st
}

run_ring() { start_ring "$@"; wait_ring "$1"; }

# 1. the port's byte stream between two lwIP stacks, no collectives
check "stream: 2 lwIP ranks, 4 MiB each way" run_ring stream LL stream --bytes 4194304
grep -h "stream sent" "$LOG"/stream.*.out 2>/dev/null

# 1b. a stranger (another job's token) knocks on rank 0 first: it is refused
#     and the real ring of two still forms and runs
stranger_case() {
  local t="198.18.0.10:$PORT,198.18.0.12:$PORT" a b s st
  timeout 30 ip netns exec "$NS" "$BIN/lwip_rank" --tap tap2 --ip 198.18.0.12 --table "$t" \
    --rank 1 --world 2 --token 0x0bad --mode stream --suite lwip-stranger-x --bytes 1000 \
    --connect-ms 2500 >"$LOG/stranger.x.out" 2>&1 &
  s=$!; PIDS+=($s)
  t="198.18.0.10:$PORT,198.18.0.11:$PORT"
  timeout 30 ip netns exec "$NS" "$BIN/lwip_rank" --tap tap0 --ip 198.18.0.10 --table "$t" \
    --rank 0 --world 2 --token $TOKEN --mode stream --suite lwip-stranger-r0 --bytes 100000 \
    >"$LOG/stranger.0.out" 2>&1 &
  a=$!; PIDS+=($a)
  sleep 1
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

# 2. the collectives suite over 2, 3 and 4 lwIP ranks
for kinds in LL LLL LLLL; do
  check "collectives over ${#kinds} lwIP ranks" run_ring "coll${#kinds}" "$kinds" coll
done

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
  else kill -9 $(pgrep -P "${RANKPID[victim]}") "${RANKPID[victim]}"; fi   # the rank, then its timeout
  for r in "${!RANKPID[@]}"; do
    [ "$r" -eq "$victim" ] && [ "$action" = kill ] && { wait "${RANKPID[r]}" 2>/dev/null; continue; }
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

echo "lwip: done in $SECONDS s"
report "$SUITE"
