# tinyring: the test networks every namespace suite builds (source it; root
# and iproute2). Addresses come from ranges with no route out; no address,
# route or device outside the namespaces a caller names is created or touched.
#
# 1. A bridge with TAPs, for QEMU boards and lwIP ranks:
#   testnet_bridge [-n NS] TAPS ADDR...
# In network namespace NS (or the current one, e.g. after unshare --net):
# loopback up, bridge br0 (no STP, no forwarding delay) holding ADDR.../24,
# and TAP devices tap0 .. tap<TAPS-1> on it, up, for QEMU boards or lwIP
# ranks (their stacks own their addresses; the kernel side has none).
# Addresses from the benchmarking range 198.18.0.0/15.
# Used by test/lwip/netns.sh (lwIP and POSIX ranks) and test/board/lan.sh
# (QEMU boards and mnist_ring ranks).
testnet_bridge() {
  local x=() taps a i
  if [ "$1" = -n ]; then x=(ip netns exec "$2"); shift 2; fi
  taps=$1; shift
  if [ "$taps" -gt 0 ] && [ ! -c /dev/net/tun ]; then
    mkdir -p /dev/net; mknod /dev/net/tun c 10 200 2>/dev/null
  fi
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

# 2. Ranks on shaped links, one namespace per rank, for test-net-shaped
# (test/net) and bench-net (test/bench/net); its functions are sn_*:
#   sn_setup PREFIX N      namespaces PREFIX-r0..r(N-1) and PREFIX-sw
#   sn_cleanup             kills every process in them and deletes them (call it
#                          from the caller's EXIT trap, set before sn_setup)
#   sn_kill_ranks          kills every process in the ranks' namespaces (a rank
#                          is `ip netns exec`'s child's child: its launcher's pid
#                          alone does not reach it)
#   sn_shape RATE          every rank's link at RATE both ways (tc's units:
#                          1gbit, 10mbit, ...; "unshaped" removes the shaping)
#   sn_exec R CMD...       runs CMD in rank R's namespace
#   sn_addr R              rank R's address (on its interface $SN_IFACE)
#   sn_sent R              bytes rank R has put on its link so far (the switch
#                          side's rx counter of its veth)
#   sn_qdisc_sent R        bytes rank R's own tbf has sent (0 without shaping)
#   sn_compress_values MR  the --compress values MR --help lists (A|B or
#                          A | B, on the option's line), none if it has none
#   sn_settings MR [LIST] [CROSS]  the settings the benches run, "name|flags"
#                          per line: LIST ("none;--compress int8;...") if
#                          given, else none, each other --compress value,
#                          --average-every K for the K MR's help lists (else
#                          4 and 16), and int8 with K 4; CROSS=1: every
#                          codec with every K instead of that last one
#
# Rank r's namespace holds one veth end, $SN_IFACE (eth0), with
# 198.19.0.(10+r)/24 (the benchmarking range too); its other end, vr<r>, is a port of the bridge br0 in the
# switch namespace PREFIX-sw. With a rate, a tbf qdisc shapes eth0's egress
# (rank -> switch) and vr<r>'s (switch -> rank), so every rank has a
# full-duplex link of that rate to the switch, as hosts on a switched LAN do.
SN_IFACE=eth0
SN_PREFIX=
SN_N=0

sn_kill_ranks() {
  local r p
  [ -n "$SN_PREFIX" ] || return 0
  for ((r = 0; r < SN_N; r++)); do
    p=$(ip netns pids "$SN_PREFIX-r$r" 2>/dev/null)
    [ -n "$p" ] && kill -9 $p 2>/dev/null
  done
  return 0
}

sn_cleanup() {
  local r p
  [ -n "$SN_PREFIX" ] || return 0
  sn_kill_ranks
  p=$(ip netns pids "$SN_PREFIX-sw" 2>/dev/null)
  [ -n "$p" ] && kill -9 $p 2>/dev/null
  for ((r = 0; r < SN_N; r++)); do ip netns del "$SN_PREFIX-r$r" 2>/dev/null; done
  ip netns del "$SN_PREFIX-sw" 2>/dev/null
  SN_PREFIX=
}

sn_addr() { echo "198.19.0.$((10 + $1))"; }
sn_exec() { local r=$1; shift; ip netns exec "$SN_PREFIX-r$r" "$@"; }

sn_setup() {
  local r ns sw
  SN_PREFIX=$1; SN_N=$2; sw=$SN_PREFIX-sw
  ip netns add "$sw" && testnet_bridge -n "$sw" 0 || return 1
  for ((r = 0; r < SN_N; r++)); do
    ns=$SN_PREFIX-r$r
    ip netns add "$ns" &&
      ip link add "$SN_IFACE" netns "$ns" type veth peer name "vr$r" netns "$sw" &&
      ip -n "$ns" link set lo up &&
      ip -n "$ns" addr add "$(sn_addr $r)/24" dev "$SN_IFACE" &&
      ip -n "$ns" link set "$SN_IFACE" up &&
      ip -n "$sw" link set "vr$r" master br0 &&
      ip -n "$sw" link set "vr$r" up || return 1
  done
}

# tbf's bucket: 2 ms at the rate, at least two full frames; its queue: 50 ms
# at the rate (a switch port's buffer), drops beyond. GSO packets larger than
# the bucket are cut into frames by tbf itself.
sn_shape() {
  local rate=$1 r bps burst
  for ((r = 0; r < SN_N; r++)); do
    tc -n "$SN_PREFIX-r$r" qdisc del dev "$SN_IFACE" root 2>/dev/null
    tc -n "$SN_PREFIX-sw" qdisc del dev "vr$r" root 2>/dev/null
  done
  [ "$rate" = unshaped ] && return 0
  bps=$(sn_bits "$rate") || { echo "testnet: rate $rate?" >&2; return 1; }
  burst=$((bps / 8 / 500)); [ "$burst" -lt 3028 ] && burst=3028
  for ((r = 0; r < SN_N; r++)); do
    tc -n "$SN_PREFIX-r$r" qdisc add dev "$SN_IFACE" root tbf rate "$rate" burst "$burst" latency 50ms &&
      tc -n "$SN_PREFIX-sw" qdisc add dev "vr$r" root tbf rate "$rate" burst "$burst" latency 50ms || return 1
  done
}

# sn_bits RATE: RATE (Nkbit, Nmbit, Ngbit, Nbit) in bits per second
sn_bits() {
  local v=${1,,} m
  case $v in
    *gbit) m=1000000000; v=${v%gbit} ;;
    *mbit) m=1000000; v=${v%mbit} ;;
    *kbit) m=1000; v=${v%kbit} ;;
    *bit) m=1; v=${v%bit} ;;
    *) return 1 ;;
  esac
  [[ $v =~ ^[0-9]+$ ]] || return 1
  echo $((v * m))
}

