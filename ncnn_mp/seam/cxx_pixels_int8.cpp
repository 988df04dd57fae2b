// SPDX-License-Identifier: MIT
// The C++ seam, a camera frame's values to int8 (cxx_seam.h): Mat.from_pixels_int8's rows,
// computed as ncnn computes them on the float path, so that the int8 input is the one the
// first int8 layer would have made from the float frame, bit for bit:
//   substract_mean_normalize (mat.cpp): mean only, its Bias layer: v + (-mean); norm only,
//   its Scale layer: v * norm; both, Scale with a bias: v * norm + (-mean * norm);
//   then the layer's quantize: float2int8(v * scale) (kernel_input.cpp, ncnn's Quantize).
// Each a float32 operation of its own (kernel_float.h's, IEEE-exact on soft-float RISC-V),
// never fused into one multiply-add: ncnn's generic layers round twice.
#include "cxx_seam.h"
#include "kernels.h"

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O2", "fp-contract=off")  // (a row of a frame: the per-element loop)
#endif

using namespace ncnn_mp_kernels;

namespace {

// v's value k if v is a whole number 0..255, else -1: from its bits (a float to int
// conversion is a library call on the soft-float cores).
NCNN_MP_INLINE int whole_byte(float v) {
    uint32_t b = float_bits(v);
    if (b == 0) {
        return 0;
    }
    int shift = 150 - static_cast<int>(b >> 23);  // (sign set: negative, fails below)
    if (shift < 16 || shift > 23) {
        return -1;  // (not within 1 .. 255, or negative)
    }
    uint32_t m = (b & 0x7fffffu) | 0x800000u;
    return (m & ((1u << shift) - 1u)) == 0 ? static_cast<int>(m >> shift) : -1;
}

signed char step(float x, const ncnn_mp_int8_step_t *s) {
    switch (s->op) {
        case 1:
            return float2int8(mul_ff(add_ff(x, s->add), s->scale));
        case 2:
            return float2int8(mul_ff(mul_ff(x, s->norm), s->scale));
        case 3:
            return float2int8(mul_ff(add_ff(mul_ff(x, s->norm), s->add), s->scale));
        default:
            return float2int8(mul_ff(x, s->scale));
    }
}

}  // namespace

extern "C" void ncnn_mp_int8_step(ncnn_mp_int8_step_t *s, const float *mean, const float *norm, float scale) {
    s->norm = norm != nullptr ? *norm : 1.f;
    s->add = mean == nullptr ? 0.f : norm == nullptr ? -*mean : mul_ff(-*mean, *norm);
    s->op = (mean != nullptr ? 1 : 0) | (norm != nullptr ? 2 : 0);
    s->scale = scale;
    for (int k = 0; k < 256; k++) {
        s->table[k] = step(static_cast<float>(k), s);
    }
}

// A value that is a whole byte (every value of a frame that is not resized, and the resize's
// values that land on a pixel) takes the table's entry, the same operations' result; the rest
// the operations themselves. (A frame of 160x160: 77k values a channel, 256 in the table.)
extern "C" void ncnn_mp_pixels_int8_row(const float *v, int n, const ncnn_mp_int8_step_t *s, signed char *out) {
    for (int i = 0; i < n; i++) {
        int k = whole_byte(v[i]);
        out[i] = k >= 0 ? s->table[k] : step(v[i], s);
    }
}
