#!/usr/bin/env bash
# tinyring bench-net: training on shaped links, tinyring against PyTorch DDP.
# Each rank runs in its own network namespace with a veth to a bridge
# (test/testnet.sh); with a rate, tbf shapes both directions of every
# rank's link. Links: unshaped, 1 Gbit/s, 100 Mbit/s, 10 Mbit/s, 1 Mbit/s;
# N=2 and N=4. On each: every tinyring setting mnist_ring --help offers (each
# --compress value, each --average-every value with --compress none; read at
# run time) and int8 with --average-every 4 (bench-acc's list), and PyTorch DDP over gloo (test/bench/net/torch_net.py, one process
# per rank in its namespace, GLOO_SOCKET_IFNAME=eth0) with its default
# allreduce, fp16_compress_hook and powerSGD_hook (rank 2), in the same
# minutes (tinyring's settings, then the peer's three hooks, per link and N).
# The seeds' ConvNet, batch 100 per rank, lr 0.001, momentum 0.9, the data
# apps/mnist_ring/get-data.sh finds.
#
# samples/s: over the timed steps, after WARMUP (5) steps, as each program
#   reports it (mnist_ring --warmup-steps; the peer as torch_seed002.py).
#   Timed steps per link: unshaped the rest of 1 epoch; 1 Gbit/s and
#   100 Mbit/s 60; 10 Mbit/s 30; 1 Mbit/s 10; rounded up to a multiple of
#   --average-every's K.
# wire KB/step: bytes each rank put on its link over the timed steps, per
#   step and rank (KiB), frames with their headers, acks included: for
#   tinyring the rx counters of the switch's veth ends, read when rank 0 logs
#   the first and the last timed step (--debug-param-hash on rank 0); the
#   peer reads its ranks' tx counters at its timing barriers. The veth counts
#   a GSO packet (up to 64 KB) with one header.
# test acc: after 1 epoch, from the runs on the unshaped link (the link only
#   changes the time: the training is the same on every link).
# Then per link, for N=2 and N=4:
#   net-ratio N=2 RATE: R x        tinyring's best setting / PyTorch's best hook
#   net-efficiency N=2 RATE: P%    that setting's samples/s / its own unshaped
#
# usage: run.sh BUILD_DIR
# env:   BENCH_NET_QUICK=1   N=2 only, fewer steps, no epoch (a few minutes)
#        BENCH_NET_LINKS="unshaped 10mbit"   BENCH_NET_WORLDS="2 4"
#        BENCH_NET_SETTINGS="none;--compress int8;..."  (instead of --help's)
#        BENCH_NET_CROSS=1   every codec with every K as well
#        BENCH_NET_TORCH=0   tinyring alone (no net-ratio lines)
# Needs root (namespaces, tc). The machine is shared: each figure is one run.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
B=$(cd "${1:-build}" && pwd)
MR=$B/mnist_ring
PY=/usr/bin/python3
WARMUP=5
QUICK=${BENCH_NET_QUICK:-0}
if [ "$QUICK" = 1 ]; then
  LINKS=${BENCH_NET_LINKS:-unshaped 1gbit 100mbit 10mbit 1mbit}; WORLDS=${BENCH_NET_WORLDS:-2}
else
  LINKS=${BENCH_NET_LINKS:-unshaped 1gbit 100mbit 10mbit 1mbit}; WORLDS=${BENCH_NET_WORLDS:-2 4}
fi
timed_steps() {  # timed_steps LINK -> timed steps (0: the rest of the epoch)
  if [ "$QUICK" = 1 ]; then
    case $1 in unshaped) echo 40 ;; 1gbit | 100mbit) echo 30 ;; 10mbit) echo 15 ;; *) echo 5 ;; esac
  else
    case $1 in unshaped) echo 0 ;; 1gbit | 100mbit) echo 60 ;; 10mbit) echo 30 ;; *) echo 10 ;; esac
  fi
}
label() { case $1 in unshaped) echo unshaped ;; *gbit) echo "${1%gbit}Gbit/s" ;; *mbit) echo "${1%mbit}Mbit/s" ;; *) echo "$1" ;; esac; }

