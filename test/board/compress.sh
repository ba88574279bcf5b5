#!/usr/bin/env bash
# tinyring test/board: compressed rings of boards of two targets and hosts.
# The mixed ring of mixed.sh (test/board/lan.sh: rank 0 board 198.18.0.10,
# a Cortex-M4F on mps2-an386; rank 1 host 198.18.0.1; rank 2 board
# 198.18.0.11, a Cortex-M55 on mps3-an547 (board.mk, board-m55-image); rank
# 3 host 198.18.0.2; every link joins a board and a host, lwIP on one end,
# Linux TCP on the other) trains
# under --compress int8 (with --checkpoint-every 2), int4, and bf16 with
# --average-every 2 (the anchor path: the parameters' change goes over the
# compressed ring). Checked for each: every rank's parameter hash after every
# step and its final parameter and BN hashes equal those of four mnist_ring
# processes alone (--nproc 4) with the same flags, and each setting trains
# bits of its own. Then: board rank 0's checkpoint of the int8 ring (through
# semihosting) is byte for byte the host-only ring's, carries the residual
# (state flag bit 2), and mnist_ring --resume goes on from it; a board and a
# host that differ only in --compress refuse each other at the hello.
# Suite "board_compress".
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"
STEPS=3
source test/lib.sh

SUITE=board_compress
source test/board/lan.sh

steps_of() { sed -n "s/^param-hash rank $2 //p" "$1"; }
base=(--batch 2 --max-steps "$STEPS" --seed 7 --lr 0.01 --debug-param-hash)
refs=()
# ck WHO: with CKPT=1, --checkpoint $work/TAG-WHO.ckpt (only ring rank 0 writes)
ck() { [ "${CKPT:-0}" = 1 ] && echo "--checkpoint $work/$tag-$1.ckpt"; }
# ring TAG FLAGS...: the mixed ring and the host-only reference, compared
ring() {
  local tag=$1 r f ref t0 t1
  shift
  t0=$(date +%s)
  board 0 tap0 52:54:00:18:00:10 "$tag" --job-token "cz-$tag" "$@" $(ck 0) & pids+=($!)
  host 1 "$tag" --job-token "cz-$tag" "$@" $(ck 1) & pids+=($!)
  BOARD_TARGET=m55 board 2 tap1 52:54:00:18:00:11 "$tag" --job-token "cz-$tag" "$@" $(ck 2) &
  pids+=($!)
  host 3 "$tag" --job-token "cz-$tag" "$@" $(ck 3) & pids+=($!)
  wait
  t1=$(date +%s)
  grep -h "^train: convnet" "$work/$tag-rank0.log" | sed "s/^/  $tag: /"
  for r in 0 1 2 3; do
    check "$tag: rank $r exit 0 (got $(cat "$work/$tag-rank$r.rc"))" \
      [ "$(cat "$work/$tag-rank$r.rc")" = 0 ]
  done
  timeout 120 "$MR" --nproc 4 --data "$work/data" --quiet --job-token "cz-$tag" "$@" $(ck ref) \
    >"$work/$tag-ref.out" 2>"$work/$tag-ref.err"
  check "$tag: host-only reference (--nproc 4) exit 0" [ $? -eq 0 ]
  ref=$(final_of "$work/$tag-ref.err" 0)
  refs+=("$ref")
  echo "  $SUITE: $tag: $STEPS steps in $((t1 - t0)) s; final hashes of the reference '$ref'"
  for r in 0 1 2 3; do
    f=$(final_of "$work/$tag-rank$r.log" $r)
    check "$tag: rank $r: parameter hash after each of $STEPS steps and final hashes == host-only run's" \
      sh -c '[ "$(echo "$1" | grep -c step)" -eq "$3" ] && [ "$1" = "$2" ] && [ -n "$4" ] && [ "$4" = "$5" ]' \
      _ "$(steps_of "$work/$tag-rank$r.log" $r)" "$(steps_of "$work/$tag-ref.err" $r)" "$STEPS" \
      "$f" "$ref"
  done
}

# --- 1. int8, board rank 0 writing its checkpoint at step 2
CKPT=1 ring int8 "${base[@]}" --compress int8 --checkpoint-every 2
# --- 2. int4
ring int4 "${base[@]}" --compress int4
# --- 3. bf16 with periodic averaging every 2 steps
ring bf16-avg2 "${base[@]}" --compress bf16 --average-every 2
check "board rank 0 ran on a Cortex-M4, board rank 2 on a Cortex-M55" \
  sh -c 'grep -q "^train: cpu Cortex-M4\$" "$1" && grep -q "^train: cpu Cortex-M55\$" "$2"' \
  _ "$work/int8-rank0.log" "$work/int8-rank2.log"
check "the boards said which codec they run (compress int8, int4, bf16)" \
  sh -c 'grep -q "compress int8," "$1" && grep -q "compress int4," "$2" && grep -q "compress bf16, params averaged every 2 steps," "$3"' \
  _ "$work/int8-rank0.log" "$work/int4-rank2.log" "$work/bf16-avg2-rank0.log"
timeout 60 "$MR" --nproc 4 --data "$work/data" --quiet "${base[@]}" >/dev/null 2>"$work/none-ref.err"
refs+=("$(final_of "$work/none-ref.err" 0)")
check "each setting (int8, int4, bf16 + averaging, none) trains bits of its own" \
  sh -c '[ "$(printf "%s\n" "$@" | grep -c .)" -eq 4 ] && [ "$(printf "%s\n" "$@" | sort -u | wc -l)" -eq 4 ]' \
  _ "${refs[@]}"

# --- 4. the board's state bytes: board rank 0 (ring rank 0) and the
# host-only ring's rank 0 wrote the int8 ring's checkpoint at step 2
# (--checkpoint-every 2; none at the stop): the same bytes, the residual
# included (state flag bit 2 at offset 88)
flags=$(od -An -tu4 -j88 -N4 "$work/int8-0.ckpt" 2>/dev/null | tr -d ' ')
check "board rank 0's int8 checkpoint carries the residual (state flags ${flags:-none}, bit 2)" \
  sh -c '[ -n "$1" ] && [ $(($1 & 4)) -ne 0 ] && [ ! -e "$2.tmp" ]' _ "$flags" "$work/int8-0.ckpt"
check "board rank 0's checkpoint == the host-only ring's, byte for byte ($(stat -c %s "$work/int8-0.ckpt" 2>/dev/null) bytes)" \
  cmp "$work/int8-0.ckpt" "$work/int8-ref.ckpt"
cp "$work/int8-0.ckpt" "$work/resume.ckpt"
timeout 60 "$MR" --nproc 4 --data "$work/data" --quiet --batch 2 --max-steps 4 --seed 7 --lr 0.01 \
  --compress int8 --checkpoint-every 2 --checkpoint "$work/resume.ckpt" --resume --debug-param-hash \
  >"$work/resume.out" 2>"$work/resume.err"; st=$?
sed 's/^/  resume: /' "$work/resume.out"
check "mnist_ring --resume went on from the board's checkpoint (2 steps done) to step 4, ranks equal" \
  sh -c '[ "$1" = 0 ] && grep -q "^resuming from .*resume.ckpt: .*(2 steps done)" "$2" &&
         [ "$(grep -c "^param-hash rank [0-3] step 4 " "$3")" -eq 4 ] &&
         [ "$(sed -n "s/^param-hash rank [0-3] step 4 //p" "$3" | sort -u | wc -l)" -eq 1 ]' \
  _ "$st" "$work/resume.out" "$work/resume.err"
timeout 60 "$MR" --nproc 4 --data "$work/data" --quiet --batch 2 --max-steps 4 --seed 7 --lr 0.01 \
  --compress none --checkpoint-every 2 --checkpoint "$work/resume.ckpt" --resume >"$work/resume-none.out" 2>&1
check "the same checkpoint under --compress none is refused (it holds a residual)" test $? -ne 0

# --- 5. a board and a host that differ only in --compress refuse each other
printf '0 198.18.0.10:5000\n1 198.18.0.1:5001\n' >"$work/peers2"
mm=(--job-token cz-mm --batch 2 --max-steps 2 --seed 7 --lr 0.01 --timeout 6 --peers "$work/peers2")
board 0 tap0 52:54:00:18:00:10 mm "${mm[@]}" --compress int8 & pids+=($!)
host 1 mm "${mm[@]}" --compress int4 & pids+=($!)
wait
sed 's/^/  mismatch: /' "$work/mm-rank0.log" "$work/mm-rank1.log" | grep -iv "^ *mismatch: elastic"
check "int8 board vs int4 host: both exit 1 at the hello (board $(cat "$work/mm-rank0.rc"), host $(cat "$work/mm-rank1.rc"))" \
  sh -c '[ "$1" = 1 ] && [ "$2" = 1 ] && grep -q "configurations differ" "$3" && ! grep -q "^param-hash" "$3"' \
  _ "$(cat "$work/mm-rank0.rc")" "$(cat "$work/mm-rank1.rc")" "$work/mm-rank1.log"
report "$SUITE"
