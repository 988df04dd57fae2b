// SPDX-License-Identifier: MIT
// The garbage collector's root scan on a windowed Xtensa core (the ESP32's; MicroPython's esp32
// port does the same). A frame's registers live in the core's register file until a window
// overflow spills them to the stack: the pointers a caller of gc_collect holds in a0..a15 of
// its window may be in no memory at all. Calls nested deep enough to rotate the window through
// every physical register (64 on an ESP32, 32 on QEMU's de233_fpu; each call8 rotates by 8,
// overflowing the oldest live window) spill every frame above them; the stack from the deepest
// one up then holds all of them, and the scan reads only memory.

#include <stdint.h>

#include "py/gc.h"
#include "py/mpstate.h"
#include "py/mpthread.h"

// 64 physical registers / 8 per call8 = 8 levels; twice that covers frames entered by call4.
#define SPILL_DEPTH 16

static volatile int spill_guard;  // (keeps each level a real call: no level can be folded away)

static void __attribute__((noinline)) scan_from_here(int depth) {
    if (depth > 0) {
        scan_from_here(depth - 1);
        spill_guard++;
        return;
    }
    uintptr_t sp;
    __asm__ volatile ("mov %0, a1" : "=r" (sp));
    gc_collect_root((void **)sp, ((uintptr_t)MP_STATE_THREAD(stack_top) - sp) / sizeof(uintptr_t));
}

void gc_helper_collect_regs_and_stack(void);
void gc_helper_collect_regs_and_stack(void) {
    scan_from_here(SPILL_DEPTH);
}
