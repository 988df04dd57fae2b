// SPDX-License-Identifier: MIT
// int8 convolution sums in assembly for Xtensa cores with MUL16 (lx106, the ESP8266's, call0 ABI;
// the ESP32's and S3's LX6/LX7, windowed ABI), behind kernel_conv_int8.cpp's portable loop, which
// calls this where NCNN_MP_XTENSA is 1 (kernels.h). The sums are the same exact int32 sums, so the
// outputs are the portable path's bit for bit (tests/mp/ncnn_mp_kernels.py, on the xtensa and
// esp32core boards).
//
// Why assembly: lx106 has no multiply-accumulate, no sign-extending byte load and 15 registers
// a leaf function can use; GCC 12 spilled the portable 2x2 block (8.5 instructions per MAC), and
// on the windowed core clang 22's portable 2x2 block ran 7.2 instructions a MAC in int8 chains.
// Here a block of two weight rows x four pixels keeps its eight sums in registers, and per
// input position k spends 2 byte loads and 2 shifts for the weights, then for each pixel one
// 16-bit load, two multiplies and two adds: 24 instructions for 8 MACs, plus the loop's 6 per 4 k.
// The body is the same on both ABIs; only the entry and the return differ (a windowed function's
// a12-a15 are its own, so only a0, the return address used as a scratch register, is saved).
//
// The operands, without a sign-extend instruction:
// - the pixels' values are gathered once as int16 (conv_int8's gather4; shared by every
//   output channel), so a signed 16-bit load gives them;
// - a weight byte b (w mod 256, unsigned load) shifted left by 8 is, read as a signed 16-bit
//   number, exactly 256 * w; MUL16S multiplies the low halves as signed: 256 * x * w.
// The sums are 256 times the true ones; |x * w| <= 128 * 128, so XTENSA_CHUNK = 508 positions
// add at most 508 * 2^22 < 2^31 without overflow: conv_int8 calls this a chunk at a time and
// each call stores (the first) or adds its sums / 256 (an exact arithmetic shift) to sums[].
#ifndef NCNN_MP_KERNEL_XTENSA_H
#define NCNN_MP_KERNEL_XTENSA_H

#include <stdint.h>

#if NCNN_MP_XTENSA

#define XTENSA_CHUNK 508

// sums[r * 4 + j] (+)= sum over k < n of cols[4k + j] * w_r[k] (r: 0 for w0, 1 for w1); n <= XTENSA_CHUNK.
// add 0: the sums are stored (a block's first chunk), else added to.
extern "C" void ncnn_mp_xtensa_dot2x4(const int16_t *cols, const signed char *w0, const signed char *w1, int n,
                                     int32_t sums[8], int add);

// The entry and the return: a0 and, on call0, a12-a15 (the callee-saved registers) at 0..16, then
// sums, the two end pointers and add at 20..32. A windowed frame is 64 bytes: its top 16 are where
// a window overflow (or an RTOS spilling the windows at a context switch) saves the registers of
// the function two calls up.
#if defined(__XTENSA_CALL0_ABI__)
#define XTENSA_ENTER                                                                          \
    "    addi  a1, a1, -48\n    s32i  a0, a1, 0\n    s32i  a12, a1, 4\n    s32i  a13, a1, 8\n" \
    "    s32i  a14, a1, 12\n    s32i  a15, a1, 16\n"
#define XTENSA_LEAVE                                                                          \
    "    l32i  a0, a1, 0\n    l32i  a12, a1, 4\n    l32i  a13, a1, 8\n    l32i  a14, a1, 12\n" \
    "    l32i  a15, a1, 16\n    addi  a1, a1, 48\n    ret\n"
#else
#define XTENSA_ENTER "    entry a1, 64\n    s32i  a0, a1, 0\n"
#define XTENSA_LEAVE "    l32i  a0, a1, 0\n    retw\n"
#endif

// (Defined here, once: kernel_conv_int8.cpp is the one file that includes this header.)
// a2 cols, a3 w0, a4 w1, a5 n, a6 sums, a7 add. Sums in a7-a14 (row 0: a7-a10, row 1: a11-a14);
// a15 and a0 the two weights, a5 a pixel's value, a6 a product.
#define XTENSA_K(k)                                                   \
    "l8ui   a15, a3, " #k "\n"                                       \
    "l8ui   a0, a4, " #k "\n"                                        \
    "slli   a15, a15, 8\n"                                           \
    "slli   a0, a0, 8\n"                                             \
    "l16si  a5, a2, 8 * " #k "\n"                                    \
    "mul16s a6, a5, a15\n add a7, a7, a6\n mul16s a5, a5, a0\n add a11, a11, a5\n" \
    "l16si  a5, a2, 8 * " #k " + 2\n"                                \
    "mul16s a6, a5, a15\n add a8, a8, a6\n mul16s a5, a5, a0\n add a12, a12, a5\n" \
    "l16si  a5, a2, 8 * " #k " + 4\n"                                \
    "mul16s a6, a5, a15\n add a9, a9, a6\n mul16s a5, a5, a0\n add a13, a13, a5\n" \
    "l16si  a5, a2, 8 * " #k " + 6\n"                                \
    "mul16s a6, a5, a15\n add a10, a10, a6\n mul16s a5, a5, a0\n add a14, a14, a5\n"

