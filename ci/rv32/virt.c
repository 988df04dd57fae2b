// SPDX-License-Identifier: MIT
// QEMU virt's own part of the QEMU board glue (RISC-V rv32imac, picolibc); what both boards
// share is ci/mcu/board.c, which says what it is for. MicroPython's ports/qemu board VIRT_RV32
// boots through its mcu/rv32/entrypoint.s (stack, .bss) and startup.c, and lacks for a C++
// library in C with picolibc:
//
// - TLS: picolibc keeps errno (and a few other variables) thread-local, addressed from the
//   `tp` register, which nothing sets: the first errno write (malloc's ENOMEM, a math
//   function's EDOM) would store near address 0 and fault. board_init sets up the one TLS
//   block ci/rv32/virt.ld reserves, with picolibc's own _init_tls/_set_tls.
// - stderr: the port defines picolibc's `stdout` as a NULL stream (startup.c), so only
//   stderr can be given a way to the UART here; ncnn's error messages (with NCNN_STDIO) and
//   picolibc's own (assert) use it.
// - A machine exception (a load or store to an unmapped address, an illegal instruction)
//   ends in the port's handler, which prints with printf to that NULL stdout and faults
//   again; this one says on the UART what happened and where, and leaves QEMU.
// - A timer: the CLINT's mtime, 10 MHz, for qemu_board.time_ns().
// - The board's flash for models: virt's second 32 MiB flash bank, at 0x22000000, read-only
//   to the program (QEMU ignores writes to it).

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "py/mphal.h"
#include "py/runtime.h"

#include "../mcu/board.h"

// ---- TLS ----

extern char __tls_base[];  // ci/rv32/virt.ld: .tdata, then room for .tbss
void _init_tls(void *tls);  // picolibc: copies .tdata's image there and clears .tbss
void _set_tls(void *tls);  // picolibc: tp = tls

void board_init(void) {
    _init_tls(__tls_base);
    _set_tls(__tls_base);
}

// ---- stderr to the UART ----

static int board_stderr_put(char c, FILE *f) {
    (void)f;
    mp_hal_stdout_tx_strn(&c, 1);
    return (unsigned char)c;
}

static FILE board_stderr = FDEV_SETUP_STREAM(board_stderr_put, NULL, NULL, _FDEV_SETUP_WRITE);
FILE *const stderr = &board_stderr;

// ---- machine exceptions ----

// Replaces the port's (weak) mtvec_exception in mcu/rv32/interrupts.c. Nothing returns from it.
__attribute__((interrupt("machine"))) void mtvec_exception(void) {
    uint32_t mcause, mepc, mtval;
    __asm volatile ("csrr %0, mcause" : "=r" (mcause));
    __asm volatile ("csrr %0, mepc" : "=r" (mepc));
    __asm volatile ("csrr %0, mtval" : "=r" (mtval));
    mp_printf(&mp_plat_print, "\nboard: machine exception: mcause=%u mepc=%08x mtval=%08x\n",
        (unsigned)mcause, (unsigned)mepc, (unsigned)mtval);
    exit(1);
}

// ---- the timer ----

#define CLINT_MTIME ((volatile uint32_t *)0x0200bff8)  // 64 bits, low word first
#define NS_PER_TICK 100  // 10 MHz

uint64_t board_time_ns(void) {
    uint32_t hi, lo;
    do {  // the low word may carry into the high one between the two reads
        hi = CLINT_MTIME[1];
        lo = CLINT_MTIME[0];
    } while (hi != CLINT_MTIME[1]);
    return (((uint64_t)hi << 32) | lo) * NS_PER_TICK;
}

// ---- the flash for models (the profile's romfs_address) ----

#define ROMFS_BASE 0x22000000
#define ROMFS_SIZE (32 * 1024 * 1024)
const MP_DEFINE_MEMORYVIEW_OBJ(board_romfs, 'B', 0, ROMFS_SIZE, (void *)ROMFS_BASE);
