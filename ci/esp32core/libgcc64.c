// SPDX-License-Identifier: MIT
// The 64-bit integer division and multiply of the esp32core board, in C: the windowed core has no
// libgcc to take them from (ci/xtensa_libgcc.py). __udivmoddi4 divides with the core's 32-bit
// divide when both values fit in 32 bits, else by shift and subtract (one bit a step, from the
// divisor aligned under the dividend); __muldi3 must not multiply 64-bit values with `*` (clang
// would call __muldi3 itself): it builds the product from lib1funcs.S's __umulsidi3. Checked
// against the host's arithmetic on the board (tests/test_esp32core.py).
#include <stdint.h>

uint64_t __umulsidi3(uint32_t a, uint32_t b);
uint64_t __udivmoddi4(uint64_t n, uint64_t d, uint64_t *rem);
uint64_t __udivdi3(uint64_t a, uint64_t b);
uint64_t __umoddi3(uint64_t a, uint64_t b);
int64_t __divdi3(int64_t a, int64_t b);
int64_t __moddi3(int64_t a, int64_t b);
int64_t __muldi3(int64_t a, int64_t b);

uint64_t __udivmoddi4(uint64_t n, uint64_t d, uint64_t *rem) {
    if ((n >> 32) == 0 && (d >> 32) == 0) {
        uint32_t q = (uint32_t)n / (uint32_t)d;
        if (rem) {
            *rem = (uint32_t)n - q * (uint32_t)d;
        }
        return q;
    }
    uint64_t q = 0;
    if (d != 0 && d <= n) {
        int shift = __builtin_clzll(d) - __builtin_clzll(n);
        d <<= shift;
        for (; shift >= 0; shift--) {
            q <<= 1;
            if (n >= d) {
                n -= d;
                q |= 1;
            }
            d >>= 1;
        }
    }
    if (rem) {
        *rem = n;
    }
    return q;
}

uint64_t __udivdi3(uint64_t a, uint64_t b) {
    return __udivmoddi4(a, b, 0);
}

uint64_t __umoddi3(uint64_t a, uint64_t b) {
    uint64_t rem;
    __udivmoddi4(a, b, &rem);
    return rem;
}

static uint64_t magnitude(int64_t v) {
    return v < 0 ? -(uint64_t)v : (uint64_t)v;
}

int64_t __divdi3(int64_t a, int64_t b) {
    uint64_t q = __udivmoddi4(magnitude(a), magnitude(b), 0);
    return (int64_t)((a < 0) != (b < 0) ? -q : q);
}

int64_t __moddi3(int64_t a, int64_t b) {
    uint64_t rem;
    __udivmoddi4(magnitude(a), magnitude(b), &rem);
    return (int64_t)(a < 0 ? -rem : rem);
}

// The low 64 bits of the product: lo*lo in full, the cross terms' low 32 bits in the high word.
int64_t __muldi3(int64_t a, int64_t b) {
    uint32_t al = (uint32_t)a, ah = (uint32_t)((uint64_t)a >> 32);
    uint32_t bl = (uint32_t)b, bh = (uint32_t)((uint64_t)b >> 32);
    return (int64_t)(__umulsidi3(al, bl) + ((uint64_t)(al * bh + ah * bl) << 32));
}