[ "$(id -u)" -eq 0 ] || { echo "bench-net: needs root (network namespaces, tc); skipped"; exit 0; }
[ -x "$MR" ] || { echo "bench-net: $MR missing"; exit 1; }
data=$(bash "$root/apps/mnist_ring/get-data.sh") || exit 1
. "$root/test/testnet.sh"
T=$(mktemp -d /tmp/trbn.XXXXXX)
PIDS=()
cleanup() {
  local p
  sn_cleanup   # the ranks and the meter first: killing their launchers leaves them running
  for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# tinyring's settings: "name|flags" per line (test/testnet.sh)
sn_settings "$MR" "${BENCH_NET_SETTINGS:-}" "${BENCH_NET_CROSS:-0}" >"$T/settings"
mapfile -t SETTINGS <"$T/settings"

every_k() { grep -oE -- '--average-every [0-9]+' <<<"$1" | awk '{ print $2 }'; }
round_up() { local s=$1 k=${2:-1}; [ -z "$k" ] && k=1; echo $(((s + k - 1) / k * k)); }

# wait_ranks PID...: 0 when every rank exits 0; the first to fail stops the others
# (gloo's ranks would wait out their timeout for a dead peer)
wait_ranks() {
  local left=("$@") st=0 p rc i
  while [ ${#left[@]} -gt 0 ]; do
    p=; wait -n -p p "${left[@]}"; rc=$?
    [ -n "$p" ] || break
    for i in "${!left[@]}"; do [ "${left[i]}" = "$p" ] && unset 'left[i]'; done
    left=("${left[@]}")
    if [ $rc != 0 ]; then st=1; sn_kill_ranks; fi
  done
  return $st
}

port=30000
meter() {  # meter LOG START END N -> background netmeter, its pid in MPID, output $T/meter
  ip netns exec "$SN_PREFIX-sw" "$PY" "$here/netmeter.py" "$1" "$2" "$3" 3600 \
    $(for ((r = 0; r < $4; r++)); do echo "vr$r"; done) >"$T/meter" 2>&1 &
  MPID=$!; PIDS+=($MPID)
}
meter_end() {  # waits up to 3 s for the meter, prints KB per step per rank, or ?
  local i
  for i in $(seq 30); do kill -0 "$MPID" 2>/dev/null || break; sleep 0.1; done
  kill "$MPID" 2>/dev/null; wait "$MPID" 2>/dev/null
  awk -v s="$1" -v n="$2" '$1 == "bytes" && $2 != "?" { printf "%.1f", $2 / s / n / 1024; ok = 1 } END { if (!ok) printf "?" }' "$T/meter"
}

# result LINE: one run's line (N LINK PEER SETTING... samples/s comm% KB/step steps acc)
result() { echo "$*" >>"$T/results"; echo "$*" >&2; }

# ours N LINK NAME FLAGS: one run of mnist_ring, its result line
ours() {
  local n=$1 link=$2 name=$3 flags=$4 s k max pids=() r st=0 kb sps comm acc steps
  s=$(timed_steps "$link"); k=$(every_k "$flags")
  if [ "$s" = 0 ]; then  # the whole epoch; the meter's window a multiple of K
    steps=$(((60000 / n + 99) / 100)); max=0
    s=$(((steps - WARMUP) / ${k:-1} * ${k:-1}))
  else
    s=$(round_up "$s" "$k"); max=$((WARMUP + s))
  fi
  port=$((port + 1))
  meter "$T/o0.out" "param-hash rank 0 step $WARMUP " "param-hash rank 0 step $((WARMUP + s)) " "$n"
  for ((r = 0; r < n; r++)); do
    # shellcheck disable=SC2086
    sn_exec $r timeout 900 "$MR" --data "$data" --init-method "tcp://$(sn_addr 0):$port" --rank $r \
      --world-size "$n" --iface "$SN_IFACE" --job-token "bench-net-$$-$port" --warmup-steps $WARMUP \
      --max-steps $max --quiet $([ $r = 0 ] && echo --debug-param-hash) $flags >"$T/o$r.out" 2>&1 &
    pids+=($!); PIDS+=($!)
  done
  wait_ranks "${pids[@]}" || st=1
  kb=$(meter_end "$s" "$n")
  if [ $st != 0 ]; then
    echo "bench-net: N=$n $(label "$link") tinyring $name failed: $(grep -v -e '^param-hash' -e '^loss-bits' "$T/o0.out" | tail -2)" >&2
    result "$n $link tinyring $name ? ? ? $s ?"; return
  fi
  read -r sps comm acc <<<"$(awk '$1 == "epoch" && $3 == "loss" { for (i = 1; i <= NF; i++) {
      if ($i == "samples/s") s = $(i - 1); if ($i == "comm") c = $(i + 1); if ($i == "acc") a = $(i + 1) } }
      END { sub("%", "", c); print (s == "" ? "?" : s), (c == "" ? "?" : c), (a == "" ? "?" : a) }' "$T/o0.out")"
  result "$n $link tinyring $name $sps $comm $kb $s $([ "$max" = 0 ] && echo "$acc" || echo -)"
}

# theirs N LINK: one launch of the PyTorch peer (the three hooks in turn), their result lines
HOOKS=default,fp16,powersgd
theirs() {
  local n=$1 link=$2 s max pids=() r st=0 hook sps steps kb acc
  s=$(timed_steps "$link"); max=$((WARMUP + s)); [ "$s" = 0 ] && max=0
  port=$((port + 1))
  for ((r = 0; r < n; r++)); do
    sn_exec $r env GLOO_SOCKET_IFNAME="$SN_IFACE" OMP_NUM_THREADS=1 timeout 1800 "$PY" "$here/torch_net.py" \
      "$data" "tcp://$(sn_addr 0):$port" $r "$n" $HOOKS $WARMUP $max >"$T/t$r.out" 2>&1 &
    pids+=($!); PIDS+=($!)
  done
  wait_ranks "${pids[@]}" || st=1
  [ $st = 0 ] || echo "bench-net: N=$n $(label "$link") torch failed: $(tail -2 "$T/t0.out")" >&2
  "$PY" -c 'import json, sys
done = {}
for l in open(sys.argv[1]):
    if l.startswith("{"):
        d = json.loads(l)
        done[d["hook"]] = "%.1f %d %.1f %.4f" % (d["samples_per_s_global"], d["timed_steps"],
            sum(d["sent_bytes_per_rank"]) / len(d["sent_bytes_per_rank"]) / max(d["timed_steps"], 1) / 1024, d["test_acc"])
for h in sys.argv[2].split(","):
    print(h, done.get(h, "? ? ? ?"))' "$T/t0.out" $HOOKS >"$T/tres" 2>/dev/null
  while read -r hook sps steps kb acc; do
    result "$n $link torch-ddp $hook $sps - $kb $steps $([ "$max" = 0 ] && echo "$acc" || echo -)"
  done <"$T/tres"
}

# summary [WHY]: the tables and the ratio lines of the runs so far (also when stopped)
summary() {
  local t_end
  t_end=$(date +%s)
  mkdir -p "$B/bench"
  {
  cat "$T/head"
  echo "runs: $(wc -l <"$T/results")${1:+ ($1)} in $(((t_end - t_start) / 60)) min $(((t_end - t_start) % 60)) s; links shaped by tbf (both directions of each rank's veth to a bridge)"
  echo "samples/s: all ranks, over the timed steps after $WARMUP; wire KB/step: bytes each rank sent on its link per timed step (veth counters)"
  "$PY" - "$T/results" "$LINKS" "$WORLDS" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
links, worlds = sys.argv[2].split(), sys.argv[3].split()
def label(l):
    return 'unshaped' if l == 'unshaped' else l.replace('gbit', 'Gbit/s').replace('mbit', 'Mbit/s')
def num(v):
    try: return float(v)
    except ValueError: return None
# rows: n link impl name... sps comm kb steps acc   (name may hold spaces)
recs = []
for r in rows:
    n, link, impl = r[0], r[1], r[2]
    sps, comm, kb, steps, acc = r[-5:]
    recs.append(dict(n=n, link=link, impl=impl, name=' '.join(r[3:-5]), sps=num(sps), comm=comm, kb=kb, steps=steps, acc=acc))
acc1 = {(r['n'], r['impl'], r['name']): r['acc'] for r in recs if r['link'] == 'unshaped' and r['acc'] not in ('-', '?')}
for n in worlds:
    print('\nN=%s' % n)
    print('%-10s %-10s %-30s %10s %6s %14s %6s %9s' % ('link', 'peer', 'setting', 'samples/s', 'comm%', 'wire KB/step', 'steps', 'acc 1 ep'))
    for link in links:
        for r in recs:
            if r['n'] == n and r['link'] == link:
                print('%-10s %-10s %-30s %10s %6s %14s %6s %9s' % (label(link), r['impl'], r['name'],
                      '%.1f' % r['sps'] if r['sps'] else '?', r['comm'], r['kb'], r['steps'],
                      acc1.get((n, r['impl'], r['name']), '-')))
print()
# issue 28's targets at N=2
goal = {('10mbit', 'ratio'): 2.0, ('10mbit', 'eff'): 60.0, ('100mbit', 'eff'): 95.0}
def verdict(n, link, kind, v):
    g = goal.get((link, kind)) if n == '2' else None
    return '' if g is None else '; target >= %g%s: %s' % (g, ' x' if kind == 'ratio' else '%', 'met' if v >= g else 'NOT met')
for n in worlds:
    base = {r['name']: r['sps'] for r in recs if r['n'] == n and r['link'] == 'unshaped' and r['impl'] == 'tinyring'}
    for link in links:
        ours = [r for r in recs if r['n'] == n and r['link'] == link and r['impl'] == 'tinyring' and r['sps']]
        theirs = [r for r in recs if r['n'] == n and r['link'] == link and r['impl'] != 'tinyring' and r['sps']]
        o = max(ours, key=lambda r: r['sps']) if ours else None
        t = max(theirs, key=lambda r: r['sps']) if theirs else None
        if o and t:
            v = o['sps'] / t['sps']
            print('net-ratio N=%s %s: %.2f x (tinyring %s %.0f / torch %s %.0f samples/s%s)' % (
                n, label(link), v, o['name'], o['sps'], t['name'], t['sps'], verdict(n, link, 'ratio', v)))
        else:
            print('net-ratio N=%s %s: ? (a side has no run)' % (n, label(link)))
        if link != 'unshaped':
            b = base.get(o['name']) if o else None
            if o and b:
                v = 100 * o['sps'] / b
                print('net-efficiency N=%s %s: %.1f%% (%s: %.0f / %.0f unshaped samples/s%s)' % (
                    n, label(link), v, o['name'], o['sps'], b, verdict(n, link, 'eff', v)))
            else:
                print('net-efficiency N=%s %s: ? (no unshaped run of that setting)' % (n, label(link)))
PY
  } | tee "$B/bench/net.txt"
}

have_torch=0
if [ "${BENCH_NET_TORCH:-1}" != 0 ] &&
   "$PY" -c 'import torch.distributed.algorithms.ddp_comm_hooks.powerSGD_hook' 2>/dev/null; then have_torch=1; fi
maxn=$(tr ' ' '\n' <<<"$WORLDS" | sort -n | tail -1)
sn_setup "trbn-$$" "$maxn" || { echo "bench-net: namespace setup failed"; exit 1; }
t_start=$(date +%s)
{
echo "bench-net: $(basename "$data") data ($data), batch 100/rank, lr 0.001, momentum 0.9, $(nproc) cores (shared: one run per figure, noisy)"
echo "tinyring settings: $(cut -d'|' -f1 "$T/settings" | paste -sd, | sed 's/,/, /g')"
[ $have_torch = 1 ] || [ "${BENCH_NET_TORCH:-1}" = 0 ] ||
  echo "PyTorch peer skipped: needs /usr/bin/python3 with python3-torch (test/tools/apt-packages-bench.txt)"
[ "${BENCH_NET_TORCH:-1}" = 0 ] && echo "PyTorch peer left out (BENCH_NET_TORCH=0)"
} | tee "$T/head" >&2
: >"$T/results"
# stopped (Ctrl-C, SIGTERM): the summary of the runs done so far
trap '[ -s "$T/results" ] && summary "stopped before the end"; exit 130' INT TERM
for link in $LINKS; do
  sn_shape "$link" || { echo "bench-net: shaping $link failed"; exit 1; }
  for n in $WORLDS; do
    # interleaved: each of ours, then each of PyTorch's, on the same link in the same minutes
    for setting in "${SETTINGS[@]}"; do ours "$n" "$link" "${setting%%|*}" "${setting#*|}"; done
    if [ $have_torch = 1 ]; then
      theirs "$n" "$link"
    fi
  done
done
summary
