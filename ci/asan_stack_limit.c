// SPDX-License-Identifier: MIT
// Linked into the sanitizer firmware only (profile asan in ci/profiles.toml sets
// NCNN_MP_PORT_SRC and NCNN_MP_LDFLAGS for it): never part of ncnn_mp itself.
//
// Why: AddressSanitizer puts redzones around every local, so frames grow several times
// over. Measured with micropython.stack_use(): a Python function calling itself takes 6,440
// bytes of stack per call under ASan against 406 on the plain firmware; a script's module
// level 7,600 against 816; a Python layer's load_param called from ncnn's load_param sits
// 12,576 bytes deeper than the script against 2,432. The Unix port gives its main thread a
// fixed 80,000-byte Python stack limit (of the 8 MiB the thread has), so a script nesting
// callbacks (a DataReader's read() loading another net with Python layers, as the API
// fuzzer's do) raised "maximum recursion depth exceeded" under ASan only.
//
// How: the linker wraps mp_cstack_init_with_sp_here (-Wl,--wrap=...), which the port's
// main() calls once with the limit; the limit is scaled by the largest growth measured
// above, so scripts nest about as deep under ASan as without it (1,280,000 bytes: inside
// the main thread's 8 MiB). Threads keep the stack sizes _thread gives them.

#include <stddef.h>

#define ASAN_FRAME_GROWTH 16

void __real_mp_cstack_init_with_sp_here(size_t stack_size);
void __wrap_mp_cstack_init_with_sp_here(size_t stack_size);

void __wrap_mp_cstack_init_with_sp_here(size_t stack_size) {
    __real_mp_cstack_init_with_sp_here(stack_size * ASAN_FRAME_GROWTH);
}
