#!/usr/bin/env bash
# test/chaos: the harness's hang rule against stand-in ranks (no training):
# a job whose ranks stop stepping must be called a hang within CHAOS_STALL s
# (not only at a fixed bound), and a slow job that keeps stepping must not.
# (A fixed bound of 90 s once called a 10-epoch job a hang that was still
# stepping on a machine at load 30: seed 4242, job 9.)
# Usage: stall.sh BUILD_DIR.
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
. "$here/test/lib.sh"
B=${1:-build}
T=$(mktemp -d /tmp/tr_chaos_stall.XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT
mkdir -p "$T/b/test/app"
ln -s "$(cd "$B" && pwd)/test/app/gen_idx" "$T/b/test/app/gen_idx"
ln -s "$(cd "$B" && pwd)/test/app/free_port" "$T/b/test/app/free_port"
# a stand-in rank: a param-hash line every FAKE_EVERY s; FAKE_MODE=stall
# stops after step 5 and waits (alive, silent), slow ends after step 8
cat >"$T/b/mnist_ring" <<'EOS'
#!/usr/bin/env bash
r=0
while [ $# -gt 0 ]; do [ "$1" = --rank ] && r=$2; shift; done
for s in 1 2 3 4 5 6 7 8; do
  echo "param-hash rank $r step $s 00000000000000aa" >&2
  [ "$FAKE_MODE" = stall ] && [ $s = 5 ] && exec sleep 300
  sleep "$FAKE_EVERY"
done
echo "final-hash rank $r params 00000000000000aa buffers 00000000000000bb" >&2
[ "$r" = 0 ] && echo "done: 8 steps"
exit 0
EOS
chmod +x "$T/b/mnist_ring"
run() {   # MODE EVERY: one job, stall limit 3 s, at most 70 s; the inner
  # harness records no suite (the stand-ins' hang is the expected outcome,
  # judged by the checks below, not a failure of make test)
  TR_RESULTS= FAKE_MODE=$1 FAKE_EVERY=$2 CHAOS_STALL=3 CHAOS_MIXED=0 timeout -k 2 70 \
    bash "$here/test/chaos/chaos.sh" "$T/b" 6 7 >"$T/$1.out" 2>&1
}
t0=$SECONDS; run stall 0.1; st=$?; dt=$((SECONDS - t0))
check "ranks that stop stepping: called hangs by the stall rule (exit $st, ${dt} s)" \
  sh -c "[ $st = 1 ] && grep -Eq 'chaos: 0 faults, [1-9] jobs, [1-9][0-9]* hangs' '$T/stall.out' && grep -q 'no rank printed a new step or view for 3 s' '$T/stall.out'"
[ -n "${ONLY_STALL:-}" ] || { run slow 1; st=$?; }
check "a slow job (8 steps, 1 s apart, longer than the stall limit of 3 s): no hang (exit $st)" \
  sh -c "[ $st = 0 ] && grep -Eq 'chaos: 0 faults, [1-9] jobs, 0 hangs, 0 crashes, 0 diverged' '$T/slow.out'"
[ -n "${KEEP:-}" ] && echo "kept $T"
report chaos_stall
