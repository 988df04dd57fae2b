// SPDX-License-Identifier: MIT
// Module `compiler_checks` of the esp32core board: C code that goes wrong on this core when one of
// the build's workarounds for clang 22 is missing, for tests/test_esp32core.py to call and compare
// with what CPython computes. Each function names what it guards:
// - varargs (ci/esp32core/include/stdarg.h): picolibc's fprintf (into memory: MicroPython's own
//   shared/libc/printf.c has the firmware's snprintf, single-precision and without %lld) with
//   arguments in registers, one 8-byte argument aligned past a register pair, and the rest on the
//   stack; a variadic function of ours with six named arguments (every argument register named)
//   and one with ten words;
// - the float-select crash (the driver's -combiner-disabled retry): a select between two float
//   constants and copysignf, which the backend cannot compile otherwise (this file is one it
//   retries: the build fails without the retry);
// - the 64-bit division and multiply of ci/esp32core/libgcc64.c and libgcc's soft double;
// - the Alloca exception handler (ci/esp32core/port/startup.S): alloca after a call deep enough
//   to spill the caller's window, where MOVSP raises it.

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <math.h>

#include "py/runtime.h"
#include "py/objint.h"

// ---- varargs ----

static long long get_ll(mp_obj_t o) {
    if (mp_obj_is_small_int(o)) {
        return MP_OBJ_SMALL_INT_VALUE(o);
    }
    long long v;  // (two's complement, little-endian: as this core stores it)
    mp_obj_int_to_bytes_impl(o, false, sizeof v, (byte *)&v);
    return v;
}

// picolibc's fprintf into a buffer: a stream whose put function fills `printed`.
static char printed[160];
static size_t printed_len;

static int put_printed(char c, FILE *f) {
    (void)f;
    if (printed_len < sizeof printed) {
        printed[printed_len++] = c;
    }
    return (unsigned char)c;
}

static FILE printed_stream = FDEV_SETUP_STREAM(put_printed, NULL, NULL, _FDEV_SETUP_WRITE);

static mp_obj_t printed_str(void) {
    return mp_obj_new_str(printed, printed_len);
}

// A double's 64 bits, for CPython to compare with its own double: Python's floats here are single
// precision.
static mp_obj_t double_bits(double d) {
    unsigned long long bits;
    memcpy(&bits, &d, sizeof bits);
    return mp_obj_new_int_from_ull(bits);
}

static mp_obj_t printf_mixed(size_t n_args, const mp_obj_t *args) {
    (void)n_args;
    printed_len = 0;
    fprintf(&printed_stream, "%d|%.3f|%lld|%s|%c|%g", (int)mp_obj_get_int(args[0]), (double)mp_obj_get_float(args[1]),
        get_ll(args[2]), mp_obj_str_get_str(args[3]), (int)mp_obj_get_int(args[4]), (double)mp_obj_get_float(args[5]));
    return printed_str();
}
static MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(printf_mixed_obj, 6, 6, printf_mixed);

static __attribute__((noinline)) long long weighted(int n, ...) {
    va_list ap;
    va_start(ap, n);
    long long sum = 0;
    for (int i = 0; i < n; i++) {
        sum += (long long)va_arg(ap, int) * (i + 1);
    }
    va_end(ap);
    return sum;
}

// Ten ints: five in registers after the count, five on the stack.
static mp_obj_t va_ten(mp_obj_t seq) {
    mp_obj_t *items;
    size_t len;
    mp_obj_get_array(seq, &len, &items);
    if (len != 10) {
        mp_raise_ValueError(MP_ERROR_TEXT("va_ten takes 10 ints"));
    }
    int v[10];
    for (int i = 0; i < 10; i++) {
        v[i] = (int)mp_obj_get_int(items[i]);
    }
    return mp_obj_new_int_from_ll(weighted(10, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9]));
}
static MP_DEFINE_CONST_FUN_OBJ_1(va_ten_obj, va_ten);

static __attribute__((noinline)) double six_named(int a, int b, int c, int d, int e, int f, ...) {
    va_list ap;
    va_start(ap, f);
    double s = a + 10 * b + 100 * c + 1000 * d + 10000 * e + 100000 * f;
    int i = va_arg(ap, int);
    double x = va_arg(ap, double);
    long long l = va_arg(ap, long long);
    va_end(ap);
    return s + i * 1e6 + x * 1e7 + (double)l * 1e8;
}

