#!/usr/bin/env bash
# tinyring: multi-process tests of the POSIX port over loopback.
#   bash test/posix/run.sh build/test/posix/tr_posix_node
# Each rank is a separate process under `timeout`; the driver checks exit
# codes, messages and the result hashes the ranks write (bitwise agreement).
# Only 127.0.0.0/8 is used; ports are picked free by binding and releasing.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
NODE=$(realpath "$1")
T=$(mktemp -d /tmp/tr-posix.XXXXXX)
trap 'jobs -p | xargs -r kill -9 2>/dev/null; rm -rf "$T"' EXIT
export TINYRING_JOB="test-posix-$$"
LIM=30            # seconds any one rank may live

port() { "$NODE" free-port; }

# start NAME RANK ARGS...: one rank in the background; files $T/NAME.RANK.{err,rc,hash}
start() {
  local name=$1 r=$2; shift 2
  ( timeout $LIM "$NODE" --rank "$r" --out "$T/$name.$r.hash" "$@" 2>"$T/$name.$r.err" >/dev/null
    echo $? >"$T/$name.$r.rc" ) 2>/dev/null &    # (quiet "Killed" for the SIGKILL case)
}
# job NAME N ARGS...: N ranks on a fresh master port, waits for all of them.
job() {
  local name=$1 n=$2 r p; shift 2
  p=$(port)
  for r in $(seq 0 $((n - 1))); do start "$name" "$r" --init "tcp://127.0.0.1:$p" --world "$n" "$@"; done
  wait
}
rc_of() { cat "$T/$1.$2.rc" 2>/dev/null || echo none; }
# all_ok NAME N: every rank exited 0 and all wrote the same hash.
all_ok() {
  local name=$1 n=$2 r h0 ok=0
  h0=$(cat "$T/$name.0.hash" 2>/dev/null)
  for r in $(seq 0 $((n - 1))); do
    if [ "$(rc_of "$name" "$r")" != 0 ]; then
      echo "  $name rank $r: exit $(rc_of "$name" "$r"): $(head -c 300 "$T/$name.$r.err")" >&2; ok=1
    elif [ -z "$h0" ] || [ "$(cat "$T/$name.$r.hash" 2>/dev/null)" != "$h0" ]; then
      echo "  $name rank $r: result hash differs from rank 0's" >&2; ok=1
    fi
  done
  return $ok
}
# rank_fails NAME R CODE TEXT: rank R exited with CODE and said TEXT.
rank_fails() {
  local rc; rc=$(rc_of "$1" "$2")
  if [ "$rc" != "$3" ] || ! grep -qi -- "$4" "$T/$1.$2.err"; then
    echo "  $1 rank $2: exit $rc (want $3), stderr: $(head -c 300 "$T/$1.$2.err")" >&2; return 1
  fi
}

t0=$SECONDS
# --- collectives over N = 1..8 processes ------------------------------------
for n in 1 2 3 4 5 6 7 8; do
  job ring$n $n allreduce --algo ring --count 100003 --iters 2
  check "ring allreduce N=$n, 100003 floats: serial sum, bitwise equal" all_ok ring$n $n
  job chain$n $n allreduce --algo chain --count 4099 --iters 2
  check "chain allreduce N=$n, 4099 floats" all_ok chain$n $n
  job rb$n $n allreduce --algo rb --count 7 --iters 2
  check "reduce+bcast allreduce N=$n, 7 floats" all_ok rb$n $n
  job bc$n $n bcast --count 1001 --root $((n - 1))
  check "broadcast N=$n from rank $((n - 1))" all_ok bc$n $n
  job bar$n $n barrier --iters 20
  check "20 barriers N=$n" all_ok bar$n $n
done
for c in 0 1; do
  job small$c 5 allreduce --algo ring --count $c --iters 2
  check "ring allreduce N=5 of $c floats" all_ok small$c 5
