// SPDX-License-Identifier: MIT
// fp32 convolutions (kernels.h), laid out as the int8 ones (kernel_conv_int8.cpp). Each
// sum starts at its bias and adds val * weight in ncnn's order, one multiply and one add
// at a time: the same floats as ncnn's generic code. On a soft-float core those two steps
// are most of the cost; the blocking saves the offset-table walk and the loads around them,
// and on soft-float RISC-V the steps are kernel_float.h's inlined integer ones.
//
// With an FPU (NCNN_MP_HARD_FLOAT) a multiply and an add are an instruction each and the
// loads are the rest, so the blocks are larger: 4 output channels x 4 pixels (16 sums in
// registers; each k loads 4 inputs and 4 weights for 16 multiply-adds: the Cortex-M4F has 32
// single-precision registers), read straight from the input planes where the stride across
// is 1 (1x1: the planes are the columns; larger kernels: four neighbours of a row at each
// kernel offset; no gather), and 4 channels x the 2 gathered pixels otherwise (stride 2);
// depthwise 3x3 with its weights in registers. No fused multiply-add
// (fp-contract=off below): VFMA would round once where ncnn rounds twice.
#include "kernels.h"
#include "kernel_xtensa_fp.h"

#if NCNN_MP_KERNELS

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O2", "fp-contract=off")  // (no fused multiply-add: ncnn's order of roundings)
#endif