#define XTENSA_ADD_SUM(reg, offset) \
    "l32i a5, a6, " #offset "\n srai " #reg ", " #reg ", 8\n add a5, a5, " #reg "\n s32i a5, a6, " #offset "\n"
#define XTENSA_PUT_SUM(reg, offset) "srai " #reg ", " #reg ", 8\n s32i " #reg ", a6, " #offset "\n"

__asm__(
    "    .pushsection .text.ncnn_mp_xtensa_dot2x4, \"ax\"\n"  // (its own section: dropped with its caller)
    "    .align 4\n"
    "    .global ncnn_mp_xtensa_dot2x4\n"
    "    .type ncnn_mp_xtensa_dot2x4, @function\n"
    "ncnn_mp_xtensa_dot2x4:\n"
    XTENSA_ENTER
    "    s32i  a6, a1, 20\n"  // sums
    "    s32i  a7, a1, 32\n"  // add
    "    add   a15, a3, a5\n"
    "    s32i  a15, a1, 28\n"  // w0 + n: the end
    "    srli  a5, a5, 2\n"
    "    addx4 a15, a5, a3\n"
    "    s32i  a15, a1, 24\n"  // w0 + n / 4 * 4: the end of the four-at-a-time loop
    "    movi  a7, 0\n movi a8, 0\n movi a9, 0\n movi a10, 0\n"
    "    movi  a11, 0\n movi a12, 0\n movi a13, 0\n movi a14, 0\n"
    // (Branches across the four positions' 300 bytes go through J: a conditional branch reaches
    // 128 bytes, and LLVM's assembler, unlike GNU as, does not relax one that falls short.)
    "    bne   a3, a15, 1f\n"
    "    j     2f\n"
    "1:\n"  // four positions
    XTENSA_K(0) XTENSA_K(1) XTENSA_K(2) XTENSA_K(3)
    "    addi  a2, a2, 32\n"
    "    addi  a3, a3, 4\n"
    "    addi  a4, a4, 4\n"
    "    l32i  a6, a1, 24\n"
    "    beq   a3, a6, 2f\n"
    "    j     1b\n"
    "2:\n"
    "    l32i  a6, a1, 28\n"
    "    beq   a3, a6, 4f\n"
    "3:\n"  // the last n % 4, one at a time
    XTENSA_K(0)
    "    addi  a2, a2, 8\n"
    "    addi  a3, a3, 1\n"
    "    addi  a4, a4, 1\n"
    "    l32i  a6, a1, 28\n"
    "    bne   a3, a6, 3b\n"
    "4:\n"
    "    l32i  a6, a1, 20\n"
    "    l32i  a5, a1, 32\n"
    "    bnez  a5, 5f\n"
    XTENSA_PUT_SUM(a7, 0) XTENSA_PUT_SUM(a8, 4) XTENSA_PUT_SUM(a9, 8) XTENSA_PUT_SUM(a10, 12)
    XTENSA_PUT_SUM(a11, 16) XTENSA_PUT_SUM(a12, 20) XTENSA_PUT_SUM(a13, 24) XTENSA_PUT_SUM(a14, 28)
    "    j     6f\n"
    "5:\n"
    XTENSA_ADD_SUM(a7, 0) XTENSA_ADD_SUM(a8, 4) XTENSA_ADD_SUM(a9, 8) XTENSA_ADD_SUM(a10, 12)
    XTENSA_ADD_SUM(a11, 16) XTENSA_ADD_SUM(a12, 20) XTENSA_ADD_SUM(a13, 24) XTENSA_ADD_SUM(a14, 28)
    "6:\n"
    XTENSA_LEAVE
    "    .size ncnn_mp_xtensa_dot2x4, . - ncnn_mp_xtensa_dot2x4\n"
    "    .popsection\n");

