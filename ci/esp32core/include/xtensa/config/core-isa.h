/* SPDX-License-Identifier: MIT */
/* The ESP32's core as the esp32core board runs it (QEMU's de233_fpu), in the Xtensa configuration
 * header's terms (XCHAL_*), for the assembly that asks: libgcc's (lib1funcs.S, ieee754-sf.S,
 * ieee754-df.S, built by ci/xtensa_libgcc.py as its xtensa-config.h) and picolibc's (setjmp.S,
 * strcmp.S: picolibc uses <xtensa/config/core-isa.h> when it finds one, and found without it an
 * lx106 description: its setjmp was then call0 code, whose `ret` jumped to a windowed return
 * address, 0x80xxxxxx, EXCCAUSE 14). On the include path of every compile (the board's compiler
 * driver puts include/ there). Windowed ABI, MAC16,
 * MUL16/MUL32, DIV32, NSA, MINMAX, SEXT, loops, the single-precision FPU with its divide and square
 * root steps (div0.s, sqrt0.s, maddn.s...). What the ESP32 has and the board's core lacks is left
 * out: MUL32_HIGH (muluh/mulsh; the compiler is told the same), the FPU's recip0.s and rsqrt0.s
 * (QEMU 7.2 has neither) and the double-precision acceleration (de233_fpu has none): the routines
 * then use the instructions both have. */
#ifndef NCNN_MP_ESP32CORE_CORE_ISA_H
#define NCNN_MP_ESP32CORE_CORE_ISA_H

#define XCHAL_HAVE_BE                   0
#define XCHAL_HAVE_DENSITY              1
#define XCHAL_HAVE_CONST16              0
#define XCHAL_HAVE_ABS                  1
#define XCHAL_HAVE_ADDX                 1
#define XCHAL_HAVE_L32R                 1
#define XSHAL_USE_ABSOLUTE_LITERALS     0
#define XSHAL_HAVE_TEXT_SECTION_LITERALS 1
#define XCHAL_HAVE_MAC16                1
#define XCHAL_HAVE_MUL16                1
#define XCHAL_HAVE_MUL32                1
#define XCHAL_HAVE_MUL32_HIGH           0
#define XCHAL_HAVE_DIV32                1
#define XCHAL_HAVE_NSA                  1
#define XCHAL_HAVE_MINMAX               1
#define XCHAL_HAVE_SEXT                 1
#define XCHAL_HAVE_LOOPS                1
#define XCHAL_HAVE_THREADPTR            1
#define XCHAL_HAVE_RELEASE_SYNC         1
#define XCHAL_HAVE_S32C1I               1
#define XCHAL_HAVE_BOOLEANS             1
#define XCHAL_HAVE_FP                   1
#define XCHAL_HAVE_FP_DIV               1
#define XCHAL_HAVE_FP_RECIP             0
#define XCHAL_HAVE_FP_SQRT              1
#define XCHAL_HAVE_FP_RSQRT             0
#define XCHAL_HAVE_DFP_accel            0
#define XCHAL_HAVE_WINDOWED             1
#define XCHAL_NUM_AREGS                 32
#define XCHAL_HAVE_WIDE_BRANCHES        0
#define XCHAL_HAVE_PREDICTED_BRANCHES   0
#define XCHAL_HAVE_DEBUG                1
#define XCHAL_MAX_INSTRUCTION_SIZE      3
#define XCHAL_INST_FETCH_WIDTH          4
#define XTHAL_ABI_WINDOWED              0
#define XTHAL_ABI_CALL0                 1
#define XSHAL_ABI                       XTHAL_ABI_WINDOWED
#define XCHAL_NUM_AREGS_LOG2            5
#define XCHAL_HAVE_XEA2                 1
#define XCHAL_HAVE_EXCEPTIONS           1
#define XCHAL_MAYHAVE_ERRATUM_XEA1KWIN  0
#define XCHAL_UNALIGNED_LOAD_EXCEPTION  1
#define XCHAL_UNALIGNED_STORE_EXCEPTION 1
#define XCHAL_UNALIGNED_LOAD_HW         0
#define XCHAL_UNALIGNED_STORE_HW        0
#define XCHAL_HAVE_ABSOLUTE_LITERALS    0
#define XCHAL_HAVE_CLAMPS               1
#define XCHAL_HAVE_CALL4AND12           1

#endif /* NCNN_MP_ESP32CORE_CORE_ISA_H */
