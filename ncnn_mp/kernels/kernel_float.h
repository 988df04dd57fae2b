// SPDX-License-Identifier: MIT
// float32 multiply and add in integer arithmetic, rounded exactly as IEEE 754 rounds them
// (to nearest, ties to even), for the kernels' float steps (kernels.h) on soft-float RISC-V:
// there each float operation is a call into libgcc's generic C soft-fp (about 110
// instructions a multiply, 75 an add, measured), which unpacks, classifies, computes and
// packs. Here the common case (normal operands, a normal result) is a 64-bit product or
// sum and one rounding, inlined; zeros, subnormals, infinities, NaN and a result outside
// the normal range go to the compiler's float operation, so every result is that
// operation's own. tests/kernels/float_steps_check.cpp checks them bit for bit against the
// hardware's float arithmetic. Elsewhere (NCNN_MP_SOFT_STEPS 0) they are the plain float
// operations: an FPU, or on the Cortex-M3 libgcc's hand-written Thumb-2 routines, which
// measured faster than these there (RetinaFace at 96x96 on the qemu board, libgcc / these:
// fp32 convolutions 74 / 83 instructions per MAC, int8 151 / 163 M instructions; on rv32
// libgcc / these: fp32 141 / 85, int8 235 / 213 M).
#ifndef NCNN_MP_KERNEL_FLOAT_H
#define NCNN_MP_KERNEL_FLOAT_H

#include <stdint.h>
#include <string.h>

// Inlined into the kernels' loops, which are built -O2 (kernel_*.cpp): a call would cost
// what these save, and at the MCU builds' -Os GCC keeps them out of line.
// NCNN_MP_OUTLINE: one copy of an inlined epilogue per file, called from each block.
#if defined(__GNUC__)
#define NCNN_MP_INLINE inline __attribute__((always_inline))
#define NCNN_MP_OUTLINE __attribute__((noinline))
#else
#define NCNN_MP_INLINE inline
#define NCNN_MP_OUTLINE
#endif

#ifndef NCNN_MP_SOFT_STEPS
#if defined(__riscv) && !defined(__riscv_flen)
#define NCNN_MP_SOFT_STEPS 1
#else
#define NCNN_MP_SOFT_STEPS 0
#endif
#endif

// A single-precision FPU (Cortex-M4F/M33/M7: __ARM_FP bit 2; RISC-V F: __riscv_flen; Xtensa's
// FP option, the ESP32's and S3's: GCC predefines __XTENSA_HARD_FLOAT__, the esp32core board's
// flags too; the desktop (x86-64: SSE arithmetic; AArch64), so the Unix builds under valgrind and
// ASan run the same code): a float multiply and an add are one instruction each, and the fp32
// kernels take their register-blocked forms (kernel_conv_fp32.cpp, kernel_innerproduct.cpp).
// Without one they keep the 2x2 block, whose cost is the float calls, not the loads.
#ifndef NCNN_MP_HARD_FLOAT
#if (defined(__ARM_FP) && (__ARM_FP & 4)) || (defined(__riscv_flen) && __riscv_flen >= 32) || \
    (defined(__XTENSA__) && defined(__XTENSA_HARD_FLOAT__)) || defined(__x86_64__) || defined(__aarch64__)
#define NCNN_MP_HARD_FLOAT 1
#else
#define NCNN_MP_HARD_FLOAT 0
#endif
#endif

// The FPU's single-precision registers, which size the fp32 blocks (kernel_conv_fp32.cpp): 16 on
// Xtensa (a 4x4 block's 16 sums spilled there: RetinaFace at 6.1 instructions a MAC, 4.6 with 2x4), 32 on
// the others (the Cortex-M4F's s0-s31; RISC-V F and the desktop have 32 or more).
#ifndef NCNN_MP_FP_REGS
#if defined(__XTENSA__)
#define NCNN_MP_FP_REGS 16
#else
#define NCNN_MP_FP_REGS 32
#endif
#endif

