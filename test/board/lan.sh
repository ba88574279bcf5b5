# tinyring test/board: the network and launchers of the mixed rings, sourced
# by mixed.sh and elastic.sh after test/lib.sh, with SUITE set (B, MR, GEN
# and QEMU: the board images, mnist_ring, gen_idx and qemu-system-arm,
# from BOARD_OUT, BUILD and BOARD_QEMU). Re-runs the script in a network namespace of its own (needs
# root or user namespaces), then makes bridge br0 with the hosts' addresses
# 198.18.0.1 and .2 and the boards' TAPs tap0 and tap1 (their boards are
# .10 and .11), the IDX files in $work/data and the --peers table
# $work/peers, where ranks alternate board and host:
#   rank 0 board 198.18.0.10   rank 1 host 198.18.0.1
#   rank 2 board 198.18.0.11   rank 3 host 198.18.0.2
# A failed suite keeps $work; pids lists what to kill at exit.
B=${BOARD_OUT:-${BUILD:-build}/board}
MR=${BUILD:-build}/mnist_ring
GEN=${BUILD:-build}/test/app/gen_idx
QEMU=${BOARD_QEMU:-qemu-system-arm}
if [ -z "${TR_BOARD_NETNS:-}" ]; then
  if ! unshare --net true 2>/dev/null; then
    echo "$SUITE: cannot create a network namespace (unshare --net): not run" >&2
    fail "network namespace for the ring (run as root)"
    report "$SUITE"
    exit 1
  fi
  TR_BOARD_NETNS=1 exec timeout 300 unshare --net bash "$0" "$@"
fi

work=$(mktemp -d "/tmp/tr-$SUITE.XXXXXX")
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  if [ "$TH_FAILED" -eq 0 ]; then rm -rf "$work"; else echo "$SUITE: logs kept in $work" >&2; fi
}
trap cleanup EXIT

. test/testnet.sh
lan_up() { testnet_bridge 2 198.18.0.1 198.18.0.2 && ip link show tap1 >/dev/null; }
check "bridge and taps up in the namespace" lan_up

mkdir -p "$work/data"
# BOARD_MIXED_TRAIN / _TEST: the set's sizes (the 256 KiB ring: MNIST's 60,000)
TRAIN_N=${BOARD_MIXED_TRAIN:-240}
"$GEN" "$work/data" "$TRAIN_N" "${BOARD_MIXED_TEST:-24}" 7 raw
printf '# rank address:port (boards .10 and .11, hosts on br0)\n0 198.18.0.10:5000\n1 198.18.0.1:5001\n2 198.18.0.11:5002\n3 198.18.0.2:5003\n' >"$work/peers"

# board RANK TAP MAC TAG FLAGS...: ring.elf as rank RANK, log in
# $work/TAG-rankR.log, exit code in $work/TAG-rankR.rc; with BOARD_TARGET=m55
# the Cortex-M55 image (board.mk, board-m55-image) on mps3-an547
B55=${BOARD_M55_OUT:-${BUILD:-build}/board-m55}
board() {
  local r=$1 tap=$2 mac=$3 tag=$4 sh="enable=on,target=native,arg=train" a
  local machine=mps2-an386 elf=$B/ring.elf
  [ "${BOARD_TARGET:-m4}" = m55 ] && machine=mps3-an547 elf=$B55/ring.elf
  shift 4
  for a in --rank "$r" --peers "$work/peers" --data "$work/data" "$@"; do sh="$sh,arg=$a"; done
  timeout 240 "$QEMU" -M $machine -display none -monitor none -serial none \
    -semihosting-config "$sh" -kernel "$elf" \
    -nic tap,ifname=$tap,script=no,downscript=no,model=lan9118,mac=$mac >"$work/$tag-rank$r.log" 2>&1
  echo $? >"$work/$tag-rank$r.rc"
}
# host RANK TAG FLAGS...: mnist_ring as rank RANK, the same files
host() {
  local r=$1 tag=$2
  shift 2
  timeout 240 "$MR" --rank "$r" --peers "$work/peers" --data "$work/data" --quiet "$@" \
    >"$work/$tag-rank$r.log" 2>&1
  echo $? >"$work/$tag-rank$r.rc"
}
final_of() { sed -n "s/^final-hash rank $2 //p" "$1"; }
