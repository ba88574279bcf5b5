#!/usr/bin/env bash
# Fetches lwIP 2.1 from Debian's source package (apt-get source lwip) and
# unpacks it into third_party/lwip (gitignored; never committed).
#
#   port/lwip/get-lwip.sh [DEST]     DEST defaults to third_party/lwip
#
# Idempotent: does nothing when DEST already holds an lwIP 2.1 tree. Needs
# dpkg-dev (dpkg-source) and a deb-src entry for the Debian archive; when apt
# knows no source for lwip, it adds deb-src next to the existing deb entries
# (deb822 .sources files and one-line .list files alike) and runs
# apt-get update. Root (or sudo) is needed only for that step.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
dest=${1:-$here/third_party/lwip}

is_lwip21() {
  [ -f "$1/src/include/lwip/init.h" ] && [ -f "$1/src/core/tcp.c" ] &&
    grep -q '#define LWIP_VERSION_MAJOR *2' "$1/src/include/lwip/init.h" &&
    grep -q '#define LWIP_VERSION_MINOR *1' "$1/src/include/lwip/init.h"
}
if is_lwip21 "$dest"; then exit 0; fi

SUDO=
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; fi

command -v dpkg-source >/dev/null || {
  echo "get-lwip: installing dpkg-dev (for dpkg-source)"
  $SUDO apt-get install -y -q --no-install-recommends dpkg-dev >/dev/null
}

have_src() { apt-cache showsrc lwip 2>/dev/null | grep -q '^Package: lwip'; }

add_deb_src() {
  local f changed=0
  # deb822: "Types: deb" -> "Types: deb deb-src"
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -e "$f" ] || continue
    if grep -qE '^Types:.*\bdeb\b' "$f" && ! grep -qE '^Types:.*deb-src' "$f"; then
      $SUDO sed -i -E 's/^Types:[[:space:]]*deb[[:space:]]*$/Types: deb deb-src/' "$f"
      changed=1
    fi
  done
  # one-line format: add a deb-src twin of every deb line, in a file of our own
  local list=/etc/apt/sources.list.d/tinyring-deb-src.list
  if [ ! -e "$list" ]; then
    local lines
    lines=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
            sed -n -E 's/^[[:space:]]*deb[[:space:]]+/deb-src /p' | sort -u || true)
    if [ -n "$lines" ]; then
      printf '# added by tinyring port/lwip/get-lwip.sh\n%s\n' "$lines" | $SUDO tee "$list" >/dev/null
      changed=1
    fi
  fi
  [ "$changed" -eq 1 ] || echo "get-lwip: found no deb entry to pair with deb-src" >&2
}

if ! have_src; then
  $SUDO apt-get update -q >/dev/null 2>&1 || true
fi
if ! have_src; then
  echo "get-lwip: adding deb-src entries for apt"
  add_deb_src
  $SUDO apt-get update -q >/dev/null
  have_src || { echo "get-lwip: apt still knows no source package lwip" >&2; exit 1; }
fi

work=$(mktemp -d "$(dirname "$dest")/.get-lwip.XXXXXX" 2>/dev/null ||
       { mkdir -p "$(dirname "$dest")"; mktemp -d "$(dirname "$dest")/.get-lwip.XXXXXX"; })
trap 'rm -rf "$work"' EXIT
echo "get-lwip: apt-get source lwip"
(cd "$work" && apt-get source -q lwip >/dev/null 2>"$work/err.log") || {
  cat "$work/err.log" >&2; exit 1; }
tree=$(find "$work" -mindepth 1 -maxdepth 1 -type d -name 'lwip-*' | head -n1)
is_lwip21 "$tree" || { echo "get-lwip: unpacked tree is not lwIP 2.1: $tree" >&2; exit 1; }
rm -rf "$dest"
mv "$tree" "$dest"
echo "get-lwip: lwIP $(sed -n -E 's/^#define LWIP_VERSION_(MAJOR|MINOR|REVISION) *([0-9]+).*/\2/p' "$dest/src/include/lwip/init.h" | paste -sd.) in $dest"
