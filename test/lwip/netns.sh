# tinyring: the network namespace for lwIP ranks (source it; needs root).
#   BIN=dir-with-binaries; . test/lwip/netns.sh; setup; start_ring NAME KINDS MODE args...
# Namespace tr-lwip-<pid>: bridge br0 198.18.0.1/24; lwIP rank r on TAP tapr
# with 198.18.0.(10+r) owned by its own lwIP stack (the kernel side has no
# address); POSIX rank r on 198.18.0.(20+r), an address of br0. Addresses
# from the benchmarking range 198.18.0.0/15, no route out; removed on exit.
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
  if [ "${TH_FAILED:-0}" -eq 0 ]; then rm -rf "$LOG"; else echo "lwip: logs kept in $LOG" >&2; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

nsx() { ip netns exec "$NS" "$@"; }

. "$(dirname "${BASH_SOURCE[0]}")/../testnet.sh"
setup() {
  ip netns add "$NS" &&
    testnet_bridge -n "$NS" 4 198.18.0.1 198.18.0.20 198.18.0.21 198.18.0.22 198.18.0.23
}

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
      timeout 120 ip netns exec "$NS" "$BIN/${LWIP_RANK_BIN:-lwip_rank}" --tap "tap$r" --ip "198.18.0.$((10 + r))" \
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

