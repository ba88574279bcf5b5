#!/usr/bin/env bash
# tinyring bench-lwip: ring allreduce busbw over lwIP ranks (one lwIP stack
# per process on a TAP device, bridged in a private network namespace), side
# by side with POSIX ranks in the same namespace (kernel TCP), as a ratio.
# Sizes: the seed ConvNet's gradient (116136 bytes) and 1 MiB.
#   test/bench/lwip/run.sh BINDIR [ITERS]
set -u
here=$(cd "$(dirname "$0")" && pwd)
BIN=$(cd "${1:?usage: run.sh BINDIR [ITERS]}" && pwd)
ITERS=${2:-10}
[ "$(id -u)" -eq 0 ] || { echo "bench-lwip: needs root (network namespace, TAP devices)"; exit 0; }
. "$here/../../lwip/netns.sh"
setup || { echo "bench-lwip: namespace setup failed"; exit 1; }

# bench lines from rank 0: "bench KIND world N bytes B best T s busbw X GB/s ..."
declare -A BW
for kinds in LL PP LLLL PPPP; do
  run_ring "b$kinds" "$kinds" bench --iters "$ITERS" --timeout 20000 >/dev/null ||
    { echo "bench-lwip: ring $kinds failed"; cat "$LOG/b$kinds".*.out; TH_FAILED=1; exit 1; }
  while read -r _ kind _ world _ bytes _ best _ _ busbw _; do
    BW[$kinds.$bytes]=$busbw
  done < <(grep -h "^bench " "$LOG/b$kinds".0.out)
done

echo "allreduce (ring) busbw, GB/s: lwIP ranks (lwIP 2.1 raw API on TAP) vs POSIX ranks (kernel TCP), same namespace"
printf "%-6s %-10s %12s %12s %8s\n" world bytes lwIP POSIX lwIP/POSIX
for w in 2 4; do
  L=$(printf 'L%.0s' $(seq $w)); P=$(printf 'P%.0s' $(seq $w))
  for bytes in 116136 1048576; do
    l=${BW[$L.$bytes]:-0}; p=${BW[$P.$bytes]:-0}
    printf "%-6s %-10s %12s %12s %8s\n" "$w" "$bytes" "$l" "$p" \
      "$(awk -v a="$l" -v b="$p" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "-" }')"
  done
done
