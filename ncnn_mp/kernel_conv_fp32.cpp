// fp32 convolutions (kernels.h), laid out as the int8 ones (kernel_conv_int8.cpp). Each
// sum starts at its bias and adds val * weight in ncnn's order, one multiply and one add
// at a time: the same floats as ncnn's generic code. On a soft-float core those two steps
// are most of the cost; the blocking saves the offset-table walk and the loads around them,
// and on soft-float RISC-V the steps are kernel_float.h's inlined integer ones.
#include "kernels.h"

#if NCNN_MP_KERNELS

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O2", "fp-contract=off")  // (no fused multiply-add: ncnn's order of roundings)
#endif

namespace ncnn_mp_kernels {

namespace {

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

}  // namespace

void conv_fp32(const Planes<float> &in, int q0, int inch, const float *weights, const float *bias, int outch,
               const ConvShape &s, float *cols, const Fp32Out &out, int out_p0) {
    const int n = inch * s.maxk, npix = s.outw * s.outh;
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
}

void depthwise_fp32(const Planes<float> &in, const float *weights, const float *bias, const ConvShape &s,
                    const Fp32Out &out) {
    const int sw = s.stride_w, row = s.stride_h * in.w;
    for (int g = 0; g < in.c; g++) {
        const float *plane = in.data + g * in.cstep;
        const float *k = weights + g * s.maxk;
        const float b = bias != NULL ? bias[g] : 0.f;
        int pix = 0;
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
