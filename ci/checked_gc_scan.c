// SPDX-License-Identifier: MIT
// Linked into test firmware only (the memcheck and sanitizer profiles in ci/profiles.toml
// set NCNN_MP_PORT_SRC and NCNN_MP_LDFLAGS for it): never part of ncnn_mp itself.
//
// Why: MicroPython's GC scans the C stack conservatively, reading every word between
// the stack pointer and the stack top, padding and never-written locals included.
// When such a garbage word happens to point at a heap block, memcheck records the
// block's mark bit as "depending on an uninitialised value"; the taint then spreads
// through the allocation table into later gc_alloc/m_malloc/mp_map calls far from the
// GC, and a run fails or passes depending on what the stack held (seen in CI, not
// locally). AddressSanitizer likewise flags the scan's reads of other frames' redzones.
//
// How: the linker wraps gc_collect_root (-Wl,--wrap=gc_collect_root). Each root
// region handed over from another file (the register-and-stack scan, other threads)
// is copied word by word, without instrumentation, into a buffer memcheck is told
// holds defined values, and the real gc_collect_root scans the copy. The GC sees the
// same words; only the tools' bookkeeping changes. (The scan of a thread's stack from its
// signal handler also reads parts of valgrind's own signal frame: address errors are not
// reported for the words copied.)
//
// And gc_init is wrapped too (-Wl,--wrap=gc_init): the Unix port's heap comes from
// malloc, so until a block is first written memcheck holds its words uninitialised.
// gc_alloc marks a block used and unlocks the GC before it zeroes the block (py/gc.c:
// the pointer must exist before the unlock so a collection finds it); without a GIL,
// another thread's collection in that window finds the pointer in this thread's
// registers and scans the block's old contents. Harmless for the GC (those words are
// scanned conservatively, like any stack word), but on a never-used block memcheck
// reports the scan's branches on them (seen once in about 250 threaded fuzz runs).
// Zeroing the pool once at start makes every block's first contents defined.

#include <stddef.h>
#include <string.h>
#include <valgrind/memcheck.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NCNN_MP_NO_ASAN __attribute__((no_sanitize_address))
#endif
#endif
#if !defined(NCNN_MP_NO_ASAN) && defined(__SANITIZE_ADDRESS__)
#define NCNN_MP_NO_ASAN __attribute__((no_sanitize_address))
#endif
#ifndef NCNN_MP_NO_ASAN
#define NCNN_MP_NO_ASAN
#endif

#define CHUNK_WORDS 256

void __real_gc_collect_root(void **ptrs, size_t len);
void __wrap_gc_collect_root(void **ptrs, size_t len);
void __real_gc_init(void *start, void *end);
void __wrap_gc_init(void *start, void *end);

static void *chunk[CHUNK_WORDS];

NCNN_MP_NO_ASAN static void copy_words(void **dst, void *const volatile *src, size_t n) {
    for (size_t i = 0; i < n; i++) {
        dst[i] = src[i];
    }
}

void __wrap_gc_collect_root(void **ptrs, size_t len) {
    while (len > 0) {
        size_t n = len < CHUNK_WORDS ? len : CHUNK_WORDS;
        // With threads, another thread's stack is scanned from its GC signal handler,
        // through the signal frame valgrind builds, parts of which it marks unaddressable.
        VALGRIND_DISABLE_ADDR_ERROR_REPORTING_IN_RANGE(ptrs, n * sizeof(void *));
        copy_words(chunk, ptrs, n);
        VALGRIND_ENABLE_ADDR_ERROR_REPORTING_IN_RANGE(ptrs, n * sizeof(void *));
        VALGRIND_MAKE_MEM_DEFINED(chunk, n * sizeof(void *));
        __real_gc_collect_root(chunk, n);
        ptrs += n;
        len -= n;
    }
}

void __wrap_gc_init(void *start, void *end) {
    memset(start, 0, (size_t)((char *)end - (char *)start));
    __real_gc_init(start, end);
}
