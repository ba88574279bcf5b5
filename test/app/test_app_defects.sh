#!/usr/bin/env bash
# test/app: the command line, file and data defects that adversarial testing
# found in mnist_ring (issue 32), one regression check each: every check here
# failed on the code before its fix. Usage: test_app_defects.sh BUILD_DIR.
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
. "$here/test/lib.sh"
B=${1:-build}
MR=$B/mnist_ring
T=$(mktemp -d /tmp/tr_test_defects.XXXXXX)
trap 'rm -rf "$T"' EXIT
TO="timeout -k 5"

mkdir -p "$T/d" && "$B/test/app/gen_idx" "$T/d" 200 50 7 gz >/dev/null ||
  { fail "generate data"; report app_defects; exit 1; }
D="$T/d"
free_port() { "$B/test/app/free_port" "$@"; }
# run NAME ARGS...: mnist_ring with its stdout, stderr and status in $T/NAME.{o,e,st}
run() {
  local name=$1; shift
  $TO 60 "$MR" "$@" >"$T/$name.o" 2>"$T/$name.e"; echo $? >"$T/$name.st"
}
st_of() { cat "$T/$1.st"; }
# refused NAME "MESSAGE": exit 2, the message on stderr, nothing trained
refused() {
  check "$1: exit 2 (got $(st_of "$1")), saying '$2', before training" \
    sh -c '[ "$(cat "$1.st")" = 2 ] && grep -qF -- "$2" "$1.e" && ! grep -q "^epoch " "$1.o"' _ "$T/$1" "$2"
}

# --- --peers: a comment longer than the line buffer stays a comment (its
# tail "1 127.0.0.1:9" was read as a second rank before)
pad=$(printf '%*s' 520 '' | tr ' ' x)
printf '#%s 1 127.0.0.1:9\n0 127.0.0.1:%s\n' "${pad:0:509}" "$(free_port)" >"$T/peers-long"
run peers-long --data "$D" --peers "$T/peers-long" --rank 0 --world-size 1 --max-steps 1 --quiet
check "--peers: a 530-byte comment line is one comment: world 1, exit $(st_of peers-long)" \
  sh -c '[ "$(cat "$1.st")" = 0 ] && ! grep -q "ranks" "$1.e"' _ "$T/peers-long"
# a long entry line is still refused as too long
printf '0 127.0.0.1:7001 %s\n' "$pad" >"$T/peers-longentry"
run peers-longentry --data "$D" --peers "$T/peers-longentry" --rank 0
refused peers-longentry "line 1: too long"

# --- negative numbers behind a space
run seed-neg --data "$D" --seed " -1" --max-steps 1 --quiet
refused seed-neg "--seed: ' -1' is not a whole number"
run steps-neg --data "$D" --max-steps " -1" --quiet
refused steps-neg "--max-steps: ' -1' is not a whole number"
run lr-tiny --data "$D" --lr 1e-50 --max-steps 1 --quiet
refused lr-tiny "--lr: '1e-50'"
check "--lr 1e-50: the message says it would be 0 as a float" grep -q "float" "$T/lr-tiny.e"

# --- --plot / --plot-from: no gnuplot commands from a file name; a missing CSV named
printf 'epoch,global_step,train_loss,train_acc,test_loss,test_acc,samples_per_s,comm_share,seconds\n1,2,0.5,0.8,0.6,0.7,100,0.1,1\n' >"$T/m.csv"
nl=$'\n'
run plot-nl --plot-from "$T/m.csv" --plot "$T/a.png${nl}system \"touch $T/pwned\"${nl}"
check "--plot with a newline in the name: exit 2 (got $(st_of plot-nl)), no command run" \
  sh -c '[ "$(cat "$1.st")" = 2 ] && [ ! -e "$2" ] && grep -q "newline" "$1.e"' _ "$T/plot-nl" "$T/pwned"
run plotfrom-nl --plot-from "$T/m.csv${nl}system \"touch $T/pwned2\"${nl}" --plot "$T/b.png"
check "--plot-from with a newline in the name: exit 2 (got $(st_of plotfrom-nl)), no command run" \
  sh -c '[ "$(cat "$1.st")" = 2 ] && [ ! -e "$2" ]' _ "$T/plotfrom-nl" "$T/pwned2"
run plot-train-nl --data "$D" --max-steps 1 --quiet --plot "$T/c.png${nl}x"
refused plot-train-nl "newline"
run plot-missing --plot-from "$T/nothere.csv" --plot "$T/n.png"
check "--plot-from a missing CSV: exit 2 (got $(st_of plot-missing)), names it, no PNG, no gnuplot hint" \
  sh -c '[ "$(cat "$1.st")" = 2 ] && grep -q "nothere.csv: cannot read" "$1.e" && ! grep -q gnuplot-nox "$1.e" && [ ! -e "$2" ]' \
  _ "$T/plot-missing" "$T/n.png"

# --- --min-ranks larger than the world
run minr-nproc --data "$D" --nproc 2 --elastic --min-ranks 3 --max-steps 1 --quiet
refused minr-nproc "--min-ranks 3 is more than the 2 ranks"
run minr-tcp --data "$D" --elastic --min-ranks 2 --init-method "tcp://127.0.0.1:$(free_port)" \
  --rank 0 --world-size 1 --max-steps 1 --quiet
refused minr-tcp "--min-ranks 2 is more than the 1 rank"
printf '0 127.0.0.1:%s\n' "$(free_port)" >"$T/peers-one"
run minr-peers --data "$D" --elastic --min-ranks 2 --peers "$T/peers-one" --rank 0 --max-steps 1 --quiet
refused minr-peers "--min-ranks 2 is more than the 1 rank"
RANK=0 WORLD_SIZE=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=$(free_port) \
  run minr-env --data "$D" --elastic --min-ranks 2 --init-method env:// --max-steps 1 --quiet
