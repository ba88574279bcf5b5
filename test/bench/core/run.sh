#!/usr/bin/env bash
# bench-core: tinyring's kernels and training step against PyTorch's, side by
# side on one core, for one or more builds of core (the native one, and on
# an x86 host the AVX2 build and others: test/bench/core/bench.mk). Rounds
# alternate (each build, then torch, then each build again, ...) so all see
# the same machine load; each side's best round is compared.
# Each build has its own PEAK_PROBE (test/bench/core/peak_probe.c, built
# with the build's flags): the core's limit for separate multiplies and
# adds at that build's vector width, measured before, during (once per
# round) and after the rounds; the best probe counts (on a shared machine
# load only slows things down, the probe as much as the step) and the
# build's best round is given as a fraction of it.
# usage: run.sh BATCH ROUNDS STEPS NAME:BENCH_BINARY:PEAK_PROBE ...
# prints per build NAME: its per-layer table, then
#   "ratio NAME/torch: R x" and "fraction-of-peak N=1 NAME: P%"
# Timings are of each process's CPU time (all its threads) by default (BENCH_CLOCK=cpu, read
# by bench_core, peak_probe and torch_step.py: a shared machine's other
# processes then cost a run their cache and core sharing, not the time the
# run was waiting); BENCH_CLOCK=wall times the wall clock.
set -u
export BENCH_CLOCK=${BENCH_CLOCK:-cpu}
echo "clock: BENCH_CLOCK=$BENCH_CLOCK ($( [ "$BENCH_CLOCK" = cpu ] && echo "each process's CPU time, all its threads" || echo "wall time"))"
batch=${1:-100}; rounds=${2:-3}; steps=${3:-20}; shift 3
here=$(dirname "$0")
py=/usr/bin/python3
have_torch=1
if ! [ -x "$py" ] || ! "$py" -c 'import torch' 2>/dev/null; then
  have_torch=0; echo "torch: SKIP (python3-torch not installed; no side-by-side ratio)"
fi
names=(); bins=(); probes=()
for b in "$@"; do
  IFS=: read -r n bin probe <<< "$b"
  names+=("$n"); bins+=("$bin"); probes+=("$probe")
done
nb=${#names[@]}
declare -a best_c best_l gemm probe_out nprobe
for ((i = 0; i < nb; i++)); do
  best_c[i]=0; best_l[i]=0; gemm[i]=0; probe_out[i]=; nprobe[i]=0
done
best_t=0
probe() {   # probe i: one more run of build i's probe
  local i=$1
  [ -n "${probes[i]}" ] || return 0
  probe_out[i]=$(printf '%s\n%s\n' "${probe_out[i]}" "$(timeout 60 "${probes[i]}")")
  nprobe[i]=$((nprobe[i] + 1))
}
for ((i = 0; i < nb; i++)); do probe "$i"; done
# each build's per-layer table once
for ((i = 0; i < nb; i++)); do
  echo "== build ${names[i]}"
  table=$(timeout 300 "${bins[i]}" "$batch" "$steps")
  printf '%s\n' "$table" | grep -v -e '^step_samples_per_s' -e '^gemm_gflops'
  gemm[i]=$(printf '%s\n' "$table" | awk '/^gemm_gflops/{print $2}')
done
for r in $(seq 1 "$rounds"); do
  line="round $r:"
  for ((i = 0; i < nb; i++)); do
    out=$(timeout 300 "${bins[i]}" "$batch" "$steps")
    c=$(printf '%s\n' "$out" | awk '/^step_samples_per_s/{print $2}')
    g=$(printf '%s\n' "$out" | awk '/^gemm_gflops/{print $2}')
    best_c[i]=$(awk -v a="${best_c[i]}" -v b="${c:-0}" 'BEGIN{print (b>a)?b:a}')
    gemm[i]=$(awk -v a="${gemm[i]:-0}" -v b="${g:-0}" 'BEGIN{print (b>a)?b:a}')
    # the lean execution plan's step in the same round (issue 9: <= 1.3x the time)
    l=$(timeout 300 "${bins[i]}" "$batch" "$steps" lean | awk '/^step_samples_per_s/{print $2}')
    best_l[i]=$(awk -v a="${best_l[i]}" -v b="${l:-0}" 'BEGIN{print (b>a)?b:a}')
    probe "$i"
    line="$line ${names[i]} ${c:-?} samples/s (lean ${l:-?});"
  done
  if [ $have_torch = 1 ]; then
    t=$(timeout 300 "$py" "$here/torch_step.py" "$batch" "$steps" | awk '/^step_samples_per_s/{print $2}')
    best_t=$(awk -v a="$best_t" -v b="${t:-0}" 'BEGIN{print (b>a)?b:a}')
    line="$line torch ${t:-?} samples/s"
  fi
  echo "$line"
done
[ $have_torch = 1 ] && echo "torch (1 thread) same step: $best_t samples/s (best of $rounds)"
for ((i = 0; i < nb; i++)); do
  n=${names[i]}
  probe "$i"
  echo "== ${n}: training step, batch $batch, 1 core: ${best_c[i]} samples/s (best of $rounds)"
  awk -v f="${best_c[i]}" -v l="${best_l[i]}" -v b="$batch" -v n="$n" 'BEGIN{ if (l > 0) printf "lean plan %s, batch %s, 1 core: %s samples/s (best of the same rounds); time lean/fast: %.2fx\n", n, b, l, f / l }'
  [ $have_torch = 1 ] &&
    awk -v a="${best_c[i]}" -v b="$best_t" -v n="$n" 'BEGIN{ if (b>0) printf "ratio %s/torch: %.2f x\n", n, a/b }'
  [ -n "${probes[i]}" ] || continue
  printf '%s\n' "${probe_out[i]}" | awk -v sps="${best_c[i]}" -v gemm="${gemm[i]:-0}" -v np="${nprobe[i]}" -v n="$n" '
    /^peak probe:/ { line = $0 }
    /^peak_gflops/ { if ($2 > peak) { peak = $2; best = line } }
    /^fma_gflops/  { if ($2 > fma) fma = $2 }
    /^flops_per_sample/ { f = $2 }
    END {
      if (peak <= 0 || f <= 0) { print "fraction-of-peak N=1 " n ": ? (the probe failed)"; exit }
      print best " (best of " np " probes)"
      if (fma > 0) printf "  (with fused multiply-add, not used by core: %.1f GFLOP/s)\n", fma
      if (gemm > 0) printf "GEMM %s, the seed net'"'"'s five shapes together (best round): %.1f GFLOP/s = %.1f%% of the peak\n", n, gemm, 100 * gemm / peak
      printf "step FLOPs per sample: %.0f (2 per multiply-accumulate of the convs and the linear layer, fwd + bwd)\n", f
      printf "fraction-of-peak N=1 %s: %.1f%% (%.1f samples/s x %.0f FLOPs = %.1f GFLOP/s of %.1f)\n",
             n, 100 * sps * f / (peak * 1e9), sps, f, sps * f * 1e-9, peak }'
done
