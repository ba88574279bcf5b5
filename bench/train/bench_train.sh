#!/usr/bin/env bash
# bench/train: mnist_ring's training throughput at 1, 2 and 4 local ranks,
# and side by side at 2 ranks with the seeds' PyTorch loop
# (../shared/bench/torch_seed002.py: DDP, and per-parameter all_reduce) on
# the same data, batch 100 per rank, lr 0.001, momentum 0.9, one epoch each,
# with the test accuracy after that epoch. Prints a table and the ratio.
# Usage: bench_train.sh BUILD_DIR   (env: STEPS=150 steps for the N sweep)
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
B=${1:-build}
MR=$B/mnist_ring
STEPS=${STEPS:-150}
PEER=${TORCH_PEER:-$here/../shared/bench/torch_seed002.py}
data=$(bash "$here/tools/get-data.sh") || exit 1
T=$(mktemp -d /tmp/tr_bench_train.XXXXXX)
trap 'rm -rf "$T"' EXIT
mkdir -p "$B/bench"
out=$B/bench/train.txt

sps() { awk '$1=="epoch" && $3=="loss" { for (i=1;i<=NF;i++) if ($i=="samples/s") v=$(i-1) } END { print v }' "$1"; }
acc() { awk '$1=="epoch" && $3=="loss" { v=$13 } END { print v }' "$1"; }
json() { /usr/bin/python3 -c 'import json,sys; d=json.loads([l for l in open(sys.argv[1]) if l.startswith("{")][-1]); print("%.1f %.4f" % (d["samples_per_s_global"], d["test_acc"]))' "$1" 2>/dev/null; }

{
echo "training bench: $(basename "$data") data in $data, batch 100/rank, lr 0.001, momentum 0.9, $(nproc) cores"
printf '%-36s %5s %11s %9s\n' run ranks samples/s test-acc
for n in 1 2 4; do
  timeout 300 "$MR" --data "$data" --nproc $n --max-steps $((STEPS * n / n)) --quiet >"$T/n$n.out" 2>&1 ||
    echo "mnist_ring --nproc $n failed: $(tail -2 "$T/n$n.out")"
  printf '%-36s %5d %11s %9s\n' "mnist_ring ring, $STEPS steps" $n "$(sps "$T/n$n.out")" "-"
done
timeout 600 "$MR" --data "$data" --nproc 2 --epochs 1 --quiet >"$T/e2.out" 2>&1 ||
  echo "mnist_ring 1 epoch failed: $(tail -2 "$T/e2.out")"
ours_sps=$(sps "$T/e2.out"); ours_acc=$(acc "$T/e2.out")
printf '%-36s %5d %11s %9s\n' "mnist_ring ring, 1 epoch" 2 "$ours_sps" "$ours_acc"

if [ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import torch, torchvision' 2>/dev/null && [ -f "$PEER" ]; then
  # the peer wants MNIST/raw/*-ubyte uncompressed
  mkdir -p "$T/tv/MNIST/raw"
  for f in train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte; do
    src=$(ls "$data/$f" "$data/$f.gz" "$data"/*/raw/"$f" "$data"/*/raw/"$f.gz" 2>/dev/null | head -1)
    case $src in *.gz) gunzip -c "$src" >"$T/tv/MNIST/raw/$f";; *) cp "$src" "$T/tv/MNIST/raw/$f";; esac
  done
  for mode in ddp allreduce; do
    timeout 900 /usr/bin/python3 "$PEER" "$T/tv" 2 1 $mode >"$T/t-$mode.out" 2>&1 ||
      echo "torch $mode failed: $(tail -2 "$T/t-$mode.out")"
    read -r s a <<<"$(json "$T/t-$mode.out")"
    printf '%-36s %5d %11s %9s\n' "torch $mode (seed 002 loop), 1 epoch" 2 "${s:-?}" "${a:-?}"
    eval "t_${mode}_sps=${s:-0} t_${mode}_acc=${a:-0}"
  done
  /usr/bin/python3 - "$ours_sps" "$t_ddp_sps" "$ours_acc" "$t_ddp_acc" "$t_allreduce_sps" <<'PY'
import sys
o, t, oa, ta, tar = (float(x or 0) for x in sys.argv[1:6])
r = o / t if t else 0
print("ratio at N=2: mnist_ring / torch DDP = %.2fx samples/s (target >= 1.5x: %s); "
      "test acc %.4f vs %.4f (%s)" % (r, "met" if r >= 1.5 else "NOT met", oa, ta,
      "same or better" if oa >= ta - 0.005 else "worse"))
if tar:
    print("        mnist_ring / torch per-parameter all_reduce = %.2fx" % (o / tar))
PY
else
  echo "torch peer skipped: needs /usr/bin/python3 with torch and torchvision (python3-torch, python3-torchvision) and $PEER"
fi
} | tee "$out"
