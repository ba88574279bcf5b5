# tinyring: helpers for shell-driven tests (source it).
#   check "what" cmd...      runs cmd, counts pass/fail, prints failures
#   report SUITE             prints "SUITE: N passed, M failed", records it
#                            in $TR_RESULTS/SUITE.txt, returns 1 on failure
TH_PASSED=0
TH_FAILED=0
check() {
  local what=$1; shift
  if "$@"; then TH_PASSED=$((TH_PASSED + 1)); else
    TH_FAILED=$((TH_FAILED + 1)); echo "FAIL: $what" >&2; fi
}
pass() { TH_PASSED=$((TH_PASSED + 1)); }
fail() { TH_FAILED=$((TH_FAILED + 1)); echo "FAIL: $*" >&2; }
report() {
  echo "$1: $TH_PASSED passed, $TH_FAILED failed"
  if [ -n "${TR_RESULTS:-}" ]; then mkdir -p "$TR_RESULTS" && echo "$1 $TH_PASSED $TH_FAILED" >> "$TR_RESULTS/$1.txt"; fi
  [ "$TH_FAILED" -eq 0 ]
}