// Every argument register named: the variadic ones (an int, a double, a long long) on the stack.
static mp_obj_t va_six_named(mp_obj_t i, mp_obj_t x, mp_obj_t l) {
    return double_bits(six_named(1, 2, 3, 4, 5, 6, (int)mp_obj_get_int(i), (double)mp_obj_get_float(x), get_ll(l)));
}
static MP_DEFINE_CONST_FUN_OBJ_3(va_six_named_obj, va_six_named);

// ---- the float-select crash ----

static __attribute__((noinline)) float half_signed(int c) {
    return c ? 0.5f : -0.5f;
}

static mp_obj_t float_select(mp_obj_t c, mp_obj_t x, mp_obj_t y) {
    mp_obj_t items[2] = {
        mp_obj_new_float((mp_float_t)half_signed(mp_obj_is_true(c))),
        mp_obj_new_float((mp_float_t)copysignf((float)mp_obj_get_float(x), (float)mp_obj_get_float(y))),
    };
    return mp_obj_new_tuple(2, items);
}
static MP_DEFINE_CONST_FUN_OBJ_3(float_select_obj, float_select);

// ---- 64-bit integers and doubles ----

// (a // b, a % b) truncated toward zero as C divides, a * b (low 64 bits), and a / b in double.
static mp_obj_t int64_ops(mp_obj_t a_in, mp_obj_t b_in) {
    volatile long long a = get_ll(a_in), b = get_ll(b_in);
    volatile unsigned long long ua = (unsigned long long)a, ub = (unsigned long long)b;
    mp_obj_t items[5] = {
        mp_obj_new_int_from_ll(a / b), mp_obj_new_int_from_ll(a % b), mp_obj_new_int_from_ull(ua / ub),
        mp_obj_new_int_from_ll(a * b), double_bits((double)a / (double)b),
    };
    return mp_obj_new_tuple(5, items);
}
static MP_DEFINE_CONST_FUN_OBJ_2(int64_ops_obj, int64_ops);

// ---- the Alloca exception ----

static volatile unsigned sink;

static __attribute__((noinline)) unsigned deep(unsigned n) {
    sink += n;
    return n ? deep(n - 1) + (n & 3) : 0;
}

static __attribute__((noinline)) void fill(unsigned char *p, unsigned n) {
    for (unsigned i = 0; i < 16; i++) {
        p[i] = (unsigned char)(n * 7 + i);
    }
}

// deep() spills this frame's caller's window; the alloca after it then runs MOVSP with that window
// in memory: the Alloca exception, whose handler reloads it.
static __attribute__((noinline)) unsigned alloca_late(unsigned n) {
    unsigned r = deep(24 + (n & 3));
    unsigned char *p = __builtin_alloca(16 + (n & 7));
    fill(p, n);
    unsigned s = 0;
    for (unsigned i = 0; i < 16; i++) {
        s += p[i];
    }
    return r + s + (n ? alloca_late(n - 1) : 0);
}

static mp_obj_t alloca_after_spill(mp_obj_t n) {
    return mp_obj_new_int_from_uint(alloca_late((unsigned)mp_obj_get_int(n)));
}
static MP_DEFINE_CONST_FUN_OBJ_1(alloca_after_spill_obj, alloca_after_spill);

static const mp_rom_map_elem_t compiler_checks_globals_table[] = {
    { MP_ROM_QSTR(MP_QSTR___name__), MP_ROM_QSTR(MP_QSTR_compiler_checks) },
    { MP_ROM_QSTR(MP_QSTR_printf_mixed), MP_ROM_PTR(&printf_mixed_obj) },
    { MP_ROM_QSTR(MP_QSTR_va_ten), MP_ROM_PTR(&va_ten_obj) },
    { MP_ROM_QSTR(MP_QSTR_va_six_named), MP_ROM_PTR(&va_six_named_obj) },
    { MP_ROM_QSTR(MP_QSTR_float_select), MP_ROM_PTR(&float_select_obj) },
    { MP_ROM_QSTR(MP_QSTR_int64_ops), MP_ROM_PTR(&int64_ops_obj) },
    { MP_ROM_QSTR(MP_QSTR_alloca_after_spill), MP_ROM_PTR(&alloca_after_spill_obj) },
};
static MP_DEFINE_CONST_DICT(compiler_checks_globals, compiler_checks_globals_table);

const mp_obj_module_t compiler_checks_module = {
    .base = { &mp_type_module },
    .globals = (mp_obj_dict_t *)&compiler_checks_globals,
};
MP_REGISTER_MODULE(MP_QSTR_compiler_checks, compiler_checks_module);
