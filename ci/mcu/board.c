// SPDX-License-Identifier: MIT
// What MicroPython's bare-metal ports/qemu lacks for a C++ library such as ncnn, on both QEMU
// boards the project runs: the MPS2-AN385 (Cortex-M3, newlib; ci/mcu/mps2_an385.c) and
// virt (RISC-V rv32imac, picolibc; ci/rv32/virt.c). This file is what the two share; each
// board's own file says what only that board needs (timer, flash address, its C library's
// system calls and start-up). ci/profiles.toml builds both into the firmware
// (NCNN_MP_PORT_SRC) and wraps main and mp_init. A real board's SDK (ESP-IDF, an STM32 HAL)
// provides all of this itself.
//
// - The C library's malloc grows its heap through sbrk: ncnn's heap is the RAM between the end
//   of .bss and the stack, bounded by the board's linker script, so an exhausted heap returns
//   NULL to ncnn instead of running into the stack, and says so on the UART.
// - The port's start-up never runs C++ static constructors (.init_array): main is wrapped
//   (-Wl,--wrap=main) to run them first, after the board's own set-up.
// - Python's recursion limit: the port allows 10 KiB of C stack; here 16 KiB (below), and ncnn
//   the whole stack (ncnn_mp_port_stack_low).
// - A board keeps models in memory-mapped flash, read-only: ROMFS (below).
// - A module `qemu_board` for the MCU measurements: the C heap's figures, a timer (in
//   emulated instructions under QEMU's -icount), the C stack a call takes, the ROMFS region.

#include <errno.h>
#include <malloc.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "py/mphal.h"
#include "py/objarray.h"
#include "py/runtime.h"
#include "py/stackctrl.h"
#include "extmod/vfs.h"
#include "extmod/vfs_rom.h"

#include "board.h"

// ---- the C library's heap ----

extern char _ncnn_heap_start[], _ncnn_heap_end[];  // from the board's linker script
static char *heap_top = _ncnn_heap_start;
static char *heap_peak = _ncnn_heap_start;

// newlib's malloc asks _sbrk (through _sbrk_r); picolibc's asks sbrk, and its own sbrk,
// which this one replaces, would want picolibc's linker script's symbols.
#if defined(__PICOLIBC__)
#define BOARD_SBRK sbrk
#else
#define BOARD_SBRK _sbrk
#endif

void *BOARD_SBRK(ptrdiff_t incr) {
    if (incr > _ncnn_heap_end - heap_top || incr < _ncnn_heap_start - heap_top) {
        // ncnn does not check every allocation: a model that does not fit may write through
        // the NULL it gets and fault later. Say why first.
        mp_printf(&mp_plat_print, "board: the C heap (ncnn's memory) is exhausted: %d bytes asked, %d left of %d "
            "(make preflight tells what a model needs)\n", (int)incr, (int)(_ncnn_heap_end - heap_top),
            (int)(_ncnn_heap_end - _ncnn_heap_start));
        errno = ENOMEM;
        return (void *)-1;
    }
    char *prev = heap_top;
    heap_top += incr;
    if (heap_top > heap_peak) {
        heap_peak = heap_top;
    }
    return prev;
}

// Both C libraries end abort() and the like in _exit.
void _exit(int status) {
    exit(status);  // the port's exit(): leaves QEMU through semihosting
}

// ---- the board's set-up and C++ static constructors before MicroPython starts ----

extern void (*__init_array_start[])(void);
extern void (*__init_array_end[])(void);
int __real_main(int argc, char **argv);

int __wrap_main(int argc, char **argv) {
    board_init();
    for (void (**f)(void) = __init_array_start; f < __init_array_end; f++) {
        (*f)();
    }
    return __real_main(argc, argv);
}

// ---- ROMFS: the board's flash for models ----
// A region of the board's address space that nothing else in the firmware uses plays a
// board's memory-mapped flash (board_romfs, from the board's file): ci/qemu.py loads the
// ROMFS image built beside the firmware there (QEMU's -device loader), qemu_board.romfs()
// hands it out as a read-only memoryview, and every boot (and soft reboot) mounts it at
// /rom, as ESP32 and STM32 ports mount their "romfs" partition. (ports/qemu fixes
// MICROPY_VFS_ROM_IOCTL at 0, so vfs.rom_ioctl cannot be the way in.) Files opened there hand
// out pointers into it: Net.load_model(f, copy=False) keeps the weights where they are.

// The ROMFS region is the board's flash: what ncnn keeps weights in (load_model(copy=False))
// may lie there (ncnn_mp/binding/net.c asks; nothing else in the firmware writes it).
bool ncnn_mp_port_read_only(const void *p, size_t len);
bool ncnn_mp_port_read_only(const void *p, size_t len) {
    const uint8_t *base = board_romfs.items, *at = p;
    size_t size = board_romfs.len;
    return at >= base && len <= size && (size_t)(at - base) <= size - len;
}

// How much of the 64 KiB stack both linker scripts reserve Python's recursion may use (the
// port's main sets 10 KiB before the first mp_init; an ESP32 port allows 15 KiB of a 16 KiB
// task stack). RISC-V's call frames are larger than Cortex-M's: a plain recursive Python
// function went 38 deep in 10 KiB on virt, 48 on the MPS2-AN385, and the test scripts'
// stack scrub (tests/mp/mptest.py) goes 40 deep. ncnn's frames below a Python layer's, and
// the C code a Python call runs, have the other 48 KiB.
#define PYTHON_STACK_LIMIT (16 * 1024)

