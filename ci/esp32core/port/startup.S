/* SPDX-License-Identifier: MIT */
/* Start-up and exception vectors of the esp32core board (QEMU's sim machine, de233_fpu core:
 * windowed registers, FPU), in place of what an ESP32's ROM and ESP-IDF do. Why each part:
 * - .reset: the sim machine starts the core at its reset vector, 0xfe000000 (the start of its
 *   "sysrom"), not at the ELF entry: the reset code loads _start's address from a literal behind
 *   it and jumps (ci/esp32core/port/sim.ld).
 * - _start: VECBASE to this board's vectors; CPENABLE bit 0, without which the first FPU
 *   instruction raises a coprocessor exception; ATOMCTL = 0x15, without which S32C1I (atomics)
 *   faults on QEMU; one live window (WINDOWBASE 0, WINDOWSTART 1); PS with WOE (window overflow
 *   exceptions on), user vector mode, interrupts at level 0 (the core resets with PS.EXCM set and
 *   INTLEVEL 15, where any exception is a double one); the stack, .bss cleared, then sim_main
 *   (ci/xtensa/port/sim_port.c) through a call8, as windowed code is entered.
 * - The window overflow and underflow handlers at VECBASE + 0x00..0x140: the Xtensa ISA's own
 *   sequences, which store (load) a window's a0..a3 in the 16 bytes below its callee's stack
 *   pointer and a call8's or call12's a4..a11 at the top of its own frame.
 * - The Alloca exception (EXCCAUSE 5): MOVSP (clang's dynamic stack allocation: alloca, which
 *   MicroPython's call path uses) raises it when the caller's window is in memory, not in
 *   registers. The handler reloads that window (by the caller's call size, in the return
 *   address's top two bits) through the underflow handlers with PS.OWB set to the window the
 *   exception came from, so that their RFWU resumes the MOVSP, which then succeeds. It sits in
 *   the level 2..5 interrupt vectors' space: this board enables no interrupt.
 * - ICOUNT's debug exception (level 6 on this core) when the counter wraps (every 2^32
 *   instructions): as on the lx106 board (ci/xtensa/port/startup.S says why it restarts ICOUNT
 *   at 0); every other exception ends in sim_fault, which names the cause and the addresses
 *   and leaves QEMU, on a fresh stack with one live window.
 * The assembler is LLVM's (llvm-mc): `.long`, not `.word`, and a conditional branch reaches only
 * +-128 bytes, so the Alloca handler branches over `j`s to the underflow handlers. Literals of
 * .vectors would be placed after it, out of L32R's reach: the handlers that load addresses are
 * in .text. */

#define PS_WOE (1 << 18)
#define PS_UM (1 << 5)
#define PS_OWB_SHIFT 8
    .section .reset, "ax"
    .global _reset
_reset:
    j       1f
    .align  4
2:  .long   _start
1:  l32r    a0, 2b
    jx      a0

    .section .vectors, "ax"
    .align  4
    .global _vector_table
_vector_table:
    .org    0x00
_WindowOverflow4:
    s32e    a0, a5, -16
    s32e    a1, a5, -12
    s32e    a2, a5, -8
    s32e    a3, a5, -4
    rfwo
    .org    0x40
_WindowUnderflow4:
    l32e    a0, a5, -16
    l32e    a1, a5, -12
    l32e    a2, a5, -8
    l32e    a3, a5, -4
    rfwu
    .org    0x80
_WindowOverflow8:
    s32e    a0, a9, -16
    l32e    a0, a1, -12
    s32e    a2, a9, -8
    s32e    a1, a9, -12
    s32e    a3, a9, -4
    s32e    a4, a0, -32
    s32e    a5, a0, -28
    s32e    a6, a0, -24
    s32e    a7, a0, -20
    rfwo
    .org    0xc0
_WindowUnderflow8:
    l32e    a1, a9, -12
    l32e    a0, a9, -16
    l32e    a7, a1, -12
    l32e    a2, a9, -8
    l32e    a4, a7, -32
    l32e    a3, a9, -4
    l32e    a5, a7, -28
    l32e    a6, a7, -24
    l32e    a7, a7, -20
    rfwu
    .org    0x100
_WindowOverflow12:
    s32e    a0, a13, -16
    l32e    a0, a1, -12
    s32e    a1, a13, -12
    s32e    a2, a13, -8
    s32e    a3, a13, -4
    s32e    a4, a0, -48
    s32e    a5, a0, -44
    s32e    a6, a0, -40
    s32e    a7, a0, -36
    s32e    a8, a0, -32
    s32e    a9, a0, -28
    s32e    a10, a0, -24
    s32e    a11, a0, -20
    rfwo
    .org    0x140
_WindowUnderflow12:
    l32e    a1, a13, -12
    l32e    a0, a13, -16
    l32e    a11, a1, -12
    l32e    a2, a13, -8
    l32e    a4, a11, -48
    l32e    a8, a11, -32
    l32e    a3, a13, -4
    l32e    a5, a11, -44
    l32e    a6, a11, -40
    l32e    a7, a11, -36
    l32e    a9, a11, -28
    l32e    a10, a11, -24
    l32e    a11, a11, -20
    rfwu
    .org    0x180               /* level 2..5 interrupts: never enabled; the Alloca handler */
