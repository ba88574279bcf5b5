#!/usr/bin/env bash
# test-symbols: core objects must not call allocation, stdio, exit/abort or
# any other libc function (only what a freestanding compiler may emit for
# struct copies and loops: memcpy, memset, memmove), and every symbol they
# export must carry the tr_ prefix (mongoose's nm check).
# usage: symbols.sh build/core/*.o
. "$(dirname "$0")/../lib.sh"
NM=${NM:-nm}
[ $# -gt 0 ] || { fail "no objects given"; report core_symbols; exit 1; }
allowed_undef='^(memcpy|memset|memmove|tr_[A-Za-z0-9_]*)$'
forbidden='^(malloc|calloc|realloc|free|printf|fprintf|sprintf|snprintf|puts|putchar|fopen|fclose|fwrite|fread|exit|_exit|abort|assert|__assert_fail|expf|logf|sqrtf|exp|log|sqrt)$'
for o in "$@"; do
  [ -f "$o" ] || { fail "$o missing"; continue; }
  undef=$($NM -u "$o" | awk '{print $NF}')
  bad=$(printf '%s\n' $undef | grep -Ev "$allowed_undef" || true)
  forb=$(printf '%s\n' $undef | grep -E "$forbidden" || true)
  if [ -n "$forb" ]; then fail "$o calls forbidden: $(echo $forb)"; else pass; fi
  if [ -n "$bad" ]; then fail "$o needs non-freestanding symbols: $(echo $bad)"; else pass; fi
  exported=$($NM -g --defined-only "$o" | awk '{print $NF}')
  badx=$(printf '%s\n' $exported | grep -v '^$' | grep -Ev '^tr_' || true)
  if [ -n "$badx" ]; then fail "$o exports without tr_ prefix: $(echo $badx)"; else pass; fi
done
# the check itself must catch a violation: an object calling malloc and
# exporting an unprefixed name
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
printf '#include <stdlib.h>\nvoid *leaky(void){return malloc(4);}\n' > "$tmp/bad.c"
if ${CC:-cc} -c "$tmp/bad.c" -o "$tmp/bad.o" 2>/dev/null; then
  u=$($NM -u "$tmp/bad.o" | awk '{print $NF}' | grep -E "$forbidden" || true)
  x=$($NM -g --defined-only "$tmp/bad.o" | awk '{print $NF}' | grep -Ev '^tr_' || true)
  if [ "$u" = malloc ] && [ "$x" = leaky ]; then pass; else fail "self-check did not flag malloc/leaky"; fi
else
  fail "self-check object did not compile"
fi
report core_symbols
