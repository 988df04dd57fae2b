/* SPDX-License-Identifier: MIT */
/* stdarg.h of the esp32core board, found before clang's own (ci/esp32core/bin/xtensa-esp32-clang).
 *
 * Clang 22 lowers Xtensa varargs wrong (its backend's XtensaISelLowering). Its va_list is the
 * Xtensa ABI's { __va_stk, __va_reg, __va_ndx }, as GCC's, where va_arg reads the word at
 * __va_reg + __va_ndx while __va_ndx < 24 (the six argument registers a2..a7, saved by the
 * function) and at __va_stk + __va_ndx after (the caller's stack arguments, __va_stk pointing 32
 * bytes before the first). Clang's va_start points __va_reg at the first variadic register's slot
 * and also counts the named words in __va_ndx (every va_arg then reads one word too far a named
 * argument), and its va_arg adds the 32-byte gap again for every stack argument. So here:
 * va_start is clang's, then __va_reg moved back by __va_ndx; va_arg is the ABI's rule in C (8-byte
 * alignment; an argument that would straddle a7 goes whole to the stack). Guarded on the board by
 * tests/test_esp32core.py::test_varargs_through_registers_and_stack, which fails with clang's own
 * va_start and va_arg. Variadic functions must not use alloca or VLAs (clang then keeps a frame
 * pointer, and saves a7 after its prologue overwrote it). */
#ifndef NCNN_MP_ESP32CORE_STDARG_H
#define NCNN_MP_ESP32CORE_STDARG_H

typedef __builtin_va_list va_list;
typedef __builtin_va_list __gnuc_va_list;

struct __ncnn_mp_xtensa_va {
    int *__va_stk;
    int *__va_reg;
    int __va_ndx;
};

static __inline__ __attribute__((__always_inline__)) void __ncnn_mp_va_fix(void *ap) {
    struct __ncnn_mp_xtensa_va *v = (struct __ncnn_mp_xtensa_va *)ap;
    v->__va_reg = (int *)((char *)v->__va_reg - v->__va_ndx);
}

static __inline__ __attribute__((__always_inline__)) void *__ncnn_mp_va_next(void *ap, unsigned size, unsigned align) {
    struct __ncnn_mp_xtensa_va *v = (struct __ncnn_mp_xtensa_va *)ap;
    int ndx = v->__va_ndx;
    if (align > 4) {
        ndx = (ndx + 7) & ~7;
    }
    int at = ndx;
    ndx += (int)((size + 3) & ~3u);
    char *base;
    if (ndx <= 24) {
        base = (char *)v->__va_reg;
    } else {
        if (at <= 24) {  /* the first stack argument (one that would straddle a7 goes whole to the stack) */
            at = 32;
            ndx = 32 + (int)((size + 3) & ~3u);
        }
        base = (char *)v->__va_stk;
    }
    v->__va_ndx = ndx;
    return base + at;
}

#define va_start(ap, last) (__builtin_va_start(ap, last), __ncnn_mp_va_fix(&(ap)))
#define va_end(ap) __builtin_va_end(ap)
#define va_copy(dest, src) __builtin_va_copy(dest, src)
#define __va_copy(dest, src) __builtin_va_copy(dest, src)
#define va_arg(ap, type) (*(type *)__ncnn_mp_va_next(&(ap), sizeof(type), __alignof__(type)))

#endif
