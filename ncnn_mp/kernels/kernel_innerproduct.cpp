// SPDX-License-Identifier: MIT
// InnerProduct's dot products (kernels.h): two weight rows at a time, so each input value
// loaded feeds two sums. int8: int32 sums; fp32: each sum starts at its bias and adds in
// ncnn's order.
#include "kernels.h"
#include "kernel_dsp.h"

#if NCNN_MP_KERNELS

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O2", "fp-contract=off")
#endif

namespace ncnn_mp_kernels {


void rows_int8(const signed char *x, int n, const signed char *weights, int outch, const Int8Out &out, int i) {
    int p = 0;
    for (; p + 1 < outch; p += 2) {
        const signed char *w0 = weights + p * n, *w1 = w0 + n;
        int s0 = 0, s1 = 0, k = 0;
#if NCNN_MP_DSP
        int32_t d0 = 0, d1 = 0;
        dsp::dot1x2(x, w0, w1, n, d0, d1);
        s0 = d0;
        s1 = d1;
        k = n;
#endif
        for (; k + 4 <= n; k += 4) {
            int x0 = x[k], x1 = x[k + 1], x2 = x[k + 2], x3 = x[k + 3];
            s0 += x0 * w0[k] + x1 * w0[k + 1] + x2 * w0[k + 2] + x3 * w0[k + 3];
            s1 += x0 * w1[k] + x1 * w1[k + 1] + x2 * w1[k + 2] + x3 * w1[k + 3];
        }
        for (; k < n; k++) {
            s0 += x[k] * w0[k];
            s1 += x[k] * w1[k];
        }
        store_int8(out, p, i, s0);
        store_int8(out, p + 1, i, s1);
    }
    if (p < outch) {
        const signed char *w0 = weights + p * n;
        int s0 = 0;
        for (int k = 0; k < n; k++) {
            s0 += x[k] * w0[k];
        }
        store_int8(out, p, i, s0);
    }
}

void rows_fp32(const float *x, int n, const float *weights, const float *bias, int outch, const Fp32Out &out, int i) {
    int p = 0;
#if NCNN_MP_HARD_FLOAT
    // With an FPU the loads are the cost: four rows a pass, each input loaded once for four
    // multiply-adds (the same order of operations per sum).
    for (; p + 4 <= outch; p += 4) {
        const float *w0 = weights + p * n, *w1 = w0 + n, *w2 = w1 + n, *w3 = w2 + n;
        float s0 = bias != NULL ? bias[p] : 0.f, s1 = bias != NULL ? bias[p + 1] : 0.f;
        float s2 = bias != NULL ? bias[p + 2] : 0.f, s3 = bias != NULL ? bias[p + 3] : 0.f;
        for (int k = 0; k < n; k++) {
            float v = x[k];
            s0 = s0 + v * w0[k];
            s1 = s1 + v * w1[k];
            s2 = s2 + v * w2[k];
            s3 = s3 + v * w3[k];
        }
        store_fp32(out, p, i, s0);
        store_fp32(out, p + 1, i, s1);
        store_fp32(out, p + 2, i, s2);
        store_fp32(out, p + 3, i, s3);
    }
#endif
    for (; p + 1 < outch; p += 2) {
        const float *w0 = weights + p * n, *w1 = w0 + n;
        float s0 = bias != NULL ? bias[p] : 0.f, s1 = bias != NULL ? bias[p + 1] : 0.f;
        for (int k = 0; k < n; k++) {
            float v = x[k];
            s0 = add_ff(s0, mul_ff(v, w0[k]));
            s1 = add_ff(s1, mul_ff(v, w1[k]));
        }
        store_fp32(out, p, i, s0);
        store_fp32(out, p + 1, i, s1);
    }
    if (p < outch) {
        const float *w0 = weights + p * n;
        float s0 = bias != NULL ? bias[p] : 0.f;
        for (int k = 0; k < n; k++) {
            s0 = add_ff(s0, mul_ff(x[k], w0[k]));
        }
        store_fp32(out, p, i, s0);
    }
}

}  // namespace ncnn_mp_kernels

#endif  // NCNN_MP_KERNELS
