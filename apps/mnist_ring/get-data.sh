#!/usr/bin/env bash
# Finds training data for mnist_ring and prints its directory on stdout
# (messages go to stderr). In order:
#   1. data/ (or $TR_DATA) already holding the four IDX files (.gz or raw,
#      also in torchvision's MNIST/raw layout);
#   2. MNIST downloaded into data/ with its MD5 sums checked, where the
#      network allows (5 s connect timeout: fails fast when it does not);
#   3. Debian's dataset-fashion-mnist (installed if missing, needs root or
#      sudo), used from /usr/share/datasets/fashion-mnist.
# It always says which data set it found.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
data=${TR_DATA:-$here/data}
names="train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte"

has_all() {  # has_all DIR
  local n
  for n in $names; do
    [ -f "$1/$n" ] || [ -f "$1/$n.gz" ] || [ -f "$1/MNIST/raw/$n" ] || [ -f "$1/MNIST/raw/$n.gz" ] ||
      [ -f "$1/FashionMNIST/raw/$n" ] || [ -f "$1/FashionMNIST/raw/$n.gz" ] || return 1
  done
}

if has_all "$data"; then
  echo "get-data: using the IDX files in $data" >&2
  echo "$data"; exit 0
fi

# The MNIST files and their MD5 sums (the ones torchvision checks).
declare -A sum=(
  [train-images-idx3-ubyte.gz]=f68b3c2dcbeaaa9fbdd348bbdeb94873
  [train-labels-idx1-ubyte.gz]=d53e105ee54ea40749a09fcbcd1e9432
  [t10k-images-idx3-ubyte.gz]=9fb629c4189551a2d022fa330f9573f3
  [t10k-labels-idx1-ubyte.gz]=ec29112dd5afa0611ce80d1b7f02629c
)
mirror=${TR_MNIST_MIRROR:-https://ossci-datasets.s3.amazonaws.com/mnist}
if command -v curl >/dev/null 2>&1 && [ -z "${TR_NO_DOWNLOAD:-}" ]; then
  tmp=$(mktemp -d); ok=1
  for f in "${!sum[@]}"; do
    if ! curl -fsSL --connect-timeout 5 --max-time 120 -o "$tmp/$f" "$mirror/$f" 2>/dev/null; then ok=0; break; fi
    if [ "$(md5sum "$tmp/$f" | cut -d' ' -f1)" != "${sum[$f]}" ]; then
      echo "get-data: $f from $mirror: checksum mismatch, not using it" >&2; ok=0; break
    fi
  done
  if [ $ok = 1 ]; then
    mkdir -p "$data"; mv "$tmp"/*.gz "$data/"; rm -rf "$tmp"
    echo "get-data: downloaded MNIST into $data (checksums verified); training on MNIST" >&2
    echo "$data"; exit 0
  fi
  rm -rf "$tmp"
  echo "get-data: MNIST cannot be downloaded here; falling back to Debian's Fashion-MNIST" >&2
fi

fm=/usr/share/datasets/fashion-mnist
if ! has_all "$fm"; then
  SUDO=; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  echo "get-data: installing dataset-fashion-mnist" >&2
  $SUDO apt-get install -y -q --no-install-recommends dataset-fashion-mnist >/dev/null ||
    { $SUDO apt-get update -q >/dev/null && $SUDO apt-get install -y -q --no-install-recommends dataset-fashion-mnist >/dev/null; } ||
    { echo "get-data: no data: put MNIST's four IDX files in $data (see README)" >&2; exit 1; }
fi
echo "get-data: training on Fashion-MNIST (same format as MNIST, harder images) from $fm" >&2
echo "$fm"
