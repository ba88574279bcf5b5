#!/usr/bin/env bash
# tinyring bench-acc: does a lossy setting cost accuracy? Every setting
# mnist_ring --help offers (each --compress value; --average-every 4 and 16
# with --compress none; int8 with --average-every 4), trained like `make run`
# (--nproc 4, 12 epochs, the data apps/mnist_ring/get-data.sh finds,
# mnist_ring's defaults otherwise: batch, lr, momentum and seed the same for
# every setting), each setting's test accuracy and loss after epoch 1 and
# after the last, and its difference from --compress none in points.
# Issue 28's target: every lossy setting within 0.3 points of none, after 1
# epoch and after 12. Accuracy does not depend on the machine's load (the
# training is deterministic), so this runs beside other work.
# usage: run.sh BUILD_DIR      env: BENCH_ACC_EPOCHS (12), BENCH_ACC_SETTINGS
#        ("none;--compress int8;...": instead of the list above)
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
B=$(cd "${1:-build}" && pwd)
MR=$B/mnist_ring
EPOCHS=${BENCH_ACC_EPOCHS:-12}
[ -x "$MR" ] || { echo "bench-acc: $MR missing"; exit 1; }
data=$(bash "$root/apps/mnist_ring/get-data.sh") || exit 1
. "$root/test/testnet.sh"   # sn_settings
T=$(mktemp -d /tmp/trba.XXXXXX)
trap 'rm -rf "$T"' EXIT

mapfile -t SETTINGS < <(sn_settings "$MR" "${BENCH_ACC_SETTINGS:-}")
t0=$(date +%s)
echo "bench-acc: $(basename "$data") ($data), --nproc 4, $EPOCHS epochs, mnist_ring's defaults otherwise"
: >"$T/rows"
for s in "${SETTINGS[@]}"; do
  name=${s%%|*}; flags=${s#*|}
  # shellcheck disable=SC2086
  if ! "$MR" --data "$data" --nproc 4 --epochs "$EPOCHS" --quiet $flags >"$T/out" 2>"$T/err"; then
    echo "bench-acc: $name failed: $(tail -2 "$T/err")"
    echo "$name|?|?|?|?" >>"$T/rows"; continue
  fi
  # epoch E/N  loss L  train acc A  test loss TL  test acc TA ...
  awk -v name="$name" -v last="$EPOCHS" '$1 == "epoch" && $3 == "loss" {
      split($2, e, "/"); for (i = 1; i <= NF; i++) { if ($i == "test" && $(i+1) == "loss") tl = $(i+2); if ($i == "test" && $(i+1) == "acc") ta = $(i+2) }
      if (e[1] == 1) { a1 = ta; l1 = tl } if (e[1] == last) { an = ta; ln = tl } }
    END { printf "%s|%s|%s|%s|%s\n", name, (a1 == "" ? "?" : a1), (l1 == "" ? "?" : l1), (an == "" ? "?" : an), (ln == "" ? "?" : ln) }' "$T/out" >>"$T/rows"
  tail -1 "$T/rows" | awk -F'|' '{ printf "  %-32s epoch 1: acc %s loss %s   epoch '"$EPOCHS"': acc %s loss %s\n", $1, $2, $3, $4, $5 }'
done
t1=$(date +%s)
mkdir -p "$B/bench"
awk -F'|' -v ep="$EPOCHS" -v secs=$((t1 - t0)) '
  { name[NR] = $1; a1[NR] = $2; l1[NR] = $3; an[NR] = $4; ln[NR] = $5; if ($1 == "none") base = NR }
  END {
    printf "\n%-32s %9s %9s %8s   %9s %9s %8s\n", "setting", "acc 1 ep", "loss 1", "vs none", "acc " ep " ep", "loss " ep, "vs none"
    worst = 0; bad = 0; nl = 0
    for (i = 1; i <= NR; i++) {
      d1 = "-"; dn = "-"
      if (base && i != base && a1[i] != "?" && an[i] != "?") {
        d1 = sprintf("%+.2f", 100 * (a1[i] - a1[base])); dn = sprintf("%+.2f", 100 * (an[i] - an[base]))
        nl++
        if (-d1 > worst) worst = -d1; if (-dn > worst) worst = -dn
        if (-d1 > 0.3 || -dn > 0.3) bad++
      } else if (i != base) bad++
      printf "%-32s %9s %9s %8s   %9s %9s %8s\n", name[i], a1[i], l1[i], d1, an[i], ln[i], dn
    }
    printf "\nacc-loss worst: %.2f points below none over %d lossy settings (target <= 0.3: %s); %d s\n",
      worst, nl, (bad || !base) ? "NOT met" : "met", secs
  }' "$T/rows" | tee "$B/bench/acc.txt"