done
job seg 3 allreduce --algo ring --count 300007 --iters 2 --segment 1024
check "ring allreduce N=3, 1 KiB segments" all_ok seg 3
job big 2 allreduce --algo ring --count 4194304 --iters 2
check "ring allreduce N=2 of 16 MiB" all_ok big 2
for n in 2 3; do
  job xfer$n $n xfer --count 33554432
  check "raw transport N=$n: 32 MiB pattern to the right neighbour" all_ok xfer$n $n
done
# Header-only messages: the port corks small sends (MSG_MORE) and must push
# them at the next call, or every one of these would wait ~200 ms.
s0=$SECONDS; job bar300 4 barrier --iters 300
check "300 barriers N=4" all_ok bar300 4
check "300 barriers N=4 take under 15 s, not 300 x 200 ms (took $((SECONDS - s0)) s)" test $((SECONDS - s0)) -lt 15
s0=$SECONDS; job zero300 3 allreduce --algo rb --count 0 --iters 300
check "300 reduce+bcast allreduces of 0 floats N=3" all_ok zero300 3
check "... take under 15 s (took $((SECONDS - s0)) s)" test $((SECONDS - s0)) -lt 15
s0=$SECONDS; job bc300 3 bcast --count 3 --root 1 --iters 300
check "300 broadcasts of 3 floats N=3" all_ok bc300 3
check "... take under 15 s (took $((SECONDS - s0)) s)" test $((SECONDS - s0)) -lt 15
echo "test-posix: collectives done in $((SECONDS - t0)) s"

# --- env:// (torchrun, Open MPI and Slurm variables) ------------------------
p=$(port)
for r in 0 1 2; do
  RANK=$r WORLD_SIZE=3 MASTER_ADDR=127.0.0.1 MASTER_PORT=$p start envt $r --init env:// allreduce --count 999
done; wait
check "env:// with RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT" all_ok envt 3
p=$(port)
for r in 0 1 2 3; do
  OMPI_COMM_WORLD_RANK=$r OMPI_COMM_WORLD_SIZE=4 MASTER_ADDR=localhost MASTER_PORT=$p \
    start envo $r --init env:// allreduce --count 999
done; wait
check "env:// with OMPI_COMM_WORLD_RANK/SIZE" all_ok envo 4
if command -v mpirun >/dev/null; then
  p=$(port)
  timeout $LIM mpirun --allow-run-as-root --oversubscribe -np 4 -x MASTER_ADDR=127.0.0.1 \
    -x MASTER_PORT=$p -x TINYRING_JOB "$NODE" --init env:// --out "$T/mpi.%r.hash" \
    allreduce --count 100003 --iters 2 >/dev/null 2>"$T/mpi.err"
  rc=$?; for r in 0 1 2 3; do echo $rc > "$T/mpi.$r.rc"; cp "$T/mpi.err" "$T/mpi.$r.err"; done
  check "env:// under mpirun -np 4 (OMPI_COMM_WORLD_RANK/SIZE)" all_ok mpi 4
else
  echo "test-posix: mpirun not installed, the mpirun launch is not tested"
fi
p=$(port)
for r in 0 1; do
  SLURM_PROCID=$r SLURM_NTASKS=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$p start envs $r --init env:// barrier
done; wait
check "env:// with SLURM_PROCID/SLURM_NTASKS" all_ok envs 2
RANK=0 WORLD_SIZE=2 start envm 0 --init env:// none; wait
check "env:// without MASTER_ADDR: clear error" rank_fails envm 0 22 "MASTER_ADDR"
RANK=2 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=1 start envr 0 --init env:// none; wait
check "env:// with RANK >= WORLD_SIZE: clear error" rank_fails envr 0 22 "not a rank"

