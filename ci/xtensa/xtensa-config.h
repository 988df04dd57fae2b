/* SPDX-License-Identifier: MIT */
/* The lx106 core's configuration (the ESP8266's, as QEMU's `-cpu lx106` emulates it), for
 * libgcc's Xtensa assembly (lib1funcs.S, ieee754-sf.S, ieee754-df.S) built by
 * ci/xtensa_libgcc.py. GCC's own include/xtensa-config.h describes its default core (big-endian
 * in places, windowed, DIV32, NSA, MINMAX, LOOPS...): assembled with it, the routines would use
 * instructions lx106 lacks. Values from the lx106 core's ISA as Debian's xtensa-lx106-elf-gcc
 * was configured for it (call0 ABI, little-endian, MUL16/MUL32, no divide, no FPU). */
#ifndef XTENSA_CONFIG_H
#define XTENSA_CONFIG_H

#define XCHAL_HAVE_BE                   0
#define XCHAL_HAVE_DENSITY              1
#define XCHAL_HAVE_CONST16              0
#define XCHAL_HAVE_ABS                  1
#define XCHAL_HAVE_ADDX                 1
#define XCHAL_HAVE_L32R                 1
#define XSHAL_USE_ABSOLUTE_LITERALS     0
#define XSHAL_HAVE_TEXT_SECTION_LITERALS 1
#define XCHAL_HAVE_MAC16                0
#define XCHAL_HAVE_MUL16                1
#define XCHAL_HAVE_MUL32                1
#define XCHAL_HAVE_MUL32_HIGH           0
#define XCHAL_HAVE_DIV32                0
#define XCHAL_HAVE_NSA                  1
#define XCHAL_HAVE_MINMAX               0
#define XCHAL_HAVE_SEXT                 0
#define XCHAL_HAVE_LOOPS                0
#define XCHAL_HAVE_THREADPTR            0
#define XCHAL_HAVE_RELEASE_SYNC         0
#define XCHAL_HAVE_S32C1I               0
#define XCHAL_HAVE_BOOLEANS             0
#define XCHAL_HAVE_FP                   0
#define XCHAL_HAVE_FP_DIV               0
#define XCHAL_HAVE_FP_RECIP             0
#define XCHAL_HAVE_FP_SQRT              0
#define XCHAL_HAVE_FP_RSQRT             0
#define XCHAL_HAVE_DFP_accel            0
#define XCHAL_HAVE_WINDOWED             0
#define XCHAL_NUM_AREGS                 16
#define XCHAL_HAVE_WIDE_BRANCHES        0
#define XCHAL_HAVE_PREDICTED_BRANCHES   0
#define XCHAL_HAVE_DEBUG                1
#define XCHAL_MAX_INSTRUCTION_SIZE      3
#define XCHAL_INST_FETCH_WIDTH          4
#define XTHAL_ABI_WINDOWED              0
#define XTHAL_ABI_CALL0                 1
#define XSHAL_ABI                       XTHAL_ABI_CALL0

#endif /* XTENSA_CONFIG_H */
