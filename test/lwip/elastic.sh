# tinyring test-lwip: elastic mixed rings (sourced by run.sh after netns.sh
# and setup; standalone: bash test/lwip/elastic.sh BINDIR, as root).
#
# Ranks P L P L (POSIX rank 0 at the lowest rank coordinates; both lwIP
# ranks are members) train core's trainer elastically (ring_job's elastic
# mode: the POSIX port's membership round on P ranks, the lwIP port's on L
# ranks), and one rank is SIGKILLed mid-training:
#   1. POSIX rank 2, between the two lwIP ranks (its kernel resets the
#      links): the other three re-form a ring of 3 and finish with equal
#      parameter and BN hashes;
#   2. the replay of 1: rank 2 kills itself right after the position the
#      survivors of 1 resumed from; the survivors end with 1's bits;
#   3. lwIP rank 3 (no reset: its stack dies with it; found by the
#      timeout): P0, L1 and P2 go on and finish equal;
#   4. L P L P, POSIX rank 1 killed: lwIP rank 0 is the lowest live member
#      and coordinates the round (tr_lwip_elastic's coordinator);
#   5. L P L P, POSIX rank 3 killed and started again (--rejoin): it finds
#      the job at lwIP rank 0, which keeps it waiting, asks for a change
#      (tr_lwip_elastic_service) and admits it: the ring grows back to 4
#      and all four finish equal;
#   6. P L P L, lwIP rank 3 killed and started again (a board that reboots:
#      tr_lwip_elastic_find, then the joiner's VIEW): admitted by POSIX
#      rank 0, the ring grows back to 4, all four equal.

EL_ARGS=(--iters 2 --samples 1536)