# --- interface and address selection ----------------------------------------
p=$(port)
start ifc 0 --init tcp://127.0.0.1:$p --world 3 --iface lo allreduce --count 1000
start ifc 1 --init tcp://127.0.0.1:$p --world 3 --addr 127.0.0.2 allreduce --count 1000
start ifc 2 --init tcp://127.0.0.1:$p --world 3 allreduce --count 1000; wait
check "--iface lo, --addr 127.0.0.2 and the default address in one job" all_ok ifc 3
p=$(port)
for r in 0 1 2; do start m3 $r --init tcp://127.0.0.3:$p --world 3 allreduce --count 1000; done; wait
check "master on 127.0.0.3: rank 0 is announced at the address the others reached it at" all_ok m3 3
start ifn 0 --init tcp://127.0.0.1:$(port) --world 2 --iface tr-no-such-if none; wait
check "unknown interface: clear error" rank_fails ifn 0 22 "tr-no-such-if"

# --- strangers on the master port -------------------------------------------
# rank 0 is up; a silent connection (held 25 s, longer than the whole job may
# take), a garbage sender and a rank of another job arrive before the others.
p=$(port)
start str 0 --init tcp://127.0.0.1:$p --world 3 --handshake-ms 20000 allreduce --count 5000
for i in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null && break; sleep 0.1; done
( exec 3<>/dev/tcp/127.0.0.1/$p && sleep 25 ) 2>/dev/null & silent=$!
( exec 3<>/dev/tcp/127.0.0.1/$p && head -c 4096 /dev/urandom >&3 && sleep 1 ) 2>/dev/null &
( exec 3<>/dev/tcp/127.0.0.1/$p && printf 'GET / HTTP/1.0\r\n\r\n' >&3 && sleep 1 ) 2>/dev/null &
TINYRING_JOB=another-job start other 1 --init tcp://127.0.0.1:$p --world 3 none
sleep 0.5
s0=$SECONDS
start str 1 --init tcp://127.0.0.1:$p --world 3 allreduce --count 5000
start str 2 --init tcp://127.0.0.1:$p --world 3 allreduce --count 5000
while [ ! -e "$T/str.0.rc" ] || [ ! -e "$T/str.1.rc" ] || [ ! -e "$T/str.2.rc" ]; do
  [ $((SECONDS - s0)) -gt $LIM ] && break; sleep 0.1; done
took=$((SECONDS - s0))
kill $silent 2>/dev/null; wait
check "master port strangers (silent, garbage, HTTP) refused; job correct" all_ok str 3
check "a silent stranger does not delay the job (took ${took}s)" test $took -lt 10
check "a rank of another job is refused with a clear error" rank_fails other 1 52 "another job"

# --- strangers on a rank's ring listening port ------------------------------
p=$(port); lp=$(port)
start lst 0 --init tcp://127.0.0.1:$p --world 3 --handshake-ms 1500 allreduce --count 5000
start lst 1 --init tcp://127.0.0.1:$p --world 3 --listen-port $lp --handshake-ms 1500 allreduce --count 5000
for i in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/$lp) 2>/dev/null && break; sleep 0.1; done
( exec 3<>/dev/tcp/127.0.0.1/$lp && sleep 20 ) 2>/dev/null & silent=$!
( exec 3<>/dev/tcp/127.0.0.1/$lp && head -c 100 /dev/urandom >&3 && sleep 1 ) 2>/dev/null &
# a well-formed link hello claiming to be rank 0, with a foreign token
( exec 3<>/dev/tcp/127.0.0.1/$lp && printf 'TRL1\001\000\000\000\001\002\003\004\005\006\007\010\000\000\000\000\003\000\000\000' >&3 && sleep 1 ) 2>/dev/null &
sleep 0.3
start lst 2 --init tcp://127.0.0.1:$p --world 3 allreduce --count 5000
while [ ! -e "$T/lst.0.rc" ] || [ ! -e "$T/lst.1.rc" ] || [ ! -e "$T/lst.2.rc" ]; do sleep 0.1; done
kill $silent 2>/dev/null; wait
check "ring-port strangers (silent, garbage, wrong token) refused; job correct" all_ok lst 3

