// SPDX-License-Identifier: MIT
// int8 convolution sums in assembly for 32-bit RISC-V with the M extension (rv32imac, the
// ESP32-C3's rv32imc), behind kernel_conv_int8.cpp's portable loop, which calls this where
// NCNN_MP_RV32 is 1 (kernels.h). The sums are the same exact int32 sums, so the outputs are the
// portable path's bit for bit (tests/mp/ncnn_mp_kernels.py, on the board).
//
// Why assembly: RISC-V has no multiply-accumulate, so each MAC is a multiply and an add, and
// only a block that reuses each load many times gets near those two. A block of 4 weight rows x
// 4 pixels keeps 16 sums in registers (28 of the 31 taken: GCC 12 spilled the same block in C):
// per input position 4 + 4 sign-extending byte loads, 16 multiplies, 16 adds (40 instructions
// for 16 MACs), plus 6 of loop per 4 positions.
#ifndef NCNN_MP_KERNEL_RV32_H
#define NCNN_MP_KERNEL_RV32_H

#include <stdint.h>

#if NCNN_MP_RV32

// sums[r * 4 + j] = sum over k < n of cols[4k + j] * w_r[k], for the four rows w0..w3.
extern "C" void ncnn_mp_rv32_dot4x4(const signed char *cols, const signed char *w0, const signed char *w1,
                                    const signed char *w2, const signed char *w3, int n, int32_t sums[16]);

// (Defined here, once: kernel_conv_int8.cpp is the one file that includes this header.)
// a0 cols, a1-a4 the rows, a5 n (then the end of row 0's four-at-a-time part), a6 sums (kept on
// the stack: a6 holds a pixel's value). Sums: row 0 s0-s3, row 1 s4-s7, row 2 s8-s11, row 3
// t3-t6; weights t0, t1, t2, a7; a product in ra.
#define RV32_PIXEL(k, j, s_0, s_1, s_2, s_3)                                        \
    "lb   a6, 4 * " #k " + " #j "(a0)\n"                                          \
    "mul  ra, a6, t0\n add " #s_0 ", " #s_0 ", ra\n"                               \
    "mul  ra, a6, t1\n add " #s_1 ", " #s_1 ", ra\n"                               \
    "mul  ra, a6, t2\n add " #s_2 ", " #s_2 ", ra\n"                               \
    "mul  ra, a6, a7\n add " #s_3 ", " #s_3 ", ra\n"

#define RV32_K(k)                                                                     \
    "lb   t0, " #k "(a1)\n lb t1, " #k "(a2)\n lb t2, " #k "(a3)\n lb a7, " #k "(a4)\n" \
    RV32_PIXEL(k, 0, s0, s4, s8, t3) RV32_PIXEL(k, 1, s1, s5, s9, t4)                   \
    RV32_PIXEL(k, 2, s2, s6, s10, t5) RV32_PIXEL(k, 3, s3, s7, s11, t6)

__asm__(
    "    .pushsection .text.ncnn_mp_rv32_dot4x4, \"ax\"\n"  // (its own section: dropped with its caller)
    "    .align 2\n"
    "    .globl ncnn_mp_rv32_dot4x4\n"
    "    .type ncnn_mp_rv32_dot4x4, @function\n"
    "ncnn_mp_rv32_dot4x4:\n"
    "    addi  sp, sp, -64\n"
    "    sw    ra, 0(sp)\n sw s0, 4(sp)\n sw s1, 8(sp)\n sw s2, 12(sp)\n sw s3, 16(sp)\n sw s4, 20(sp)\n"
    "    sw    s5, 24(sp)\n sw s6, 28(sp)\n sw s7, 32(sp)\n sw s8, 36(sp)\n sw s9, 40(sp)\n sw s10, 44(sp)\n"
    "    sw    s11, 48(sp)\n sw a6, 52(sp)\n"
    "    add   t0, a1, a5\n"
    "    sw    t0, 56(sp)\n"  // the end of row 0
    "    andi  a5, a5, -4\n"
    "    add   a5, a1, a5\n"  // the end of its four-at-a-time part
    "    li s0, 0\n li s1, 0\n li s2, 0\n li s3, 0\n li s4, 0\n li s5, 0\n li s6, 0\n li s7, 0\n"
    "    li s8, 0\n li s9, 0\n li s10, 0\n li s11, 0\n li t3, 0\n li t4, 0\n li t5, 0\n li t6, 0\n"
    "    beq   a1, a5, 2f\n"
    "1:\n"  // four positions
    RV32_K(0) RV32_K(1) RV32_K(2) RV32_K(3)
    "    addi  a0, a0, 16\n"
    "    addi  a1, a1, 4\n addi a2, a2, 4\n addi a3, a3, 4\n addi a4, a4, 4\n"
    "    bne   a1, a5, 1b\n"
    "2:\n"
    "    lw    a5, 56(sp)\n"
    "    beq   a1, a5, 4f\n"
    "3:\n"  // the last n % 4, one at a time
    RV32_K(0)
    "    addi  a0, a0, 4\n"
    "    addi  a1, a1, 1\n addi a2, a2, 1\n addi a3, a3, 1\n addi a4, a4, 1\n"
    "    bne   a1, a5, 3b\n"
    "4:\n"
    "    lw    a6, 52(sp)\n"
    "    sw s0, 0(a6)\n sw s1, 4(a6)\n sw s2, 8(a6)\n sw s3, 12(a6)\n sw s4, 16(a6)\n sw s5, 20(a6)\n"
    "    sw s6, 24(a6)\n sw s7, 28(a6)\n sw s8, 32(a6)\n sw s9, 36(a6)\n sw s10, 40(a6)\n sw s11, 44(a6)\n"
    "    sw t3, 48(a6)\n sw t4, 52(a6)\n sw t5, 56(a6)\n sw t6, 60(a6)\n"
    "    lw    ra, 0(sp)\n lw s0, 4(sp)\n lw s1, 8(sp)\n lw s2, 12(sp)\n lw s3, 16(sp)\n lw s4, 20(sp)\n"
    "    lw    s5, 24(sp)\n lw s6, 28(sp)\n lw s7, 32(sp)\n lw s8, 36(sp)\n lw s9, 40(sp)\n lw s10, 44(sp)\n"
    "    lw    s11, 48(sp)\n"
    "    addi  sp, sp, 64\n"
    "    ret\n"
    "    .size ncnn_mp_rv32_dot4x4, . - ncnn_mp_rv32_dot4x4\n"
    "    .popsection\n");

#undef RV32_PIXEL
#undef RV32_K

#endif  // NCNN_MP_RV32

#endif  // NCNN_MP_KERNEL_RV32_H
