// SPDX-License-Identifier: MIT
// int8 dot products with the Cortex-M4/M33 DSP extension's SIMD multiply-accumulate
// (__ARM_FEATURE_DSP: SXTB16 sign-extends bytes 0 and 2 of a word into two 16-bit halves,
// SMLAD adds both halves' products to an accumulator), behind the portable loops of
// kernel_conv_int8.cpp and kernel_innerproduct.cpp, which call these where NCNN_MP_DSP is 1.
// The sums are the same int32 sums (exact integer arithmetic, any order), so the outputs are
// the portable path's bit for bit; tests/mp/ncnn_mp_kernels.py checks both against ncnn.
//
// SXTB16 pairs elements k and k+2 of a word of four bytes (and, rotated by 8, k+1 and k+3).
// A weight row is read where it lies (in flash, in ncnn's order), so its words pair (k, k+2);
// the gathered columns are rearranged to match (pair_cols) once per two pixels, which every
// output channel then shares.
#ifndef NCNN_MP_KERNEL_DSP_H
#define NCNN_MP_KERNEL_DSP_H

#include <stdint.h>
#include <string.h>

#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP && !defined(NCNN_MP_NO_DSP)
#define NCNN_MP_DSP 1
#include <arm_acle.h>
#else
#define NCNN_MP_DSP 0
#endif

#if NCNN_MP_DSP
namespace ncnn_mp_kernels {
namespace dsp {

static inline __attribute__((always_inline)) uint32_t load32(const signed char *p) {
    uint32_t v;
    memcpy(&v, p, 4);  // (an unaligned LDR: weight rows start anywhere)
    return v;
}

// Bytes 0 and 2 of v, sign-extended into two halves (SXTB16); odd: bytes 1 and 3 (SXTB16
// with ROR #8, written out: ACLE has no rotated form, and GCC 12 does not fold a rotate into
// __sxtb16, which cost an instruction more per word).
static inline __attribute__((always_inline)) int16x2_t even(uint32_t v) {
    return __sxtb16(static_cast<int8x4_t>(v));
}

static inline __attribute__((always_inline)) int16x2_t odd(uint32_t v) {
    int16x2_t r;
    __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(v));
    return r;
}

// The columns conv_int8 gathers, two pixels interleaved: for each four k, the 8 bytes
// x0[k] x1[k] x0[k+1] x1[k+1] x0[k+2] x1[k+2] x0[k+3] x1[k+3] become
// x0[k] x1[k] x0[k+2] x1[k+2] x0[k+1] x1[k+1] x0[k+3] x1[k+3]: then SXTB16 of the first
// word is pixel 0's (k, k+2), rotated pixel 1's, and the second word gives (k+1, k+3).
// The last n % 4 values stay as gathered (dot2x2 takes them one at a time).
static inline void pair_cols(signed char *cols, int n) {
    for (int k = 0; k + 4 <= n; k += 4, cols += 8) {
        uint32_t a, b;
        memcpy(&a, cols, 4);
        memcpy(&b, cols + 4, 4);
        uint32_t lo = (a & 0xffffu) | (b << 16), hi = (a >> 16) | (b & 0xffff0000u);  // (PKHBT, PKHTB)
        memcpy(cols, &lo, 4);
        memcpy(cols + 4, &hi, 4);
    }
}

// kernel_conv_int8.cpp's dot2x2 over pair_cols' columns: 16 multiply-accumulates in 8 SMLAD.
static inline void dot2x2(const signed char *c, const signed char *w0, const signed char *w1, int n, int sums[4]) {
    int32_t s00 = 0, s01 = 0, s10 = 0, s11 = 0;
    const signed char *end = w0 + (n & ~3);
    const int row = static_cast<int>(w1 - w0);  // (w1 read at w0 + row: one pointer less to keep)
    for (; w0 < end; w0 += 4, c += 8) {
        // (k, k+2) halves first, then (k+1, k+3): 14 live registers at most, the M4's all
        uint32_t u = load32(w0), v = load32(w0 + row);
        int16x2_t u0 = even(u), v0 = even(v);
        uint32_t a = load32(c);
        int16x2_t a0 = even(a), a1 = odd(a);
        s00 = __smlad(a0, u0, s00);
        s10 = __smlad(a0, v0, s10);
        s01 = __smlad(a1, u0, s01);
        s11 = __smlad(a1, v0, s11);
        u0 = odd(u);
        v0 = odd(v);
        a = load32(c + 4);
        a0 = even(a);
        a1 = odd(a);
        s00 = __smlad(a0, u0, s00);
        s10 = __smlad(a0, v0, s10);
        s01 = __smlad(a1, u0, s01);
        s11 = __smlad(a1, v0, s11);
    }
    w1 = w0 + row;
    for (int k = n & ~3; k < n; k++, c += 2, w0++, w1++) {
        int x0 = c[0], x1 = c[1], y0 = *w0, y1 = *w1;
        s00 += x0 * y0;
        s01 += x1 * y0;
        s10 += x0 * y1;
        s11 += x1 * y1;
    }
    sums[0] = s00;
    sums[1] = s01;
    sums[2] = s10;
    sums[3] = s11;
}

// Two rows of n weights with one vector (InnerProduct), both in their own order: SXTB16
// pairs the same k of both, so no rearranging.
static inline void dot1x2(const signed char *x, const signed char *w0, const signed char *w1, int n, int32_t &s0,
                          int32_t &s1) {
    int k = 0;
    for (; k + 4 <= n; k += 4) {
        uint32_t a = load32(x + k), u = load32(w0 + k), v = load32(w1 + k);
        int16x2_t a0 = even(a), a1 = odd(a);
        s0 = __smlad(a0, even(u), __smlad(a1, odd(u), s0));
        s1 = __smlad(a0, even(v), __smlad(a1, odd(v), s1));
    }
    for (; k < n; k++) {
        s0 += x[k] * w0[k];
        s1 += x[k] * w1[k];
    }
}

}  // namespace dsp
}  // namespace ncnn_mp_kernels
#endif  // NCNN_MP_DSP

#endif  // NCNN_MP_KERNEL_DSP_H