# --- static table (tr_posix_connect_table): no master -----------------------
# table N: N loopback entries (127.0.0.1+r : a free port each).
table() { local r t=""; for r in $(seq 0 $(($1 - 1))); do t="$t${t:+,}127.0.0.$((r + 1)):$(port)"; done; echo "$t"; }
for n in 3 4; do
  tb=$(table $n)
  for r in $(seq $((n - 1)) -1 0); do start tab$n $r --table "$tb" allreduce --algo ring --count 100003 --iters 2; done
  wait
  check "static table N=$n (started last rank first): allreduce = serial sum, bitwise equal" all_ok tab$n $n
done
# strangers on rank 1's table port: silent, garbage, and a rank of another
# job (its table's rank 1 entry is this job's rank 1) that must be told why.
tb=$(table 3); lp=${tb#*,}; lp=${lp%%,*}; lp=${lp##*:}
start tstr 1 --table "$tb" --handshake-ms 1500 allreduce --count 5000
for i in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.2/$lp) 2>/dev/null && break; sleep 0.1; done
( exec 3<>/dev/tcp/127.0.0.2/$lp && sleep 20 ) 2>/dev/null & silent=$!
( exec 3<>/dev/tcp/127.0.0.2/$lp && head -c 100 /dev/urandom >&3 && sleep 1 ) 2>/dev/null &
TINYRING_JOB=another-job start tother 0 --table "127.0.0.9:$(port),${tb#*,}" --join-ms 5000 none
sleep 0.5
start tstr 0 --table "$tb" allreduce --count 5000
start tstr 2 --table "$tb" allreduce --count 5000
while [ ! -e "$T/tstr.0.rc" ] || [ ! -e "$T/tstr.1.rc" ] || [ ! -e "$T/tstr.2.rc" ]; do sleep 0.1; done
kill $silent 2>/dev/null; wait
check "static table: strangers and another job on a rank's port refused; job correct" all_ok tstr 3
check "static table: the rank of another job is told so" rank_fails tother 0 52 "another job (job token differs)"
# a missing rank: both its neighbours time out and name it
tb=$(table 4)
for r in 0 1 3; do start tmiss $r --table "$tb" --join-ms 1500 none; done; wait
check "static table, rank 2 missing: its left neighbour names it" rank_fails tmiss 1 110 "right neighbour rank 2 at 127.0.0.3"
check "static table, rank 2 missing: its right neighbour names it" rank_fails tmiss 3 110 "left neighbour rank 2 (127.0.0.3"
# this rank's table port is taken
p=$(port)
"$NODE" hold $p 20 > "$T/thold.out" & holder=$!
for i in $(seq 50); do grep -q holding "$T/thold.out" 2>/dev/null && break; sleep 0.1; done
start tinuse 0 --table "127.0.0.1:$p,127.0.0.2:$(port)" none
while [ ! -e "$T/tinuse.0.rc" ]; do sleep 0.1; done
kill $holder 2>/dev/null; wait
check "static table, own port in use: TR_ERR_ADDRINUSE" rank_fails tinuse 0 98 "127.0.0.1:$p is already in use"
start tbad 0 --table "127.0.0.1:$(port),0.0.0.0:$(port)" none; wait
check "static table entry without an address: TR_ERR_INVAL" rank_fails tbad 0 22 "entry of rank 1 (0.0.0.0:"
start tparse 0 --table "127.0.0.1:$(port),127.0.0.1:0" none; wait
check "table entry with port 0 does not parse: TR_ERR_INVAL" rank_fails tparse 0 22 "'127.0.0.1:0' is not IPV4:PORT"
p=$(port); start tdup 1 --table "127.0.0.1:$p,127.0.0.1:$p" none; wait
check "two ranks on one table entry: TR_ERR_INVAL" rank_fails tdup 1 22 "ranks 0 and 1 share"
start twr 0 --table "127.0.0.1:$(port),127.0.0.2:$(port)" --world 3 none; wait
check "--world disagrees with the table: usage error" rank_fails twr 0 2 "has 2 entries"

