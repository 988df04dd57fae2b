// SPDX-License-Identifier: MIT
// int8 convolutions (kernels.h): int32 sums, no float operation inside the sums.
//
// conv_int8: two output pixels' receptive fields gathered once, interleaved (cols[2k] the
// first pixel's k-th value, cols[2k+1] the second's; gather2), in the weights' order (input channel,
// then kernel position); then for each pair of output channels four sums at once: per k
// two loads of inputs, two of weights, four multiply-accumulates. The gather costs
// 2 * inch * maxk copies per two pixels, shared by every output channel.
// On Xtensa, rv32 and Thumb-2 without DSP (NCNN_MP_BLOCK4) four pixels are gathered (gather4)
// and a block of 2 or 4 weight rows x 4 pixels runs in assembly (block4: kernel_xtensa.h,
// kernel_rv32.h, kernel_thumb2.h), the same exact sums. With the DSP extension (kernel_dsp.h)
// the pairs are rearranged for SMLAD (dsp::pair_cols) and run through dsp::dot2x2. Both take a
// strip of pixels at a time (conv_int8_strip); the 2x2 loop below is the portable form.
// depthwise_int8: one plane per channel, an output row at a time: 3x3 as three passes of
// three taps (the Cortex-M3's 13 registers hold three weights, not nine), 5x5 as five passes
// of five, the sums in a row of int32s, then the row's outputs.
#include "kernels.h"
#include "kernel_dsp.h"
#include "kernel_xtensa.h"
#include "kernel_rv32.h"
#include "kernel_thumb2.h"

#if NCNN_MP_KERNELS

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O2")  // (the MCU builds are -Os, which neither unrolls nor schedules loads)
#endif

