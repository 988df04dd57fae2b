// SPDX-License-Identifier: MIT
// 64-bit integer routines Debian's lx106 libgcc.a lacks (the ESP8266's ROM has them), written
// here over the ones it has (__udivmoddi4, __divmoddi4) and lib1funcs.S's __umulsidi3 (built by
// ci/xtensa_libgcc.py). __muldi3 must not multiply 64-bit values with `*`: GCC would compile
// that into a call to __muldi3 itself.
#include <stdint.h>

uint64_t __udivmoddi4(uint64_t a, uint64_t b, uint64_t *rem);
int64_t __divmoddi4(int64_t a, int64_t b, int64_t *rem);
uint64_t __umulsidi3(uint32_t a, uint32_t b);

uint64_t __udivdi3(uint64_t a, uint64_t b);
uint64_t __umoddi3(uint64_t a, uint64_t b);
int64_t __divdi3(int64_t a, int64_t b);
int64_t __muldi3(int64_t a, int64_t b);

uint64_t __udivdi3(uint64_t a, uint64_t b) {
    return __udivmoddi4(a, b, 0);
}

uint64_t __umoddi3(uint64_t a, uint64_t b) {
    uint64_t rem;
    __udivmoddi4(a, b, &rem);
    return rem;
}

// (libgcc's __divmoddi4 always stores the remainder: a NULL faulted, EXCCAUSE 15, on the board.)
int64_t __divdi3(int64_t a, int64_t b) {
    int64_t rem;
    return __divmoddi4(a, b, &rem);
}

// The low 64 bits of the product: lo*lo in full, the cross terms' low 32 bits in the high word.
int64_t __muldi3(int64_t a, int64_t b) {
    uint32_t al = (uint32_t)a, ah = (uint32_t)((uint64_t)a >> 32);
    uint32_t bl = (uint32_t)b, bh = (uint32_t)((uint64_t)b >> 32);
    uint64_t p = __umulsidi3(al, bl);
    return (int64_t)(p + ((uint64_t)(al * bh + ah * bl) << 32));
}