refused minr-env "--min-ranks 2 is more than the 1 rank"
run minr-one --data "$D" --elastic --min-ranks 2 --max-steps 1 --quiet
refused minr-one "--min-ranks 2 is more than the 1 rank"

# --- init methods: mistakes are usage errors (exit 2)
run tcp-port --data "$D" --init-method tcp://127.0.0.1:99999 --rank 0 --world-size 2 --timeout 2
refused tcp-port "bad master port \"99999\""
run tcp-noport --data "$D" --init-method tcp://127.0.0.1:x --rank 0 --world-size 2 --timeout 2
refused tcp-noport "bad master port \"x\""
env -u RANK -u WORLD_SIZE -u MASTER_ADDR -u MASTER_PORT -u OMPI_COMM_WORLD_RANK -u OMPI_COMM_WORLD_SIZE \
  -u SLURM_PROCID -u SLURM_NTASKS -u PMI_RANK -u PMI_SIZE \
  $TO 30 "$MR" --data "$D" --init-method env:// --timeout 2 >"$T/env-none.o" 2>"$T/env-none.e"
echo $? >"$T/env-none.st"
refused env-none "env://: no rank in the environment"
RANK=0 WORLD_SIZE=2 $TO 30 env -u MASTER_ADDR -u MASTER_PORT "$MR" --data "$D" --init-method env:// --timeout 2 \
  >"$T/env-nomaster.o" 2>"$T/env-nomaster.e"
echo $? >"$T/env-nomaster.st"
refused env-nomaster "MASTER_ADDR and MASTER_PORT must be set"

# --- output files into a directory that is not there: refused before training
run metrics-nodir --data "$D" --epochs 1 --quiet --metrics "$T/nodir/m.csv"
refused metrics-nodir "--metrics $T/nodir/m.csv: directory $T/nodir"
run model-nodir --data "$D" --epochs 1 --quiet --save-model "$T/nodir/model.trm"
refused model-nodir "--save-model $T/nodir/model.trm: directory $T/nodir"
run plot-nodir --data "$D" --epochs 1 --quiet --plot "$T/nodir/c.png"
refused plot-nodir "$T/nodir/c.png"
mkdir "$T/adir"
run model-isdir --data "$D" --epochs 1 --quiet --save-model "$T/adir"
refused model-isdir "--save-model $T/adir: is a directory"
run nproc-model-nodir --data "$D" --nproc 2 --epochs 1 --quiet --save-model "$T/nodir/model.trm"
refused nproc-model-nodir "--save-model $T/nodir/model.trm: directory $T/nodir"

# --- checkpoints of elastic and fixed runs: the refusal names --elastic
run ck-fixed --data "$D" --epochs 2 --max-steps 1 --quiet --checkpoint "$T/fixed.ck" --checkpoint-every 1
run ck-fixed-as-el --data "$D" --epochs 2 --quiet --elastic --checkpoint "$T/fixed.ck" --checkpoint-every 1 --resume
check "a fixed run's checkpoint resumed with --elastic: refused (exit $(st_of ck-fixed-as-el)), naming --elastic" \
  sh -c '[ "$(cat "$1.st")" = 1 ] && grep -q -- "without --elastic" "$1.e"' _ "$T/ck-fixed-as-el"
run ck-el --data "$D" --epochs 2 --max-steps 1 --quiet --elastic --checkpoint "$T/el.ck" --checkpoint-every 1
run ck-el-as-fixed --data "$D" --epochs 2 --quiet --checkpoint "$T/el.ck" --checkpoint-every 1 --resume
check "an elastic run's checkpoint resumed without --elastic: refused (exit $(st_of ck-el-as-fixed)), naming --elastic" \
  sh -c '[ "$(cat "$1.st")" = 1 ] && grep -q -- "written by an --elastic run" "$1.e"' _ "$T/ck-el-as-fixed"

# --- gzip'd data: a missing trailer is truncated, a bad CRC is corrupt
lbl=train-labels-idx1-ubyte.gz
for cut in 1 4 8; do
  mkdir -p "$T/cut$cut"; cp "$D"/* "$T/cut$cut/"
  head -c -$cut "$D/$lbl" >"$T/cut$cut/$lbl"
  run cut$cut --data "$T/cut$cut" --max-steps 1 --quiet --metrics "$T/cut$cut/m.csv"
  check "gz cut $cut bytes short (the trailer): exit 2 (got $(st_of cut$cut)), 'truncated' naming the file, nothing written" \
    sh -c '[ "$(cat "$1.st")" = 2 ] && grep -q "$2: truncated" "$1.e" && [ ! -e "$3" ]' \
    _ "$T/cut$cut" "$T/cut$cut/$lbl" "$T/cut$cut/m.csv"
done
mkdir -p "$T/crc"; cp "$D"/* "$T/crc/"
sz=$(stat -c %s "$D/$lbl")
b=$(od -An -tu1 -j $((sz - 8)) -N1 "$D/$lbl" | tr -d ' ')
printf "$(printf '\\%03o' $(((b + 1) % 256)))" | dd of="$T/crc/$lbl" bs=1 seek=$((sz - 8)) conv=notrunc status=none
run crc --data "$T/crc" --max-steps 1 --quiet
check "gz with a wrong CRC: exit 2 (got $(st_of crc)), 'corrupt' naming the file, not 'truncated'" \
  sh -c '[ "$(cat "$1.st")" = 2 ] && grep -q "$2: corrupt" "$1.e" && ! grep -q truncated "$1.e"' _ "$T/crc" "$T/crc/$lbl"

report app_defects
