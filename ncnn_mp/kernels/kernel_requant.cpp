// SPDX-License-Identifier: MIT
// make_requant (kernels.h): a channel's float scales, bias and activation as the integer
// multiplier, shift and bounds of its fixed-point requantization. Run per channel before a
// layer's sums, so its float operations cost nothing per element; they are float32
// operations (kernel_float.h's, IEEE-rounded) so that a model of this in Python
// (tests/mp/ncnn_mp_kernels.py) derives the same integers.
#include "kernels.h"

#if NCNN_MP_KERNELS

namespace ncnn_mp_kernels {

namespace {

// v (> 0) as m * 2^-s (its 24-bit mantissa m and exponent), kept as Requant keeps it: mult
// = m << 7, round = 2^(s + 7 - 33), shift = s + 7 - 32; if 26 <= s <= 56 (0.25 > v >= 2^-33
// or so: the high word of the product holds the result, the shift stays under 32).
bool fixed_point(float v, int32_t &mult, int32_t &round, int8_t &shift) {
    uint32_t b = float_bits(v);
    int e = static_cast<int>(b >> 23);  // (the sign bit included: a negative v fails here)
    int s = 150 - e;
    if (!(v > 0.f) || e == 0 || e >= 0xff || s < 26 || s > 56) {
        return false;  // zero, negative, subnormal, inf, NaN, or too large or small
    }
    mult = static_cast<int32_t>(((b & 0x7fffffu) | 0x800000u) << 7);
    round = static_cast<int32_t>(1u << (s + 7 - 33));
    shift = static_cast<int8_t>(s + 7 - 32);
    return true;
}

// round(v) half away from zero, if |v| < 2^30: from the float's bits (this runs per output
// channel per forward, and a float conversion, subtraction and comparison are library calls on
// the soft-float cores; kernels.h float2int8 rounds the same way).
bool rounded(float v, int32_t &out) {
    const uint32_t b = float_bits(v), a = b & 0x7fffffffu;
    if (a >= 0x4e800000u) {  // |v| >= 2^30, inf or NaN
        return false;
    }
    int32_t r = 0;
    if (a >= 0x3f000000u) {  // |v| >= 0.5: mantissa m, |v| = m * 2^(e - 150), e in 126..156
        const int shift = 150 - static_cast<int>(a >> 23);
        const uint32_t m = (a & 0x7fffffu) | 0x800000u;
        r = static_cast<int32_t>(shift <= 0 ? m << -shift : (m + (1u << (shift - 1))) >> shift);
    }
    out = b >> 31 ? -r : r;
    return true;
}

// A channel whose weight scale is zero (all its weights zero: a pruned channel, common in
// trained models): ncnn dequantizes every sum to sum * 0, +-0, so its output is one int8
// value, the float steps' for a sum of 0 (the sign of a zero reaches no int8 result: it
// gives +0 or -0 through every activation, or the same sigmoid). As a Requant: the product's
// high word, 0 or -1, shifted by 31 (0 or -1), clamped to [c, c].
Requant constant(float bias, int activation_type, const float *activation_params, float scale_out) {
    float v = activate(add_ff(0.f, bias), activation_type, activation_params);
    int8_t c = static_cast<int8_t>(float2int8(mul_ff(v, scale_out)));
    Requant r = { 0, 1, 1, 0, 0, 31, 31, c, c, 0 };
    return r;
}

}  // namespace

Requant make_requant(float scale_in, float d, float scale_out, float bias, int activation_type,
                     const float *activation_params, int n) {
    Requant r = { 0, 0, 0, 0, 0, 0, 0, -127, 127, 0 };  // (bias, mult, neg_mult, round, neg_round,
    const Requant keep_float = r;                       //  shift, neg_shift, lo, hi, narrow; mult 0: floats)
    if (scale_in == 0.f) {  // (a zero weight scale: ncnn's float steps give one value for every sum)
        return constant(bias, activation_type, activation_params, scale_out);
    }
    float m = mul_ff(scale_in, scale_out);
    if ( !fixed_point(m, r.mult, r.round, r.shift) || !rounded(mul_ff(bias, d), r.bias)) {
        return keep_float;
    }
    // sum + bias within 32 bits: |sum| <= 127 * 127 * n
    int64_t most = static_cast<int64_t>(16129) * (n > 0 ? n : 0) + (r.bias < 0 ? -static_cast<int64_t>(r.bias) : r.bias);
    if (most > 0x7fffffff) {
        return keep_float;
    }
    r.neg_mult = r.mult;
    r.neg_round = r.round;
    r.neg_shift = r.shift;
    switch (activation_type) {
        case 0:
            break;
        case 1:
            r.lo = 0;
            break;
        case 2: {  // leaky ReLU: v * slope below zero
            float slope = activation_params[0];
            if (slope == 0.f) {
                r.lo = 0;
            } else if (!fixed_point(mul_ff(m, slope), r.neg_mult, r.neg_round, r.neg_shift)) {
                return keep_float;  // (a negative slope, or one out of range)
            }
            break;
        }
        case 3:  // clip: ncnn clamps the float, then quantizes it; rounding is monotonic
            r.lo = static_cast<int8_t>(float2int8(mul_ff(activation_params[0], scale_out)));
            r.hi = static_cast<int8_t>(float2int8(mul_ff(activation_params[1], scale_out)));
            if (r.lo > r.hi) {
                return keep_float;
            }
            break;
        default:  // sigmoid, mish, hard swish: not piecewise linear
            return keep_float;
    }
    // narrow: |sum + bias| under 2^19 for any int8 inputs (|x * w| <= 128 * 128), or past it
    // nothing but lo and hi (q is monotonic in x: its values at +-(2^19 - 1) are the bounds)
    const int32_t x_max = (1 << 19) - 1;
    const int64_t most_bias = r.bias < 0 ? -static_cast<int64_t>(r.bias) : r.bias;
    Requant at = r;
    at.bias = 0;  // (at.apply(x): q for sum + bias = x)
    r.narrow = static_cast<int64_t>(16384) * (n > 0 ? n : 0) + most_bias <= x_max ? 2
               : at.apply(x_max) == r.hi && at.apply(-x_max) == r.lo ? 1 : 0;
    return r;
}

}  // namespace ncnn_mp_kernels

#endif  // NCNN_MP_KERNELS
