#!/usr/bin/env bash
# test/fuzz: runs the libFuzzer harnesses over the committed corpus.
#   run.sh test DIR SECONDS H...   (make test) replay every input of
#       test/fuzz/corpus/H, then fuzz SECONDS more; suite "fuzz", one check
#       per harness
#   run.sh long DIR SECONDS H...   (make fuzz) fuzz each for SECONDS from the
#       corpus (new inputs kept in DIR/corpus/H); one line per harness with
#       execs and coverage; exit 1 if anything was found
# Findings (crash-*, leak-*, timeout-*, oom-*) are kept in DIR/findings/H/.
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
. "$here/test/lib.sh"
mode=$1 dir=$2 secs=$3
shift 3
found=0

# stat NAME LOG: a libFuzzer final statistic
stat() { sed -n "s/^stat::$1: *//p" "$2" | tail -1; }
# cov LOG: "cov N ft M" of the last status line
cov() { grep -o 'cov: [0-9]* ft: [0-9]*' "$1" | tail -1 | sed 's/: / /g'; }

for h in "$@"; do
  bin=$dir/fuzz_$h seeds=$here/test/fuzz/corpus/$h
  out=$dir/findings/$h work=$dir/corpus/$h log=$dir/fuzz_$h.log
  mkdir -p "$out" "$seeds"
  if [ "$mode" = test ]; then work=$(mktemp -d /tmp/tr_fuzz.XXXXXX); else mkdir -p "$work"; fi
  rm -f "$out"/crash-* "$out"/leak-* "$out"/timeout-* "$out"/oom-*
  n=$(find "$seeds" -type f | wc -l)
  # -timeout: one input may take at most 10 s; -rss_limit_mb and the malloc
  # limit: 2 GiB (a parser that believes a length field fails here)
  # make test fuzzes from a fixed seed: a run is repeatable
  seed=; [ "$mode" = test ] && seed=-seed=1
  "$bin" $seed -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$out/" "$work" "$seeds" >"$log" 2>&1
  st=$?
  finds=$(cd "$out" && ls crash-* leak-* timeout-* oom-* 2>/dev/null | tr '\n' ' ')
  execs=$(stat number_of_executed_units "$log")
  took=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log")
  line="fuzz $h: ${execs:-0} execs in ${took:-?} s, $(cov "$log"), $n committed inputs"
  if [ "$mode" = test ]; then
    rm -rf "$work"
    echo "$line; findings: ${finds:-none}"
    check "$line: exit $st, findings: ${finds:-none}" sh -c '[ "$1" -eq 0 ] && [ -z "$2" ]' sh "$st" "$finds"
  else
    echo "$line, corpus now $(find "$work" -type f | wc -l); findings: ${finds:-none}"
  fi
  if [ "$st" -ne 0 ] || [ -n "$finds" ]; then
    found=1
    grep -m1 -A12 -E 'ERROR|invariant broken|deadly signal' "$log" | sed "s/^/  fuzz $h: /"
    echo "  fuzz $h: input kept in $out/ (log: $log)"
  fi
done
if [ "$mode" = test ]; then report fuzz; exit $?; fi
exit $found
