// SPDX-License-Identifier: MIT
// ncnn_mp's own Convolution, ConvolutionDepthWise and InnerProduct (kernel_*.cpp), built
// with NCNN_MP_KERNELS=1 (the board profiles and the Unix ones: docs/kernels.md).
//
// Why: on a core without SIMD, ncnn's generic layers (what the MCU builds run) walk every
// output element's kernel through an offset table and a Mat view per input channel, and
// their int8 forward divides once per output element. These compute the same numbers:
// - int8: the same int32 sums (exact), then ncnn's dequantize, bias, activation and
//   requantize as the same float operations in the same order, so the outputs are equal;
// - fp32: each output's sum starts at its bias and adds val * weight in ncnn's order
//   (input channel, then kernel position), one float multiply and one add at a time, so
//   the outputs are equal too (where the compiler contracts neither side into an FMA).
// The speed comes from the loops: each output pixel's receptive field gathered once
// (im2col, two pixels at a time) and a 2x2 register block (two output channels x two
// pixels: each load feeds two multiply-accumulates), which fits the Cortex-M3's 13 usable
// registers; depthwise 3x3 unrolled; quantize and padding in one pass.
//
// Plain C++ on ncnn's C++ API (as shape_guard.cpp): nothing here raises into MicroPython.
#ifndef NCNN_MP_KERNELS_H
#define NCNN_MP_KERNELS_H

#include <math.h>
#include <stddef.h>
#include <string.h>

#include <ncnn/layer.h>
#include <ncnn/mat.h>
#include <ncnn/option.h>

#include "kernel_dsp.h"  // (NCNN_MP_DSP: conv_int8_cols)
#include "kernel_float.h"

// Which layer types' kernels a firmware keeps: all of them, or in a firmware built for some
// models (`make firmware MODELS=...`, a profile's `ncnn_layers`: ci/firmware.py passes the
// list, micropython.mk defines NCNN_MP_LAYERS_LISTED and NCNN_MP_LAYER_<type> for each) only
// those of the types ncnn keeps; the code of the others is never referenced and the linker
// drops it.
#ifndef NCNN_MP_LAYERS_LISTED
#define NCNN_MP_LAYERS_LISTED 0
#endif
#define NCNN_MP_LAYER_DEFAULT (!NCNN_MP_LAYERS_LISTED)
#ifndef NCNN_MP_LAYER_Convolution
#define NCNN_MP_LAYER_Convolution NCNN_MP_LAYER_DEFAULT
#endif
#ifndef NCNN_MP_LAYER_ConvolutionDepthWise
#define NCNN_MP_LAYER_ConvolutionDepthWise NCNN_MP_LAYER_DEFAULT
#endif
#ifndef NCNN_MP_LAYER_InnerProduct
#define NCNN_MP_LAYER_InnerProduct NCNN_MP_LAYER_DEFAULT
#endif
#ifndef NCNN_MP_LAYER_ReLU
#define NCNN_MP_LAYER_ReLU NCNN_MP_LAYER_DEFAULT
#endif
#ifndef NCNN_MP_LAYER_Pooling
#define NCNN_MP_LAYER_Pooling NCNN_MP_LAYER_DEFAULT
#endif
#ifndef NCNN_MP_LAYER_Concat
#define NCNN_MP_LAYER_Concat NCNN_MP_LAYER_DEFAULT
#endif
#ifndef NCNN_MP_LAYER_Slice
#define NCNN_MP_LAYER_Slice NCNN_MP_LAYER_DEFAULT
#endif
#ifndef NCNN_MP_LAYER_ShuffleChannel
#define NCNN_MP_LAYER_ShuffleChannel NCNN_MP_LAYER_DEFAULT
#endif
#ifndef NCNN_MP_LAYER_Crop
#define NCNN_MP_LAYER_Crop NCNN_MP_LAYER_DEFAULT
#endif
#ifndef NCNN_MP_LAYER_Interp
#define NCNN_MP_LAYER_Interp NCNN_MP_LAYER_DEFAULT
#endif
#ifndef NCNN_MP_LAYER_BinaryOp
#define NCNN_MP_LAYER_BinaryOp NCNN_MP_LAYER_DEFAULT
#endif
#ifndef NCNN_MP_LAYER_Sigmoid
#define NCNN_MP_LAYER_Sigmoid NCNN_MP_LAYER_DEFAULT
#endif
#ifndef NCNN_MP_LAYER_Softmax
#define NCNN_MP_LAYER_Softmax NCNN_MP_LAYER_DEFAULT
#endif
#ifndef NCNN_MP_LAYER_Reshape
#define NCNN_MP_LAYER_Reshape NCNN_MP_LAYER_DEFAULT
#endif
#ifndef NCNN_MP_LAYER_Permute
#define NCNN_MP_LAYER_Permute NCNN_MP_LAYER_DEFAULT
#endif

