/* SPDX-License-Identifier: MIT */
/* Start-up and exception vectors of the Xtensa sim board (lx106, call0 ABI), in place of what
 * an ESP8266's ROM and SDK do. Why each part:
 * - .reset: QEMU starts the core at the lx106 reset vector, 0x50000000, after loading the ELF
 *   (ci/xtensa/port/sim.ld puts .reset there); `j` and `call0` cannot reach sysram from there,
 *   so the reset code loads _start's address from a literal placed behind it and jumps.
 * - _start: VECBASE to this board's vectors, PS to user vector mode with interrupts at level 0
 *   (the core resets with PS.EXCM set and INTLEVEL 15, where any exception is a double one),
 *   the stack, .bss cleared, then sim_main in C. ICOUNT (the board's timer) is left off: the
 *   first read starts it (ci/xtensa/sim.c says why).
 * - The vectors (lx106's offsets from VECBASE: debug 0x10, NMI 0x20, kernel 0x30, user 0x50,
 *   double 0x70): ICOUNT's debug exception when it wraps (every 2^32 instructions) adds one to
 *   the counter's high word, restarts ICOUNT at 0 and returns; every other exception (an
 *   unaligned load or store: EXCCAUSE 9, a load from nowhere, an illegal instruction) ends in
 *   sim_fault, which names the cause and the addresses and leaves QEMU. */

    .section .reset, "ax"
    .global _reset
_reset:
    j       1f
    .align  4
2:  .word   _start
1:  l32r    a0, 2b
    jx      a0

    .section .vectors, "ax"
    .align  4
    .global _vector_table
_vector_table:
    .org    0x10                /* debug (level 2): ICOUNT wrapped, or a break */
    j       _debug_exception
    .org    0x20                /* NMI */
    movi    a2, 4
    j       _fault
    .org    0x30                /* kernel (PS.UM = 0) */
    movi    a2, 1
    j       _fault
    .org    0x50                /* user (PS.UM = 1) */
    movi    a2, 0
    j       _fault
    .org    0x70                /* double */
    movi    a2, 2
    j       _fault
    .literal_position

_debug_exception:
    wsr     a2, excsave2
    movi    a2, sim_icount_save
    s32i    a3, a2, 0
    rsr     a3, debugcause
    bbci    a3, 0, 1f           /* not ICOUNT: a fault */
    l32i    a3, a2, 4
    addi    a3, a3, 1
    s32i    a3, a2, 4           /* sim_icount_high += 1 */
    /* ICOUNT holds 0xffffffff here and the instruction at EPC2 has not run: the exception
     * comes when an instruction would take ICOUNT to 0, and ICOUNT stays where it was. Left
     * so, that instruction raises it again on return, for ever (the board hung after 2^32
     * instructions: 8 s of QEMU, the soak test's 20,000 cycles). ICOUNT = 0 here, and that
     * instruction counts to 1: each wrap counts one instruction twice, which
     * board_time_ns() (ci/xtensa/sim.c) takes off again. */
    movi    a3, 0
    wsr     a3, icount
    isync
    l32i    a3, a2, 0
    rsr     a2, excsave2
    rfi     2
1:  movi    a2, 3
    /* (fall through) */

/* a2: which vector (0 user, 1 kernel, 2 double, 3 debug, 4 NMI). A stack of its own: the
 * program's may be what faulted. */
_fault:
    movi    a1, sim_fault_stack_top
    rsr     a3, exccause
    rsr     a4, epc1
    rsr     a5, excvaddr
    rsr     a6, depc
    movi    a0, sim_fault
    callx0  a0
3:  j       3b

    .text
    .literal_position
    .align  4
    .global _start
_start:
    movi    a0, 0
    movi    a2, _vector_table
    wsr     a2, vecbase
    movi    a2, 0x20            /* PS: UM = 1, EXCM = 0, INTLEVEL = 0 */
    wsr     a2, ps
    rsync
    movi    a1, _estack
    movi    a2, _sbss
    movi    a3, _ebss
    movi    a4, 0
4:  bgeu    a2, a3, 5f
    s32i    a4, a2, 0
    addi    a2, a2, 4
    j       4b
5:  movi    a0, sim_main
    callx0  a0
6:  j       6b

    .data
    .align  4
    .global sim_icount_save
    .global sim_icount_high
sim_icount_save:
    .word   0
sim_icount_high:
    .word   0

    .bss
    .align  16
    .space  1024
sim_fault_stack_top:
