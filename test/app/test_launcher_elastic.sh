#!/usr/bin/env bash
# test/app: mnist_ring --nproc N --elastic with a frozen child (issue 32):
# the job's survivors drop it and finish; the launcher then ends the child
# the job dropped and reports the job's own outcome (exit 0), also when the
# child is continued after it was dropped. Every run is bounded in time.
# Usage: test_launcher_elastic.sh BUILD_DIR.
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
. "$here/test/lib.sh"
B=${1:-build}
MR=$B/mnist_ring
T=$(mktemp -d /tmp/tr_test_launcher.XXXXXX)
trap 'kill -9 $(jobs -p) 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT
TO="timeout -k 5"

mkdir -p "$T/d" && "$B/test/app/gen_idx" "$T/d" 3000 100 5 raw >/dev/null ||
  { fail "generate data"; report launcher_elastic; exit 1; }

# the mnist_ring process under timeout, and its children (the ranks, in rank order)
child_of() { local p; for _ in $(seq 50); do p=$(pgrep -P "$1"); [ -n "$p" ] && { echo "$p"; return; }; sleep 0.05; done; }
kids_of() { for _ in $(seq 50); do [ "$(pgrep -P "$1" | wc -l)" -ge "$2" ] && break; sleep 0.05; done; pgrep -P "$1" | sort -n; }
wait_for() {   # wait_for FILE PATTERN [TENTHS]: until the pattern is in the file
  for _ in $(seq "${3:-600}"); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
  return 1
}
finals_agree() {   # two final hashes, equal
  [ "$(grep -c final-hash "$1")" -eq 2 ] && [ "$(awk '$1=="final-hash" { print $5, $7 }' "$1" | sort -u | wc -l)" -eq 1 ]
}

# frozen NAME CONT: --nproc 3 --elastic, rank 2 stopped at step 10; with
# CONT=1 it is continued once rank 0 said it left (the others still train)
frozen() {
  local name=$1 cont=$2 l kids v t0
  t0=$(date +%s)
  $TO 90 "$MR" --data "$T/d" --quiet --debug-param-hash --elastic --nproc 3 --epochs 4 --batch 10 \
    --timeout 2 >"$T/$name.o" 2>"$T/$name.e" &
  echo $! >"$T/$name.pid"
  l=$(child_of "$(cat "$T/$name.pid")")
  kids=$(kids_of "$l" 3 | tr '\n' ' ')
  v=$(echo $kids | cut -d' ' -f3)
  echo "$v" >"$T/$name.victim"
  wait_for "$T/$name.e" "param-hash rank 2 step 10 " 300
  kill -STOP "$v"
  if [ "$cont" = 1 ]; then
    wait_for "$T/$name.e" "rank 2 left" 300
    kill -CONT "$v"
  fi
  wait "$(cat "$T/$name.pid")"; echo $? >"$T/$name.st"
  echo $(($(date +%s) - t0)) >"$T/$name.secs"
  sleep 0.2
  if kill -0 "$v" 2>/dev/null; then echo alive >"$T/$name.left"; kill -CONT "$v"; kill -9 "$v"; fi 2>/dev/null
}

frozen stop 0
check "--nproc 3 --elastic, rank 2 frozen: the launcher ends in time with exit 0 (got $(cat "$T/stop.st") after $(cat "$T/stop.secs") s)" \
  test "$(cat "$T/stop.st")" = 0
finished_ok() { finals_agree "$1" && grep -q "^done" "$2"; }
check "rank 2 frozen: ranks 0 and 1 finished equal and rank 0 said done" finished_ok "$T/stop.e" "$T/stop.o"
check "rank 2 frozen: the launcher ended it (no process left)" test ! -e "$T/stop.left"
check "rank 2 frozen: the launcher says it ended the rank the job dropped" \
  grep -q "rank 2 (pid $(cat "$T/stop.victim")) was stopped (frozen) when the job finished without it; killed it" "$T/stop.e"

frozen cont 1
check "rank 2 frozen, continued after the others dropped it: the launcher exits 0 (got $(cat "$T/cont.st") after $(cat "$T/cont.secs") s)" \
  test "$(cat "$T/cont.st")" = 0
check "rank 2 continued: ranks 0 and 1 finished equal and rank 0 said done" finished_ok "$T/cont.e" "$T/cont.o"
check "rank 2 continued: no process left" test ! -e "$T/cont.left"

report launcher_elastic