// Xtensa cores (MUL16: lx106, the ESP8266's, call0 ABI, no MAC, no SEXT; the ESP32's and S3's,
// windowed ABI): conv_int8's MAC loop in assembly (kernel_xtensa.h) over four pixels' values
// gathered as int16.
#if defined(__XTENSA__) && !defined(NCNN_MP_NO_ASM)
#define NCNN_MP_XTENSA 1
#else
#define NCNN_MP_XTENSA 0
#endif
// The ESP32's and S3's cores (windowed ABI, the FPU): the fp32 convolutions' 2 x 4 block in
// assembly (kernel_xtensa_fp.h).
#if NCNN_MP_XTENSA && NCNN_MP_HARD_FLOAT && !defined(__XTENSA_CALL0_ABI__)
#define NCNN_MP_XTENSA_FP 1
#else
#define NCNN_MP_XTENSA_FP 0
#endif
// The ESP32's and S3's MAC16 (windowed Xtensa with the FPU: both have it; NCNN_MP_MAC16=0 for a
// core without): int8 convolutions as int16 dot products in MULA.DD with loads (kernel_xtensa.h),
// one pixel's column and one weight row (converted to int16 once a strip) at a time.
#ifndef NCNN_MP_MAC16
#define NCNN_MP_MAC16 NCNN_MP_XTENSA_FP
#endif
// An Xtensa core without MUL32_HIGH (lx106; the esp32core board's emulated core, whose build says
// it with -DNCNN_MP_NO_MUL32_HIGH; an ESP32 has it): a 64-bit product is a library call, so the
// requantization's high word comes from 16- or 32-bit products (mul_high below, put_int8_row).
#if defined(__XTENSA__) && (defined(__XTENSA_CALL0_ABI__) || defined(NCNN_MP_NO_MUL32_HIGH))
#define NCNN_MP_MUL_HIGH_SPLIT 1
#else
#define NCNN_MP_MUL_HIGH_SPLIT 0
#endif
// 32-bit RISC-V with the M extension and 32 registers (rv32imac, the ESP32-C3's rv32imc):
// conv_int8's MAC loop in assembly (kernel_rv32.h) over four pixels' values.
#if defined(__riscv) && __riscv_xlen == 32 && defined(__riscv_mul) && !defined(__riscv_32e) && \
    !defined(NCNN_MP_NO_ASM)
#define NCNN_MP_RV32 1
#else
#define NCNN_MP_RV32 0
#endif
// Thumb-2 without the DSP extension's form (the Cortex-M3; kernel_dsp.h where there is one):
// conv_int8's MAC loop in assembly (kernel_thumb2.h) over four pixels' values.
#if defined(__thumb2__) && !(defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP && !defined(NCNN_MP_NO_DSP)) && \
    !defined(NCNN_MP_NO_ASM)
#define NCNN_MP_THUMB2 1
#else
#define NCNN_MP_THUMB2 0
#endif
// Any of them: conv_int8 a block of four pixels at a time.
#define NCNN_MP_BLOCK4 (NCNN_MP_XTENSA || NCNN_MP_RV32 || NCNN_MP_THUMB2)

// The most a convolution copies of its input at once (padded, or quantized) when it must
// copy it: a band of rows (kernel_layers.cpp's band_rows), so that the padded copy of a
// camera-sized input never exists whole (RetinaFace's first layer at 160x160: 77 KiB whole,
// 16 KiB a band).
#ifndef NCNN_MP_BAND_BYTES
#define NCNN_MP_BAND_BYTES (16 * 1024)
#endif

