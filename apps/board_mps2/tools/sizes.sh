#!/usr/bin/env bash
# tinyring board_mps2: `make cross-board`. Sizes for the Cortex-M4F build:
#   1. the libraries as compiled (arm-none-eabi-size -t over the archives):
#      core alone, core + the lwIP port + lwIP
#   2. the linked images (arm-none-eabi-size on the ELF; gc-sections applied)
#   3. each image split by where the bytes come from (the link map):
#      core, tr_lwip port, lwIP, board support + app, libc/libgcc
# flash = text + data (initialised data is stored in flash and copied);
# RAM = data + bss; `size` counts the 32 KiB .stack region (NOLOAD) in bss
# of the linked images, the by-origin split below does not.
set -eu
B=${BOARD_OUT:-${BUILD:-build}/board}
SIZE=${BOARD_SIZE:-arm-none-eabi-size}

total() {  # label archives...: prints text data bss from size -t
  local label=$1; shift
  "$SIZE" -t "$@" | awk -v l="$label" 'END { printf "%-34s %9d %7d %9d\n", l, $1, $2, $3 }'
}

echo "== Cortex-M4F (arm-none-eabi-gcc -O2, thumb, fpv4-sp-d16 hard float)"
printf "%-34s %9s %7s %9s\n" "libraries (all objects)" text data bss
total "core (libtinyring_m4.a)" "$B/libtinyring_m4.a"
total "core + tr_lwip port" "$B/libtinyring_m4.a" "$B/libtr_lwip_m4.a"
total "core + tr_lwip port + lwIP" "$B/libtinyring_m4.a" "$B/libtr_lwip_m4.a" "$B/liblwip_m4.a"
echo
printf "%-34s %9s %7s %9s\n" "linked images" text data bss
for img in train ring nettest hello; do
  [ -f "$B/$img.elf" ] || continue
  "$SIZE" "$B/$img.elf" | awk -v l="$img.elf" 'NR == 2 { printf "%-34s %9d %7d %9d\n", l, $1, $2, $3 }'
done

# Split a linked image by origin, from its map file: every input section
# after "Linker script and memory map" counted into flash (.text, .rodata,
# .ARM.exidx, .data's load copy), data or bss by its output section.
split_map() {
  awk '
    /^Linker script and memory map/ { on = 1; next }
    !on { next }
    /^\.[A-Za-z_]/ { out = $1 }
    function who(f) {
      if (f ~ /libtinyring_m4\.a/) return "core"
      if (f ~ /libtr_lwip_m4\.a/) return "tr_lwip port"
      if (f ~ /liblwip_m4\.a/) return "lwIP"
      if (f ~ /libc|libg|libnosys|libm|gcc/) return "libc+libgcc"
      return "board+app"
    }
    function hex(h,   i, c, v) {
      v = 0; h = tolower(h); sub(/^0x/, "", h)
      for (i = 1; i <= length(h); i++) { c = index("0123456789abcdef", substr(h, i, 1)); v = v * 16 + c - 1 }
      return v
    }
    function add(size, file) {
      if (out == ".text" || out == ".ARM.exidx") text[who(file)] += hex(size)
      else if (out == ".data") data[who(file)] += hex(size)
      else if (out == ".bss") bss[who(file)] += hex(size)
    }
    /^ [.A-Za-z_][^ ]* +0x[0-9a-f]+ +0x[0-9a-f]+ / { add($3, $4); next }
    /^ [.A-Za-z_*][^ ]*$/ { pend = 1; next }
    pend && /^ +0x[0-9a-f]+ +0x[0-9a-f]+ / { add($2, $3); pend = 0; next }
    { pend = 0 }
    END {
      n = split("core,tr_lwip port,lwIP,board+app,libc+libgcc", k, ",")
      for (i = 1; i <= n; i++)
        if (text[k[i]] + data[k[i]] + bss[k[i]] > 0)
          printf "  %-32s %9d %7d %9d\n", k[i], text[k[i]], data[k[i]], bss[k[i]]
    }' "$1"
}
for img in train ring; do
  [ -f "$B/$img.map" ] || continue
  echo
  printf "%-34s %9s %7s %9s\n" "$img.elf by origin (link map)" text data bss
  split_map "$B/$img.map"
done

# RAM of the ring image by purpose, from its symbol table (nm -S)
ram_by_symbol() {
  arm-none-eabi-nm -S "$1" | awk '
    function hex(h,   i, c, v) {
      v = 0; h = tolower(h)
      for (i = 1; i <= length(h); i++) { c = index("0123456789abcdef", substr(h, i, 1)); v = v * 16 + c - 1 }
      return v
    }
    NF == 4 && $3 ~ /^[bBdD]$/ {
      n = hex($2)
      if ($4 == "arena") g = "trainer arena (model, collectives scratch, sampler, one batch)"
      else if ($4 == "comm_scratch") g = "collectives scratch (tr_comm_scratch_size)"
      else if ($4 == "rx_rings") g = "tr_lwip receive rings (2 links x 2 x TCP_WND)"
      else if ($4 == "ram_heap") g = "lwIP heap (MEM_SIZE: copied TX segments)"
      else if ($4 ~ /^memp_memory_PBUF_POOL/) g = "lwIP PBUF_POOL (received frames)"
      else if ($4 ~ /^memp_/) g = "lwIP other pools (pcbs, segments, ARP)"
      else if ($4 == "rx_frame" || $4 == "tx_frame") g = "LAN9118 bounce frames"
      else if ($4 == "pixels" || $4 == "labels" || $4 == "x") g = "app: samples and input batch"
      else g = "other (state structs, lwIP globals, clock)"
      sum[g] += n; tot += n
    }
    END {
      for (g in sum) printf "  %-64s %8d\n", g, sum[g] | "sort"
      close("sort")
      printf "  %-64s %8d\n", "total data + bss (the 32768-byte stack not included)", tot
    }'
}
if [ -f "$B/ring.elf" ]; then
  echo
  echo "ring.elf RAM by purpose (nm -S)"
  ram_by_symbol "$B/ring.elf"
fi
if [ -x "$B/gen_cfg" ]; then
  echo
  echo "model arena by variant and micro-batch (bytes; core's layout, measured by gen_cfg table)"
  "$B/gen_cfg" table 16,32,4,8 1,2,4,8
fi