// Where ncnn's part of the stack ends, for ncnn_mp's check before it runs ncnn (ncnn_mp/binding/stack.c,
// which without this would allow ncnn only what is left of Python's 16 KiB).
char *ncnn_mp_port_stack_low(void);
char *ncnn_mp_port_stack_low(void) {
    return _ncnn_heap_end;
}

void __real_mp_init(void);

void __wrap_mp_init(void) {
    __real_mp_init();
    mp_stack_set_limit(PYTHON_STACK_LIMIT);
    nlr_buf_t nlr;
    if (nlr_push(&nlr) == 0) {
        mp_obj_t fs = mp_call_function_1(MP_OBJ_FROM_PTR(&mp_type_vfs_rom), MP_OBJ_FROM_PTR(&board_romfs));
        mp_call_function_2(MP_OBJ_FROM_PTR(&mp_vfs_mount_obj), fs, mp_obj_new_str("/rom", 4));
        nlr_pop();
    }  // (no image loaded: the region is not a ROMFS, and nothing is mounted)
}

// romfs() -> memoryview   the ROMFS region, read-only
static mp_obj_t qemu_board_romfs(void) {
    return MP_OBJ_FROM_PTR(&board_romfs);
}
static MP_DEFINE_CONST_FUN_OBJ_0(qemu_board_romfs_obj, qemu_board_romfs);

// ---- qemu_board: measurements for the MCU benchmarks ----

// time_ns() -> int   the board timer in ns (QEMU -icount shift=0: emulated instructions)
static mp_obj_t qemu_board_time_ns(void) {
    return mp_obj_new_int_from_ull(board_time_ns());
}
static MP_DEFINE_CONST_FUN_OBJ_0(qemu_board_time_ns_obj, qemu_board_time_ns);

// c_heap() -> (in_use, peak, size)   the C library's heap (ncnn's memory): bytes malloc'd
// now, the most ever taken from the system, and the most there is
static mp_obj_t qemu_board_c_heap(void) {
    struct mallinfo mi = mallinfo();
    mp_obj_t t[3] = {
        mp_obj_new_int_from_uint(mi.uordblks),
        mp_obj_new_int_from_uint(heap_peak - _ncnn_heap_start),
        mp_obj_new_int_from_uint(_ncnn_heap_end - _ncnn_heap_start),
    };
    return mp_obj_new_tuple(3, t);
}
static MP_DEFINE_CONST_FUN_OBJ_0(qemu_board_c_heap_obj, qemu_board_c_heap);

// stack_mark() -> None; stack_used() -> int   the C stack a call takes, by painting: stack_mark
// fills the unused stack below its caller with a pattern, stack_used tells how far below that
// point the deepest overwritten word lies (what ncnn_mp's estimate must cover: tests).
#define STACK_PAINT 0x5AA5C33Cu
static uint32_t *stack_mark_top;

static mp_obj_t qemu_board_stack_mark(void) {
    volatile uint32_t here;
    uint32_t *p = (uint32_t *)((uintptr_t)&here & ~(uintptr_t)3) - 64;  // (below this call's own frame)
    stack_mark_top = p;
    for (uint32_t *w = (uint32_t *)_ncnn_heap_end; w < p; w++) {
        *w = STACK_PAINT;
    }
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_0(qemu_board_stack_mark_obj, qemu_board_stack_mark);

static mp_obj_t qemu_board_stack_used(void) {
    uint32_t *w = (uint32_t *)_ncnn_heap_end;
    while (w < stack_mark_top && *w == STACK_PAINT) {
        w++;
    }
    return mp_obj_new_int_from_uint((uintptr_t)stack_mark_top - (uintptr_t)w);
}
static MP_DEFINE_CONST_FUN_OBJ_0(qemu_board_stack_used_obj, qemu_board_stack_used);

static const mp_rom_map_elem_t qemu_board_globals_table[] = {
    { MP_ROM_QSTR(MP_QSTR_stack_mark), MP_ROM_PTR(&qemu_board_stack_mark_obj) },
    { MP_ROM_QSTR(MP_QSTR_stack_used), MP_ROM_PTR(&qemu_board_stack_used_obj) },
    { MP_ROM_QSTR(MP_QSTR___name__), MP_ROM_QSTR(MP_QSTR_qemu_board) },
    { MP_ROM_QSTR(MP_QSTR_time_ns), MP_ROM_PTR(&qemu_board_time_ns_obj) },
    { MP_ROM_QSTR(MP_QSTR_c_heap), MP_ROM_PTR(&qemu_board_c_heap_obj) },
    { MP_ROM_QSTR(MP_QSTR_romfs), MP_ROM_PTR(&qemu_board_romfs_obj) },
};
static MP_DEFINE_CONST_DICT(qemu_board_globals, qemu_board_globals_table);

const mp_obj_module_t qemu_board_module = {
    .base = { &mp_type_module },
    .globals = (mp_obj_dict_t *)&qemu_board_globals,
};

MP_REGISTER_MODULE(MP_QSTR_qemu_board, qemu_board_module);
