# tinyring: instructions per translated block in QEMU's -d in_asm log
# (profile.sh). Prints "PC COUNT LAST" per block, first translation only:
# its start address, its instructions and the address of its last line (hex,
# as in the log). The log has "IN: sym", then "0x<pc>:  <hex>  <mnemonic>"
# per instruction.
#
# With thumb=1 (Arm M-profile) the lines are not counted: QEMU's
# disassembler does not know Armv8.1-M's loop instructions (le, dls, wls)
# nor some MVE ones, prints their first halfword alone as ".byte" and may
# then decode the second half together with the next instruction. The
# halfwords the lines show are the block's bytes all the same, in order;
# they are decoded again by Thumb's length rule (a first halfword of 0xe800
# or above starts a 32-bit instruction).
$1 == "IN:" { flush(); next }
$1 ~ /^0x[0-9a-f]+:$/ {
  a = substr($1, 3, length($1) - 3)
  if (pc == "") pc = a
  last = a
  n++
  if (thumb) {   # "0x%08x:  hhhh hhhh  ..." or "0x%08x:  hhhh       ..."
    k = split(substr($0, 14, 9), h, " ")
    for (j = 1; j <= k; j++) if (h[j] ~ /^[0-9a-f][0-9a-f][0-9a-f][0-9a-f]$/) hw[++nh] = h[j]
  }
  next
}
function flush(   i, c) {
  if (pc != "" && !(pc in seen)) {
    seen[pc] = 1
    if (thumb) {
      c = 0
      for (i = 1; i <= nh; i += (hw[i] >= "e800" ? 2 : 1)) c++
      n = c
    }
    print pc, n, last
  }
  pc = ""; n = 0; nh = 0
}
END { flush() }