namespace ncnn_mp_kernels {

// The high word of x * m (0 <= m < 2^31) from four 16x16 products, exact, for a core without a
// high multiply (kernels.h mul_high): x * m = xh*mh 2^32 + (xh*ml + xl*mh) 2^16 + xl*ml, with
// x = xh 2^16 + xl, m = mh 2^16 + ml (xl, ml the unsigned low halves); the middle and low
// words' bits below 2^32 carry (their 16-bit pieces' sum) >> 16 into the high word (what is
// below 2^16 in the lowest word cannot reach the next 2^32). Every product fits 32 bits.
static NCNN_MP_INLINE int32_t mul_high_halves(int32_t x, int32_t m) {
    const uint32_t xl = static_cast<uint32_t>(x) & 0xffffu, ml = static_cast<uint32_t>(m) & 0xffffu;
    const int32_t xh = x >> 16, mh = m >> 16;
    const uint32_t ll = xl * ml, lh = xl * static_cast<uint32_t>(mh);
    const int32_t hl = xh * static_cast<int32_t>(ml);
    const uint32_t carry = ((ll >> 16) + (lh & 0xffffu) + (static_cast<uint32_t>(hl) & 0xffffu)) >> 16;
    return xh * mh + (hl >> 16) + static_cast<int32_t>(lh >> 16) + static_cast<int32_t>(carry);
}

// The same high word for a Requant's multiplier (m << 7, m < 2^24) and |x| < 2^19, from two
// 32-bit products (lx106: two MULLs where mul_high_halves takes four MUL16s and the carries):
// with m = a 2^12 + b (a, b < 2^12), x * m = x * a 2^12 + x * b, every term within 32 bits,
// and floor(x * m / 2^25) = (x * a + floor(x * b / 2^12)) >> 13 (x * a is an integer).
static NCNN_MP_INLINE int32_t mul_high_split(int32_t x, int32_t a, int32_t b) {
    return (x * a + ((x * b) >> 12)) >> 13;
}

static NCNN_MP_INLINE uint32_t float_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static NCNN_MP_INLINE float bits_float(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

// Position of the highest set bit of v (v != 0).
static NCNN_MP_INLINE int top_bit(uint64_t v) {
    uint32_t hi = static_cast<uint32_t>(v >> 32);
    return hi != 0 ? 63 - __builtin_clz(hi) : 31 - __builtin_clz(static_cast<uint32_t>(v));
}

// The float of sign | m * 2^(e - 150), m != 0 rounded to 24 bits (ties to even; `sticky`:
// nonzero bits below m were dropped), or false where that is not a normal float.
static NCNN_MP_INLINE bool pack_rounded(uint32_t sign, uint64_t m, int e, bool sticky, float &out) {
    int n = top_bit(m);
    int shift = n - 23;
    uint32_t q;
    if (shift > 0) {
        uint64_t rest = m & ((static_cast<uint64_t>(1) << shift) - 1);
        uint64_t half = static_cast<uint64_t>(1) << (shift - 1);
        q = static_cast<uint32_t>(m >> shift);
        if (rest > half || (rest == half && (sticky || (q & 1u)))) {
            q++;
            if (q == (1u << 24)) {
                q >>= 1;
                shift++;
            }
        }
    } else {
        q = static_cast<uint32_t>(m) << -shift;  // (exact: sticky is only set with shift > 0)
    }
    int biased = e + shift;
    if (biased < 1 || biased > 254) {
        return false;
    }
    out = bits_float(sign | (static_cast<uint32_t>(biased) << 23) | (q & 0x7fffffu));
    return true;
}

static NCNN_MP_INLINE bool normal_float(uint32_t b) {
    uint32_t e = (b >> 23) & 0xffu;
    return e != 0 && e != 0xffu;
}

// sign | s * 2^(e - 150), s's highest set bit at n, rounded to 24 bits (ties to even), or
// false where that is no normal float. Bit 0 of s may be "jammed" (ORed with whatever
// nonzero bits fell off below it): that rounds right where n - 23 >= 2, as in both uses.
static NCNN_MP_INLINE bool pack32(uint32_t sign, uint32_t s, int n, int e, float &out) {
    int shift = n - 23;
    uint32_t q;
    if (shift > 0) {
        uint32_t rest = s & ((1u << shift) - 1), half = 1u << (shift - 1);
        q = s >> shift;
        if (rest > half || (rest == half && (q & 1u))) {
            q++;
            if (q == (1u << 24)) {
                q >>= 1;
                shift++;
            }
        }
    } else {
        q = s << -shift;
    }
    int biased = e + shift;
    if (biased < 1 || biased > 254) {
        return false;
    }
    out = bits_float(sign | (static_cast<uint32_t>(biased) << 23) | (q & 0x7fffffu));
    return true;
}

// a * b (float * float): the 48-bit product's top 32 bits, the rest jammed into bit 0.
static NCNN_MP_INLINE float mul_ff(float a, float b) {
#if !NCNN_MP_SOFT_STEPS
    return a * b;
#endif
    uint32_t ua = float_bits(a), ub = float_bits(b);
    float out;
    if (normal_float(ua) && normal_float(ub)) {
        uint64_t m = static_cast<uint64_t>(((ua & 0x7fffffu) | 0x800000u) << 8) * (((ub & 0x7fffffu) | 0x800000u) << 8);
        uint32_t hi = static_cast<uint32_t>(m >> 32), s = hi | (static_cast<uint32_t>(m) != 0 ? 1u : 0u);
        int e = static_cast<int>((ua >> 23) & 0xffu) + static_cast<int>((ub >> 23) & 0xffu) - 134;
        if (pack32((ua ^ ub) & 0x80000000u, s, 30 + static_cast<int>(hi >> 31), e, out)) {
            return out;
        }
    } else if ((ua & 0x7fffffffu) == 0 && normal_float(ub)) {
        return bits_float((ua ^ ub) & 0x80000000u);  // (a zero times a finite number)
    }
    return a * b;
}

// 1 / a, correctly rounded (to nearest, ties to even), for the kernels' per-channel
// 1 / (input scale * weight scale) (a division is a long library call on these cores): the
// mantissa m's reciprocal 2^47 / m by long division in bytes (three 32-bit divisions; each
// remainder is under m < 2^24, so shifted by 8 it stays within 32 bits), the remainder deciding
// the rounding. A zero, subnormal, infinite or NaN a, or a result out of the normal range, goes
// to the compiler's division. tests/kernels/float_steps_check.cpp checks every float.
static NCNN_MP_INLINE float recip_ff(float a) {
#if !NCNN_MP_SOFT_STEPS  // (lx106 measured slower with this: its 32-bit divisions are library calls too)
    return 1.f / a;
#endif
    const uint32_t ua = float_bits(a);
    if (!normal_float(ua)) {
        return 1.f / a;
    }
    const uint32_t m = (ua & 0x7fffffu) | 0x800000u;
    if (m == 0x800000u) {  // a power of two: exact
        const int e = 254 - static_cast<int>((ua >> 23) & 0xffu);
        if (e < 1 || e > 254) {
            return 1.f / a;
        }
        return bits_float((ua & 0x80000000u) | (static_cast<uint32_t>(e) << 23));
    }
    // q = floor(2^47 / m), in (2^23, 2^24) for m in (2^23, 2^24)
    uint32_t q = 0x80000000u / m, r = 0x80000000u - q * m;
    uint32_t d = (r << 8) / m;
    r = (r << 8) - d * m;
    q = (q << 8) | d;
    d = (r << 8) / m;
    r = (r << 8) - d * m;
    q = (q << 8) | d;
    if (2 * r > m || (2 * r == m && (q & 1u))) {  // (2 * r < 2^25: no overflow)
        q++;
    }
    // 1 / a = q * 2^-47 * 2^(127 - e_a) ... as a float: mantissa q (24 bits, or 2^24 after the
    // rounding carried), exponent 253 - e_a (q in [2^23, 2^24): the value is q 2^(-23) 2^(126 - (e_a - 127)))
    int e = 253 - static_cast<int>((ua >> 23) & 0xffu);
    if (q == 0x1000000u) {
        q = 0x800000u;
        e++;
    }
    if (e < 1 || e > 254) {
        return 1.f / a;
    }
    return bits_float((ua & 0x80000000u) | (static_cast<uint32_t>(e) << 23) | (q & 0x7fffffu));
}

// sum * b (int * float: ncnn's sum * scale_in, the int converted to float first).
static NCNN_MP_INLINE float mul_if(int sum, float b) {
#if !NCNN_MP_SOFT_STEPS
    return sum * b;
#endif
    uint32_t ub = float_bits(b);
    if (normal_float(ub) && sum > -(1 << 24) && sum < (1 << 24)) {  // (the int converts exactly)
        uint32_t sign = (ub & 0x80000000u) ^ (sum < 0 ? 0x80000000u : 0u);
        if (sum == 0) {
            return bits_float(ub & 0x80000000u);  // (+0.f * b)
        }
        uint32_t mag = static_cast<uint32_t>(sum < 0 ? -sum : sum);
        float out;
        uint64_t m = static_cast<uint64_t>(mag) * ((ub & 0x7fffffu) | 0x800000u);
        if (pack_rounded(sign, m, static_cast<int>((ub >> 23) & 0xffu), false, out)) {
            return out;
        }
    }
    return static_cast<float>(sum) * b;
}

// a + b: the mantissas 7 bits up in 32 bits, the smaller one's dropped bits jammed.
static NCNN_MP_INLINE float add_ff(float a, float b) {
#if !NCNN_MP_SOFT_STEPS
    return a + b;
#endif
    uint32_t ua = float_bits(a), ub = float_bits(b);
    if (normal_float(ua) && normal_float(ub)) {
        if ((ua & 0x7fffffffu) < (ub & 0x7fffffffu)) {  // |a| >= |b| from here
            uint32_t t = ua;
            ua = ub;
            ub = t;
        }
        int ea = static_cast<int>((ua >> 23) & 0xffu), d = ea - static_cast<int>((ub >> 23) & 0xffu);
        uint32_t ma = ((ua & 0x7fffffu) | 0x800000u) << 7, mb = ((ub & 0x7fffffu) | 0x800000u) << 7;
        if (d >= 31) {
            mb = 1;
        } else if (d > 0) {
            mb = (mb >> d) | ((mb << (32 - d)) != 0 ? 1u : 0u);
        }
        uint32_t m;
        int n;
        if ((ua ^ ub) & 0x80000000u) {
            m = ma - mb;
            if (m == 0) {
                return 0.f;  // (x - x is +0 when rounding to nearest)
            }
            if (d >= 2) {
                n = 29 + static_cast<int>(m >> 30);  // (m > 2^30 - 2^29)
            } else {
                n = 31 - __builtin_clz(m);  // (cancellation: exact, d <= 1 drops no bit)
            }
        } else {
            m = ma + mb;
            n = 30 + static_cast<int>(m >> 31);
        }
        float out;
        if (pack32(ua & 0x80000000u, m, n, ea - 7, out)) {
            return out;
        }
    } else if ((ua & 0x7fffffffu) == 0 && normal_float(ub)) {
        return b;
    } else if ((ub & 0x7fffffffu) == 0 && normal_float(ua)) {
        return a;
    }
    return a + b;
}

}  // namespace ncnn_mp_kernels

#endif  // NCNN_MP_KERNEL_FLOAT_H
