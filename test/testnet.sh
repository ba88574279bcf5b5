# tinyring: the test network every namespace suite builds (source it; root).
#   testnet_bridge [-n NS] TAPS ADDR...
# In network namespace NS (or the current one, e.g. after unshare --net):
# loopback up, bridge br0 (no STP, no forwarding delay) holding ADDR.../24,
# and TAP devices tap0 .. tap<TAPS-1> on it, up, for QEMU boards or lwIP
# ranks (their stacks own their addresses; the kernel side has none).
# Addresses come from the benchmarking range 198.18.0.0/15, no route out.
# Used by test/lwip/netns.sh (lwIP and POSIX ranks) and test/board/lan.sh
# (QEMU boards and mnist_ring ranks).
testnet_bridge() {
  local x=() taps a i
  if [ "$1" = -n ]; then x=(ip netns exec "$2"); shift 2; fi
  taps=$1; shift
  [ -c /dev/net/tun ] || { mkdir -p /dev/net; mknod /dev/net/tun c 10 200 2>/dev/null; }
  "${x[@]}" ip link set lo up &&
    "${x[@]}" ip link add br0 type bridge &&
    "${x[@]}" ip link set br0 type bridge stp_state 0 forward_delay 0 &&
    "${x[@]}" ip link set br0 up || return 1
  for a in "$@"; do "${x[@]}" ip addr add "$a/24" dev br0 || return 1; done
  for ((i = 0; i < taps; i++)); do
    "${x[@]}" ip tuntap add dev "tap$i" mode tap &&
      "${x[@]}" ip link set "tap$i" master br0 &&
      "${x[@]}" ip link set "tap$i" up || return 1
  done
}
