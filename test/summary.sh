#!/usr/bin/env bash
# Sums the per-suite result files (one line each: "suite passed failed") that
# test/harness.h and test/lib.sh write, and prints the closing line. Exits 1
# when any suite recorded a failure, so make test fails even where the
# target that ran the suite exited 0.
dir=${1:-build/results}
p=0; f=0
for r in "$dir"/*.txt; do
  [ -e "$r" ] || continue
  while read -r name pass fail; do
    p=$((p + pass)); f=$((f + fail))
    [ "$fail" -gt 0 ] && echo "FAILED suite: $name ($fail failed)"
  done < "$r"
done
echo "tests: $p passed, $f failed"
[ "$f" -eq 0 ]