# --- clear errors ------------------------------------------------------------
p=$(port)
"$NODE" hold $p 20 > "$T/hold.out" & holder=$!
for i in $(seq 50); do grep -q holding "$T/hold.out" 2>/dev/null && break; sleep 0.1; done
start inuse 0 --init tcp://127.0.0.1:$p --world 2 none; sleep 0.1
while [ ! -e "$T/inuse.0.rc" ]; do sleep 0.1; done
kill $holder 2>/dev/null; wait
check "master port in use: TR_ERR_ADDRINUSE" rank_fails inuse 0 98 "already in use"

p=$(port)
start wm 0 --init tcp://127.0.0.1:$p --world 2 none
start wm 1 --init tcp://127.0.0.1:$p --world 3 none; wait
check "world sizes differ: the master says so" rank_fails wm 0 52 "world sizes differ"
check "world sizes differ: the rank says so" rank_fails wm 1 52 "world sizes differ"

p=$(port)
start tok 0 --init tcp://127.0.0.1:$p --world 2 --join-ms 2000 none
TINYRING_JOB=job-b start tok 1 --init tcp://127.0.0.1:$p --world 2 none; wait
check "job token differs: the rank is refused" rank_fails tok 1 52 "job token differs"
check "job token differs: the master never saw rank 1 join" rank_fails tok 0 110 "rank(s) 1 never joined"

p=$(port)
start dup 0 --init tcp://127.0.0.1:$p --world 3 none
start dup 1 --init tcp://127.0.0.1:$p --world 3 none
sleep 0.3
start dup2 1 --init tcp://127.0.0.1:$p --world 3 none; wait
check "a rank claimed twice aborts the job" rank_fails dup 0 52 "registered twice"

p=$(port)
start miss 0 --init tcp://127.0.0.1:$p --world 4 --join-ms 1500 none
start miss 1 --init tcp://127.0.0.1:$p --world 4 --join-ms 1500 none
start miss 3 --init tcp://127.0.0.1:$p --world 4 --join-ms 1500 none; wait
check "missing rank: the master names it" rank_fails miss 0 110 "rank(s) 2 never joined"
check "missing rank: the other ranks name it" rank_fails miss 3 110 "rank(s) 2 never joined"

p=$(port)
for r in 1 2 3; do start late $r --init tcp://127.0.0.1:$p --world 4 allreduce --count 5000; done
sleep 1.5          # the others retry until the master is up
start late 0 --init tcp://127.0.0.1:$p --world 4 allreduce --count 5000; wait
check "ranks started 1.5 s before the master wait for it" all_ok late 4

p=$(port)
start mdie 0 --init tcp://127.0.0.1:$p --world 3 --pid-file "$T/mdie.pid" none
start mdie 1 --init tcp://127.0.0.1:$p --world 3 none
sleep 1
kill -9 "$(cat "$T/mdie.pid")"
wait
check "the master dies during the rendezvous: the rank says so" \
  rank_fails mdie 1 104 "closed the connection before answering"

start unr 1 --init tcp://127.0.0.1:$(port) --world 2 --connect-ms 800 none; wait
check "master unreachable by the deadline: TR_ERR_UNREACH" rank_fails unr 1 113 "not reachable within 800 ms"

# --- a rank killed mid-collective ---------------------------------------------
p=$(port)
for r in 0 1 2 3; do
  start kill $r --init tcp://127.0.0.1:$p --world 4 --timeout-ms 5000 --pid-file "$T/kill.$r.pid" \
    allreduce --count 1048576 --iters 1000000
done
sleep 1.5
s0=$SECONDS
kill -9 "$(cat "$T/kill.2.pid")"
wait
took=$((SECONDS - s0))
for r in 0 1 3; do
  rc=$(rc_of kill $r)
  check "rank $r exits with an error (not a hang) after rank 2 is killed: exit $rc" \
    test "$rc" != 0 -a "$rc" != 124 -a "$rc" != none
done
check "the survivors name a closed link or a timeout" \
  grep -qiE "closed|timed out|timeout" "$T/kill.1.err" "$T/kill.3.err"
check "the survivors exit within the collective timeout (${took}s)" test "$took" -le 12

echo "test-posix: $((SECONDS - t0)) s"
report posix
