#!/usr/bin/env bash
# tinyring test/board: two mps2-an386 boards (QEMU, LAN9118 on a TAP) and two
# POSIX host ranks in one ring, over lwIP on the boards and Linux TCP on the
# hosts, inside a network namespace of its own (bridge br0, 198.18.0.0/24;
# nothing leaves the namespace). Ranks alternate board/host so every ring link
# joins a board and a host:
#   rank 0 board 198.18.0.10   rank 1 host 198.18.0.1
#   rank 2 board 198.18.0.11   rank 3 host 198.18.0.2
# Each rank trains the narrow ConvNet on its own samples and averages the
# gradients with tr_allreduce (ring); all four must end with the same
# parameter hash, and it must equal the hash of the same job run by four
# POSIX host ranks alone. Suite "board_ring".
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"
B=${BOARD_OUT:-${BUILD:-build}/board}
QEMU=${BOARD_QEMU:-qemu-system-arm}
STEPS=${BOARD_RING_STEPS:-3}
SEED=7
TOKEN=0x7431a9e2c05b11d3
source test/lib.sh

if [ -z "${TR_BOARD_NETNS:-}" ]; then
  # re-run inside a fresh network namespace (needs root or user namespaces)
  if ! unshare --net true 2>/dev/null; then
    echo "board_ring: cannot create a network namespace (unshare --net): not run" >&2
    fail "network namespace for the ring (run as root)"
    report board_ring
    exit 1
  fi
  TR_BOARD_NETNS=1 exec timeout 240 unshare --net bash "$0" "$@"
fi

C1=$(sed -n 's/#define BOARD_RING_C1 \([0-9]*\)u/\1/p' "$B/board_cfg.h")
C2=$(sed -n 's/#define BOARD_RING_C2 \([0-9]*\)u/\1/p' "$B/board_cfg.h")
BATCH=$(sed -n 's/#define BOARD_RING_BATCH \([0-9]*\)u/\1/p' "$B/board_cfg.h")
work=$(mktemp -d /tmp/tr-ring.XXXXXX)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$work"; }
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

"$B/host_train" samples "$work" $((STEPS * 4 * BATCH))
TABLE="198.18.0.10:5000 198.18.0.1:5001 198.18.0.11:5002 198.18.0.2:5003"
board() {  # rank tap mac
  local sh="enable=on,target=native,arg=ring,arg=$1,arg=4,arg=$TOKEN,arg=$STEPS,arg=$SEED"
  sh="$sh,arg=$work/images.idx,arg=$work/labels.idx"
  for a in $TABLE; do sh="$sh,arg=$a"; done
  timeout 180 "$QEMU" -M mps2-an386 -display none -monitor none -serial none \
    -semihosting-config "$sh" -kernel "$B/ring.elf" \
    -nic tap,ifname=$2,script=no,downscript=no,model=lan9118,mac=$3 >"$work/rank$1.log" 2>&1
  echo $? >"$work/rank$1.rc"
}
host() {  # rank
  timeout 180 "$B/host_rank" "$C1" "$C2" "$BATCH" "$1" 4 "$TOKEN" "$STEPS" "$SEED" \
    "$work/images.idx" "$work/labels.idx" $TABLE >"$work/rank$1.log" 2>&1
  echo $? >"$work/rank$1.rc"
}
t0=$(date +%s)
board 0 tap0 52:54:00:18:00:10 & pids+=($!)
host 1 & pids+=($!)
board 2 tap1 52:54:00:18:00:11 & pids+=($!)
host 3 & pids+=($!)
wait
t1=$(date +%s)
hashes=()
for r in 0 1 2 3; do
  rc=$(cat "$work/rank$r.rc" 2>/dev/null || echo none)
  sed "s/^/  rank $r: /" "$work/rank$r.log"
  check "rank $r exit 0 (got $rc)" [ "$rc" = 0 ]
  n=$(grep -c '^step [0-9]* loss' "$work/rank$r.log")
  check "rank $r printed $STEPS steps (got $n)" [ "$n" -eq "$STEPS" ]
  h=$(sed -n 's/^params hash \([0-9a-f]*\).*/\1/p' "$work/rank$r.log")
  check "rank $r printed a params hash" [ -n "$h" ]
  hashes+=("${h:-none$r}")
done
echo "  ring: hashes ${hashes[*]} (${STEPS} steps, $((t1 - t0)) s)"
for r in 1 2 3; do
  check "rank $r params bitwise equal to rank 0 (${hashes[$r]} vs ${hashes[0]})" \
    [ "${hashes[$r]}" = "${hashes[0]}" ]
done
# the same job on four POSIX host ranks (loopback): the boards must not have
# changed the result by a single bit
HTABLE="127.0.0.1:6000 127.0.0.1:6001 127.0.0.1:6002 127.0.0.1:6003"
hpids=()
for r in 0 1 2 3; do
  timeout 120 "$B/host_rank" "$C1" "$C2" "$BATCH" "$r" 4 "$TOKEN" "$STEPS" "$SEED" \
    "$work/images.idx" "$work/labels.idx" $HTABLE >"$work/host$r.log" 2>&1 & hpids+=($!)
done
hrc=0
for p in "${hpids[@]}"; do wait "$p" || hrc=1; done
href=$(sed -n 's/^params hash \([0-9a-f]*\).*/\1/p' "$work/host0.log")
check "all-host reference ring ran (status $hrc, hash ${href:-none})" \
  sh -c '[ "$1" -eq 0 ] && [ -n "$2" ]' _ "$hrc" "$href"
check "boards + hosts equal the all-host ring bit for bit (${hashes[0]} vs ${href:-none})" \
  [ "${hashes[0]}" = "${href:-none}" ]
# the ranks trained on different samples: their local losses differ
l0=$(sed -n 's/^step 0 loss .* bits \([0-9a-f]*\)/\1/p' "$work/rank0.log")
l1=$(sed -n 's/^step 0 loss .* bits \([0-9a-f]*\)/\1/p' "$work/rank1.log")
check "ranks saw different samples (step 0 losses $l0 / $l1)" \
  sh -c '[ -n "$1" ] && [ "$1" != "$2" ]' _ "$l0" "$l1"
report board_ring