// One of ncnn_mp's layers for a built-in type it implements, else NULL (ncnn's own is made
// then). Always NULL without NCNN_MP_KERNELS. shape_guard.cpp's Net asks this first and
// wraps what it gets in the guard as it wraps ncnn's layers.
ncnn::Layer *ncnn_mp_kernel_create(int typeindex);

namespace ncnn_mp_kernels {

// ncnn's fused activation (its fused_activation.h, activation_ss: not an installed header),
// the same float operations and libm calls: 0 none, 1 ReLU, 2 leaky ReLU, 3 clip,
// 4 sigmoid, 5 mish, 6 hard swish.
static NCNN_MP_INLINE float activate(float v, int type, const float *params) {
    switch (type) {
        case 1: {  // fmaxf(v, 0.f) from the bits where that is plain (zeros and NaN: fmaxf's own)
            uint32_t b = float_bits(v);
            if ((b & 0x7fffffffu) != 0 && (b & 0x7fffffffu) < 0x7f800001u) {
                return b >> 31 ? 0.f : v;
            }
            return fmaxf(v, 0.f);
        }
        case 2:
            return v > 0.f ? v : v * params[0];
        case 3:
            if (v < params[0]) {
                v = params[0];
            }
            if (v > params[1]) {
                v = params[1];
            }
            return v;
        case 4:
            v = 88.3762626647949f < v ? 88.3762626647949f : v;  // (std::min, std::max: NaN kept)
            v = v < -88.3762626647949f ? -88.3762626647949f : v;
            return 1.f / (1.f + expf(-v));
        case 5:
            return v * tanhf(logf(expf(v) + 1.f));
        case 6: {
            float alpha = params[0], beta = params[1];
            float lower = -beta / alpha;
            float upper = (1.f / alpha) + lower;
            if (v < lower) {
                return 0.f;
            }
            return v > upper ? v : v * (v * alpha + beta);
        }
        default:
            return v;
    }
}

// ncnn's float2int8 (round() half away from zero, then [-127, 127]) from the float's bits:
// libm's round() is a soft-double call on these cores. NaN goes through round() as ncnn's
// does (what (int) of NaN gives is the platform's).
static NCNN_MP_INLINE signed char float2int8(float v) {
    unsigned int bits;
    memcpy(&bits, &v, 4);
    unsigned int a = bits & 0x7fffffffu;
    int r;
    if (a > 0x7f800000u) {
        r = static_cast<int>(round(v));
        return static_cast<signed char>(r > 127 ? 127 : r < -127 ? -127 : r);
    }
    if (a >= 0x42ff0000u) {  // |v| >= 127.5 (and inf): rounds to 128 or more
        r = 127;
    } else if (a < 0x3f000000u) {  // |v| < 0.5
        r = 0;
    } else {  // 0.5 <= |v| < 127.5: mantissa m, |v| = m * 2^(e - 150), e in 126..133
        int shift = 150 - static_cast<int>(a >> 23);
        unsigned int m = (a & 0x7fffffu) | 0x800000u;
        r = static_cast<int>((m + (1u << (shift - 1))) >> shift);
    }
    return static_cast<signed char>(bits >> 31 ? -r : r);
}

// A layer's input as the kernels read it: channel q's row y starts at
// data + q * cstep + y * w (elements); padding already applied.
template<typename T>
struct Planes {
    const T *data;
    int w, h, c;
    size_t cstep;
};

// The kernel's shape and the output's size; ofs[k]: kernel position k's offset in a plane
// (ncnn's space_ofs), maxk of them.
struct ConvShape {
    int kernel_w, kernel_h, dilation_w, dilation_h, stride_w, stride_h;
    int outw, outh;
    const int *ofs;
    int maxk;
};

// The high word of x * m (0 <= m < 2^31), exact: the 64-bit product's, or without MUL32_HIGH
// (the 64-bit product is a libgcc call) kernel_float.h's mul_high_halves.
static NCNN_MP_INLINE int32_t mul_high(int32_t x, int32_t m) {
#if NCNN_MP_MUL_HIGH_SPLIT
    return mul_high_halves(x, m);
#else
    return static_cast<int32_t>((static_cast<int64_t>(x) * m) >> 32);
#endif
}

// A channel's fixed-point requantization, for an int8 output made from int8 sums with no
// float operation (int8 from layer to layer: docs/kernels.md "int8 between layers"):
//   q = clamp(round((sum + bias) * M), lo, hi)
// M, the float32 output scale / (input scale * weight scale) as ncnn computes it (1 / (input
// scale * weight scale), times the output scale), is its 24-bit mantissa m and exponent:
// M = m * 2^-s. Here m is kept as m << 7 (a Q31 number) so that the product's high word
// holds the result: for s + 7 >= 33, round((sum + bias) * M) half up is exactly
//   (high word of (sum + bias) * mult  +  2^(s + 7 - 33))  >>  (s + 7 - 32)
// (one 32x32 multiply, an add and a shift; the low word only ever adds less than 1 before a
// floor). A negative sum + bias takes neg_mult, neg_round, neg_shift: a leaky ReLU's slope
// folded into M. make_requant (kernel_requant.cpp) derives them, the ReLU or clip bounds
// and the bias in units of the sum (a zero weight scale: the channel's one value as lo = hi),
// or mult 0 where a channel keeps ncnn's float steps: a sigmoid, mish or hard swish, M >= 0.25
// or too small, or sums that could leave 32 bits.
// `narrow` (make_requant, for lx106's mul_high_split): 2 where |sum + bias| stays under 2^19
// whatever the int8 inputs, 1 where it may not but every x = sum + bias past +-(2^19 - 1) gives
// what +-(2^19 - 1) gives (lo or hi: x clamped there first changes nothing), else 0.
struct Requant {
    int32_t bias, mult, neg_mult, round, neg_round;
    int8_t shift, neg_shift, lo, hi, narrow;

