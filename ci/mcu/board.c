// What MicroPython's bare-metal ports/qemu (board MPS2-AN385) lacks for a C++ library such
// as ncnn, linked into the QEMU firmware only (ci/profiles.toml [qemu] sets
// NCNN_MP_PORT_SRC=ci/mcu/board.c and wraps main). A real board's SDK (ESP-IDF, an STM32
// HAL) provides all of this itself.
//
// - newlib's malloc needs _sbrk: ncnn's heap is the RAM between the end of .bss and the
//   stack, bounded by the linker script (mps2_an385.ld), so an exhausted heap returns
//   NULL to ncnn instead of running into the stack.
// - newlib's stdio needs _write: ncnn prints its errors with fprintf(stderr), and routing
//   them to the UART is what makes "layer X not exists" visible on the console.
// - libstdc++'s static objects register destructors with __cxa_atexit(..., &__dso_handle).
// - The port's startup never runs C++ static constructors (.init_array): main is wrapped
//   (-Wl,--wrap=main) to run them first.
// - A board keeps models in memory-mapped flash, read-only: ROMFS (below).
// - A module `qemu_board` for the MCU measurements: the ncnn heap's high-water mark and
//   a 25 MHz timer (the board's CMSDK TIMER0; with QEMU's -icount shift=0 one tick is
//   40 emulated instructions).

#include <errno.h>
#include <malloc.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "py/mphal.h"
#include "py/objarray.h"
#include "py/runtime.h"
#include "extmod/vfs.h"
#include "extmod/vfs_rom.h"

// ---- newlib system calls ----

extern char _ncnn_heap_start[], _ncnn_heap_end[];  // from mps2_an385.ld
static char *heap_top = _ncnn_heap_start;
static char *heap_peak = _ncnn_heap_start;

void *_sbrk(ptrdiff_t incr) {
    if (incr > _ncnn_heap_end - heap_top || incr < _ncnn_heap_start - heap_top) {
        // ncnn does not check every allocation: a model that does not fit may write through
        // the NULL it gets (here, over the vector table at 0) and fault later. Say why first.
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

void _exit(int status) {
    exit(status);  // the port's exit(): leaves QEMU through semihosting
}

void *__dso_handle = &__dso_handle;

// ---- C++ static constructors before MicroPython starts ----

extern void (*__init_array_start[])(void);
extern void (*__init_array_end[])(void);
int __real_main(int argc, char **argv);

int __wrap_main(int argc, char **argv) {
    for (void (**f)(void) = __init_array_start; f < __init_array_end; f++) {
        (*f)();
    }
    return __real_main(argc, argv);
}

// ---- ROMFS: the board's flash for models ----
// The MPS2-AN385's 16 MiB at 0x21000000, which nothing else in the firmware uses, plays a
// board's memory-mapped flash: ci/qemu.py loads build/romfs.img there (QEMU's -device
// loader), qemu_board.romfs() hands it out as a read-only memoryview, and every boot (and
// soft reboot) mounts it at /rom, as ESP32 and STM32 ports mount their "romfs" partition.
// (ports/qemu fixes MICROPY_VFS_ROM_IOCTL at 0, so vfs.rom_ioctl cannot be the way in.)
// Files opened there hand out pointers into it: Net.load_model(f, copy=False) keeps
// the weights where they are.
#define ROMFS_BASE 0x21000000
#define ROMFS_SIZE (16 * 1024 * 1024)
static const MP_DEFINE_MEMORYVIEW_OBJ(romfs_obj, 'B', 0, ROMFS_SIZE, (void *)ROMFS_BASE);

void __real_mp_init(void);

void __wrap_mp_init(void) {
    __real_mp_init();
    nlr_buf_t nlr;
    if (nlr_push(&nlr) == 0) {
        mp_obj_t fs = mp_call_function_1(MP_OBJ_FROM_PTR(&mp_type_vfs_rom), MP_OBJ_FROM_PTR(&romfs_obj));
        mp_call_function_2(MP_OBJ_FROM_PTR(&mp_vfs_mount_obj), fs, mp_obj_new_str("/rom", 4));
        nlr_pop();
    }  // (no image loaded: the region is not a ROMFS, and nothing is mounted)
}

// romfs() -> memoryview   the ROMFS region, read-only
static mp_obj_t qemu_board_romfs(void) {
    return MP_OBJ_FROM_PTR(&romfs_obj);
}
static MP_DEFINE_CONST_FUN_OBJ_0(qemu_board_romfs_obj, qemu_board_romfs);

// ---- qemu_board: measurements for the MCU benchmarks ----

typedef struct {
    volatile uint32_t ctrl, value, reload, intstatus;
} cmsdk_timer_t;
#define TIMER0 ((cmsdk_timer_t *)0x40000000)

// ticks() -> int   TIMER0 ticks (25 MHz) since the first call
static mp_obj_t qemu_board_ticks(void) {
    if (!(TIMER0->ctrl & 1)) {
        TIMER0->reload = 0xffffffff;
        TIMER0->value = 0xffffffff;
        TIMER0->ctrl = 1;
    }
    return mp_obj_new_int_from_uint(0xffffffff - TIMER0->value);
}
static MP_DEFINE_CONST_FUN_OBJ_0(qemu_board_ticks_obj, qemu_board_ticks);

// c_heap() -> (in_use, peak, size)   newlib's heap (ncnn's memory): bytes malloc'd now,
// the most ever taken from the system, and the most there is
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

static const mp_rom_map_elem_t qemu_board_globals_table[] = {
    { MP_ROM_QSTR(MP_QSTR___name__), MP_ROM_QSTR(MP_QSTR_qemu_board) },
    { MP_ROM_QSTR(MP_QSTR_ticks), MP_ROM_PTR(&qemu_board_ticks_obj) },
    { MP_ROM_QSTR(MP_QSTR_c_heap), MP_ROM_PTR(&qemu_board_c_heap_obj) },
    { MP_ROM_QSTR(MP_QSTR_romfs), MP_ROM_PTR(&qemu_board_romfs_obj) },
};
static MP_DEFINE_CONST_DICT(qemu_board_globals, qemu_board_globals_table);

const mp_obj_module_t qemu_board_module = {
    .base = { &mp_type_module },
    .globals = (mp_obj_dict_t *)&qemu_board_globals,
};

MP_REGISTER_MODULE(MP_QSTR_qemu_board, qemu_board_module);
