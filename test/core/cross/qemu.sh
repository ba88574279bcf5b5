# test/core/cross/qemu.sh: how each cross target's image runs under QEMU
# (sourced by test/core/cross_test.sh, apps/board_mps2/tools/cycles.sh and
# profile.sh).
# cross_qemu TARGET ELF [TIMEOUT]: runs the image with -icount shift=0
# (virtual time = 1 ns per instruction, deterministic), its semihosting text
# on stdout; the exit status is the image's (0: every check passed).
# CROSS_QEMU_ARGS, if set, is added to QEMU's arguments (board-profile's
# logs).
cross_qemu() {
  local t=$1 elf=$2 limit=${3:-300}
  local common="-nographic -monitor none -serial none -semihosting-config enable=on,target=native -icount shift=0 ${CROSS_QEMU_ARGS:-}"
  case $t in
    m4)   timeout "$limit" qemu-system-arm -M mps2-an386 $common -kernel "$elf" 2>&1 ;;
    m55)  timeout "$limit" qemu-system-arm -M mps3-an547 $common -kernel "$elf" 2>&1 ;;
    rv32) timeout "$limit" qemu-system-riscv32 -M virt -cpu rv32,d=false -bios none $common -kernel "$elf" 2>&1 ;;
    *) echo "cross_qemu: unknown target $t" >&2; return 2 ;;
  esac
}

# the QEMU binary a target needs
cross_qemu_bin() {
  case $1 in m4|m55) echo qemu-system-arm ;; rv32) echo qemu-system-riscv32 ;; esac
}