    NCNN_MP_INLINE signed char apply(int sum) const {
        int32_t x = sum + bias;
        bool neg = x < 0;
        int32_t high = mul_high(x, neg ? neg_mult : mult);
        int32_t q = (high + (neg ? neg_round : round)) >> (neg ? neg_shift : shift);
        return static_cast<signed char>(q < lo ? lo : q > hi ? hi : q);
    }
};

// Where int8 sums go: ncnn's dequantize (sum * scale_in[p], + bias[p]), the activation,
// then the float stored, or requantized to int8 with scale_out[p]; or, where `requant` has
// the channel (mult != 0), its fixed-point requantization.
struct Int8Out {
    const float *scale_in;   // per output channel: 1 / (input scale * weight scale), or 0
    const float *bias;       // NULL: no bias
    const float *scale_out;  // NULL: a float output
    int activation_type;
    const float *activation_params;
    void *data;
    size_t cstep;
    const Requant *requant;  // NULL: every channel through the float steps

    // The float steps (through kernel_float.h: the same roundings, without libgcc's calls).
    NCNN_MP_INLINE void put(int p, int i, int sum) const {
        float v = mul_if(sum, scale_in[p]);
        if (bias != NULL) {
            v = add_ff(v, bias[p]);
        }
        v = activate(v, activation_type, activation_params);
        if (scale_out != NULL) {
            static_cast<signed char *>(data)[p * cstep + i] = float2int8(mul_ff(v, scale_out[p]));
        } else {
            static_cast<float *>(data)[p * cstep + i] = v;
        }
    }
};

// Channel p's Requant from ncnn's float scales: scale_in (1 / (input scale * weight
// scale), 0 for a zero weight scale), d (input scale * weight scale), the output scale,
// the bias (0: none), the fused activation, and n, the most products a sum adds (inch *
// kernel). (kernel_requant.cpp)
Requant make_requant(float scale_in, float d, float scale_out, float bias, int activation_type,
                     const float *activation_params, int n);

// Where fp32 sums go (they started at the bias): the activation, stored.
struct Fp32Out {
    int activation_type;
    const float *activation_params;
    float *data;
    size_t cstep;

