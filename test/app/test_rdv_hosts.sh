#!/usr/bin/env bash
# test/app: a tcp:// --elastic job whose rank 0 is gone, on real hosts (one
# network namespace each, test/testnet.sh: 198.19.0.10+h on one switch).
# The job lists every host's address in --init-method; a process started
# again must find the job at whichever address the coordinator holds:
#   lost:    rank 0 killed, and started again on a new host (its own is
#            gone): rank 1's host takes the job's rendezvous; the newcomer
#            is admitted there and all three finish equal
#   frozen:  rank 0 stopped (SIGSTOP: its master port still takes the
#            JOIN and says nothing), rank 2 killed and started again: it is
#            admitted at rank 1's address; ranks 1 and 2 finish equal
#   control: as lost, with rank 0's address alone: the newcomer finds no
#            job (exit 1) and the two others finish without it
# Usage: test_rdv_hosts.sh BUILD_DIR (root; skipped without network namespaces).
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
. "$here/test/lib.sh"
. "$here/test/testnet.sh"
B=${1:-build}
MR=$B/mnist_ring
T=$(mktemp -d /tmp/tr_rdv_hosts.XXXXXX)
trap 'kill -9 $(jobs -p) 2>/dev/null; sn_cleanup; [ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT
if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null || ! sn_setup "trrdv$$" 4; then
  echo "rdv_hosts: no network namespaces here (root and ip needed): skipped"
  report rdv_hosts; exit 0
fi
mkdir -p "$T/d" && "$B/test/app/gen_idx" "$T/d" 4000 200 5 raw >/dev/null || { fail "generate data"; report rdv_hosts; exit 1; }
PORT=29511
ALL="tcp://$(sn_addr 0):$PORT,$(sn_addr 1):$PORT,$(sn_addr 2):$PORT"

# run NAME HOST RANK INIT: rank RANK's process on host HOST, in the background
declare -A PID
run() {
  ip netns exec "$SN_PREFIX-r$2" timeout -k 5 120 "$MR" --data "$T/d" --quiet --debug-param-hash --elastic \
    --job-token rdv --init-method "$4" --rank "$3" --world-size 3 --epochs 4 --batch 10 \
    --timeout 10 >"$T/$1.o$3" 2>"$T/$1.e$3" &
  PID[$1.$3]=$!
}
wait_step() {    # NAME RANK STEP
  for _ in $(seq 600); do
    grep -q "param-hash rank $2 step $3 " "$T/$1.e$2" 2>/dev/null && return 0
    sleep 0.05
  done
  return 1
}
wait_view() {    # NAME RANK V: until RANK formed view V (30 s at most)
  for _ in $(seq 600); do
    grep -q "^elastic: view $3 at step" "$T/$1.e$2" 2>/dev/null && return 0
    sleep 0.05
  done
  return 1
}
child() { pgrep -P "$1"; }
final() { awk -v r="$2" '$1=="final-hash" && $3==r { print $5, $7 }' "$T/$1.e$2"; }

# lose0 NAME INIT: rank 0 killed once the job runs, started again on host 3
# once the others formed their ring without it; S0 S1 S2: the exit statuses
lose0() {
  local r
  for r in 0 1 2; do run "$1" $r $r "$2"; done
  wait_step "$1" 0 10; kill -9 "$(child "${PID[$1.0]}")"; wait "${PID[$1.0]}" 2>/dev/null
  wait_view "$1" 1 1
  mv "$T/$1.e0" "$T/$1.killed.e0"
  run "$1" 3 0 "$2"
  wait "${PID[$1.0]}"; S0=$?; wait "${PID[$1.1]}"; S1=$?; wait "${PID[$1.2]}"; S2=$?
}

# --- lost: rank 0 killed, started again on host 3
lose0 lost "$ALL"
check "lost: rank 0 started again on another host rejoins (exit $S0)" \
  sh -c "[ $S0 = 0 ] && grep -q 'rejoined the running job' '$T/lost.e0'"
check "lost: all three finish with one final hash (exit $S1 $S2)" \
  sh -c "[ $S1 = 0 ] && [ $S2 = 0 ] && [ -n '$(final lost 1)' ] && [ '$(final lost 0)' = '$(final lost 1)' ] && [ '$(final lost 1)' = '$(final lost 2)' ]"

# --- frozen: rank 0 stopped, rank 2 killed and started again
for r in 0 1 2; do run frz $r $r "$ALL"; done
wait_step frz 0 10; f0=$(child "${PID[frz.0]}"); kill -STOP "$f0"
wait_view frz 1 1; kill -9 "$(child "${PID[frz.2]}")"; wait "${PID[frz.2]}" 2>/dev/null
mv "$T/frz.e2" "$T/frz.killed.e2"
run frz 2 2 "$ALL"
wait "${PID[frz.1]}"; s1=$?; wait "${PID[frz.2]}"; s2=$?
kill -9 "$f0" 2>/dev/null; wait "${PID[frz.0]}" 2>/dev/null
check "frozen: rank 2 started again while rank 0's master port is frozen rejoins (exit $s2)" \
  sh -c "[ $s2 = 0 ] && grep -q 'rejoined the running job' '$T/frz.e2'"
check "frozen: ranks 1 and 2 finish with one final hash (exit $s1)" \
  sh -c "[ $s1 = 0 ] && [ -n '$(final frz 1)' ] && [ '$(final frz 1)' = '$(final frz 2)' ]"

# --- control: rank 0's address alone
lose0 ctl "tcp://$(sn_addr 0):$PORT"
check "control: with rank 0's address alone the newcomer does not get in (exit $S0)" \
  sh -c "[ $S0 != 0 ] && ! grep -q 'rejoined the running job' '$T/ctl.e0'"
check "control: ranks 1 and 2 finish without it (exit $S1 $S2)" \
  sh -c "[ $S1 = 0 ] && [ $S2 = 0 ] && [ '$(final ctl 1)' = '$(final ctl 2)' ]"
[ "$TH_FAILED" = 0 ] || { for f in "$T"/*.e*; do echo "== $f"; grep -v param-hash "$f" | tail -5; done >&2; }
report rdv_hosts
