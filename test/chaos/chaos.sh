#!/usr/bin/env bash
# test/chaos: a bounded random schedule of faults against mnist_ring
# --elastic jobs of 4 or 5 ranks over POSIX on 127.0.0.1 and (as root, a
# third of the jobs; CHAOS_MIXED=percent) mixed rings of POSIX and lwIP
# ranks (see mixed_job), checked after every job.
# Usage: chaos.sh BUILD_DIR SECONDS [SEED].
#
# Faults (each at a random step of a random rank, rank 0 included):
#   kill      SIGKILL
#   restart   SIGKILL, then the same command line started again
#   freeze    SIGSTOP; once the others dropped it, SIGCONT (it must find out
#             and stop) or left stopped until the job ends
#   pause     SIGSTOP for 0.2-0.8 s, then SIGCONT (it may stay or be dropped)
#   garbage   a stranger sends random bytes to the master port or to a rank's
#             listening port, or holds an idle connection open
#   token     a stranger mnist_ring with another --job-token asks to join
# At most one rank is taken out at a time: the next such fault waits for the
# ring's new view. A job with --min-ranks 3 may go below it on purpose.
#
# The rules checked after every job:
#   - every process ends by itself (else a hang: no rank printed a new step
#     or view for CHAOS_STALL s, default 8 x --timeout + 20, while one still
#     ran; or a process outlived the backstop of CHAOS_BOUND s, default 600);
#     none dies of a signal the harness did not send (else a crash). A job
#     that is merely slow (a loaded machine) is not a hang: a fixed bound of
#     90 s once killed a 10-epoch job still stepping on a machine at load 30
#   - the ranks never faulted (and faulted ones that exit 0) exit 0 with one
#     final parameter+BN hash among them (else diverged; a rank never faulted
#     that the others dropped as frozen is counted as a false alarm); a job that went
#     below --min-ranks instead ends with exit 1 on every survivor and the
#     checkpoint written (else diverged: the job did not end as the rules say);
#     a job paused at its minimum may end either way, judged by whether a
#     rank finished
# It prints the seed first (run again with it to replay the schedule; the
# timing of a loaded machine is not replayed) and last
#   chaos: F faults, J jobs, H hangs, C crashes, D diverged
# and exits 1 when H, C or D is not 0.
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
. "$here/test/lib.sh"
B=${1:-build}
SECS=${2:-60}
SEED=${3:-$(( $(date +%s) % 100000 ))}
MR=$B/mnist_ring
T=$(mktemp -d /tmp/tr_chaos.XXXXXX)
trap 'kill -9 $(jobs -p) 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT
TIMEOUT=${CHAOS_TIMEOUT:-3}   # --timeout: small enough that a frozen rank is dropped in seconds
BOUND=${CHAOS_BOUND:-600}     # backstop: no process of a job may take longer (a hang)
STALL=${CHAOS_STALL:-$((TIMEOUT * 8 + 20))}  # no new step or view on any rank this long: a hang

echo "chaos: seed $SEED, $SECS s, --timeout $TIMEOUT (replay the schedule: make chaos CHAOS_S=$SECS CHAOS_SEED=$SEED$([ "$TIMEOUT" = 3 ] || echo " CHAOS_TIMEOUT=$TIMEOUT"))"
RANDOM=$SEED
mkdir -p "$T/d" && "$B/test/app/gen_idx" "$T/d" 3200 100 3 raw >/dev/null ||
  { fail "generate data"; report chaos; exit 1; }
free_port() { "$B/test/app/free_port" "$@"; }

F=0 J=0 H=0 C=0 D=0 FALSE=0 UNFORMED=0
say() { echo "chaos: job $J: $*"; }
bad() { echo "chaos: job $J: $*" >&2; sed "s/^/  /" "$T/log" >&2; }