sn_sent() { ip netns exec "$SN_PREFIX-sw" cat "/sys/class/net/vr$1/statistics/rx_bytes"; }

sn_qdisc_sent() {
  tc -s -n "$SN_PREFIX-r$1" qdisc show dev "$SN_IFACE" |
    awk '$1 == "qdisc" { q = $2 } $1 == "Sent" && q == "tbf" { print $2; found = 1; exit } END { if (!found) print 0 }'
}

sn_compress_values() {
  "$1" --help 2>&1 | grep -E -- '^ *--compress ' | grep -oE '[a-z0-9_-]+( *\| *[a-z0-9_-]+)+' | head -1 | tr -d ' ' | tr '|' ' '
}

sn_settings() {
  local mr=$1 list=${2:-} cross=${3:-0} s c k ks= cs=
  if [ -n "$list" ]; then
    tr ';' '\n' <<<"$list" | while read -r s; do
      [ -n "$s" ] && echo "$(sed 's/--//g' <<<"$s")|$([ "$s" = none ] || echo "$s")"; done
    return
  fi
  echo "none|"
  for c in $(sn_compress_values "$mr"); do
    [ "$c" = none ] || { cs+=" $c"; echo "compress $c|--compress $c"; }
  done
  "$mr" --help 2>&1 | grep -q -- '--average-every' || return 0
  # the values --average-every's help line lists (integers > 1), else 4 and 16
  ks=$("$mr" --help 2>&1 | grep -- '--average-every' | sed 's/--average-every//' |
       grep -oE '\b[0-9]+\b' | awk '$1 > 1' | sort -nu | tr '\n' ' ')
  ks=${ks:-4 16}
  for k in $ks; do echo "average-every $k|--average-every $k"; done
  if [ "$cross" = 1 ]; then
    for k in $ks; do for c in $cs; do
      echo "compress $c average-every $k|--compress $c --average-every $k"; done; done
  elif grep -qw int8 <<<"$cs"; then
    echo "compress int8 average-every 4|--compress int8 --average-every 4"
  fi
}
