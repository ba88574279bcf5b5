# tinyring test-lwip: an elastic mixed ring (sourced by run.sh after
# netns.sh and setup; standalone: bash test/lwip/elastic.sh BINDIR, as root).
#
# Ranks P L P L (POSIX rank 0 at the lowest rank coordinates; both lwIP
# ranks are members) train core's trainer elastically (ring_job's elastic
# mode: the POSIX port's membership round on P, the lwIP port's on L). POSIX
# rank 2, between the two lwIP ranks, is SIGKILLed mid-training: the other
# three re-form a ring of 3 and finish with equal parameter and BN hashes.

# elastic_case NAME KINDS VICTIM KILL_AT_STEP
elastic_case() {
  local name=$1 kinds=$2 victim=$3 at=$4 world=${#2} table r st n ok=0 t0 dt killed=0
  local -a pids
  table=$(table_for "$kinds")
  for ((r = 0; r < world; r++)); do
    if [ "${kinds:r:1}" = L ]; then
      timeout 90 ip netns exec "$NS" "$BIN/lwip_rank" --tap "tap$r" --ip "198.18.0.$((10 + r))" \
        --table "$table" --rank $r --world "$world" --token $TOKEN --mode elastic \
        --suite "lwip-$name-r$r" --timeout 5000 --iters 2 --samples 1536 \
        >"$LOG/$name.$r.out" 2>&1 &
    else
      timeout 90 ip netns exec "$NS" "$BIN/posix_rank" --table "$table" --rank $r \
        --world "$world" --token $TOKEN --mode elastic --suite "lwip-$name-r$r" \
        --timeout 5000 --iters 2 --samples 1536 >"$LOG/$name.$r.out" 2>&1 &
    fi
    pids[r]=$!
    PIDS+=($!)
  done
  for ((t0 = 0; t0 < 600; t0++)); do          # until the victim reached the step
    grep -q "rank $victim: step $at\$" "$LOG/$name.$victim.out" 2>/dev/null && { ok=1; break; }
    kill -0 "${pids[victim]}" 2>/dev/null || break
    sleep 0.05
  done
  check "$name: rank $victim reached step $at" test "$ok" -eq 1
  t0=$(date +%s%N)
  # the rank itself (the child of timeout); disowned: no job notice
  disown "${pids[victim]}"
  kill -9 $(pgrep -P "${pids[victim]}") 2>/dev/null && killed=1
  check "$name: rank $victim SIGKILLed mid-training" test "$killed" -eq 1
  for ((r = 0; r < world; r++)); do
    [ "$r" -eq "$victim" ] && continue
    wait "${pids[r]}"; st=$?
    check "$name: ${kinds:r:1} rank $r finished (exit $st)" test "$st" -eq 0
    check "$name: rank $r re-formed the ring without rank $victim (view 1, 3 ranks)" \
      grep -q "rank $r: view 1: ring rank [0-9] of $((world - 1))," "$LOG/$name.$r.out"
    check "$name: rank $r trained on after the loss" \
      grep -q "rank $r: done at step [0-9]*, ring of $((world - 1))\$" "$LOG/$name.$r.out"
  done
  dt=$(( ($(date +%s%N) - t0) / 1000000 ))
  while kill -0 "${pids[victim]}" 2>/dev/null; do sleep 0.05; done
  check "$name: the killed rank printed no result" bash -c "! grep -q '^params' '$LOG/$name.$victim.out'"
  grep -h "lost the ring\|view 1\|round .* ms\|done at" "$LOG/$name".?.out
  n=$(cat "$LOG/$name".?.out 2>/dev/null | grep -c '^params ')
  check "$name: $((world - 1)) survivors printed their hashes" test "$n" -eq $((world - 1))
  n=$(cat "$LOG/$name".?.out 2>/dev/null | grep '^params ' | sort -u | wc -l)
  check "$name: survivors (both lwIP ranks included) hold equal parameters and BN statistics" \
    test "$n" -eq 1
  cat "$LOG/$name".?.out | grep '^params ' | sort | uniq -c
  echo "lwip: $name: survivors done $dt ms after the kill"
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
  elastic_case elastic PLPL 2 12
  echo "lwip-elastic: done in $SECONDS s"
  report "$SUITE"
fi