# start NAME R: rank R of job NAME in the background (the same command line
# every time it is started), under timeout, in a subshell that writes
# timeout's status to NAME.rc.R (the harness's SIGKILLs then leave no job
# notices); the subshell's pid in NAME.pid.R
start() {
  local name=$1 r=$2
  rm -f "$T/$name.rc.$r"
  ( exec 2>/dev/null; timeout -k 2 $BOUND "$MR" --data "$T/d" --quiet --debug-param-hash --elastic --job-token "$name" \
      --init-method "tcp://127.0.0.1:$(cat "$T/$name.port")" --rank "$r" --world-size "$(cat "$T/$name.n")" \
      --epochs "$EPOCHS" --batch 10 --timeout "$TIMEOUT" $EXTRA >>"$T/$name.o$r" 2>>"$T/$name.e$r"
    echo $? >"$T/$name.rc.$r" ) &
  echo $! >"$T/$name.pid.$r"
}
# the mnist_ring process of rank R (subshell, timeout, mnist_ring)
proc_of() {
  local w p q
  w=$(cat "$T/$1.pid.$2")
  for _ in $(seq 40); do
    p=$(pgrep -P "$w"); [ -n "$p" ] && q=$(pgrep -P "$p"); [ -n "${q:-}" ] && { echo "$q"; return; }
    sleep 0.05
  done
}
# the highest step any rank printed a hash for
step_now() { cat "$T/$1".e* 2>/dev/null | awk '$1=="param-hash" && $5>m { m=$5 } END { print m+0 }'; }
views() { cat "$T/$1".e* 2>/dev/null | grep -c "^elastic: view "; }
finished_any() { cat "$T/$1".o* 2>/dev/null | grep -q "^done:"; }
ended() { ! kill -0 "$(cat "$T/$1.pid.$2")" 2>/dev/null; }
# wait_until TENTHS CMD...: until CMD succeeds, the job is over, or no rank
# printed a new step or view for STALL s (the hang is judged after the faults)
wait_until() {
  local n=$1 p last_p="" last_t=$SECONDS seen=-1; shift
  for _ in $(seq "$n"); do
    "$@" && return 0
    finished_any "$NAME" && return 1
    [ -n "$(cat "$T/$NAME".rc.* 2>/dev/null)" ] && all_ended "$NAME" && return 1
    if [ $SECONDS != $seen ]; then
      seen=$SECONDS; p=$(progress "$NAME")
      if [ "$p" != "$last_p" ]; then last_p=$p; last_t=$SECONDS
      elif [ $((SECONDS - last_t)) -ge "$STALL" ]; then return 1
      fi
    fi
    sleep 0.1
  done
  return 1
}
all_ended() { local r; for r in $(seq 0 $(($(cat "$T/$1.n") - 1))); do ended "$1" "$r" || return 1; done; }
step_past() { [ "$(step_now "$NAME")" -ge "$1" ]; }
progress() { echo "$(step_now "$1") $(views "$1")"; }
# stalled NAME: the ranks still running (but those left frozen) are killed
# and listed in NAME.stalled
stalled() {
  local r p
  for r in $(seq 0 $(($(cat "$T/$1.n") - 1))); do
    awk -v r="$r" '$1==r { f=1 } END { exit !f }' "$T/$1.frozen" && continue
    ended "$1" "$r" && continue
    echo "$r" >>"$T/$1.stalled"
    p=$(proc_of "$1" "$r"); [ -n "$p" ] && kill -9 "$p" 2>/dev/null
  done
}
views_past() { [ "$(views "$NAME")" -gt "$1" ]; }

# a stranger: random bytes, or an idle connection, to a port
garbage() {
  local port=$1 kind=$((RANDOM % 2))
  ( exec 3<>"/dev/tcp/127.0.0.1/$port" || exit 0
    if [ $kind = 0 ]; then head -c $((1 + RANDOM % 2000)) /dev/urandom >&3; fi
    sleep $((1 + RANDOM % 3)) ) 2>/dev/null &
}
listen_port_of() {   # a listening TCP port of process P (empty if none yet)
  ss -ltnpH 2>/dev/null | awk -v p="pid=$1," 'index($0, p) { n = split($4, a, ":"); print a[n]; exit }'
}

