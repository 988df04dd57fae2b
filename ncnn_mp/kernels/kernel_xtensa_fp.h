// SPDX-License-Identifier: MIT
// fp32 convolution sums in assembly for the ESP32's and S3's Xtensa cores (windowed ABI, the
// single-precision FPU, zero-overhead loops), behind kernel_conv_fp32.cpp's 2 channels x 4 pixels
// block, which calls these where NCNN_MP_XTENSA_FP is 1 (kernels.h). Each sum starts at the value
// the caller put in sums[] (its bias) and adds x * w for k = 0, 1, ... as one MUL.S and one ADD.S:
// ncnn's order and its two roundings, so the outputs are the C block's and ncnn's generic code's
// bit for bit (tests/mp/ncnn_mp_kernels.py on the esp32core board).
//
// Why assembly: Xtensa's FPU has 16 registers and loads only from a register plus a constant; clang
// 22 kept the C block's 8 sums in registers but spent 30 instructions on each k (3.75 a MAC: its
// loop kept moving the pixel pointer back and forth, and no LOOP), where 25 do: 4 + 2 loads, 8 MUL.S
// and 8 ADD.S, 3 pointer steps, in a zero-overhead LOOP.
//
// No MADD.S: it rounds once (fused) where ncnn's generic code rounds the product and then the sum
// (ncnn built by clang 22 here; Espressif's GCC contracts `sum += val * w` into MADD.S unless told
// -ffp-contract=off): the outputs would differ from ncnn's in the last bits.
//
// Registers: sums f0-f3 (weight row 0, pixels 0-3) and f4-f7 (row 1), the pixels' values f8-f11,
// the two weights f12 and f13, products f14 and f15. Xtensa's ABI has no callee-saved FP register.
#ifndef NCNN_MP_KERNEL_XTENSA_FP_H
#define NCNN_MP_KERNEL_XTENSA_FP_H

#include <stddef.h>

#if NCNN_MP_XTENSA_FP

// sums[r * 4 + j] += sum over k < n of x[k * xs + j] * w_r[k] (xs in bytes; r 0: w0, 1: w1).
extern "C" void ncnn_mp_xtensa_fdot2x4(const float *x, size_t xs, const float *w0, const float *w1, int n,
                                       float sums[8]);
// The same over k = (q, m), q < inch, m < maxk: x[q * xs + ofs[m] + j] (ofs in elements), the
// weight rows w0 and w0 + inch * maxk.
extern "C" void ncnn_mp_xtensa_fdot2x4_ofs(const float *x, size_t xs, const int *ofs, int maxk, const float *w0,
                                           int inch, float sums[8]);

// The eight products of f8-f11 (pixels) with f12 (row 0) and f13 (row 1), each added to its sum.
#define XTENSA_FP_MACS                                                                       \
    "    mul.s f14, f8, f12\n    mul.s f15, f9, f12\n    add.s f0, f0, f14\n    add.s f1, f1, f15\n" \
    "    mul.s f14, f10, f12\n   mul.s f15, f11, f12\n   add.s f2, f2, f14\n    add.s f3, f3, f15\n" \
    "    mul.s f14, f8, f13\n    mul.s f15, f9, f13\n    add.s f4, f4, f14\n    add.s f5, f5, f15\n" \
    "    mul.s f14, f10, f13\n   mul.s f15, f11, f13\n   add.s f6, f6, f14\n    add.s f7, f7, f15\n"
#define XTENSA_FP_SUMS(op, base)                                                                    \
    "    " op " f0, " base ", 0\n    " op " f1, " base ", 4\n    " op " f2, " base ", 8\n    " op " f3, " base \
    ", 12\n    " op " f4, " base ", 16\n    " op " f5, " base ", 20\n    " op " f6, " base ", 24\n    " op \
    " f7, " base ", 28\n"
// The pixels' four values at register p, the two weights at w0 and w1 (then a step of 4 each).
#define XTENSA_FP_LOADS(p, w0, w1)                                                               \
    "    lsi f8, " p ", 0\n    lsi f9, " p ", 4\n    lsi f10, " p ", 8\n    lsi f11, " p ", 12\n" \
    "    lsi f12, " w0 ", 0\n    lsi f13, " w1 ", 0\n    addi " w0 ", " w0 ", 4\n    addi " w1 ", " w1 ", 4\n"

// (Defined here, once: kernel_conv_fp32.cpp is the one file that includes this header.)
__asm__(
    // a2 x, a3 xs, a4 w0, a5 w1, a6 n, a7 sums
    "    .pushsection .text.ncnn_mp_xtensa_fdot2x4, \"ax\"\n"
    "    .align 4\n"
    "    .global ncnn_mp_xtensa_fdot2x4\n"
    "    .type ncnn_mp_xtensa_fdot2x4, @function\n"
    "ncnn_mp_xtensa_fdot2x4:\n"
    "    entry a1, 32\n"
    XTENSA_FP_SUMS("lsi", "a7")
    "    loopgtz a6, 1f\n"
    XTENSA_FP_LOADS("a2", "a4", "a5")
    XTENSA_FP_MACS
    "    add   a2, a2, a3\n"
    "1:\n"
    XTENSA_FP_SUMS("ssi", "a7")
    "    retw\n"
    "    .size ncnn_mp_xtensa_fdot2x4, . - ncnn_mp_xtensa_fdot2x4\n"
    "    .popsection\n"
    // a2 x, a3 xs, a4 ofs, a5 maxk, a6 w0, a7 inch, sums on the stack; a8 w1, a9 sums, a10 the
    // offset table's walk, a11 the pixels, a12 an offset
    "    .pushsection .text.ncnn_mp_xtensa_fdot2x4_ofs, \"ax\"\n"
    "    .align 4\n"
    "    .global ncnn_mp_xtensa_fdot2x4_ofs\n"
    "    .type ncnn_mp_xtensa_fdot2x4_ofs, @function\n"
    "ncnn_mp_xtensa_fdot2x4_ofs:\n"
    "    entry a1, 32\n"
    "    l32i  a9, a1, 32\n"  // (the seventh argument: the caller's stack, above this frame)
    "    mull  a8, a7, a5\n"
    "    addx4 a8, a8, a6\n"  // w1 = w0 + inch * maxk
    XTENSA_FP_SUMS("lsi", "a9")
    "    blti  a7, 1, 3f\n"
    "2:\n"  // an input plane
    "    or    a10, a4, a4\n"
    "    loopgtz a5, 1f\n"
    "    l32i  a12, a10, 0\n"
    "    addi  a10, a10, 4\n"
    "    addx4 a11, a12, a2\n"
    XTENSA_FP_LOADS("a11", "a6", "a8")
    XTENSA_FP_MACS
    "1:\n"
    "    add   a2, a2, a3\n"
    "    addi  a7, a7, -1\n"
    "    bnez  a7, 2b\n"
    "3:\n"
    XTENSA_FP_SUMS("ssi", "a9")
    "    retw\n"
    "    .size ncnn_mp_xtensa_fdot2x4_ofs, . - ncnn_mp_xtensa_fdot2x4_ofs\n"
    "    .popsection\n");

#undef XTENSA_FP_MACS
#undef XTENSA_FP_SUMS
#undef XTENSA_FP_LOADS

#endif  // NCNN_MP_XTENSA_FP

#endif  // NCNN_MP_KERNEL_XTENSA_FP_H
