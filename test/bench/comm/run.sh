#!/usr/bin/env bash
# tinyring: allreduce latency and bus bandwidth, tinyring (ring and the seeds'
# chain, POSIX TCP over loopback) side by side with Open MPI's MPI_Allreduce
# in the same run.
#   bash test/bench/comm/run.sh build/bench/comm/tr_bench_comm [build/bench/comm/mpi_bench_comm]
# Environment: TR_BENCH_WORLDS ("2 4"), TR_BENCH_SIZES (bytes, comma list),
# TR_BENCH_BUDGET_MS (per size, 80), TR_BENCH_REPEAT (runs, best kept, 5),
# TR_BENCH_SEGMENT (tr_comm segment bytes, 1048576: fewest wake-ups on loopback; 0 = core's default),
# TR_BENCH_SOCKBUF (socket buffers, 0 = port default, -1 = kernel autotuning).
set -u
BENCH=$(realpath "$1")
MPI=${2:-}
WORLDS=${TR_BENCH_WORLDS:-"2 4"}
SIZES=${TR_BENCH_SIZES:-4096,16384,65536,116136,262144,1048576,4194304,16777216,67108864}
BUDGET=${TR_BENCH_BUDGET_MS:-80}
REPEAT=${TR_BENCH_REPEAT:-5}
SEGMENT=${TR_BENCH_SEGMENT:-1048576}
SOCKBUF=${TR_BENCH_SOCKBUF:-0}
T=$(mktemp -d /tmp/tr-bench-comm.XXXXXX)
trap 'rm -rf "$T"' EXIT
export TINYRING_JOB="bench-comm-$$"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

ours() {   # ours ALGO N
  local algo=$1 n=$2 p r
  # every rank on this host: the port spins in poll while N <= cores, as
  # Open MPI busy-polls (tr_posix_spin_for)
  export LOCAL_WORLD_SIZE=$n
  p=$(free_port)
  for r in $(seq 1 $((n - 1))); do
    timeout 300 "$BENCH" --init "tcp://127.0.0.1:$p" --rank "$r" --world "$n" --algo "$algo" \
      --sizes "$SIZES" --budget-ms "$BUDGET" --segment "$SEGMENT" --sockbuf "$SOCKBUF" >/dev/null &
  done
  timeout 300 "$BENCH" --init "tcp://127.0.0.1:$p" --rank 0 --world "$n" --algo "$algo" \
    --sizes "$SIZES" --budget-ms "$BUDGET" --segment "$SEGMENT" --sockbuf "$SOCKBUF" >>"$T/all.txt"
  wait
}

have_mpi=0
if [ -n "$MPI" ] && [ -x "$MPI" ] && command -v mpirun >/dev/null; then have_mpi=1; fi
theirs() { # theirs LABEL N MCA-ARGS...
  local label=$1 n=$2; shift 2
  timeout 300 mpirun --allow-run-as-root --oversubscribe -np "$n" "$@" \
    "$MPI" "$label" "$SIZES" "$BUDGET" >>"$T/all.txt" 2>"$T/mpi.err" ||
    { echo "bench-comm: mpirun $label N=$n failed: $(head -c 300 "$T/mpi.err")" >&2; }
}

echo "bench-comm: allreduce, float32 sum, loopback, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg);"
echo "bench-comm: ~$BUDGET ms per size, best of $REPEAT runs interleaved (ours, then Open MPI); segment $SEGMENT B"
for rep in $(seq "$REPEAT"); do
  for n in $WORLDS; do
    ours ring "$n"
    ours chain "$n"
    if [ $have_mpi = 1 ]; then
      theirs default "$n"
      theirs tcp "$n" --mca btl tcp,self --mca btl_tcp_if_include lo
    fi
  done
done
[ $have_mpi = 1 ] || echo "bench-comm: mpirun or mpicc not installed: Open MPI columns skipped (apt-get install openmpi-bin libopenmpi-dev)"

# Table: one row per (N, size); times in microseconds per allreduce, busbw in
# GB/s; ratio = Open MPI time / tinyring ring time (> 1: tinyring is faster).
awk -v mpi=$have_mpi '
  { key = $3 " " $4; id = $1 "/" $2;
    if (!((id, key) in t) || $6 + 0 < t[id, key] + 0) { t[id, key] = $6; bw[id, key] = $8 }
    if (!(key in seen)) { seen[key] = 1; order[++nk] = key } }
  END {
    printf "\n%-3s %10s | %10s %10s | %10s %10s | %8s %8s | %7s %7s\n", "N", "bytes",
      "ring us", "chain us", "mpi-sm us", "mpi-tcp us", "ring bw", "tcp bw", "x sm", "x tcp";
    for (i = 1; i <= nk; i++) {
      split(order[i], k, " "); key = order[i];
      r = t["tinyring/ring", key]; c = t["tinyring/chain", key];
      d = t["mpi/default", key]; p = t["mpi/tcp", key];
      printf "%-3s %10s | %10s %10s | %10s %10s | %8s %8s | %7s %7s\n", k[1], k[2],
        r, c, (mpi ? d : "-"), (mpi ? p : "-"), bw["tinyring/ring", key],
        (mpi ? bw["mpi/tcp", key] : "-"),
        (mpi && r > 0 && d > 0 ? sprintf("%.2f", d / r) : "-"),
        (mpi && r > 0 && p > 0 ? sprintf("%.2f", p / r) : "-");
    }
    print "\nus = microseconds per allreduce; bw = bus bandwidth GB/s = bytes/time*2(N-1)/N";
    print "mpi-sm: Open MPI defaults (shared-memory BTL between local ranks);";
    print "mpi-tcp: --mca btl tcp,self (TCP loopback, the transport tinyring uses).";
    print "x sm / x tcp: Open MPI time / tinyring ring time (above 1 = tinyring faster).";
  }' "$T/all.txt"