    NCNN_MP_INLINE void put(int p, int i, float sum) const {
        data[p * cstep + i] = activate(sum, activation_type, activation_params);
    }
};

// One output element through Int8Out::put / Fp32Out::put, compiled once (kernel_epilogue.cpp):
// the activation's libm calls and the float steps are one copy, called from every kernel.
void store_int8(const Int8Out &out, int p, int i, int sum);
void store_fp32(const Fp32Out &out, int p, int i, float sum);

// One int8 sum's output: the fixed-point requantization inline where the channel has one,
// else the float steps out of line (store_int8).
static NCNN_MP_INLINE void put_int8(const Int8Out &out, int p, int i, int sum) {
    if (out.requant != NULL && out.requant[p].mult != 0) {
        static_cast<signed char *>(out.data)[p * out.cstep + i] = out.requant[p].apply(sum);
    } else {
        store_int8(out, p, i, sum);
    }
}

// n sums of channel p into outputs i0.. (put_int8 along a row: the channel's Requant read
// once, into a local the byte stores cannot alias).
static NCNN_MP_INLINE void put_row_int8(const Int8Out &out, int p, int i0, const int *sums, int n) {
    if (out.requant != NULL && out.requant[p].mult != 0) {
        const Requant r = out.requant[p];
        signed char *d = static_cast<signed char *>(out.data) + p * out.cstep + i0;
        if (r.neg_mult == r.mult && r.neg_round == r.round && r.neg_shift == r.shift) {
            // (no leaky slope: one multiplier, without a choice per output)
            const int32_t bias = r.bias, mult = r.mult, round = r.round, shift = r.shift, lo = r.lo, hi = r.hi;
#if NCNN_MP_MUL_HIGH_SPLIT
            if (r.narrow != 0) {  // two MULLs an output instead of four MUL16s (mul_high_split)
                const int32_t a = (mult >> 7) >> 12, b = (mult >> 7) & 0xfff, x_max = (1 << 19) - 1;
                for (int j = 0; j < n; j++) {
                    int32_t x = sums[j] + bias;
                    if (r.narrow == 1) {
                        x = x > x_max ? x_max : x < -x_max ? -x_max : x;
                    }
                    int32_t q = (mul_high_split(x, a, b) + round) >> shift;
                    d[j] = static_cast<signed char>(q < lo ? lo : q > hi ? hi : q);
                }
                return;
            }
#endif
            for (int j = 0; j < n; j++) {
                int32_t q = (mul_high(sums[j] + bias, mult) + round) >> shift;
                d[j] = static_cast<signed char>(q < lo ? lo : q > hi ? hi : q);
            }
            return;
        }
        for (int j = 0; j < n; j++) {
            d[j] = r.apply(sums[j]);
        }
        return;
    }
    for (int j = 0; j < n; j++) {
        store_int8(out, p, i0 + j, sums[j]);
    }
}

// The four-pixel cores (NCNN_MP_BLOCK4) and the DSP's (two at a time) gather a strip of pixels at once, and
// requantize each output row's sums over the strip in one call: as many pixels (a multiple of 4,
// at most NCNN_MP_STRIP_PIXELS) as keep their columns within NCNN_MP_STRIP_BYTES. A layer of few
// input channels (4 to 32) spent about 35 instructions an output around its few MACs, a quarter
// of them in a row's requantization set up for four outputs; a large one keeps a strip of four.
#define NCNN_MP_STRIP_PIXELS 32
#ifndef NCNN_MP_STRIP_BYTES
#define NCNN_MP_STRIP_BYTES 1024
#endif
// MAC16 (NCNN_MP_MAC16) converts each weight row to int16 once a strip, so it takes more pixels a
// strip: as many as keep their int16 columns within NCNN_MP_MAC16_STRIP_BYTES, at least 4.
#ifndef NCNN_MP_MAC16_STRIP_BYTES
#define NCNN_MP_MAC16_STRIP_BYTES 4096
#endif
// n rounded up to a pair (MAC16's int16 columns and weight rows, a zero past an odd n).
static inline int mac16_pairs(int n) {
    return (n + 1) / 2;
}
static inline int conv_int8_strip(int n) {
    if (NCNN_MP_MAC16) {
        const int bytes = 4 * mac16_pairs(n), pixels = bytes > 0 ? NCNN_MP_MAC16_STRIP_BYTES / bytes : 1;
        return pixels < 4 ? 4 : pixels > NCNN_MP_STRIP_PIXELS ? NCNN_MP_STRIP_PIXELS : pixels;
    }
    const int block = n * (NCNN_MP_XTENSA ? 8 : 4);  // (the bytes of four pixels' columns)
    const int blocks = block > 0 ? NCNN_MP_STRIP_BYTES / block : 1;
    return 4 * (blocks < 1 ? 1 : blocks > NCNN_MP_STRIP_PIXELS / 4 ? NCNN_MP_STRIP_PIXELS / 4 : blocks);
}

// The bytes of conv_int8's workspace for n = inch * maxk: two pixels' int8 values, on rv32,
// Thumb-2 and the DSP a strip of pixels' (conv_int8_strip), on lx106 as int16; with MAC16 a strip
// of pixels' int16 pairs, a weight row's, and a word past each (its loads run one word ahead).
static inline size_t conv_int8_cols(int n) {
    if (NCNN_MP_MAC16) {
        return (static_cast<size_t>(conv_int8_strip(n)) + 1) * 4u * static_cast<size_t>(mac16_pairs(n)) + 8u;
    }
    return NCNN_MP_BLOCK4 || NCNN_MP_DSP ? static_cast<size_t>(n) * (NCNN_MP_XTENSA ? 2u : 1u) * conv_int8_strip(n)
                                         : static_cast<size_t>(n) * 2u;
}

// A convolution of `inch` input planes with outch output channels (one group), output
// channels out_p0.. in `out`. weights: outch rows of inch * maxk, ncnn's layout.
// cols: workspace of conv_int8_cols(inch * maxk) bytes (int8), 2 * inch * maxk floats (fp32),
// 4-byte aligned. (kernel_conv_int8.cpp, kernel_conv_fp32.cpp)
void conv_int8(const Planes<signed char> &in, int q0, int inch, const signed char *weights, int outch,
               const ConvShape &s, signed char *cols, const Int8Out &out, int out_p0);
void conv_fp32(const Planes<float> &in, int q0, int inch, const float *weights, const float *bias, int outch,
               const ConvShape &s, float *cols, const Fp32Out &out, int out_p0);

// One output channel per input channel (a depthwise convolution): channel g of `in`
// with weights + g * maxk into output channel g. (Same files.)
// sums: workspace of outw int32s.
void depthwise_int8(const Planes<signed char> &in, const signed char *weights, const ConvShape &s, int *sums,
                    const Int8Out &out);
void depthwise_fp32(const Planes<float> &in, const float *weights, const float *bias, const ConvShape &s,
                    const Fp32Out &out);

// Dot products of one input vector (n values) with outch weight rows (n each, row p at
// weights + p * n): ncnn's InnerProduct for one row. (kernel_innerproduct.cpp)
void rows_int8(const signed char *x, int n, const signed char *weights, int outch, const Int8Out &out, int i);
void rows_fp32(const float *x, int n, const float *weights, const float *bias, int outch, const Fp32Out &out,
               int i);

// The input padded as ncnn's make_padding pads it (copy_make_border, BORDER_CONSTANT):
// pads top, bottom, left, right (a 1-D blob is padded sideways only). int8: quantized
// with scales[q / channels_per_scale] first unless already int8. The planes point into
// `bottom` where nothing needs doing, else into `ws` (made with opt's workspace allocator).
// 0, or -100 out of memory. (kernel_input.cpp)
struct Pads {
    int top, bottom, left, right;
    float value;
};
int input_int8(const ncnn::Mat &bottom, const float *scales, int channels_per_scale, const Pads &pads,
               ncnn::Mat &ws, Planes<signed char> &out, const ncnn::Option &opt);
// Rows [r0, r0 + n) of the padded input only (row 0: the first row of top padding), into
// ws (reused where it is large enough: a band at a time). The planes' h is n.
int input_int8(const ncnn::Mat &bottom, const float *scales, int channels_per_scale, const Pads &pads, int r0, int n,
               ncnn::Mat &ws, Planes<signed char> &out, const ncnn::Option &opt);
int input_fp32(const ncnn::Mat &bottom, const Pads &pads, int r0, int n, ncnn::Mat &ws, Planes<float> &out,
               const ncnn::Option &opt);
// The padded input's rows.
int input_rows(const ncnn::Mat &bottom, const Pads &pads);

// The layers between int8 layers (ReLU, Pooling, Concat, Slice, ShuffleChannel, Crop, Interp,
// BinaryOp) and after them (Sigmoid): ncnn's own for float input, an int8 forward for int8
// input; NULL for another type. (kernel_pass.cpp)
ncnn::Layer *pass_layer_create(int typeindex);

}  // namespace ncnn_mp_kernels

#endif  // NCNN_MP_KERNELS_H