namespace ncnn_mp_kernels {

namespace {

#if NCNN_MP_HARD_FLOAT
// Fp32Out::put into a row of the output, with the common activations (none, ReLU, leaky ReLU)
// inline; the others through the shared epilogue (kernel_epilogue.cpp). The same operations
// either way.
NCNN_MP_INLINE void put(const Fp32Out &out, float *row, int p, int i, float v) {
    if (out.activation_type == 0) {
        row[i] = v;
    } else if (out.activation_type == 1) {
        row[i] = activate(v, 1, out.activation_params);
    } else if (out.activation_type == 2) {
        row[i] = activate(v, 2, out.activation_params);
    } else {
        store_fp32(out, p, i, v);
    }
}

// C output channels x P pixels: weight row c at w + c * n. Pixel j's inputs: without an offset
// table (ofs NULL), its k-th at x[k * xs + j]; with one (a kernel read in place, stride 1), the
// k-th = (plane q, kernel position m) at x[q * xs + ofs[m] + j]. Each sum starts at its
// channel's bias and adds x * w for k = 0, 1, ... (ncnn's order), then goes to output channel
// p + c, element pix + j.
template<int C, int P, bool OFS>
NCNN_MP_OUTLINE void block(const float *x, size_t xs, const int *ofs, int maxk, const float *w, int n,
                           const float *bias, int p, const Fp32Out &out, int pix) {
    float s[C][P];
    const float *wr[C];
#pragma GCC unroll 4
    for (int c = 0; c < C; c++) {
        float b = bias != NULL ? bias[p + c] : 0.f;
        wr[c] = w + c * n;
#pragma GCC unroll 4
        for (int j = 0; j < P; j++) {
            s[c][j] = b;
        }
    }
#if NCNN_MP_XTENSA_FP
    if (C == 2 && P == 4) {  // (the same sums in assembly: kernel_xtensa_fp.h)
        float *sums = &s[0][0];
        if (OFS) {
            ncnn_mp_xtensa_fdot2x4_ofs(x, xs * sizeof(float), ofs, maxk, w, n / maxk, sums);
        } else {
            ncnn_mp_xtensa_fdot2x4(x, xs * sizeof(float), wr[0], wr[C - 1], n, sums);
        }
        n = 0;
    }
#endif
    for (int k = 0; k < n; x += xs) {
        for (int m = 0; m < (OFS ? maxk : 1); m++, k++) {
            const float *xp = OFS ? x + ofs[m] : x;
            float xv[P];
#pragma GCC unroll 4
            for (int j = 0; j < P; j++) {
                xv[j] = xp[j];
            }
#pragma GCC unroll 4
            for (int c = 0; c < C; c++) {
                float wv = wr[c][k];
#pragma GCC unroll 4
                for (int j = 0; j < P; j++) {
                    s[c][j] = s[c][j] + xv[j] * wv;
                }
            }
        }
    }
    float sums[C][P];
#pragma GCC unroll 4
    for (int c = 0; c < C; c++) {
#pragma GCC unroll 4
        for (int j = 0; j < P; j++) {
            sums[c][j] = s[c][j];
        }
    }
#pragma GCC unroll 1
    for (int c = 0; c < C; c++) {  // (one copy of the epilogue, not C * P)
        float *row = out.data + (p + c) * out.cstep;
#pragma GCC unroll 1
        for (int j = 0; j < P; j++) {
            put(out, row, p + c, pix + j, sums[c][j]);
        }
    }
}

// Every output channel for P pixels: blocks of C channels, then one at a time.
template<int C, int P, bool OFS>
void channels(const float *x, size_t xs, const int *ofs, int maxk, const float *weights, int n, const float *bias,
              int outch, const Fp32Out &out, int out_p0, int pix) {
    const float *b = bias != NULL ? bias + out_p0 : NULL;
    Fp32Out o = out;
    o.data += out_p0 * out.cstep;
    int p = 0;
    for (; p + C <= outch; p += C) {
        block<C, P, OFS>(x, xs, ofs, maxk, weights + p * n, n, b, p, o, pix);
    }
    for (; p < outch; p++) {
        block<1, P, OFS>(x, xs, ofs, maxk, weights + p * n, n, b, p, o, pix);
    }
}
// The channels of a block read in place (4 pixels): C x 4 sums, 4 inputs and a weight in the
// FPU's registers: 4 channels with 32 of them, 2 with Xtensa's 16. The gathered pixel pairs
// (stride 2): 4 channels, 8 sums.
constexpr int kPlaceC = NCNN_MP_FP_REGS >= 32 ? 4 : 2;
#endif  // NCNN_MP_HARD_FLOAT

void gather(const Planes<float> &in, int q0, int inch, const ConvShape &s, int pix, float *cols, int stride) {
    int i = pix / s.outw, j = pix - i * s.outw;
    const float *base = in.data + q0 * in.cstep + (i * s.stride_h) * in.w + j * s.stride_w;
    for (int q = 0; q < inch; q++) {
        const float *src = base + q * in.cstep;
        for (int k = 0; k < s.maxk; k++) {
            *cols = src[s.ofs[k]];
            cols += stride;
        }
    }
}

#if !NCNN_MP_HARD_FLOAT
void dot2x2(const float *c, const float *w0, const float *w1, int n, float sums[4]) {
    float s00 = sums[0], s01 = sums[1], s10 = sums[2], s11 = sums[3];
    for (int k = 0; k < n; k++, c += 2) {
        float x0 = c[0], x1 = c[1], y0 = w0[k], y1 = w1[k];
        s00 = add_ff(s00, mul_ff(x0, y0));
        s01 = add_ff(s01, mul_ff(x1, y0));
        s10 = add_ff(s10, mul_ff(x0, y1));
        s11 = add_ff(s11, mul_ff(x1, y1));
    }
    sums[0] = s00;
    sums[1] = s01;
    sums[2] = s10;
    sums[3] = s11;
}

float dot(float sum, const float *c, int stride, const float *w, int n) {
    for (int k = 0; k < n; k++, c += stride) {
        sum = add_ff(sum, mul_ff(*c, w[k]));
    }
    return sum;
}
#endif

}  // namespace

void conv_fp32(const Planes<float> &in, int q0, int inch, const float *weights, const float *bias, int outch,
               const ConvShape &s, float *cols, const Fp32Out &out, int out_p0) {
    const int n = inch * s.maxk, npix = s.outw * s.outh;
#if NCNN_MP_HARD_FLOAT
    if (s.maxk == 1 && s.stride_w == 1 && s.stride_h == 1) {
        // 1x1, stride 1: the output is as wide as the (padded) input, so output element pix
        // reads element pix of every plane: the planes are the columns, cstep apart.
        const float *x = in.data + q0 * in.cstep;
        int pix = 0;
        for (; pix + 4 <= npix; pix += 4) {
            channels<kPlaceC, 4, false>(x + pix, in.cstep, NULL, 1, weights, n, bias, outch, out, out_p0, pix);
        }
        for (; pix < npix; pix++) {
            channels<kPlaceC, 1, false>(x + pix, in.cstep, NULL, 1, weights, n, bias, outch, out, out_p0, pix);
        }
        return;
    }
    if (s.stride_w == 1) {
        // Stride 1 across: four neighbouring outputs of a row read four neighbouring inputs at
        // each kernel offset, so the kernel is read in place (no gather), four pixels a block.
        for (int i = 0; i < s.outh; i++) {
            const float *x = in.data + q0 * in.cstep + i * s.stride_h * in.w;
            int j = 0;
            for (; j + 4 <= s.outw; j += 4) {
                channels<kPlaceC, 4, true>(x + j, in.cstep, s.ofs, s.maxk, weights, n, bias, outch, out, out_p0,
                                  i * s.outw + j);
            }
            for (; j < s.outw; j++) {
                channels<kPlaceC, 1, true>(x + j, in.cstep, s.ofs, s.maxk, weights, n, bias, outch, out, out_p0,
                                  i * s.outw + j);
            }
        }
        return;
    }
    for (int pix = 0; pix < npix; pix += 2) {
        gather(in, q0, inch, s, pix, cols, 2);
        if (pix + 1 < npix) {
            gather(in, q0, inch, s, pix + 1, cols + 1, 2);
            channels<4, 2, false>(cols, 2, NULL, 1, weights, n, bias, outch, out, out_p0, pix);
        } else {
            channels<4, 1, false>(cols, 2, NULL, 1, weights, n, bias, outch, out, out_p0, pix);
        }
    }
#else
    for (int pix = 0; pix < npix; pix += 2) {
        bool two = pix + 1 < npix;
        gather(in, q0, inch, s, pix, cols, 2);
        if (two) {
            gather(in, q0, inch, s, pix + 1, cols + 1, 2);
        }
        int p = 0;
        for (; p + 1 < outch; p += 2) {
            const float *w0 = weights + p * n;
            float b0 = bias != NULL ? bias[out_p0 + p] : 0.f, b1 = bias != NULL ? bias[out_p0 + p + 1] : 0.f;
            if (two) {
                float sums[4] = { b0, b0, b1, b1 };
                dot2x2(cols, w0, w0 + n, n, sums);
                store_fp32(out, out_p0 + p, pix, sums[0]);
                store_fp32(out, out_p0 + p, pix + 1, sums[1]);
                store_fp32(out, out_p0 + p + 1, pix, sums[2]);
                store_fp32(out, out_p0 + p + 1, pix + 1, sums[3]);
            } else {
                store_fp32(out, out_p0 + p, pix, dot(b0, cols, 2, w0, n));
                store_fp32(out, out_p0 + p + 1, pix, dot(b1, cols, 2, w0 + n, n));
            }
        }
        if (p < outch) {
            const float *w0 = weights + p * n;
            float b0 = bias != NULL ? bias[out_p0 + p] : 0.f;
            store_fp32(out, out_p0 + p, pix, dot(b0, cols, 2, w0, n));
            if (two) {
                store_fp32(out, out_p0 + p, pix + 1, dot(b0, cols + 1, 2, w0, n));
            }
        }
    }
#endif
}

void depthwise_fp32(const Planes<float> &in, const float *weights, const float *bias, const ConvShape &s,
                    const Fp32Out &out) {
    const int sw = s.stride_w, row = s.stride_h * in.w;
    for (int g = 0; g < in.c; g++) {
        const float *plane = in.data + g * in.cstep;
        const float *k = weights + g * s.maxk;
        const float b = bias != NULL ? bias[g] : 0.f;
        int pix = 0;
#if NCNN_MP_HARD_FLOAT
        if (s.kernel_w == 3 && s.kernel_h == 3 && s.dilation_w == 1) {
            // The weights in registers, the three input rows through three pointers with
            // constant offsets (dilation 1 across); ncnn's order of the 9.
            const int r1 = s.dilation_h * in.w;
            const float k0 = k[0], k1 = k[1], k2 = k[2], k3 = k[3], k4 = k[4], k5 = k[5], k6 = k[6], k7 = k[7],
                        k8 = k[8];
            for (int i = 0; i < s.outh; i++) {
                const float *p0 = plane + i * row, *p1 = p0 + r1, *p2 = p1 + r1;
                for (int j = 0; j < s.outw; j++, p0 += sw, p1 += sw, p2 += sw) {
                    float sum = b;
                    sum = sum + p0[0] * k0;
                    sum = sum + p0[1] * k1;
                    sum = sum + p0[2] * k2;
                    sum = sum + p1[0] * k3;
                    sum = sum + p1[1] * k4;
                    sum = sum + p1[2] * k5;
                    sum = sum + p2[0] * k6;
                    sum = sum + p2[1] * k7;
                    sum = sum + p2[2] * k8;
                    put(out, out.data + g * out.cstep, g, pix++, sum);
                }
            }
            continue;
        }
#endif
        for (int i = 0; i < s.outh; i++) {
            const float *p = plane + i * row;
            for (int j = 0; j < s.outw; j++, p += sw) {
                float sum = b;
                for (int m = 0; m < s.maxk; m++) {
                    sum = add_ff(sum, mul_ff(p[s.ofs[m]], k[m]));
                }
                store_fp32(out, g, pix++, sum);
            }
        }
    }
}

}  // namespace ncnn_mp_kernels

#endif  // NCNN_MP_KERNELS
