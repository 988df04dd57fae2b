// SPDX-License-Identifier: MIT
// int8 convolution sums in assembly for Thumb-2 cores without the DSP extension's form (the
// Cortex-M3), behind kernel_conv_int8.cpp's portable loop, which calls this where
// NCNN_MP_THUMB2 is 1 (kernels.h). The sums are the same exact int32 sums, so the outputs are
// the portable path's bit for bit (tests/mp/ncnn_mp_kernels.py, on the board).
//
// Why assembly: the portable 2x2 block spends 8 instructions (4 loads, 4 MLA) on 4 MACs. A block
// of 2 weight rows x 4 pixels keeps 8 sums in registers (14 of the 14 a function can use; GCC 12
// does not keep them there): per input position 2 + 4 sign-extending byte loads and 8 MLA (14
// instructions for 8 MACs), plus 6 of loop per 4 positions.
#ifndef NCNN_MP_KERNEL_THUMB2_H
#define NCNN_MP_KERNEL_THUMB2_H

#include <stdint.h>

#if NCNN_MP_THUMB2

// sums[r * 4 + j] = sum over k < n of cols[4k + j] * w_r[k] (r: 0 for w0, 1 for w1).
extern "C" void ncnn_mp_thumb2_dot2x4(const signed char *cols, const signed char *w0, const signed char *w1, int n,
                                      int32_t sums[8]);

// (Defined here, once: kernel_conv_int8.cpp is the one file that includes this header.)
// r0 cols, r1 w0, r2 w1, r3 n (then a pixel's value); sums r4-r7 (row 0), r8-r11 (row 1);
// r12 and lr the two weights. On the stack: the ends of row 0 ([sp]: all, [sp, #4]: the
// four-at-a-time part) and, past the nine saved registers, the sums' address.
#define THUMB2_PIXEL(k, j, s_0, s_1)          \
    "ldrsb r3, [r0, #4 * " #k " + " #j "]\n" \
    "mla   " #s_0 ", r3, r12, " #s_0 "\n"       \
    "mla   " #s_1 ", r3, lr, " #s_1 "\n"

#define THUMB2_K(k)                                                  \
    "ldrsb r12, [r1, #" #k "]\n ldrsb lr, [r2, #" #k "]\n"           \
    THUMB2_PIXEL(k, 0, r4, r8) THUMB2_PIXEL(k, 1, r5, r9)             \
    THUMB2_PIXEL(k, 2, r6, r10) THUMB2_PIXEL(k, 3, r7, r11)

__asm__(
    "    .syntax unified\n"
    "    .thumb\n"
    "    .pushsection .text.ncnn_mp_thumb2_dot2x4, \"ax\"\n"  // (its own section: dropped with its caller)
    "    .align 2\n"
    "    .global ncnn_mp_thumb2_dot2x4\n"
    "    .type ncnn_mp_thumb2_dot2x4, %function\n"
    "    .thumb_func\n"
    "ncnn_mp_thumb2_dot2x4:\n"
    "    push  {r4-r11, lr}\n"
    "    sub   sp, sp, #8\n"
    "    add   r12, r1, r3\n"
    "    str   r12, [sp]\n"
    "    bic   r3, r3, #3\n"
    "    add   r3, r1, r3\n"
    "    str   r3, [sp, #4]\n"
    "    mov   r4, #0\n mov r5, #0\n mov r6, #0\n mov r7, #0\n"
    "    mov   r8, #0\n mov r9, #0\n mov r10, #0\n mov r11, #0\n"
    "    cmp   r1, r3\n"
    "    beq   2f\n"
    "1:\n"  // four positions
    THUMB2_K(0) THUMB2_K(1) THUMB2_K(2) THUMB2_K(3)
    "    add   r0, r0, #16\n"
    "    add   r1, r1, #4\n"
    "    add   r2, r2, #4\n"
    "    ldr   r3, [sp, #4]\n"
    "    cmp   r1, r3\n"
    "    bne   1b\n"
    "2:\n"
    "    ldr   r3, [sp]\n"
    "    cmp   r1, r3\n"
    "    beq   4f\n"
    "3:\n"  // the last n % 4, one at a time
    THUMB2_K(0)
    "    add   r0, r0, #4\n"
    "    add   r1, r1, #1\n"
    "    add   r2, r2, #1\n"
    "    ldr   r3, [sp]\n"
    "    cmp   r1, r3\n"
    "    bne   3b\n"
    "4:\n"
    "    ldr   r3, [sp, #44]\n"
    "    stm   r3, {r4-r11}\n"
    "    add   sp, sp, #8\n"
    "    pop   {r4-r11, pc}\n"
    "    .size ncnn_mp_thumb2_dot2x4, . - ncnn_mp_thumb2_dot2x4\n"
    "    .popsection\n");

#undef THUMB2_PIXEL
#undef THUMB2_K

#endif  // NCNN_MP_THUMB2

#endif  // NCNN_MP_KERNEL_THUMB2_H