# el_start NAME KINDS TIMEOUT_MS VICTIM [victim's extra args...]: every rank
# in the background (EL_PID[r]); logs in $LOG/NAME.r.out
declare -a EL_PID
el_start() {
  local name=$1 kinds=$2 tmo=$3 victim=$4 world=${#2} table r; shift 4
  local -a extra
  table=$(table_for "$kinds")
  EL_PID=()
  for ((r = 0; r < world; r++)); do
    extra=(); [ "$r" -eq "$victim" ] && extra=("$@")
    if [ "${kinds:r:1}" = L ]; then
      timeout 90 ip netns exec "$NS" "$BIN/lwip_rank" --tap "tap$r" --ip "198.18.0.$((10 + r))" \
        --table "$table" --rank $r --world "$world" --token $TOKEN --mode elastic \
        --suite "lwip-$name-r$r" --timeout "$tmo" "${EL_ARGS[@]}" "${extra[@]}" \
        >"$LOG/$name.$r.out" 2>&1 &
    else
      timeout 90 ip netns exec "$NS" "$BIN/posix_rank" --table "$table" --rank $r \
        --world "$world" --token $TOKEN --mode elastic --suite "lwip-$name-r$r" \
        --timeout "$tmo" "${EL_ARGS[@]}" "${extra[@]}" >"$LOG/$name.$r.out" 2>&1 &
    fi
    EL_PID[r]=$!
    PIDS+=($!)
    [ "$r" -eq "$victim" ] && disown $!          # it dies by SIGKILL: no job notice
  done
}

# el_kill NAME VICTIM STEP: SIGKILL the victim once it printed STEP
el_kill() {
  local name=$1 victim=$2 at=$3 t ok=0 killed=0
  for ((t = 0; t < 600; t++)); do
    grep -q "rank $victim: step $at\$" "$LOG/$name.$victim.out" 2>/dev/null && { ok=1; break; }
    kill -0 "${EL_PID[victim]}" 2>/dev/null || break
    sleep 0.05
  done
  check "$name: rank $victim reached step $at" test "$ok" -eq 1
  # the rank itself (the child of timeout)
  kill -9 $(pgrep -P "${EL_PID[victim]}") 2>/dev/null && killed=1
  check "$name: rank $victim SIGKILLed mid-training" test "$killed" -eq 1
}

# el_survivors NAME KINDS VICTIM: the others finish in a ring without the
# victim, equal; EL_HASH is their hash line, EL_POS the position they
# resumed from
el_survivors() {
  local name=$1 kinds=$2 victim=$3 world=${#2} r st n
  for ((r = 0; r < world; r++)); do
    [ "$r" -eq "$victim" ] && continue
    wait "${EL_PID[r]}"; st=$?
    check "$name: ${kinds:r:1} rank $r finished (exit $st)" test "$st" -eq 0
    check "$name: rank $r re-formed the ring without rank $victim (view 1, $((world - 1)) ranks)" \
      grep -q "rank $r: view 1: ring rank [0-9] of $((world - 1))," "$LOG/$name.$r.out"
    check "$name: rank $r trained on after the loss" \
      grep -q "rank $r: done at step [0-9]*, ring of $((world - 1))\$" "$LOG/$name.$r.out"
  done
  while kill -0 "${EL_PID[victim]}" 2>/dev/null; do sleep 0.05; done
  check "$name: the killed rank printed no result" \
    bash -c "! grep -q '^params' '$LOG/$name.$victim.out'"
  grep -h "lost the ring\|view 1\|round .* ms\|done at\|die-at" "$LOG/$name".?.out
  n=$(cat "$LOG/$name".?.out 2>/dev/null | grep -c '^params ')
  check "$name: $((world - 1)) survivors printed their hashes" test "$n" -eq $((world - 1))
  n=$(cat "$LOG/$name".?.out 2>/dev/null | grep '^params ' | sort -u | wc -l)
  check "$name: the survivors (lwIP ranks included) hold equal parameters and BN statistics" \
    test "$n" -eq 1
  EL_HASH=$(cat "$LOG/$name".?.out 2>/dev/null | grep -m1 '^params ')
  EL_POS=$(sed -n 's/.*view 1: .* at position \([0-9]*\)$/\1/p' "$LOG/$name".?.out | sort -u)
  echo "$name: $EL_HASH (resumed from position $EL_POS)"
}

# el_killed NAME KINDS VICTIM: el_kill at step 12, then el_survivors, and
# how long the survivors took after the kill
el_killed() {
  local t0 dt
  el_kill "$1" "$3" 12
  t0=$(date +%s%N)
  el_survivors "$1" "$2" "$3"
  dt=$(( ($(date +%s%N) - t0) / 1000000 ))
  echo "lwip: $1: survivors done $dt ms after the kill"
}

elastic_cases() {
  local first pos
  # 1. POSIX rank 2 killed
  el_start elastic PLPL 5000 2
  el_killed elastic PLPL 2
  first=$EL_HASH pos=$EL_POS
  check "elastic: every survivor resumed from one position ($pos)" test "$(echo "$pos" | wc -w)" -eq 1
  # 2. its replay: rank 2 dies right after that position
  if [ -n "$pos" ] && [ "$(echo "$pos" | wc -w)" -eq 1 ]; then
    el_start replay PLPL 5000 2 --die-at "$pos"
    el_survivors replay PLPL 2
    check "replay: rank 2 killed itself at position $pos" \
      grep -q "die-at: killed at position $pos\$" "$LOG/replay.2.out"
    check "replay: the survivors end with the bits of the run they replay" \
      test "$EL_HASH" = "$first"
  else
    fail "replay: no position to replay"
  fi
  # 3. lwIP rank 3 killed: no reset, the others' timeout (2 s) finds it
  el_start killlwip PLPL 2000 3
  el_killed killlwip PLPL 3
  el_case4
}

el_case4() {
  # 4. an lwIP coordinator
  el_start lwipcoord LPLP 5000 1
  el_killed lwipcoord LPLP 1
  check "lwipcoord: lwIP rank 0 decided the round" \
    grep -q "lwip rank 0: round [0-9]* ms, coordinator rank 0, 1 left" "$LOG/lwipcoord.0.out"
  check "lwipcoord: the POSIX and lwIP members followed it" \
    bash -c "grep -q 'coordinator rank 0, 1 left' '$LOG/lwipcoord.2.out' && grep -q 'coordinator rank 0, 1 left' '$LOG/lwipcoord.3.out'"
  el_case5
}

el_case5() {
  # 5. a POSIX rank killed and started again, admitted by an lwIP coordinator
  el_rejoin rejoin LPLP 3 5000 "lwip rank 0"
  el_case6
}

el_case6() {
  # 6. an lwIP rank (a board that reboots) killed and started again, admitted
  #    by the POSIX coordinator
  el_rejoin rejoinlwip PLPL 3 5000 "posix rank 0"
}

# el_rejoin NAME KINDS VICTIM TIMEOUT_MS "COORDINATOR's label": VICTIM (the
# last rank) is killed, started again with --rejoin once the ring of 3
# formed, and admitted at the next change; all finish in the ring of 4.
# The job runs 24 epochs: the one started again must still find it running.
# With 3 epochs the ring of 3 could finish while an lwIP rank was still
# starting, and its JOIN met a job that had ended; an lwIP rank has been
# seen to join at position 464 after the ring of 3 formed at 28.
el_rejoin() {
  local name=$1 kinds=$2 victim=$3 tmo=$4 coord=$5 r st n ok=0 t table
  table=$(table_for "$kinds")
  EL_ARGS=(--iters 24 --samples 1536)
  el_start "$name" "$kinds" "$tmo" "$victim"
  el_kill "$name" "$victim" 8
  for ((t = 0; t < 300; t++)); do              # the ring of 3 formed
    grep -q "rank 0: view 1: ring rank 0 of 3," "$LOG/$name.0.out" 2>/dev/null && { ok=1; break; }
    sleep 0.05
  done
  check "$name: the ring of 3 formed" test "$ok" -eq 1
  mv "$LOG/$name.$victim.out" "$LOG/$name.killed.out"
  if [ "${kinds:victim:1}" = L ]; then
    timeout 90 ip netns exec "$NS" "$BIN/lwip_rank" --tap "tap$victim" \
      --ip "198.18.0.$((10 + victim))" --table "$table" --rank "$victim" --world 4 \
      --token $TOKEN --mode elastic --suite "lwip-$name-r$victim" --timeout "$tmo" \
      "${EL_ARGS[@]}" --rejoin >"$LOG/$name.$victim.out" 2>&1 &
  else
    timeout 90 ip netns exec "$NS" "$BIN/posix_rank" --table "$table" --rank "$victim" \
      --world 4 --token $TOKEN --mode elastic --suite "lwip-$name-r$victim" --timeout "$tmo" \
      "${EL_ARGS[@]}" --rejoin >"$LOG/$name.$victim.out" 2>&1 &
  fi
  EL_PID[victim]=$!
  PIDS+=($!)
  for ((r = 0; r < 4; r++)); do
    wait "${EL_PID[r]}"; st=$?
    check "$name: rank $r finished (exit $st)" test "$st" -eq 0
    check "$name: rank $r ended in the ring of 4" \
      grep -q "rank $r: done at step [0-9]*, ring of 4\$" "$LOG/$name.$r.out"
  done
  grep -h "lost the ring\|view [12]\|round .* ms\|done at\|rejoined\|waits to join" "$LOG/$name".?.out
  check "$name: rank $victim found the job and was admitted by rank 0" \
    grep -q "rank $victim: rejoined as ring rank $victim of 4 (view 2, coordinator rank 0)" \
    "$LOG/$name.$victim.out"
  check "$name: $coord asked for the change" \
    grep -q "$coord: a process waits to join: change asked" "$LOG/$name.0.out"
  n=$(cat "$LOG/$name".?.out 2>/dev/null | grep -c '^params ')
  check "$name: 4 ranks printed their hashes" test "$n" -eq 4
  n=$(cat "$LOG/$name".?.out 2>/dev/null | grep '^params ' | sort -u | wc -l)
  check "$name: all four (the process started again included) hold equal state" test "$n" -eq 1
  EL_ARGS=(--iters 2 --samples 1536)
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then   # standalone
  set -u
  SECONDS=0
  here=$(cd "$(dirname "$0")" && pwd)
  . "$here/../lib.sh"
  BIN=$(cd "${1:?usage: elastic.sh BINDIR}" && pwd)
  SUITE=lwip-elastic
  . "$here/netns.sh"
  check "namespace with bridge and 4 TAPs" setup
  ${EL_ONLY:-elastic_cases}
  echo "lwip-elastic: done in $SECONDS s"
  report "$SUITE"
fi
