/* RISC-V startup for the minimal images: global pointer, stack, FPU on
 * (mstatus.FS = initial: float instructions trap while it is off), trap
 * vector, .bss zeroing, then img_start (port_rv.c); and the semihosting
 * trap. */
    .section .text.start
    .globl _start
_start:
    .option push
    .option norelax
    la gp, __global_pointer$
    .option pop
    la sp, __stack_top
    li t0, 0x2000
    csrs mstatus, t0
    la t0, trap
    csrw mtvec, t0
    la t0, __bss_start
    la t1, __bss_end
1:  bgeu t0, t1, 2f
    sw zero, 0(t0)
    addi t0, t0, 4
    j 1b
2:  call img_start
3:  j 3b

/* any trap: report through semihosting and exit with failure */
    .balign 4
trap:
    li a0, 0x04
    la a1, trap_msg
    call rv_semihost
    li a0, 0x18
    li a1, 0x20023
    call rv_semihost
4:  j 4b

/* uint32_t rv_semihost(uint32_t op, const void *arg): the semihosting trap,
 * ebreak between two marker instructions, uncompressed and in one 16-byte
 * block as the RISC-V semihosting specification asks */
    .globl rv_semihost
    .balign 16
    .option push
    .option norvc
rv_semihost:
    slli x0, x0, 0x1f
    ebreak
    srai x0, x0, 7
    ret
    .option pop

    .section .rodata
trap_msg:
    .asciz "FAIL: trap (illegal instruction or bad access)\n"