run_job() {
  local n victim fault r t0 min=0 out_rule=finish
  J=$((J + 1))
  NAME=j$J
  n=$((4 + RANDOM % 2))
  EPOCHS=10
  EXTRA=""
  if [ $((RANDOM % 4)) = 0 ]; then
    min=3; EXTRA="--min-ranks 3 --checkpoint $T/$NAME.ck"
  fi
  echo "$n" >"$T/$NAME.n"; free_port >"$T/$NAME.port"
  : >"$T/$NAME.victims"; : >"$T/$NAME.frozen"; : >"$T/$NAME.stalled"; : >"$T/$NAME.log"
  ln -sf "$T/$NAME.log" "$T/log"
  for r in $(seq 0 $((n - 1))); do start "$NAME" "$r"; done
  local nfaults=$((1 + RANDOM % 3)) out=0 i last
  local desc="$n ranks"; [ $min -gt 0 ] && desc="$desc, --min-ranks $min"
  say "$desc" >>"$T/$NAME.log"
  last=$(( EPOCHS * 3200 / (10 * n) * 7 / 10 ))   # no fault after 70% of the steps
  for i in $(seq "$nfaults"); do
    local at=$(( $(step_now "$NAME") + 20 + RANDOM % 150 ))
    [ "$at" -lt "$last" ] || break
    wait_until 300 step_past "$at" || break
    fault=$(echo kill restart freeze pause garbage token | cut -d' ' -f$((1 + RANDOM % 6)))
    victim=$((RANDOM % n))
    # at most one rank out at a time, and never below 3 members unless --min-ranks is tried
    case $fault in kill|restart|freeze)
      if grep -qw "$victim" "$T/$NAME.victims" || [ $((n - out)) -le $((min > 0 ? 2 : 3)) ]; then
        fault=garbage
      fi
      # a restart that takes the ring below --min-ranks while it is away stops
      # the job, or not if it is quick enough to be taken in by the very round
      # that drops it: a race, not a rule; such a restart is a kill
      if [ "$fault" = restart ] && [ $min -gt 0 ] && [ $((n - out - 1)) -lt $min ]; then
        fault=kill
      fi ;;
    esac
    local pid v0
    pid=$(proc_of "$NAME" "$victim")
    [ -n "$pid" ] || continue
    v0=$(views "$NAME")
    F=$((F + 1))
    echo "  fault $i at step $(step_now "$NAME"): $fault rank $victim" >>"$T/$NAME.log"
    case $fault in
      kill)
        echo "$victim" >>"$T/$NAME.victims"; out=$((out + 1))
        kill -9 "$pid" 2>/dev/null ;;
      restart)
        echo "$victim" >>"$T/$NAME.victims"
        kill -9 "$pid" 2>/dev/null
        wait "$(cat "$T/$NAME.pid.$victim")"
        sleep 0.$((RANDOM % 10))
        start "$NAME" "$victim" ;;
      freeze)
        echo "$victim" >>"$T/$NAME.victims"; out=$((out + 1))
        kill -STOP "$pid" 2>/dev/null
        if [ $((RANDOM % 2)) = 0 ]; then
          echo "    continued once dropped" >>"$T/$NAME.log"
          wait_until $((TIMEOUT * 40 + 100)) views_past "$v0"
          kill -CONT "$pid" 2>/dev/null
        else
          echo "$victim $pid" >>"$T/$NAME.frozen"
        fi ;;
      pause)
        echo "$victim" >>"$T/$NAME.victims"
        # at the minimum, a pause the others take for a freeze stops the job
        # below --min-ranks, one they wait out does not: either is right
        [ $min -gt 0 ] && [ $((n - out - 1)) -lt $min ] && out_rule=either
        kill -STOP "$pid" 2>/dev/null; sleep 0.$((2 + RANDOM % 7)); kill -CONT "$pid" 2>/dev/null ;;
      garbage)
        local p
        if [ $((RANDOM % 2)) = 0 ]; then p=$(cat "$T/$NAME.port"); else p=$(listen_port_of "$pid"); fi
        [ -n "$p" ] && garbage "$p" ;;
      token)
        timeout -k 2 30 "$MR" --data "$T/d" --quiet --elastic --job-token "stranger-$NAME" \
          --init-method "tcp://127.0.0.1:$(cat "$T/$NAME.port")" --rank "$victim" --world-size "$n" \
          --epochs 1 --batch 10 --timeout "$TIMEOUT" >/dev/null 2>"$T/$NAME.stranger$i" &
        echo $! >>"$T/$NAME.strangers" ;;
    esac
    # a rank taken out: let the ring form its new view before the next one
    case $fault in kill|restart|freeze) wait_until $((TIMEOUT * 40 + 100)) views_past "$v0" ;; esac
  done
  [ $min -gt 0 ] && [ $((n - out)) -lt $min ] && out_rule=below
  # every process of the job ends by itself (timeout's 124/137 = a hang), but
  # for ranks left frozen: the harness ends them once all the others ended
  # for ranks left frozen: the harness ends them once all the others ended;
  # a job where no rank printed a new step or view for STALL s is a hang
  local all p last_p="" last_t=$SECONDS seen=-1
  while :; do
    all=1
    for r in $(seq 0 $((n - 1))); do
      awk -v r="$r" '$1==r { f=1 } END { exit !f }' "$T/$NAME.frozen" && continue
      ended "$NAME" "$r" || all=0
    done
    [ $all = 1 ] && break
    if [ $SECONDS != $seen ]; then
      seen=$SECONDS; p=$(progress "$NAME")
      if [ "$p" != "$last_p" ]; then
        last_p=$p; last_t=$SECONDS
      elif [ $((SECONDS - last_t)) -ge "$STALL" ] && [ ! -s "$T/$NAME.stalled" ]; then
        stalled "$NAME"
      fi
    fi
    sleep 0.1
  done
  while read -r r pid; do kill -9 "$pid" 2>/dev/null; done <"$T/$NAME.frozen"
  : >"$T/$NAME.st"
  for r in $(seq 0 $((n - 1))); do
    wait "$(cat "$T/$NAME.pid.$r")"; echo "$r $(cat "$T/$NAME.rc.$r" 2>/dev/null || echo 255)" >>"$T/$NAME.st"
  done
  [ -e "$T/$NAME.strangers" ] && while read -r s; do wait "$s"; [ $? = 124 ] && { H=$((H + 1)); echo "  a stranger hung" >>"$T/$NAME.log"; }; done <"$T/$NAME.strangers"
  check_job "$NAME" "$out_rule"
}

