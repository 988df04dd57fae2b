// SPDX-License-Identifier: MIT
// QEMU's Xtensa sim machine's own part of the board glue, for both of its boards: xtensa (the lx106
// core, call0) and esp32core (the de233_fpu core, windowed: __XTENSA_WINDOWED_ABI__, which its
// port defines); what every board shares is ci/mcu/board.c, which says what it is for. The ports
// themselves (start-up, console, exit, exception vectors, the fault reporter) are
// ci/xtensa/port/ and ci/esp32core/port/.
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
// - The board's flash for models: the machine's "sysrom" past the reset code at its start (the
//   profile's romfs_address): lx106's is 64 MiB at 0x50000000 (48 MiB from 0x51000000 for
//   models), de233_fpu's 32 MiB at 0xfe000000 (30 MiB from 0xfe100000). QEMU lets the program
//   write there: nothing in the firmware does (ncnn_mp_port_read_only in board.c says it is flash).
// - 4-byte atomics: lx106 has no S32C1I (compare-and-swap), so GCC calls libatomic's
//   __atomic_*_4 for ncnn_mp's counting allocator (ncnn_mp/seam/cxx_allocator.cpp), and Debian has no
//   libatomic for this target. One core: each is the plain operation with interrupts masked
//   (RSIL to level 15, as the ESP8266 SDK does it). ESP32 cores have S32C1I and the compiler
//   inlines them: the esp32core board has none of these.

#include <stdbool.h>
#include <stdint.h>

#include "py/mphal.h"

#include "../mcu/board.h"

void board_init(void) {
    // (startup.S cleared .bss; picolibc on this core keeps errno in plain .bss, no TLS)
}

extern volatile uint32_t sim_icount_high;  // startup.S

// ICOUNT counts what runs below this interrupt level. On the windowed core that includes the
// window overflow and underflow handlers and the Alloca handler (they run with PS.EXCM set: level
// 3 on de233_fpu), which an ESP32 runs too: a deep call chain's spills are part of its cost.
#if defined(__XTENSA_WINDOWED_ABI__)
#define ICOUNT_LEVEL 4
#else
#define ICOUNT_LEVEL 1
#endif

static bool counting;  // (not cleared by a soft reboot: the count goes on, as a board's timer)

uint64_t board_time_ns(void) {
    if (!counting) {
        counting = true;
        // ICOUNT from 0, counted at interrupt level 0 (PS.INTLEVEL < ICOUNTLEVEL)
        __asm__ volatile ("wsr %0, icount\n wsr %1, icountlevel\n isync" :: "r" (0), "r" (ICOUNT_LEVEL) : "memory");
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

// ---- atomics (lx106 only) ----
#if !defined(__XTENSA_WINDOWED_ABI__)

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
#endif

// ---- the flash for models (the profile's romfs_address) ----

#if defined(__XTENSA_WINDOWED_ABI__)
// (30 MiB, not the 31 up to the end of sysrom: that region would end at 2^32, and its end pointer,
// base + size, be 0: VfsRom's bounds checks then refused the image, ENODEV)
#define ROMFS_BASE 0xfe100000
#define ROMFS_SIZE (30 * 1024 * 1024)
#else
#define ROMFS_BASE 0x51000000
#define ROMFS_SIZE (48 * 1024 * 1024)
#endif
const MP_DEFINE_MEMORYVIEW_OBJ(board_romfs, 'B', 0, ROMFS_SIZE, (void *)ROMFS_BASE);
