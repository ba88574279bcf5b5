#!/usr/bin/env bash
# tinyring test: the lwIP port exports only tr_-prefixed names, and calls
# nothing from libc but memcpy/memcmp/memset (it must link into firmware
# with no OS: no malloc, no stdio, no time, no sockets).
#   test/lwip/symbols.sh build/libtr_lwip.a
set -u
. "$(dirname "$0")/../lib.sh"
lib=${1:?usage: symbols.sh LIB}
defined=$(nm -g --defined-only "$lib" | awk 'NF == 3 { print $3 }')
bad=$(echo "$defined" | grep -v '^tr_' || true)
check "port exports only tr_ names${bad:+ (not: $bad)}" test -z "$bad"
check "port exports tr_lwip_init, tr_lwip_connect, tr_lwip_transport" \
  bash -c "echo '$defined' | grep -qx tr_lwip_init && echo '$defined' | grep -qx tr_lwip_connect && echo '$defined' | grep -qx tr_lwip_transport"
undef=$(nm -g --undefined-only "$lib" | awk '{ print $2 }' | sort -u)
libc=$(echo "$undef" | grep -v -e '^tcp_' -e '^pbuf_' -e '^ip4\?_' -e '^sys_now$' -e '^lwip_' \
       -e '^tr_' -e '^mem\(cpy\|cmp\|set\|move\)$' || true)
check "port needs nothing from libc beyond mem*() ${libc:+(uses: $(echo $libc))}" test -z "$libc"
report lwip-symbols