# check_job NAME RULE: hangs, crashes, and survivors against the rule
check_job() {
  local name=$1 rule=$2 r st h first="" ok=1 victim
  if [ "$rule" = either ]; then   # judged by what happened: a rank finished, or none did
    rule=below
    grep -q "^final-hash" "$T/$name".e* 2>/dev/null && rule=finish
  fi
  # a job whose first ring never formed (every rank gave up the rendezvous
  # after --timeout, before any step or fault: a loaded machine) is counted
  # apart, not judged
  if ! cat "$T/$name".e* | grep -q "^param-hash" && [ ! -s "$T/$name.victims" ] &&
     [ "$(awk '$2 != 1' "$T/$name.st" | wc -l)" = 0 ] &&
     [ "$(grep -l "cannot join the job" "$T/$name".e* | wc -l)" = "$(cat "$T/$name.n")" ]; then
    UNFORMED=$((UNFORMED + 1))
    echo "$(head -1 "$T/$name.log"): never formed its first ring within --timeout $TIMEOUT (all ranks exit 1, no fault injected)"
    return
  fi
  while read -r r st; do
    victim=0; grep -qw "$r" "$T/$name.victims" && victim=1
    if grep -qx "$r" "$T/$name.stalled"; then
      H=$((H + 1)); ok=0
      echo "  rank $r hung (no rank printed a new step or view for $STALL s: killed)" >>"$T/$name.log"
      continue
    fi
    case $st in
      124) H=$((H + 1)); ok=0; echo "  rank $r hung (killed by the backstop of $BOUND s)" >>"$T/$name.log" ;;
      137) [ $victim = 1 ] || { H=$((H + 1)); ok=0; echo "  rank $r hung (killed by the bound)" >>"$T/$name.log"; } ;;
      *) if [ "$st" -gt 128 ]; then
           C=$((C + 1)); ok=0; echo "  rank $r died of signal $((st - 128))" >>"$T/$name.log"
         fi ;;
    esac
    h=$(awk -v r="$r" '$1=="final-hash" && $3==r { v = $5 " " $7 } END { print v }' "$T/$name.e$r")
    if [ "$rule" = finish ]; then
      # survivors finish equal; a faulted rank that finished must equal them too
      if [ "$st" = 0 ] && [ -n "$h" ]; then
        [ -z "$first" ] && first=$h
        [ "$h" = "$first" ] || { ok=0; D=$((D + 1)); echo "  rank $r ended with other bits ($h vs $first)" >>"$T/$name.log"; }
      elif [ $victim = 0 ] && grep -q "^elastic: view .*rank \([0-9, ]*, \)\?$r\(, [0-9, ]*\)\? left" "$T/$name".e*; then
        # dropped by the others though never faulted (a slow rank on a loaded
        # machine taken for a frozen one): a false alarm, counted, not a failure
        FALSE=$((FALSE + 1)); echo "  rank $r (not faulted) was dropped by the others: a false alarm" >>"$T/$name.log"
      elif [ $victim = 0 ]; then
        ok=0; D=$((D + 1)); echo "  rank $r (not faulted) exited $st without finishing" >>"$T/$name.log"
      fi
    else
      # below --min-ranks: every survivor stops with exit 1 and the checkpoint is written
      if [ $victim = 0 ] && [ "$st" != 1 ]; then
        ok=0; D=$((D + 1)); echo "  rank $r exited $st below --min-ranks (want 1)" >>"$T/$name.log"
      fi
    fi
  done <"$T/$name.st"
  if [ "$rule" = below ] && [ ! -s "$T/$name.ck" ]; then
    ok=0; D=$((D + 1)); echo "  below --min-ranks: no checkpoint written" >>"$T/$name.log"
  fi
  if [ "$rule" = finish ] && [ -z "$first" ]; then
    ok=0; D=$((D + 1)); echo "  no rank finished" >>"$T/$name.log"
  fi
  if [ $ok = 1 ]; then
    echo "$(head -1 "$T/$name.log"): ok, $([ "$rule" = below ] && echo "stopped below --min-ranks as it must" || echo "survivors equal");$(tail -n +2 "$T/$name.log" | tr '\n' ';' | sed 's/  */ /g')"
  else
    bad "did not end as the rules say"
    [ -n "${CHAOS_KEEP:-}" ] && cp "$LOG/$name".*.out "$CHAOS_KEEP"/ 2>/dev/null
    grep -h "^mnist_ring\|^elastic" "$T/$name".e* | sed "s/^/    /" | head -40 >&2
    [ -n "${KEEP:-}" ] || true
  fi
}

