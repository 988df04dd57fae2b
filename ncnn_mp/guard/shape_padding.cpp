// SPDX-License-Identifier: MIT
// Padding, one rule (shape_guard.h). ncnn pads through copy_make_border (its Padding layer),
// which makes an output of w + left + right columns and then copies every input row whole
// into it after `left` pad values: a negative pad on one side and a positive one on the other
// (a SAME padding whose stride exceeds its window along one axis, a Padding of 0=40 1=-60)
// writes past that output, and a negative one alone reads or writes outside too. ncnn_mp
// cannot honour a crop-then-pad within ncnn's layers, so such padding is refused. The pads
// are replayed as ncnn's make_padding (convolution.cpp, pooling.cpp) computes them.
#include "shape_guard.h"
#include "shape_math.h"

namespace {

const long long NCNN_MP_PAD_MAX = 1LL << 30;  // (ncnn adds pads to an extent in int)

// SAME padding (a convolution's -233 / -234, a Pooling's pad_mode 2 / 3): the total that makes
// the strided windows cover the input, its odd pixel after (upper) or before (lower); none
// unless one axis needs some. 64-bit: the parameters are any int.
void same(const ncnn_mp_padding_t &p, long long w, long long h, bool lower, long long *pads) {
    if (p.stride_w <= 0 || p.stride_h <= 0) {
        return;  // (ncnn divides by the stride: the layer refuses such parameters at load)
    }
    long long wpad = p.kernel_w + (w - 1) / p.stride_w * p.stride_w - w;
    long long hpad = p.kernel_h + (h - 1) / p.stride_h * p.stride_h - h;
    if (wpad > 0 || hpad > 0) {
        pads[0] = lower ? hpad - hpad / 2 : hpad / 2;
        pads[1] = hpad - pads[0];
        pads[2] = lower ? wpad - wpad / 2 : wpad / 2;
        pads[3] = wpad - pads[2];
    }
}

}  // namespace

extern "C" ncnn_mp_pad_verdict_t ncnn_mp_padding(const ncnn_mp_padding_t *p, int w, int h, bool vector,
                                                 ncnn_mp_pads_t *out) {
    long long pads[4] = { 0, 0, 0, 0 };  // top, bottom, left, right
    const long long given[4] = { p->top, p->bottom, p->left, p->right };
    switch (p->kind) {
        case NCNN_MP_PAD_CONV:
            if (p->top > 0 || p->bottom > 0 || p->left > 0 || p->right > 0) {
                for (int i = 0; i < 4; i++) {
                    pads[i] = given[i];
                }
            } else if ((p->left == -233 || p->left == -234) && p->right == p->left && p->top == p->left &&
                       p->bottom == p->left) {
                same(*p, w, h, p->left == -234, pads);
            }  // (else ncnn pads nothing)
            break;
        case NCNN_MP_PAD_POOL:
            if (p->pool_mode == 0 || p->pool_mode == 1) {
                for (int i = 0; i < 4; i++) {
                    pads[i] = given[i];
                }
                if (p->pool_mode == 0 && p->stride_w > 0 && p->stride_h > 0) {  // the tail, to a whole stride
                    long long wtail = (w + pads[2] + pads[3] - p->kernel_w) % p->stride_w;
                    long long htail = (h + pads[0] + pads[1] - p->kernel_h) % p->stride_h;
                    pads[3] += wtail != 0 ? p->stride_w - wtail : 0;
                    pads[1] += htail != 0 ? p->stride_h - htail : 0;
                }
            } else if (p->pool_mode == 2 || p->pool_mode == 3) {
                same(*p, w, h, p->pool_mode == 3, pads);
            }
            break;
        default:
            for (int i = 0; i < 4; i++) {
                pads[i] = given[i];
            }
            break;
    }
    if (vector) {
        pads[0] = pads[1] = 0;  // (a vector is padded sideways only)
        h = 1;
    }
    out->top = to_int(pads[0]);
    out->bottom = to_int(pads[1]);
    out->left = to_int(pads[2]);
    out->right = to_int(pads[3]);
    for (int i = 0; i < 4; i++) {
        if (pads[i] < 0 || pads[i] > NCNN_MP_PAD_MAX) {
            return NCNN_MP_PAD_OUT_OF_RANGE;
        }
    }
    if (p->border == 2 && (pads[0] >= h || pads[1] >= h || pads[2] >= w || pads[3] >= w)) {
        return NCNN_MP_PAD_REFLECT;
    }
    bool fits = w + pads[2] + pads[3] >= p->kernel_w && h + pads[0] + pads[1] >= p->kernel_h;
    return fits ? NCNN_MP_PAD_FITS : NCNN_MP_PAD_WINDOW;
}
