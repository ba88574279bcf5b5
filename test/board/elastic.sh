#!/usr/bin/env bash
# tinyring test/board: an elastic mixed ring of two mps2-an386 boards (QEMU,
# LAN9118 on a TAP, ring.elf --elastic) and two mnist_ring --elastic
# processes, as mixed.sh lays them out (rank 0 board 198.18.0.10, rank 1 host
# 198.18.0.1, rank 2 board 198.18.0.11, rank 3 host 198.18.0.2), in a network
# namespace of its own. Host rank 3 is SIGKILLed mid-training: board rank 0,
# the lowest live member, coordinates the membership round (the lwIP port's
# coordinator), host 1 and board 2 follow it, and the three finish their
# epochs in a ring of 3 with equal parameter and BN-statistics hashes.
# Suite "board_elastic".
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"
B=${BOARD_OUT:-${BUILD:-build}/board}
MR=${BUILD:-build}/mnist_ring
GEN=${BUILD:-build}/test/app/gen_idx
QEMU=${BOARD_QEMU:-qemu-system-arm}
source test/lib.sh

if [ -z "${TR_BOARD_NETNS:-}" ]; then
  if ! unshare --net true 2>/dev/null; then
    echo "board_elastic: cannot create a network namespace (unshare --net): not run" >&2
    fail "network namespace for the ring (run as root)"
    report board_elastic
    exit 1
  fi
  TR_BOARD_NETNS=1 exec timeout 300 unshare --net bash "$0" "$@"
fi

work=$(mktemp -d /tmp/tr-belastic.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  if [ "$TH_FAILED" -eq 0 ]; then rm -rf "$work"; else echo "board_elastic: logs kept in $work" >&2; fi
}
trap cleanup EXIT

ip link set lo up
ip link add br0 type bridge
ip link set br0 up
ip addr add 198.18.0.1/24 dev br0
ip addr add 198.18.0.2/24 dev br0
for t in tap0 tap1; do
  ip tuntap add dev $t mode tap
  ip link set $t master br0
  ip link set $t up
done
check "bridge and taps up in the namespace" ip link show tap1 >/dev/null

mkdir -p "$work/data"
"$GEN" "$work/data" 240 24 7 raw
printf '0 198.18.0.10:5000\n1 198.18.0.1:5001\n2 198.18.0.11:5002\n3 198.18.0.2:5003\n' >"$work/peers"

board() {
  local r=$1 tap=$2 mac=$3 sh="enable=on,target=native,arg=train" a
  shift 3
  for a in --rank "$r" --peers "$work/peers" --data "$work/data" "$@"; do sh="$sh,arg=$a"; done
  timeout 240 "$QEMU" -M mps2-an386 -display none -monitor none -serial none \
    -semihosting-config "$sh" -kernel "$B/ring.elf" \
    -nic tap,ifname=$tap,script=no,downscript=no,model=lan9118,mac=$mac >"$work/rank$r.log" 2>&1
  echo $? >"$work/rank$r.rc"
}
host() {
  local r=$1
  shift
  timeout 240 "$MR" --rank "$r" --peers "$work/peers" --data "$work/data" --quiet "$@" \
    >"$work/rank$r.log" 2>&1
  echo $? >"$work/rank$r.rc"
}
flags=(--job-token belastic --batch 2 --epochs 2 --seed 7 --lr 0.01 --debug-param-hash
       --timeout 6 --elastic)

t0=$(date +%s)
board 0 tap0 52:54:00:18:00:10 "${flags[@]}" & pids+=($!)
host 1 "${flags[@]}" & pids+=($!)
board 2 tap1 52:54:00:18:00:11 "${flags[@]}" & pids+=($!)
host 3 "${flags[@]}" 2>/dev/null & pids+=($!)   # killed: no job notice
for _ in $(seq 900); do grep -q "^param-hash rank 3 step 4 " "$work/rank3.log" 2>/dev/null && break; sleep 0.1; done
check "the ring trains (host rank 3 reached step 4)" grep -q "^param-hash rank 3 step 4 " "$work/rank3.log"
victim=$(pgrep -f "^$MR --rank 3 --peers $work/peers" | head -1)
check "found host rank 3 (pid ${victim:-none})" test -n "$victim"
[ -n "$victim" ] && kill -9 "$victim"
t1=$(date +%s)
wait
t2=$(date +%s)
for r in 0 1 2; do
  sed "s/^/  rank $r: /" "$work/rank$r.log" | grep -v -e param-hash -e loss-bits
  check "rank $r finished (exit $(cat "$work/rank$r.rc"))" [ "$(cat "$work/rank$r.rc")" = 0 ]
done
echo "  board_elastic: killed after $((t1 - t0)) s, the rest done $((t2 - t1)) s later"
check "host rank 3 was killed before the end" sh -c '! grep -q "^final-hash" "$1"' _ "$work/rank3.log"
check "board rank 0 coordinated view 1 without rank 3 (a ring of 3)" \
  grep -q "^elastic: rank 0: view 1 from position [0-9]*: ring rank 0 of 3, .*coordinator rank 0 (this board), 1 left" "$work/rank0.log"
check "board rank 2 followed it (ring rank 2 of 3)" \
  grep -q "^elastic: rank 2: view 1 from position [0-9]*: ring rank 2 of 3, .*coordinator rank 0," "$work/rank2.log"
final_of() { sed -n "s/^final-hash rank $2 //p" "$1"; }
f0=$(final_of "$work/rank0.log" 0) f1=$(final_of "$work/rank1.log" 1) f2=$(final_of "$work/rank2.log" 2)
echo "  board_elastic: final hashes: '$f0' '$f1' '$f2'"
check "boards and host end with equal parameters and BN statistics" \
  sh -c '[ -n "$1" ] && [ "$1" = "$2" ] && [ "$2" = "$3" ]' _ "$f0" "$f1" "$f2"
report board_elastic