_alloca_exception:
    rsr     a0, windowbase      /* the window MOVSP ran in: the underflow's RFWU returns to it */
    rotw    -1                  /* a0..a3 of the window below (spilled: free); ours are a4..a7 */
    rsr     a2, ps
    extui   a3, a2, PS_OWB_SHIFT, 4
    xor     a3, a3, a4          /* PS.OWB := that WINDOWBASE (a4 now holds it) */
    rsr     a4, excsave1        /* our a0 back: its top two bits are our caller's call size */
    slli    a3, a3, PS_OWB_SHIFT
    xor     a2, a2, a3
    wsr     a2, ps
    rsync
    bbsi    a4, 31, 1f          /* call4: the caller's window is this one */
    j       _WindowUnderflow4
1:  rotw    -1                  /* (our a0 is now a8) */
    bbsi    a8, 30, 2f          /* call8 */
    j       _WindowUnderflow8
2:  rotw    -1                  /* call12 */
    j       _WindowUnderflow12
    .org    0x280               /* debug (level 6) */
    j       _debug_exception
    .org    0x2c0               /* NMI */
    movi    a2, 4
    j       _fault
    .org    0x300               /* kernel */
    movi    a2, 1
    j       _fault
    .org    0x340               /* user */
    wsr     a0, excsave1
    rsr     a0, exccause
    addi    a0, a0, -5          /* 5: Alloca (movsp) */
    beqz    a0, _alloca_exception
    addi    a0, a0, 4           /* 1: Syscall */
    beqz    a0, _syscall_exception
    movi    a2, 0
    j       _fault
    .org    0x3c0               /* double */
    movi    a2, 2
    j       _fault
    .literal_position


    .text
    .literal_position
    .align  4
_debug_exception:
    wsr     a2, excsave6
    movi    a2, sim_icount_save
    s32i    a3, a2, 0
    rsr     a3, debugcause
    bbci    a3, 0, 1f
    l32i    a3, a2, 4
    addi    a3, a3, 1
    s32i    a3, a2, 4
    movi    a3, 0
    wsr     a3, icount
    isync
    l32i    a3, a2, 0
    rsr     a2, excsave6
    rfi     6
1:  movi    a2, 3

/* SYSCALL with a2 = 0 (SYS_nop): picolibc's windowed setjmp issues it to have the register windows
 * spilled (an OS's exception dispatcher spills them as a side effect), then copies its caller's
 * saved registers from the stack. Here: resume at _spill_windows instead, in setjmp's own window,
 * with the address after the SYSCALL kept in sim_syscall_save[4]. a2 is the call's result, free to
 * use; any other call number is a fault. */
_syscall_exception:
    bnez    a2, 1f
    rsr     a0, epc1
    addi    a0, a0, 3           /* past the SYSCALL */
    movi    a2, sim_syscall_save
    s32i    a0, a2, 16
    movi    a0, _spill_windows
    wsr     a0, epc1
    rsr     a0, excsave1
    rfe
1:  movi    a2, 0
    j       _fault

/* Spills every window but the current one through a call4 and six nested call12s (76 registers of
 * rotation: each older live window overflows to its stack; 32 physical registers here, 64 on an
 * ESP32). Not a call12 from here: setjmp's frame (entry sp, 16) has no room for the extra save area
 * a call8 or call12 caller needs, and the overflow of its window would write a4..a11 over its
 * caller's saved registers. A call4 needs none, but its return address and arguments are a4..a7,
 * which setjmp holds live: kept in sim_syscall_save while the chain runs. Leaves with a2 = the
 * resume address (setjmp sets a2 anew). */
_spill_windows:
    movi    a2, sim_syscall_save
    s32i    a4, a2, 0
    s32i    a5, a2, 4
    s32i    a6, a2, 8
    s32i    a7, a2, 12
    movi    a6, 6
    movi    a2, _spill_chain
    callx4  a2
    movi    a2, sim_syscall_save
    l32i    a4, a2, 0
    l32i    a5, a2, 4
    l32i    a6, a2, 8
    l32i    a7, a2, 12
    l32i    a2, a2, 16
    jx      a2

_spill_chain:                   /* a2: call12 levels still to go; 48: a call12 caller's frame */
    entry   a1, 48
    beqz    a2, 2f
    addi    a14, a2, -1
    movi    a8, _spill_chain
    callx12 a8
2:  retw

_fault:
    rsr     a3, exccause
    rsr     a4, epc1
    rsr     a5, excvaddr
    rsr     a6, depc
    /* one live window, a fresh stack, exceptions unmasked */
    rsr     a7, windowbase
    movi    a8, 1
    ssl     a7
    sll     a8, a8
    wsr     a8, windowstart
    movi    a1, sim_fault_stack_top
    movi    a8, PS_WOE | PS_UM | 15
    wsr     a8, ps
    rsync
    mov     a10, a2
    mov     a11, a3
    mov     a12, a4
    mov     a13, a5
    mov     a14, a6
    movi    a8, sim_fault
    callx8  a8
3:  j       3b


    .global _start
_start:
    movi    a0, 0
    movi    a2, _vector_table
    wsr     a2, vecbase
    movi    a2, 1
    wsr     a2, cpenable
    movi    a2, 0x15
    wsr     a2, atomctl
    movi    a2, 0
    wsr     a2, windowbase
    rsync
    movi    a2, 1
    wsr     a2, windowstart
    rsync
    movi    a2, PS_WOE | PS_UM
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
5:  movi    a8, sim_main
    callx8  a8
6:  j       6b

    .data
    .align  4
    .global sim_icount_save
    .global sim_icount_high
sim_icount_save:
    .long   0
sim_icount_high:
    .long   0
sim_syscall_save:               /* _spill_windows: a4..a7, then the resume address */
    .space  20

    .bss
    .align  16
    .space  2048
sim_fault_stack_top:
