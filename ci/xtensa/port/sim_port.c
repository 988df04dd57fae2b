// SPDX-License-Identifier: MIT
// The Xtensa sim boards' side of MicroPython's ports/qemu (whose main.c, mphalport.c and
// modmachine.c these ports build; ci/xtensa/port/Makefile, and ci/esp32core/port/Makefile for the
// windowed core, which builds this file too): what the port's other boards get
// from their UART and start-up code, through QEMU's semihosting for Xtensa (the `simcall`
// instruction: a2 the call, a3.. its arguments, the result in a2).
//
// - The console: ports/qemu's mphalport.c reads and writes through uart.h; here that is
//   semihosting's read(0) and write(1), one byte read at a time. Run without -serial (the
//   profile's qemu_console), QEMU reads and writes its own stdin and stdout for them, and a
//   read waits for input. (With -serial stdio the sim machine serves them from its serial
//   port's character device instead, through a small buffer that lost bytes of a script that
//   arrived while the board polled it.)
// - exit(): semihosting's exit, whose status QEMU exits with (the port's machine.reset and
//   ci/mcu/board.c's _exit end there).
// - picolibc's stdout and stderr: streams to the console (assert, and anything the C library
//   prints; ncnn's messages in builds with NCNN_STDIO).
// - sim_fault: every exception but ICOUNT's (ci/xtensa/port/startup.S) ends here: it names
//   EXCCAUSE, the instruction's and the data's addresses, and leaves QEMU with status 1 (on an
//   ESP32 the same fault is a "Guru Meditation Error" and a reboot).

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "py/mphal.h"
#include "ports/qemu/uart.h"

#define SYS_EXIT 1
#define SYS_READ 3
#define SYS_WRITE 4

static int simcall(int call, int a, int b, int c) {
    register int a2 __asm__("a2") = call;
    register int a3 __asm__("a3") = a;
    register int a4 __asm__("a4") = b;
    register int a5 __asm__("a5") = c;
    // (SIMCALL's encoding: LLVM's assembler, the esp32core board's, does not know the mnemonic)
    __asm__ volatile (".byte 0x00, 0x51, 0x00  /* simcall */" : "+r" (a2), "+r" (a3) : "r" (a4), "r" (a5) : "memory");
    return a2;
}

void uart_init(void) {
}

int uart_rx_chr(void) {
    char c;
    return simcall(SYS_READ, 0, (int)&c, 1) == 1 ? (unsigned char)c : UART_RX_NO_CHAR;
}

void uart_tx_strn(const char *buf, size_t len) {
    while (len > 0) {
        int n = simcall(SYS_WRITE, 1, (int)buf, (int)len);
        if (n <= 0) {
            return;
        }
        buf += n;
        len -= n;
    }
}

void exit(int status) {
    for (;;) {
        simcall(SYS_EXIT, status, 0, 0);
    }
}

static int console_put(char c, FILE *f) {
    (void)f;
    uart_tx_strn(&c, 1);
    return (unsigned char)c;
}

static FILE console = FDEV_SETUP_STREAM(console_put, NULL, NULL, _FDEV_SETUP_WRITE);
FILE *const stdout = &console;
FILE *const stderr = &console;

int main(int argc, char **argv);

void sim_main(void);
void sim_main(void) {
    exit(main(0, 0));
}

static const char *exccause_name(uint32_t cause) {
    switch (cause) {
        case 0: return "IllegalInstruction";
        case 2: return "InstructionFetchError";
        case 3: return "LoadStoreError";
        case 6: return "IntegerDivideByZero";
        case 9: return "LoadStoreAlignment";
        case 12: return "InstrPIFDataError";
        case 13: return "LoadStorePIFDataError";
        case 14: return "InstrPIFAddrError";
        case 15: return "LoadStorePIFAddrError";
        case 20: return "InstFetchProhibited";
        case 28: return "LoadProhibited";
        case 29: return "StoreProhibited";
        default: return "?";
    }
}

// vector: 0 user, 1 kernel, 2 double (pc is DEPC), 3 debug, 4 NMI (startup.S).
void sim_fault(uint32_t vector, uint32_t exccause, uint32_t epc1, uint32_t excvaddr, uint32_t depc);
void sim_fault(uint32_t vector, uint32_t exccause, uint32_t epc1, uint32_t excvaddr, uint32_t depc) {
    static const char *const kinds[] = {"exception", "kernel exception", "double exception", "debug exception", "NMI"};
    mp_printf(&mp_plat_print, "\nboard: %s: EXCCAUSE=%u (%s) pc=%08x address=%08x\n", kinds[vector < 5 ? vector : 0],
        (unsigned)exccause, exccause_name(exccause), (unsigned)(vector == 2 ? depc : epc1), (unsigned)excvaddr);
    exit(1);
}

#ifndef NDEBUG
void __assert_func(const char *file, int line, const char *func, const char *expr) {
    (void)func;
    mp_printf(&mp_plat_print, "Assertion '%s' failed, at file %s:%d\n", expr, file, line);
    exit(1);
}
#endif
