// SPDX-License-Identifier: MIT
// The MPS2-AN385 board's own part of the QEMU board glue (Cortex-M3, newlib); what both
// boards share is ci/mcu/board.c, which says what it is for.
//
// - newlib's stdio needs _write and its kin: ncnn's error messages (fprintf(stderr), in
//   builds with NCNN_STDIO) and anything else the C library prints go to the console UART.
// - libstdc++'s static objects register destructors with __cxa_atexit(..., &__dso_handle).
// - A 25 MHz timer (the board's CMSDK TIMER0) for qemu_board.time_ns().
// - The board's flash for models: the 16 MiB at 0x21000000, which nothing else uses.
// - Built for the MPS2-AN386 (Cortex-M4F, hard float: profile qemu-m4f), the FPU turned on:
//   the port's start-up leaves it off, and the first float instruction would fault.

#include <errno.h>
#include <stdint.h>
#include <sys/stat.h>

#include "py/mphal.h"

#include "board.h"

// ---- newlib system calls ----

int _write(int fd, const char *buf, int len) {
    (void)fd;  // stdout and stderr alike go to the console UART
    mp_hal_stdout_tx_strn(buf, len);
    return len;
}

int _read(int fd, char *buf, int len) {
    (void)fd;
    (void)buf;
    (void)len;
    return 0;  // no input through stdio: MicroPython owns the UART's receive side
}

int _close(int fd) {
    (void)fd;
    return -1;
}

int _lseek(int fd, int offset, int whence) {
    (void)fd;
    (void)offset;
    (void)whence;
    return -1;
}

int _fstat(int fd, struct stat *st) {
    (void)fd;
    st->st_mode = S_IFCHR;  // a character device: newlib buffers by line, never seeks
    return 0;
}

int _isatty(int fd) {
    (void)fd;
    return 1;
}

int _getpid(void) {
    return 1;
}

int _kill(int pid, int sig) {
    (void)pid;
    (void)sig;
    errno = EINVAL;
    return -1;
}

void *__dso_handle = &__dso_handle;

void board_init(void) {
    // (the port's Reset_Handler copied .data and cleared .bss: newlib needs nothing more)
    #if defined(__ARM_FP)
    // CPACR: full access to coprocessors 10 and 11 (the FPU), before any float instruction
    // (main's callers, the port's start-up, use none); then barriers so the next instruction
    // sees it. Nothing runs float code in an interrupt here: lazy stacking's default is fine.
    volatile uint32_t *cpacr = (volatile uint32_t *)0xe000ed88;
    *cpacr |= (0xfu << 20);
    __asm volatile ("dsb\n isb" ::: "memory");
    #endif
}

// ---- the timer ----

typedef struct {
    volatile uint32_t ctrl, value, reload, intstatus;
} cmsdk_timer_t;
#define TIMER0 ((cmsdk_timer_t *)0x40000000)
#define NS_PER_TICK 40  // 25 MHz

// TIMER0 counts down from 0xffffffff once started (on the first call), wrapping after 171 s.
uint64_t board_time_ns(void) {
    if (!(TIMER0->ctrl & 1)) {
        TIMER0->reload = 0xffffffff;
        TIMER0->value = 0xffffffff;
        TIMER0->ctrl = 1;
    }
    return (uint64_t)(0xffffffff - TIMER0->value) * NS_PER_TICK;
}

// ---- the flash for models (ci/mcu/mps2_an385.ld leaves it alone; the profile's romfs_address) ----

#define ROMFS_BASE 0x21000000
#define ROMFS_SIZE (16 * 1024 * 1024)
const MP_DEFINE_MEMORYVIEW_OBJ(board_romfs, 'B', 0, ROMFS_SIZE, (void *)ROMFS_BASE);