namespace ncnn_mp_kernels {

namespace {

// Where pixel pix's receptive field starts in input channel q0.
const signed char *field(const Planes<signed char> &in, int q0, const ConvShape &s, int pix) {
    int i = pix / s.outw, j = pix - i * s.outw;
    return in.data + q0 * in.cstep + (i * s.stride_h) * in.w + j * s.stride_w;
}

// Pixels pix and pix + 1's receptive fields (n = inch * maxk values each), interleaved:
// cols[2k] the first's k-th value, cols[2k+1] the second's (two false: the first's again).
// Both in one pass, and 1x1 and 3x3 kernels without the offset table: this copy is shared by
// every output channel, but a 1x1 layer with few of them spent a tenth of its time here.
void gather2(const Planes<signed char> &in, int q0, int inch, const ConvShape &s, int pix, bool two,
             signed char *cols) {
    const signed char *a = field(in, q0, s, pix), *b = two ? field(in, q0, s, pix + 1) : a;
    const size_t cstep = in.cstep;
    if (s.maxk == 1) {
        for (int q = 0; q < inch; q++, a += cstep, b += cstep, cols += 2) {
            cols[0] = *a;
            cols[1] = *b;
        }
        return;
    }
    if (s.kernel_w == 3 && s.kernel_h == 3) {
        const int d = s.dilation_w, r = s.dilation_h * in.w;
        for (int q = 0; q < inch; q++, a += cstep, b += cstep, cols += 18) {
            for (int y = 0; y < 3; y++) {  // (unrolled: constant offsets into cols)
                const signed char *ay = a + y * r, *by = b + y * r;
                signed char *c = cols + 6 * y;
                c[0] = ay[0];
                c[1] = by[0];
                c[2] = ay[d];
                c[3] = by[d];
                c[4] = ay[2 * d];
                c[5] = by[2 * d];
            }
        }
        return;
    }
    for (int q = 0; q < inch; q++, a += cstep, b += cstep) {
        for (int k = 0; k < s.maxk; k++, cols += 2) {
            cols[0] = a[s.ofs[k]];
            cols[1] = b[s.ofs[k]];
        }
    }
}

// Two pixels (interleaved cols) x two weight rows.
void dot2x2(const signed char *c, const signed char *w0, const signed char *w1, int n, int sums[4]) {
    int s00 = 0, s01 = 0, s10 = 0, s11 = 0;
    const signed char *end = w0 + n;
    for (; w0 + 4 <= end; w0 += 4, w1 += 4, c += 8) {
        int x0 = c[0], x1 = c[1], y0 = w0[0], y1 = w1[0];
        s00 += x0 * y0; s01 += x1 * y0; s10 += x0 * y1; s11 += x1 * y1;
        x0 = c[2]; x1 = c[3]; y0 = w0[1]; y1 = w1[1];
        s00 += x0 * y0; s01 += x1 * y0; s10 += x0 * y1; s11 += x1 * y1;
        x0 = c[4]; x1 = c[5]; y0 = w0[2]; y1 = w1[2];
        s00 += x0 * y0; s01 += x1 * y0; s10 += x0 * y1; s11 += x1 * y1;
        x0 = c[6]; x1 = c[7]; y0 = w0[3]; y1 = w1[3];
        s00 += x0 * y0; s01 += x1 * y0; s10 += x0 * y1; s11 += x1 * y1;
    }
    for (; w0 < end; w0++, w1++, c += 2) {
        int x0 = c[0], x1 = c[1], y0 = w0[0], y1 = w1[0];
        s00 += x0 * y0; s01 += x1 * y0; s10 += x0 * y1; s11 += x1 * y1;
    }
    sums[0] = s00;
    sums[1] = s01;
    sums[2] = s10;
    sums[3] = s11;
}

// n values `stride` apart in c, with one weight row.
int dot(const signed char *c, int stride, const signed char *w, int n) {
    int s = 0;
    for (int k = 0; k < n; k++, c += stride) {
        s += *c * w[k];
    }
    return s;
}

#if NCNN_MP_BLOCK4
// Pixels pix .. pix + 3's receptive fields (n = inch * maxk values each), interleaved:
// cols[4k + j] pixel pix + j's k-th value (past the last pixel, count < 4: the last again).
// T int16 on Xtensa: sign-extended here once for every output channel (no instruction for it).
template<typename T>
void gather4(const Planes<signed char> &in, int q0, int inch, const ConvShape &s, int pix, int count, T *cols) {
    const signed char *a = field(in, q0, s, pix), *b = field(in, q0, s, pix + (count > 1 ? 1 : 0)),
                      *c = field(in, q0, s, pix + (count > 2 ? 2 : count - 1)),
                      *d = field(in, q0, s, pix + (count > 3 ? 3 : count - 1));
    const size_t cstep = in.cstep;
    if (sizeof(T) == 1 && s.maxk == 1 && d == a + 3 && (reinterpret_cast<uintptr_t>(a) & 3) == 0 &&
        (cstep & 3) == 0) {  // (four neighbours, word-aligned in every plane: a word a channel)
        for (int q = 0; q < inch; q++, a += cstep, cols += 4) {
            memcpy(cols, a, 4);
        }
        return;
    }
    if (s.maxk == 1) {
        for (int q = 0; q < inch; q++, a += cstep, b += cstep, c += cstep, d += cstep, cols += 4) {
            cols[0] = *a;
            cols[1] = *b;
            cols[2] = *c;
            cols[3] = *d;
        }
        return;
    }
    if (s.kernel_w == 3 && s.kernel_h == 3) {  // (unrolled: constant offsets into cols)
        const int dw = s.dilation_w, r = s.dilation_h * in.w;
        for (int q = 0; q < inch; q++, a += cstep, b += cstep, c += cstep, d += cstep) {
            for (int y = 0; y < 3; y++, cols += 12) {
                const int o = y * r;
                cols[0] = a[o];
                cols[1] = b[o];
                cols[2] = c[o];
                cols[3] = d[o];
                cols[4] = a[o + dw];
                cols[5] = b[o + dw];
                cols[6] = c[o + dw];
                cols[7] = d[o + dw];
                cols[8] = a[o + 2 * dw];
                cols[9] = b[o + 2 * dw];
                cols[10] = c[o + 2 * dw];
                cols[11] = d[o + 2 * dw];
            }
        }
        return;
    }
    for (int q = 0; q < inch; q++, a += cstep, b += cstep, c += cstep, d += cstep) {
        for (int k = 0; k < s.maxk; k++, cols += 4) {
            const int o = s.ofs[k];
            cols[0] = a[o];
            cols[1] = b[o];
            cols[2] = c[o];
            cols[3] = d[o];
        }
    }
}
#endif

#if NCNN_MP_MAC16
// Pixel pix's receptive field (n = inch * maxk values) as int16, a zero past an odd n: MAC16's
// column (mac16_pairs(n) words).
void gather16(const Planes<signed char> &in, int q0, int inch, const ConvShape &s, int pix, int16_t *col) {
    const signed char *a = field(in, q0, s, pix);
    const size_t cstep = in.cstep;
    int16_t *c = col;
    if (s.maxk == 1) {
        for (int q = 0; q < inch; q++, a += cstep) {
            *c++ = *a;
        }
    } else if (s.kernel_w == 3 && s.kernel_h == 3) {  // (unrolled: constant offsets)
        const int dw = s.dilation_w, r = s.dilation_h * in.w;
        for (int q = 0; q < inch; q++, a += cstep, c += 9) {
            c[0] = a[0];
            c[1] = a[dw];
            c[2] = a[2 * dw];
            c[3] = a[r];
            c[4] = a[r + dw];
            c[5] = a[r + 2 * dw];
            c[6] = a[2 * r];
            c[7] = a[2 * r + dw];
            c[8] = a[2 * r + 2 * dw];
        }
    } else {
        for (int q = 0; q < inch; q++, a += cstep) {
            for (int k = 0; k < s.maxk; k++) {
                *c++ = a[s.ofs[k]];
            }
        }
    }
    if ((inch * s.maxk) & 1) {
        *c = 0;
    }
}

// A weight row of n as int16, a zero past an odd n (MAC16's row): the bytes before the first
// word-aligned one and after the last whole word here, the words between in assembly.
void widen_row(const signed char *w, int n, int16_t *row) {
    int k = static_cast<int>((4 - (reinterpret_cast<uintptr_t>(w) & 3)) & 3);
    k = k < n ? k : n;
    for (int i = 0; i < k; i++) {
        row[i] = w[i];
    }
    const int words = (n - k) / 4;
    ncnn_mp_xtensa_widen4(w + k, words, row + k);
    for (k += 4 * words; k < n; k++) {
        row[k] = w[k];
    }
    if (n & 1) {
        row[n] = 0;
    }
}
#endif

// The sums of four pixels' gathered columns with `rows` (1 .. BLOCK4_ROWS) weight rows of n,
// row r at w + r * n: sums[r * 4 + j]. Rows past `rows` repeat the last (their sums unused).
#if NCNN_MP_XTENSA
typedef int16_t Block4Col;
#define BLOCK4_ROWS 2
void block4(const int16_t *cols, const signed char *w, int rows, int n, int *sums) {
    const signed char *w1 = rows > 1 ? w + n : w;
    for (int k = 0; k < n || k == 0; k += XTENSA_CHUNK) {  // (508 positions a call; n 0: the sums stored 0)
        ncnn_mp_xtensa_dot2x4(cols + 4 * k, w + k, w1 + k, n - k < XTENSA_CHUNK ? n - k : XTENSA_CHUNK,
                             reinterpret_cast<int32_t *>(sums), k > 0);
    }
}
#elif NCNN_MP_RV32
typedef signed char Block4Col;
#define BLOCK4_ROWS 4
void block4(const signed char *cols, const signed char *w, int rows, int n, int *sums) {
    const signed char *w1 = rows > 1 ? w + n : w, *w2 = rows > 2 ? w + 2 * n : w1, *w3 = rows > 3 ? w + 3 * n : w2;
    ncnn_mp_rv32_dot4x4(cols, w, w1, w2, w3, n, reinterpret_cast<int32_t *>(sums));
}
#elif NCNN_MP_THUMB2
typedef signed char Block4Col;
#define BLOCK4_ROWS 2
void block4(const signed char *cols, const signed char *w, int rows, int n, int *sums) {
    ncnn_mp_thumb2_dot2x4(cols, w, rows > 1 ? w + n : w, n, reinterpret_cast<int32_t *>(sums));
}
#endif

}  // namespace

void conv_int8(const Planes<signed char> &in, int q0, int inch, const signed char *weights, int outch,
               const ConvShape &s, signed char *cols, const Int8Out &out, int out_p0) {
    const int n = inch * s.maxk, npix = s.outw * s.outh;
#if NCNN_MP_MAC16
    // A strip of pixels' columns as int16 (conv_int8_strip), then each weight row as int16 once
    // and its dot product with every column of the strip in MAC16 (kernel_xtensa.h), the row's
    // sums requantized at once.
    const int strip = conv_int8_strip(n), pairs = mac16_pairs(n);
    int16_t *c16 = reinterpret_cast<int16_t *>(cols);
    int16_t *row = c16 + static_cast<size_t>(strip) * 2 * pairs + 2;  // (past the strip and a word)
    for (int pix0 = 0; pix0 < npix; pix0 += strip) {
        const int count = npix - pix0 < strip ? npix - pix0 : strip;
        for (int b = 0; b < count; b++) {
            gather16(in, q0, inch, s, pix0 + b, c16 + static_cast<size_t>(b) * 2 * pairs);
        }
        for (int p = 0; p < outch; p++) {
            int sums[NCNN_MP_STRIP_PIXELS];
            widen_row(weights + static_cast<size_t>(p) * n, n, row);
            ncnn_mp_xtensa_mac16_dots(c16, row, pairs, count, reinterpret_cast<int32_t *>(sums));
            put_row_int8(out, out_p0 + p, pix0, sums, count);
        }
    }
    return;
#elif NCNN_MP_BLOCK4
    // A strip of pixels gathered four at a time (conv_int8_strip), then BLOCK4_ROWS weight rows
    // a call (the core's block: block4 above) along it, each row's sums requantized at once.
    const int strip = conv_int8_strip(n);
    Block4Col *c = reinterpret_cast<Block4Col *>(cols);
    const size_t block = static_cast<size_t>(n) * 4;  // (a block of four pixels' columns)
    for (int pix0 = 0; pix0 < npix; pix0 += strip) {
        const int count = npix - pix0 < strip ? npix - pix0 : strip;
        for (int b = 0; b < count; b += 4) {
            gather4(in, q0, inch, s, pix0 + b, count - b < 4 ? count - b : 4, c + b / 4 * block);
        }
        for (int p = 0; p < outch; p += BLOCK4_ROWS) {
            const int rows = outch - p < BLOCK4_ROWS ? outch - p : BLOCK4_ROWS;
            int sums[BLOCK4_ROWS * NCNN_MP_STRIP_PIXELS];  // (row r's at r * NCNN_MP_STRIP_PIXELS)
            for (int b = 0; b < count; b += 4) {
                int s4[4 * BLOCK4_ROWS];
                block4(c + b / 4 * block, weights + p * n, rows, n, s4);
                for (int r = 0; r < rows; r++) {
                    int *d = sums + r * NCNN_MP_STRIP_PIXELS + b;
                    d[0] = s4[r * 4];
                    d[1] = s4[r * 4 + 1];
                    d[2] = s4[r * 4 + 2];
                    d[3] = s4[r * 4 + 3];
                }
            }
            for (int r = 0; r < rows; r++) {
                put_row_int8(out, out_p0 + p + r, pix0, sums + r * NCNN_MP_STRIP_PIXELS, count);
            }
        }
    }
    return;
#endif
#if NCNN_MP_DSP
    // A strip of pixel pairs gathered and paired for SMLAD (conv_int8_strip), then two weight rows
    // at a time along it, each row's sums requantized at once (an output at a time cost about 45
    // instructions around the MACs of a layer of few input channels).
    const int strip = conv_int8_strip(n);
    for (int pix0 = 0; pix0 < npix; pix0 += strip) {
        const int count = npix - pix0 < strip ? npix - pix0 : strip;
        for (int b = 0; b < count; b += 2) {  // (a pair's 2n bytes; a lone last pixel twice)
            gather2(in, q0, inch, s, pix0 + b, b + 1 < count, cols + static_cast<size_t>(b) * n);
            dsp::pair_cols(cols + static_cast<size_t>(b) * n, n);
        }
        for (int p = 0; p < outch; p += 2) {
            const signed char *w0 = weights + p * n, *w1 = p + 1 < outch ? w0 + n : w0;
            int sums[2 * NCNN_MP_STRIP_PIXELS];  // (row p's, then row p + 1's)
            for (int b = 0; b < count; b += 2) {
                int s4[4];
                dsp::dot2x2(cols + static_cast<size_t>(b) * n, w0, w1, n, s4);
                sums[b] = s4[0];
                sums[b + 1] = s4[1];
                sums[NCNN_MP_STRIP_PIXELS + b] = s4[2];
                sums[NCNN_MP_STRIP_PIXELS + b + 1] = s4[3];
            }
            put_row_int8(out, out_p0 + p, pix0, sums, count);
            if (p + 1 < outch) {
                put_row_int8(out, out_p0 + p + 1, pix0, sums + NCNN_MP_STRIP_PIXELS, count);
            }
        }
    }
    return;
#endif
    for (int pix = 0; pix < npix; pix += 2) {
        bool two = pix + 1 < npix;
        gather2(in, q0, inch, s, pix, two, cols);
        int p = 0;
        for (; p + 1 < outch; p += 2) {
            const signed char *w0 = weights + p * n;
            if (two) {
                int sums[4];
                dot2x2(cols, w0, w0 + n, n, sums);
                put_int8(out, out_p0 + p, pix, sums[0]);
                put_int8(out, out_p0 + p, pix + 1, sums[1]);
                put_int8(out, out_p0 + p + 1, pix, sums[2]);
                put_int8(out, out_p0 + p + 1, pix + 1, sums[3]);
            } else {
                put_int8(out, out_p0 + p, pix, dot(cols, 2, w0, n));
                put_int8(out, out_p0 + p + 1, pix, dot(cols, 2, w0 + n, n));
            }
        }
        if (p < outch) {
            const signed char *w0 = weights + p * n;
            put_int8(out, out_p0 + p, pix, dot(cols, 2, w0, n));
            if (two) {
                put_int8(out, out_p0 + p, pix + 1, dot(cols + 1, 2, w0, n));
            }
        }
    }
}

namespace {

#if NCNN_MP_XTENSA
// x * w on Xtensa without sign-extending x (lx106 has no instruction for it): MUL16S multiplies the low
// halves as signed, and the unsigned byte of x shifted left by 8 is 256 x there.
NCNN_MP_INLINE int mul16s(int a, int b) {
    int p;
    __asm__("mul16s %0, %1, %2" : "=r"(p) : "r"(a), "r"(b));
    return p;
}

NCNN_MP_INLINE int high_byte(const signed char *p) {
    return *reinterpret_cast<const unsigned char *>(p) << 8;
}

// taps3 (below) on Xtensa: the sums are 256 times the true ones (|9 * 128 * 128 * 256| < 2^31)
// until the last row (Pass 2) divides them, exactly.
template<int Pass>
void taps3_mul16(const signed char *r, int n, int sw, int d, int w0, int w1, int w2, int *sums) {
    if (sw == 1 && d == 1) {
        int x0 = high_byte(r), x1 = high_byte(r + 1);
        for (int j = 0; j < n; j++) {
            int x2 = high_byte(r + j + 2);
            int v = mul16s(x0, w0) + mul16s(x1, w1) + mul16s(x2, w2);
            sums[j] = Pass == 0 ? v : Pass == 1 ? sums[j] + v : (sums[j] + v) >> 8;
            x0 = x1;
            x1 = x2;
        }
        return;
    }
    for (int j = 0; j < n; j++, r += sw) {
        int v = mul16s(high_byte(r), w0) + mul16s(high_byte(r + d), w1) + mul16s(high_byte(r + 2 * d), w2);
        sums[j] = Pass == 0 ? v : Pass == 1 ? sums[j] + v : (sums[j] + v) >> 8;
    }
}
#endif

// One kernel row's three taps (weights w0, w1, w2, d apart) along an output row of n:
// sums[j] = (Pass 0) or += (Pass 1, 2: the kernel's second and third rows) the three products.
// Stride 1 without dilation slides a window, one load an output.
template<int Pass>
void taps3(const signed char *r, int n, int sw, int d, int w0, int w1, int w2, int *sums) {
#if NCNN_MP_XTENSA
    return taps3_mul16<Pass>(r, n, sw, d, w0, w1, w2, sums);
#endif
    const bool First = Pass == 0;
    if (sw == 1 && d == 1) {
        int x0 = r[0], x1 = r[1];
        for (int j = 0; j < n; j++) {
            int x2 = r[j + 2];
            int v = x0 * w0 + x1 * w1 + x2 * w2;
            sums[j] = First ? v : sums[j] + v;
            x0 = x1;
            x1 = x2;
        }
        return;
    }
    for (int j = 0; j < n; j++, r += sw) {
        int v = r[0] * w0 + r[d] * w1 + r[2 * d] * w2;
        sums[j] = First ? v : sums[j] + v;
    }
}

// One kernel row's five taps (weights k[0..4], d apart) along an output row of n: sums[j] =
// (First: the kernel's first row) or += the five products. Stride 1 without dilation slides a
// window, one load an output; a 5x5 depthwise layer is five such passes a row (the generic
// offset loop loaded a weight and an offset per product).
template<bool First>
void taps5(const signed char *r, int n, int sw, int d, const signed char *k, int *sums) {
    const int w0 = k[0], w1 = k[1], w2 = k[2], w3 = k[3], w4 = k[4];
    if (sw == 1 && d == 1) {
        int x0 = r[0], x1 = r[1], x2 = r[2], x3 = r[3];
        for (int j = 0; j < n; j++) {
            int x4 = r[j + 4];
            int v = x0 * w0 + x1 * w1 + x2 * w2 + x3 * w3 + x4 * w4;
            sums[j] = First ? v : sums[j] + v;
            x0 = x1;
            x1 = x2;
            x2 = x3;
            x3 = x4;
        }
        return;
    }
    for (int j = 0; j < n; j++, r += sw) {
        int v = r[0] * w0 + r[d] * w1 + r[2 * d] * w2 + r[3 * d] * w3 + r[4 * d] * w4;
        sums[j] = First ? v : sums[j] + v;
    }
}

#if NCNN_MP_RV32
// A 3x3 kernel's nine taps along an output row of n at once (31 registers hold the nine
// weights and a sliding 3x3 window): sums[j] written once, no pass over the row per kernel row.
void taps9(const signed char *p, int r1, int n, int sw, int d, const signed char *k, int *sums) {
    const int k0 = k[0], k1 = k[1], k2 = k[2], k3 = k[3], k4 = k[4], k5 = k[5], k6 = k[6], k7 = k[7], k8 = k[8];
    const signed char *a = p, *b = p + r1, *c = p + 2 * r1;
    if (sw == 1 && d == 1) {
        int a0 = a[0], a1 = a[1], b0 = b[0], b1 = b[1], c0 = c[0], c1 = c[1];
        for (int j = 0; j < n; j++) {
            int a2 = a[j + 2], b2 = b[j + 2], c2 = c[j + 2];
            sums[j] = a0 * k0 + a1 * k1 + a2 * k2 + b0 * k3 + b1 * k4 + b2 * k5 + c0 * k6 + c1 * k7 + c2 * k8;
            a0 = a1;
            a1 = a2;
            b0 = b1;
            b1 = b2;
            c0 = c1;
            c1 = c2;
        }
        return;
    }
    for (int j = 0; j < n; j++, a += sw, b += sw, c += sw) {
        sums[j] = a[0] * k0 + a[d] * k1 + a[2 * d] * k2 + b[0] * k3 + b[d] * k4 + b[2 * d] * k5 + c[0] * k6 +
                  c[d] * k7 + c[2 * d] * k8;
    }
}
#endif

}  // namespace

void depthwise_int8(const Planes<signed char> &in, const signed char *weights, const ConvShape &s, int *sums,
                    const Int8Out &out) {
    const int sw = s.stride_w, row = s.stride_h * in.w;
    for (int g = 0; g < in.c; g++) {
        const signed char *plane = in.data + g * in.cstep;
        const signed char *k = weights + g * s.maxk;
        for (int i = 0; i < s.outh; i++) {
            const signed char *p = plane + i * row;
            if (s.kernel_w == 3 && s.kernel_h == 3) {  // row by row: three weights in registers at a time
                const int d = s.dilation_w, r1 = s.dilation_h * in.w;
#if NCNN_MP_RV32
                taps9(p, r1, s.outw, sw, d, k, sums);
                put_row_int8(out, g, i * s.outw, sums, s.outw);
                continue;
#endif
                taps3<0>(p, s.outw, sw, d, k[0], k[1], k[2], sums);
                taps3<1>(p + r1, s.outw, sw, d, k[3], k[4], k[5], sums);
                taps3<2>(p + 2 * r1, s.outw, sw, d, k[6], k[7], k[8], sums);
            } else if (s.kernel_w == 5 && s.kernel_h == 5) {  // row by row: five weights at a time
                const int d = s.dilation_w, r1 = s.dilation_h * in.w;
                taps5<true>(p, s.outw, sw, d, k, sums);
                for (int r = 1; r < 5; r++) {
                    taps5<false>(p + r * r1, s.outw, sw, d, k + 5 * r, sums);
                }
            } else {
                for (int j = 0; j < s.outw; j++, p += sw) {
                    int sum = 0;
                    for (int m = 0; m < s.maxk; m++) {
                        sum += p[s.ofs[m]] * k[m];
                    }
                    sums[j] = sum;
                }
            }
            put_row_int8(out, g, i * s.outw, sums, s.outw);
        }
    }
}

}  // namespace ncnn_mp_kernels

#endif  // NCNN_MP_KERNELS
