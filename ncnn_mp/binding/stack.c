// SPDX-License-Identifier: MIT
// The C stack ncnn runs on. ncnn takes the caller's stack: a layer's kernel keeps tiles of
// several KiB in its frames, and an extract recurses once per layer it has yet to run along
// a chain to the blob asked for (NetPrivate::forward_layer). A thread with too little stack, as
// `_thread.stack_size(16 * 1024)` gives on the Unix port or the few KiB an ESP32 thread
// gets by default, would overflow it inside ncnn, far from any check of MicroPython's:
// a segfault, or a corrupted neighbour on a board. So ncnn_mp estimates what a call needs
// and raises RuntimeError naming both figures when the thread has less.
//
// What a call needs: NCNN_MP_STACK_PER_LAYER for each layer nested at once (the net's depth:
// ncnn's recursion replayed over its graph, cxx_graph.cpp) plus NCNN_MP_STACK_RESERVE for the
// deepest kernel, the C API and ncnn_mp's frames; a load or a standalone layer, the reserve.
// Measured (2026-11-23): forward_layer's frame is 128 bytes on x86-64 (GCC 12 -O3), 96 on the
// Cortex-M3 and 112 on rv32imac (-Os). On x86-64, the smallest threads that ran each net
// (1 KiB steps, ncnn's AVX kernels) left ncnn about 20 KiB for yolo-fastest-1.1 (123 deep:
// 15.4 KiB of frames, the rest kernel), 13 for shufflenet_v2 (61), 11 for mobilenet_v2 (47),
// where the estimate asks 28, 20 and 18. On both QEMU boards (generic C kernels, painted
// stack, tests/test_mcu_models.py) RetinaFace's load took at most 3.4 KiB and its extract
// 5.9 KiB, from the calling Python frame down, where the estimate asks 4 and 8.4.
// A port may define both (-D) for its compiler.
//
// What a thread has: the bottom of its stack from MicroPython's own limit for Python
// (stack_top - stack_limit: for a thread, its stack less the port's margin, 8 KiB on the Unix
// port; on ESP32 and most ports the task's stack less a small margin), except where more is
// known: the main thread on Linux grows its stack to the rlimit (the Unix port lets Python
// use 80,000 bytes of 8 MiB), and a board that gives Python part of a larger stack says where
// the rest ends (ncnn_mp_port_stack_low, weak). Worked out once per thread. (Not glibc's
// pthread_getattr_np: it allocates through glibc's malloc, which under AddressSanitizer
// broke glibc's arena bookkeeping at thread exit: aborts in make sanitize.)

#include "ncnn_mp.h"

#include "py/mpstate.h"
#include "py/stackctrl.h"

#ifndef NCNN_MP_STACK_PER_LAYER
#define NCNN_MP_STACK_PER_LAYER (sizeof(void *) >= 8 ? 128 : 112)
#endif
#ifndef NCNN_MP_STACK_RESERVE
#define NCNN_MP_STACK_RESERVE (sizeof(void *) >= 8 ? 12 * 1024 : 4 * 1024)
#endif

MP_WEAK char *ncnn_mp_port_stack_low(void) {
    return NULL;
}

#if defined(__linux__)
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

// The main thread's stack beyond Python's limit: the rlimit (8 MiB where unlimited) less
// what lies above the stack's top as MicroPython took it (arguments, environment: 64 KiB).
static char *ncnn_mp_main_stack_low(char *low) {
    if (syscall(SYS_gettid) != getpid()) {
        return low;
    }
    struct rlimit rl;
    size_t size = 8 * 1024 * 1024, above = 64 * 1024;
    if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
        size = rl.rlim_cur;
    }
    char *deeper = size > above ? MP_STATE_THREAD(stack_top) - (size - above) : low;
    return deeper < low ? deeper : low;
}
#endif

#if MICROPY_PY_THREAD
#define NCNN_MP_PER_THREAD __thread
#else
#define NCNN_MP_PER_THREAD
#endif
static NCNN_MP_PER_THREAD char *ncnn_mp_thread_stack_low;

static char *ncnn_mp_stack_low(void) {
    char *low = ncnn_mp_thread_stack_low;
    if (low == NULL) {
        low = ncnn_mp_port_stack_low();
        #if MICROPY_STACK_CHECK
        if (low == NULL) {
            low = MP_STATE_THREAD(stack_top) - MP_STATE_THREAD(stack_limit);
            #if defined(__linux__)
            low = ncnn_mp_main_stack_low(low);
            #endif
        }
        #endif
        ncnn_mp_thread_stack_low = low;
    }
    return low;
}

size_t ncnn_mp_stack_need(int depth) {
    return (size_t)depth * NCNN_MP_STACK_PER_LAYER + NCNN_MP_STACK_RESERVE;
}

void ncnn_mp_stack_check(int depth, const char *where) {
    char *low = ncnn_mp_stack_low();
    if (low == NULL) {
        return;  // (the port cannot say)
    }
    volatile char here;
    size_t room = (char *)&here > low ? (size_t)((char *)&here - low) : 0;
    size_t need = ncnn_mp_stack_need(depth);
    if (room < need) {
        // A size that fits: what the thread used to get here, the need, and the margin the
        // Unix port keeps below Python's limit in a thread (8 KiB), in whole pages.
        size_t fits = (mp_stack_usage() + need + 8 * 1024 + 4095) / 4096 * 4096;
        (void)fits;  // (no error reporting: unused)
        mp_raise_msg_varg(&mp_type_RuntimeError, NCNN_MP_FORMAT("%s: ncnn needs about %u KiB of C stack here (%d layers deep) and this thread has %u KiB left: give it more (_thread.stack_size(%u))"),
            where, (unsigned)((need + 1023) / 1024), depth, (unsigned)(room / 1024), (unsigned)fits);
    }
}