#if NCNN_MP_MAC16
// sums[j] = sum over i < pairs of the int16 pairs' products cols[j * pairs * 2 + 2i (+1)] * w[2i (+1)],
// j < count: one pixel's column (4 * pairs bytes, word-aligned) at a time against the weight row.
// MAC16's MULA.DD.{LL,HH}.LDINC multiplies a pair's low (high) halves into the 40-bit accumulator
// while it loads the next word of the column or the row into another MAC16 register: 4 MACs in 4
// instructions, the loads one word ahead (the word past each column and the row is read, not used).
extern "C" void ncnn_mp_xtensa_mac16_dots(const int16_t *cols, const int16_t *w, int pairs, int count,
                                          int32_t *sums);

// a2 the columns, a3 the row, a4 pairs, a5 count, a6 sums; a7 a column's bytes, a8 zero, a9 the
// loop's count (pairs / 2), a10 pairs odd, a11 / a12 the row's and the column's walk, a13 a sum.
__asm__(
    "    .pushsection .text.ncnn_mp_xtensa_mac16_dots, \"ax\"\n"
    "    .align 4\n"
    "    .global ncnn_mp_xtensa_mac16_dots\n"
    "    .type ncnn_mp_xtensa_mac16_dots, @function\n"
    "ncnn_mp_xtensa_mac16_dots:\n"
    "    entry a1, 32\n"
    "    slli  a7, a4, 2\n"
    "    movi  a8, 0\n"
    "    srli  a9, a4, 1\n"
    "    extui a10, a4, 0, 1\n"
    "    addi  a2, a2, -4\n"  // (LDINC adds 4 before it loads)
    "    addi  a3, a3, -4\n"
    "1:\n"  // a pixel
    "    or    a11, a3, a3\n"
    "    or    a12, a2, a2\n"
    "    wsr   a8, acclo\n"
    "    wsr   a8, acchi\n"
    "    ldinc m0, a12\n"
    "    ldinc m2, a11\n"
    "    loopgtz a9, 2f\n"
    "    mula.dd.ll.ldinc m1, a12, m0, m2\n"
    "    mula.dd.hh.ldinc m3, a11, m0, m2\n"
    "    mula.dd.ll.ldinc m0, a12, m1, m3\n"
    "    mula.dd.hh.ldinc m2, a11, m1, m3\n"
    "2:\n"
    "    beqz  a10, 3f\n"  // (an odd number of pairs: the last, loaded into m0 and m2)
    "    mula.dd.ll m0, m2\n"
    "    mula.dd.hh m0, m2\n"
    "3:\n"
    "    rsr   a13, acclo\n"
    "    s32i  a13, a6, 0\n"
    "    addi  a6, a6, 4\n"
    "    add   a2, a2, a7\n"
    "    addi  a5, a5, -1\n"
    "    bnez  a5, 1b\n"
    "    retw\n"
    "    .size ncnn_mp_xtensa_mac16_dots, . - ncnn_mp_xtensa_mac16_dots\n"
    "    .popsection\n");

// row[k] = w[k] for k < 4 * words (w word-aligned): a weight row widened to int16 for the dots,
// a word of four weights a LOOP pass: 12 instructions (clang 22's C of it: 26).
extern "C" void ncnn_mp_xtensa_widen4(const signed char *w, int words, int16_t *row);

// a2 w, a3 words, a4 row; a5 a word, a6 a weight.
__asm__(
    "    .pushsection .text.ncnn_mp_xtensa_widen4, \"ax\"\n"
    "    .align 4\n"
    "    .global ncnn_mp_xtensa_widen4\n"
    "    .type ncnn_mp_xtensa_widen4, @function\n"
    "ncnn_mp_xtensa_widen4:\n"
    "    entry a1, 32\n"
    "    loopgtz a3, 1f\n"
    "    l32i  a5, a2, 0\n"
    "    sext  a6, a5, 7\n"
    "    s16i  a6, a4, 0\n"
    "    srai  a6, a5, 8\n"
    "    sext  a6, a6, 7\n"
    "    s16i  a6, a4, 2\n"
    "    srai  a6, a5, 16\n"
    "    sext  a6, a6, 7\n"
    "    s16i  a6, a4, 4\n"
    "    srai  a6, a5, 24\n"
    "    s16i  a6, a4, 6\n"
    "    addi  a2, a2, 4\n"
    "    addi  a4, a4, 8\n"
    "1:\n"
    "    retw\n"
    "    .size ncnn_mp_xtensa_widen4, . - ncnn_mp_xtensa_widen4\n"
    "    .popsection\n");
#endif  // NCNN_MP_MAC16

#undef XTENSA_K
#undef XTENSA_ADD_SUM
#undef XTENSA_PUT_SUM
#undef XTENSA_ENTER
#undef XTENSA_LEAVE

#endif  // NCNN_MP_XTENSA

#endif  // NCNN_MP_KERNEL_XTENSA_H
