// QEMU's Xtensa sim machine's own part of the board glue (lx106, picolibc); what every board
// shares is ci/mcu/board.c, which says what it is for. The port itself (start-up, console, exit,
// exception vectors, the fault reporter) is ci/xtensa/port/.
//
// - A timer: the core's ICOUNT register counts every instruction run at interrupt level 0
//   (exactly: not a clock), and startup.S's debug-exception handler carries its wraps into a
//   high word. qemu_board.time_ns() is that count, one instruction a "nanosecond", as the other
//   boards' timers read under QEMU's -icount shift=0 (which this board does not need: the
//   profile's qemu_icount = false). Counting starts at the first read, not at reset: QEMU
//   translates every instruction with a count and a test of ICOUNT while it counts, which
//   made the board 1.6 times slower (the soak test's first 2,000 cycles, 1.8e9 instructions:
//   4.05 s of QEMU with ICOUNT counting, 2.55 s without), and only qemu_board.time_ns()
//   reads it; differences of two reads are what it is for.
// - The board's flash for models: 48 MiB of the machine's "sysrom" at 0x51000000 (the profile's
//   romfs_address; the reset code lies at its start, 0x50000000). QEMU lets the program write
//   there: nothing in the firmware does (ncnn_mp_port_read_only in board.c says it is flash).
// - 4-byte atomics: lx106 has no S32C1I (compare-and-swap), so GCC calls libatomic's
//   __atomic_*_4 for ncnn_mp's counting allocator (ncnn_mp/cxx_allocator.cpp), and Debian has no
//   libatomic for this target. One core: each is the plain operation with interrupts masked
//   (RSIL to level 15, as the ESP8266 SDK does it). ESP32 cores have S32C1I and inline them.

#include <stdbool.h>
#include <stdint.h>

#include "py/mphal.h"

#include "../mcu/board.h"

void board_init(void) {
    // (startup.S cleared .bss; picolibc on this core keeps errno in plain .bss, no TLS)
}

extern volatile uint32_t sim_icount_high;  // startup.S

static bool counting;  // (not cleared by a soft reboot: the count goes on, as a board's timer)

uint64_t board_time_ns(void) {
    if (!counting) {
        counting = true;
        // ICOUNT from 0, counted at interrupt level 0 (PS.INTLEVEL < ICOUNTLEVEL)
        __asm__ volatile ("wsr %0, icount\n wsr %1, icountlevel\n isync" :: "r" (0), "r" (1) : "memory");
        return 0;
    }
    uint32_t hi, lo;
    do {  // ICOUNT may wrap between the two reads
        hi = sim_icount_high;
        __asm__ volatile ("rsr %0, icount" : "=r" (lo));
    } while (hi != sim_icount_high);
    // Each wrap counted its instruction twice (startup.S's _debug_exception): hi too many.
    return (((uint64_t)hi << 32) | lo) - hi;
}

// ---- atomics ----

static inline uint32_t irq_off(void) {
    uint32_t ps;
    __asm__ volatile ("rsil %0, 15" : "=r" (ps) :: "memory");
    return ps;
}

static inline void irq_restore(uint32_t ps) {
    __asm__ volatile ("wsr %0, ps\n rsync" :: "r" (ps) : "memory");
}

uint32_t __atomic_fetch_add_4(volatile void *p, uint32_t v, int order);
uint32_t __atomic_fetch_add_4(volatile void *p, uint32_t v, int order) {
    (void)order;
    uint32_t ps = irq_off(), old = *(volatile uint32_t *)p;
    *(volatile uint32_t *)p = old + v;
    irq_restore(ps);
    return old;
}

uint32_t __atomic_fetch_sub_4(volatile void *p, uint32_t v, int order);
uint32_t __atomic_fetch_sub_4(volatile void *p, uint32_t v, int order) {
    return __atomic_fetch_add_4(p, -v, order);
}

_Bool __atomic_compare_exchange_4(volatile void *p, void *expected, uint32_t desired, _Bool weak, int success,
    int failure);
_Bool __atomic_compare_exchange_4(volatile void *p, void *expected, uint32_t desired, _Bool weak, int success,
    int failure) {
    (void)weak;
    (void)success;
    (void)failure;
    uint32_t ps = irq_off(), now = *(volatile uint32_t *)p;
    _Bool same = now == *(uint32_t *)expected;
    if (same) {
        *(volatile uint32_t *)p = desired;
    } else {
        *(uint32_t *)expected = now;
    }
    irq_restore(ps);
    return same;
}

// ---- the flash for models (the profile's romfs_address) ----

#define ROMFS_BASE 0x51000000
#define ROMFS_SIZE (48 * 1024 * 1024)
const MP_DEFINE_MEMORYVIEW_OBJ(board_romfs, 'B', 0, ROMFS_SIZE, (void *)ROMFS_BASE);
