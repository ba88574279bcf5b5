#!/usr/bin/env bash
# test-net-shaped: two mnist_ring ranks, each in its own network namespace,
# over a tbf-shaped veth link (test/testnet.sh), a few steps under
# every setting mnist_ring --help offers (each --compress value; one
# --average-every K): both ranks finish, print the same parameter hash after
# every step (--average-every: after its last, averaged) and at the end,
# their bytes went through the shaped links, and the comm share rank 0
# reports is a share (0-100%: it counts over the timed steps only, not the
# averages at the end).
# Generated data (gen_idx). Needs root and iproute2. Namespaces trnt-<pid>-*,
# removed on exit, failure or not.
# Usage: test_shaped.sh BUILD_DIR
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
. "$here/test/lib.sh"
SUITE=net_shaped
B=$(cd "${1:-build}" && pwd)
MR=$B/mnist_ring
STEPS=4
RATE=20mbit
if [ "$(id -u)" -ne 0 ]; then
  echo "net-shaped: needs root for network namespaces and tc" >&2
  fail "running as root"; report $SUITE; exit 1
fi
. "$here/test/testnet.sh"
T=$(mktemp -d /tmp/trnt.XXXXXX)
PIDS=()
cleanup() {
  local p
  sn_cleanup   # the ranks first: killing their launchers leaves them running
  for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
  wait 2>/dev/null
  if [ "$TH_FAILED" -eq 0 ]; then rm -rf "$T"; else echo "net-shaped: logs kept in $T" >&2; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkdir -p "$T/data" && "$B/test/app/gen_idx" "$T/data" 400 100 7 gz >/dev/null || { fail "generate data"; report $SUITE; exit 1; }
check "namespaces, veths and bridge set up" sn_setup "trnt-$$" 2
check "tbf at $RATE on both ends of both links" sn_shape $RATE
check "tbf at 20Mbit on rank 1's eth0 and the switch's vr1" sh -c \
  "tc -n '$SN_PREFIX-r1' qdisc show dev eth0 | grep -q 'tbf .*rate 20Mbit' &&
   tc -n '$SN_PREFIX-sw' qdisc show dev vr1 | grep -q 'tbf .*rate 20Mbit'"

# the settings: none, each other --compress value, one --average-every K
help=$("$MR" --help 2>&1)
settings=("")
for c in $(sn_compress_values "$MR"); do
  [ "$c" = none ] || settings+=("--compress $c")
done
grep -q -- '--average-every' <<<"$help" && settings+=("--average-every 2")
echo "net-shaped: settings: none$(for f in "${settings[@]:1}"; do printf ', %s' "$f"; done)"

# hashes_agree FILE SAME: steps 1..STEPS each with exactly 2 hashes, no others;
# SAME=1: the two equal at every step
hashes_agree() {
  awk -v steps=$STEPS -v same="$2" '
    $1 == "param-hash" { n[$5]++; if (!($5 in h)) h[$5] = $6; else if (same && h[$5] != $6) bad++ }
    END { for (s = 1; s <= steps; s++) if (n[s] != 2) bad++; for (s in n) if (s + 0 > steps) bad++; exit bad > 0 }' "$1"
}
port=29600
for flags in "${settings[@]}"; do
  name=${flags:-none}; port=$((port + 1))
  s0=$(sn_sent 0); s1=$(sn_sent 1); q0=$(sn_qdisc_sent 0); q1=$(sn_qdisc_sent 1)
  pids=()
  for r in 0 1; do
    # shellcheck disable=SC2086
    sn_exec $r timeout -k 5 60 "$MR" --data "$T/data" --init-method "tcp://$(sn_addr 0):$port" \
      --rank $r --world-size 2 --iface "$SN_IFACE" --job-token "net-shaped-$$" --batch 50 \
      --max-steps $STEPS --timeout 20 --debug-param-hash --quiet $flags >"$T/$port.$r.out" 2>&1 &
    pids+=($!); PIDS+=($!)
  done
  st0=0; st1=0
  wait "${pids[0]}" || st0=$?; wait "${pids[1]}" || st1=$?
  check "$name: both ranks exit 0 (got $st0 $st1)" test "$st0" -eq 0 -a "$st1" -eq 0
  cat "$T/$port.0.out" "$T/$port.1.out" >"$T/$port.all"
  if [[ $flags == --average-every* ]]; then
    # local steps in between: a step's hash is taken before the averaging, the last after it
    check "$name: steps 1-$STEPS on both ranks" hashes_agree "$T/$port.all" 0
  else
    check "$name: steps 1-$STEPS, same parameter hash on both ranks after each" hashes_agree "$T/$port.all" 1
  fi
  comm=$(awk '$1 == "epoch" { for (i = 1; i < NF; i++) if ($i == "comm") print $(i + 1) }' "$T/$port.0.out" | tr -d %)
  check "$name: rank 0's comm share is 0-100% (got ${comm:-none})" \
    awk -v c="$comm" 'BEGIN { exit !(c != "" && c + 0 >= 0 && c + 0 <= 100) }'
  check "$name: same final parameters and buffers on both ranks" sh -c \
    "[ \$(awk '\$1 == \"final-hash\" { print \$5, \$7 }' '$T/$port.all' | sort -u | wc -l) -eq 1 ] &&
     [ \$(grep -c '^final-hash' '$T/$port.all') -eq 2 ]"
  # each rank's bytes crossed its shaped link: its veth's count grew by >= 4 KB, and its
  # own tbf sent them (>= 90%: tbf counts a GSO packet with a header per frame, the veth once)
  d0=$(($(sn_sent 0) - s0)); d1=$(($(sn_sent 1) - s1))
  e0=$(($(sn_qdisc_sent 0) - q0)); e1=$(($(sn_qdisc_sent 1) - q1))
  check "$name: each rank sent >= 4 KB over its link, all through its tbf (veth $d0 $d1, tbf $e0 $e1 bytes)" \
    sh -c "[ $d0 -ge 4096 ] && [ $d1 -ge 4096 ] && [ $((e0 * 10)) -ge $((d0 * 9)) ] && [ $((e1 * 10)) -ge $((d1 * 9)) ]"
done
report $SUITE
