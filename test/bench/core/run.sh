#!/usr/bin/env bash
# bench-core: tinyring's kernels and training step against PyTorch's, side by
# side on one core. Rounds alternate (tinyring, torch, tinyring, ...) so both
# see the same machine load; each side's best round is compared.
# With PEAK_PROBE (test/bench/core/peak_probe.c), the core's limit for separate
# multiplies and adds is measured before, during (once per round) and after
# the rounds; the best probe counts (on a shared machine load only slows
# things down, the probe as much as the step) and the best round is given
# as a fraction of it.
# usage: run.sh BENCH_BINARY [batch] [rounds] [steps] [PEAK_PROBE]
set -u
bin=$1; batch=${2:-100}; rounds=${3:-3}; steps=${4:-20}; probe=${5:-}
here=$(dirname "$0")
py=/usr/bin/python3
best_c=0; best_t=0; best_l=0; have_torch=1
if ! [ -x "$py" ] || ! "$py" -c 'import torch' 2>/dev/null; then
  have_torch=0; echo "torch: SKIP (python3-torch not installed; no side-by-side ratio)"
fi
probe_out=
nprobe=0
probe() { [ -n "$probe" ] && { probe_out=$(printf '%s\n%s\n' "$probe_out" "$(timeout 60 "$probe")"); nprobe=$((nprobe + 1)); }; }
probe
# per-layer table once
pin=""   # unpinned: on a shared machine the scheduler finds the idler core
table=$(timeout 300 $pin "$bin" "$batch" "$steps")
printf '%s\n' "$table" | grep -v -e '^step_samples_per_s' -e '^gemm_gflops'
gemm=$(printf '%s\n' "$table" | awk '/^gemm_gflops/{print $2}')
for r in $(seq 1 "$rounds"); do
  out=$(timeout 300 $pin "$bin" "$batch" "$steps")
  c=$(printf '%s\n' "$out" | awk '/^step_samples_per_s/{print $2}')
  g=$(printf '%s\n' "$out" | awk '/^gemm_gflops/{print $2}')
  best_c=$(awk -v a="$best_c" -v b="${c:-0}" 'BEGIN{print (b>a)?b:a}')
  gemm=$(awk -v a="${gemm:-0}" -v b="${g:-0}" 'BEGIN{print (b>a)?b:a}')
  # the lean execution plan's step in the same round (issue 9: <= 1.3x the time)
  l=$(timeout 300 $pin "$bin" "$batch" "$steps" lean | awk '/^step_samples_per_s/{print $2}')
  best_l=$(awk -v a="$best_l" -v b="${l:-0}" 'BEGIN{print (b>a)?b:a}')
  probe
  if [ $have_torch = 1 ]; then
    t=$(timeout 300 $pin "$py" "$here/torch_step.py" "$batch" "$steps" | awk '/^step_samples_per_s/{print $2}')
    best_t=$(awk -v a="$best_t" -v b="${t:-0}" 'BEGIN{print (b>a)?b:a}')
  fi
  echo "round $r: tinyring ${c:-?} samples/s, lean plan ${l:-?}${t:+, torch $t samples/s}"
done
echo "tinyring training step, batch $batch, 1 core: $best_c samples/s (best of $rounds)"
awk -v f="$best_c" -v l="$best_l" -v b="$batch" 'BEGIN{ if (l > 0) printf "lean plan training step, batch %s, 1 core: %s samples/s (best of the same rounds); time lean/fast: %.2fx\n", b, l, f / l }' 
if [ $have_torch = 1 ]; then
  echo "torch (1 thread) same step:                 $best_t samples/s (best of $rounds)"
  awk -v a="$best_c" -v b="$best_t" 'BEGIN{ if (b>0) printf "ratio tinyring/torch: %.2fx\n", a/b }'
fi
if [ -n "$probe" ]; then
  probe
  printf '%s\n' "$probe_out" | awk -v sps="$best_c" -v gemm="${gemm:-0}" -v n="$nprobe" '
    /^peak probe:/ { line = $0 }
    /^peak_gflops/ { if ($2 > peak) { peak = $2; best = line } }
    /^fma_gflops/  { if ($2 > fma) fma = $2 }
    /^flops_per_sample/ { f = $2 }
    END {
      if (peak <= 0 || f <= 0) { print "fraction-of-peak N=1: ? (the probe failed)"; exit }
      print best " (best of " n " probes)"
      if (fma > 0) printf "  (with fused multiply-add, not used by core: %.1f GFLOP/s)\n", fma
      if (gemm > 0) printf "GEMM, the seed net'"'"'s five shapes together (best round): %.1f GFLOP/s = %.1f%% of the peak\n", gemm, 100 * gemm / peak
      printf "step FLOPs per sample: %.0f (2 per multiply-accumulate of the convs and the linear layer, fwd + bwd)\n", f
      printf "fraction-of-peak N=1: %.1f%% (%.1f samples/s x %.0f FLOPs = %.1f GFLOP/s of %.1f)\n",
             100 * sps * f / (peak * 1e9), sps, f, sps * f * 1e-9, peak }'
fi
