// SPDX-License-Identifier: MIT
// What each QEMU board's own file gives the glue both boards share (ci/mcu/board.c):
// ci/mcu/mps2_an385.c (Cortex-M3, newlib) and ci/rv32/virt.c (RISC-V rv32imac, picolibc).
// Each board's linker script also defines _ncnn_heap_start and _ncnn_heap_end, the RAM
// between .bss and the stack that is the C library's heap (ncnn's memory).
#ifndef NCNN_MP_BOARD_H
#define NCNN_MP_BOARD_H

#include <stdint.h>

#include "py/objarray.h"

// Called first thing in main, before C++ static constructors run: what the board's C
// library needs before any of its functions are called (rv32: picolibc's TLS).
void board_init(void);

// The board timer's reading in nanoseconds (in its own steps: 40 ns on the MPS2-AN385, 100
// on virt). Under QEMU's -icount shift=0 virtual time counts emulated instructions, one per ns.
uint64_t board_time_ns(void);

// The board's memory-mapped flash for models, as a read-only memoryview: ci/qemu.py loads the
// ROMFS image there (the profile's romfs_address), ci/mcu/board.c mounts it at /rom.
extern const mp_obj_array_t board_romfs;

#endif // NCNN_MP_BOARD_H