# ---- mixed rings: POSIX and lwIP ranks (test/lwip's rank programs, core's
# trainer in ring_job's elastic mode) in a network namespace of their own
# (test/lwip/netns.sh), 4 ranks, one fault per job: SIGKILL, SIGSTOP left
# frozen, a restart with --rejoin, or a stranger's garbage on a rank's port
LW=0
if [ "${CHAOS_LWIP:-1}" = 1 ] && [ "$(id -u)" = 0 ] && [ -x "$B/test/lwip/lwip_rank" ] &&
   [ -x "$B/test/lwip/posix_rank" ] && command -v ip >/dev/null; then
  BIN=$B/test/lwip
  . "$here/test/lwip/netns.sh"
  . "$here/test/lwip/elastic.sh"
  trap 'cleanup; kill -9 $(jobs -p) 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT
  if setup; then LW=1; else echo "chaos: no network namespace here: POSIX jobs only"; fi
else
  echo "chaos: POSIX jobs only (mixed rings need root, ip and make lwip-test-bins)"
fi

mixed_job() {
  local name kinds victim fault at r st w p h first="" ok=1 addr frozen="" reached
  J=$((J + 1)); name=m$J
  kinds=$(echo PLPL LPLP PLLP LPPL | cut -d' ' -f$((1 + RANDOM % 4)))
  victim=$((RANDOM % 4))
  fault=$(echo kill freeze restart garbage | cut -d' ' -f$((1 + RANDOM % 4)))
  at=$((4 * (1 + RANDOM % 4)))     # the ranks print every 4th step
  # one case again and again: CHAOS_KINDS=PLPL CHAOS_VICTIM=0 CHAOS_FAULT=restart
  kinds=${CHAOS_KINDS:-$kinds} victim=${CHAOS_VICTIM:-$victim} fault=${CHAOS_FAULT:-$fault}
  rm -f "$T/log"; : >"$T/log"
  EL_ARGS=(--iters 12 --samples 1536)
  el_start "$name" "$kinds" 2000 -1 >/dev/null 2>&1
  echo "chaos: job $J: mixed ring $kinds" >>"$T/log"
  reached=0
  for _ in $(seq 600); do
    grep -q "rank $victim: step $at\$" "$LOG/$name.$victim.out" 2>/dev/null && { reached=1; break; }
    kill -0 "${EL_PID[victim]}" 2>/dev/null || break
    sleep 0.05
  done
  [ $reached = 1 ] || echo "  rank $victim never printed step $at: the fault lands late" >>"$T/log"
  p=$(pgrep -P "${EL_PID[victim]}")
  F=$((F + 1))
  echo "  fault at step $at: $fault ${kinds:victim:1} rank $victim" >>"$T/log"
  case $fault in
    kill) kill -9 $p 2>/dev/null ;;
    freeze) kill -STOP $p 2>/dev/null; frozen=$p ;;
    restart)
      kill -9 $p 2>/dev/null
      wait "${EL_PID[victim]}" 2>/dev/null
      for _ in $(seq 200); do grep -q "view 1: " "$LOG/$name".?.out 2>/dev/null && break; sleep 0.05; done
      mv "$LOG/$name.$victim.out" "$LOG/$name.killed.out"
      if [ "${kinds:victim:1}" = L ]; then
        timeout 90 ip netns exec "$NS" "$BIN/lwip_rank" --tap "tap$victim" --ip "198.18.0.$((10 + victim))" \
          --table "$(table_for "$kinds")" --rank "$victim" --world 4 --token $TOKEN --mode elastic \
          --suite "lwip-$name-r$victim" --timeout 2000 "${EL_ARGS[@]}" --rejoin >"$LOG/$name.$victim.out" 2>&1 &
      else
        timeout 90 ip netns exec "$NS" "$BIN/posix_rank" --table "$(table_for "$kinds")" --rank "$victim" \
          --world 4 --token $TOKEN --mode elastic --suite "lwip-$name-r$victim" --timeout 2000 \
          "${EL_ARGS[@]}" --rejoin >"$LOG/$name.$victim.out" 2>&1 &
      fi
      EL_PID[victim]=$!; PIDS+=($!) ;;
    garbage)
      if [ "${kinds:victim:1}" = L ]; then addr=198.18.0.$((10 + victim)); else addr=198.18.0.$((20 + victim)); fi
      ( ip netns exec "$NS" bash -c "exec 3<>/dev/tcp/$addr/$PORT && head -c $((1 + RANDOM % 2000)) /dev/urandom >&3; sleep 1" ) >/dev/null 2>&1 &
      victim=-1 ;;   # not taken out: every rank must finish
  esac
  # the others end by themselves; a rank left frozen is ended after them
  while :; do
    w=1
    for r in 0 1 2 3; do
      [ -n "$frozen" ] && [ "$r" = "$victim" ] && continue
      kill -0 "${EL_PID[r]}" 2>/dev/null && w=0
    done
    [ $w = 1 ] && break
    sleep 0.1
  done
  [ -n "$frozen" ] && kill -9 "$frozen" 2>/dev/null
  for r in 0 1 2 3; do
    wait "${EL_PID[r]}" 2>/dev/null; st=$?
    h=$(grep -m1 '^params ' "$LOG/$name.$r.out" 2>/dev/null)
    case $st in
      124) H=$((H + 1)); ok=0; echo "  rank $r hung (killed by its bound)" >>"$T/log" ;;
      137) [ "$r" = "$victim" ] || { H=$((H + 1)); ok=0; echo "  rank $r hung (killed by its bound)" >>"$T/log"; } ;;
      *) if [ "$st" -gt 128 ]; then C=$((C + 1)); ok=0; echo "  rank $r died of signal $((st - 128))" >>"$T/log"; fi ;;
    esac
    if [ "$st" = 0 ] && [ -n "$h" ]; then
      [ -z "$first" ] && first=$h
      [ "$h" = "$first" ] || { D=$((D + 1)); ok=0; echo "  rank $r ended with other bits ($h vs $first)" >>"$T/log"; }
    elif [ "$r" != "$victim" ]; then
      D=$((D + 1)); ok=0; echo "  rank $r (not faulted) exited $st without finishing" >>"$T/log"
    elif [ "$fault" = restart ] && grep -q "rejoined as ring rank" "$LOG/$name.$r.out" 2>/dev/null; then
      # started again and admitted: from then on it is a member like the others
      D=$((D + 1)); ok=0; echo "  rank $r rejoined, then exited $st without finishing" >>"$T/log"
    fi
  done
  [ "$fault" = restart ] && grep -q "rejoined as ring rank" "$LOG/$name.$victim.out" 2>/dev/null &&
    echo "    started again, it rejoined" >>"$T/log"
  if [ $ok = 1 ]; then
    echo "$(head -1 "$T/log"): ok, survivors equal;$(tail -n +2 "$T/log" | tr '\n' ';' | sed 's/  */ /g')"
  else
    bad "did not end as the rules say"
    [ -n "${CHAOS_KEEP:-}" ] && cp "$LOG/$name".*.out "$CHAOS_KEEP"/ 2>/dev/null
    grep -h "lost the ring\|view \|round .* ms\|done at\|rejoined\|failed\|error" "$LOG/$name".*.out | sed "s/^/    /" | head -30 >&2
  fi
}

t_end=$(( $(date +%s) + SECS ))
while [ "$(date +%s)" -lt "$t_end" ]; do
  if [ $LW = 1 ] && [ $((RANDOM % 100)) -lt "${CHAOS_MIXED:-33}" ]; then mixed_job; else run_job; fi
done
[ $UNFORMED -gt 0 ] && echo "chaos: $UNFORMED jobs never formed their first ring within --timeout $TIMEOUT (a loaded machine)"
[ $FALSE -gt 0 ] && echo "chaos: $FALSE ranks never faulted were dropped as if frozen (false alarms)"
echo "chaos: $F faults, $J jobs, $H hangs, $C crashes, $D diverged"
check "chaos: no hangs ($H), crashes ($C) or diverged survivors ($D)" test $((H + C + D)) -eq 0
check "chaos: at least one job judged ($J jobs, $UNFORMED never formed)" test "$J" -gt "$UNFORMED"
report chaos
