// SPDX-License-Identifier: MIT
// ncnn_mp/kernels/kernel_float.h against the hardware's float arithmetic (x86-64's SSE: IEEE 754
// single precision, round to nearest even), bit for bit, on random operands of every class
// (normal, subnormal, zero, infinity, NaN), on operands drawn to stress cancellation and
// exponent gaps, and on products and sums that fall exactly halfway. Built and run by
// tests/test_kernel_float.py; prints one line per operation and exits non-zero at the
// first difference.
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define NCNN_MP_SOFT_STEPS 1  // (the integer steps, whatever this machine's default)
#include "kernel_float.h"

using namespace ncnn_mp_kernels;

static uint64_t state = 0x9e3779b97f4a7c15ull;

static uint32_t next() {  // xorshift64*
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return static_cast<uint32_t>((state * 0x2545f4914f6cdd1dull) >> 32);
}

// A float of a random class, or near `near` (same or close exponent, few mantissa bits).
static float draw(float near) {
    uint32_t r = next(), kind = r % 16;
    if (kind == 0) return bits_float(next());                                   // any pattern
    if (kind == 1) return bits_float(next() & 0x807fffffu);                     // zero, subnormal
    if (kind == 2) return bits_float((next() & 0x80000000u) | 0x7f800000u);    // infinity
    if (kind == 3) return bits_float(0x7fc00000u | (next() & 0x803fffffu));    // NaN
    if (kind == 4) return bits_float((next() & 0x80ffffffu) | 0x7f000000u);    // the largest
    if (kind == 5) return bits_float((next() & 0x80ffffffu) | 0x00800000u);    // the smallest normal
    if (kind <= 9) {  // near `near`: an exponent within 2, mantissa tails short (ties, cancellation)
        uint32_t b = float_bits(near);
        int e = static_cast<int>((b >> 23) & 0xffu) + static_cast<int>(next() % 5) - 2;
        if (e < 1) e = 1;
        if (e > 254) e = 254;
        uint32_t m = (b & 0x7fffffu) ^ (next() & (kind == 6 ? 0x7fffffu : 0xffu << (next() % 16)));
        return bits_float((next() & 0x80000000u) | (static_cast<uint32_t>(e) << 23) | m);
    }
    if (kind <= 12) {  // typical values of a network: |x| in [1e-4, 1e4]
        float v = static_cast<float>(ldexp(1.0 + (next() % 1000000) / 1e6, static_cast<int>(next() % 27) - 13));
        return (next() & 1) ? -v : v;
    }
    return bits_float((next() & 0x807fffffu) | ((next() % 254 + 1) << 23));     // any normal
}

static bool same(float a, float b) {
    return (isnan(a) && isnan(b)) || float_bits(a) == float_bits(b);
}

static int fail(const char *op, float a, float b, float got, float want) {
    printf("%s(%a, %a): %a, the hardware gives %a\n", op, a, b, got, want);
    return 1;
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 5000000;
    volatile float sink;  // (keeps the hardware's operations as written)
    for (long i = 0; i < n; i++) {
        float a = draw(1.0f), b = draw(a);
        volatile float va = a, vb = b;
        float want = va * vb, got = mul_ff(a, b);
        if (!same(got, want)) return fail("mul_ff", a, b, got, want);
        want = va + vb;
        got = add_ff(a, b);
        if (!same(got, want)) return fail("add_ff", a, b, got, want);
        got = add_ff(b, a);
        if (!same(got, want)) return fail("add_ff", b, a, got, want);
        // ties of a product: a mantissa with its low bits cleared times one with few bits
        float t = bits_float((float_bits(a) & 0xffff0000u)), u = bits_float(float_bits(b) & 0xff800000u) * 1.5f;
        volatile float vt = t, vu = u;
        want = vt * vu;
        got = mul_ff(t, u);
        if (!same(got, want)) return fail("mul_ff", t, u, got, want);
        int sum = static_cast<int>(next()) >> (next() % 32);
        volatile int vs = sum;
        want = static_cast<float>(vs) * vb;
        got = mul_if(sum, b);
        if (!same(got, want)) return fail("mul_if", static_cast<float>(sum), b, got, want);
        sink = got;
    }
    (void)sink;
    // mul_high_halves against the 64-bit product: the halves' edges, then random pairs
    const int32_t xs[] = { 0, 1, -1, 0x7fffffff, -0x7fffffff - 1, 0xffff, 0x10000, -0x10000, -0x10001, 0x7fff, -0x8000 };
    const int32_t ms[] = { 0, 1, 0xffff, 0x10000, 0x7fffffff, 0x7fffff80, 1 << 30 };
    for (long i = 0; i < 4 * n; i++) {
        int32_t x = static_cast<int32_t>(next()), m = static_cast<int32_t>(next() & 0x7fffffffu);
        if (i < 77) {
            x = xs[i % 11];
            m = ms[i / 11];
        } else {
            x >>= next() % 32;
            m >>= next() % 32;
        }
        int32_t want = static_cast<int32_t>((static_cast<int64_t>(x) * m) >> 32), got = mul_high_halves(x, m);
        if (got != want) {
            printf("mul_high_halves(%d, %d): %d, the 64-bit product gives %d\n", x, m, got, want);
            return 1;
        }
    }
    // mul_high_split (a Requant's multiplier m << 7, |x| < 2^19) against the 64-bit product:
    // the ends of both ranges, then random pairs
    const int32_t sx[] = { 0, 1, -1, (1 << 19) - 1, -(1 << 19) + 1, 4095, -4096, 4096 };
    const int32_t sm[] = { 0x800000, 0xffffff, 0x800fff, 0xfff000, 0xabcdef };
    for (long i = 0; i < 4 * n; i++) {
        int32_t x = static_cast<int32_t>(next() % ((1u << 20) - 1)) - ((1 << 19) - 1);
        int32_t m = static_cast<int32_t>((next() & 0x7fffffu) | 0x800000u);
        if (i < 40) {
            x = sx[i % 8];
            m = sm[i / 8];
        } else if (i % 3 == 0) {
            x >>= next() % 20;
        }
        int32_t mult = m << 7;
        int32_t want = static_cast<int32_t>((static_cast<int64_t>(x) * mult) >> 32);
        int32_t got = mul_high_split(x, m >> 12, m & 0xfff);
        if (got != want) {
            printf("mul_high_split(%d, %d): %d, the 64-bit product gives %d\n", x, mult, got, want);
            return 1;
        }
    }
    // recip_ff against the hardware's 1 / a: random patterns of every class, and the mantissas
    // next to a power of two (the rounding's carry into the exponent)
    for (long i = 0; i < n; i++) {
        float a = i % 4 == 0 ? bits_float(next()) : draw(1.0f);
        if (i % 16 == 1) {
            a = bits_float((next() & 0xff800000u) | (i % 32 == 1 ? 0x7fffffu - (next() % 64) : next() % 64));
        }
        volatile float va = a;
        float want = 1.f / va, got = recip_ff(a);
        if (!same(got, want)) return fail("recip_ff", 1.f, a, got, want);
    }
    printf("mul_ff, add_ff, mul_if, recip_ff: %ld draws each, equal to the hardware's; mul_high_halves, "
           "mul_high_split: %ld each, equal\n", n, 4 * n);
    return 0;
}
