// SPDX-License-Identifier: MIT
// The callable type of every ncnn_mp method and function, and the argument parser of
// constructors and keyword methods: one place that tells a wrong call in the words
// "Class.method: what was wrong", whatever the call.
#include "ncnn_mp.h"

NORETURN void ncnn_mp_raise_arg_count(const char *where, size_t n_min, size_t n_max, size_t n_given, bool positional) {
    const char *kind = positional ? "positional " : "";
    if (n_min == n_max && n_min == 0) {
        mp_raise_msg_varg(&mp_type_TypeError, NCNN_MP_FORMAT("%s: takes no %sarguments, got %u"),
            where, kind, (unsigned)n_given);
    }
    size_t n = n_min == n_max ? n_min : n_given > n_max ? n_max : n_min;
    const char *bound = n_min == n_max ? "" : n_given > n_max ? "at most " : "at least ";
    (void)kind, (void)n, (void)bound;  // (no error reporting: unused)
    mp_raise_msg_varg(&mp_type_TypeError, NCNN_MP_FORMAT("%s: takes %s%u %sargument%s, got %u"),
        where, bound, (unsigned)n, kind, n == 1 ? "" : "s", (unsigned)n_given);
}

// Calls m's C function; the keyword pairs (key, value) are at kw_pairs.
static inline mp_obj_t ncnn_mp_method_run(const ncnn_mp_method_t *m, size_t n_args, const mp_obj_t *args,
    size_t n_kw, const mp_obj_t *kw_pairs) {
    switch (m->kind) {
        case NCNN_MP_CALL_0:
            return m->fun._0();
        case NCNN_MP_CALL_1:
            return m->fun._1(args[0]);
        case NCNN_MP_CALL_2:
            return m->fun._2(args[0], args[1]);
        case NCNN_MP_CALL_3:
            return m->fun._3(args[0], args[1], args[2]);
        case NCNN_MP_CALL_VAR:
            return m->fun.var(n_args, args);
        default: {
            mp_map_t kw;
            mp_map_init_fixed_table(&kw, n_kw, kw_pairs);
            return m->fun.kw(n_args, args, &kw);
        }
    }
}

// Every call that is not plainly right: raises naming m, or runs m with the native object
// of a Python subclass's instance as self.
static MP_NOINLINE mp_obj_t ncnn_mp_method_call_checked(const ncnn_mp_method_t *m, size_t n_args, size_t n_kw,
    const mp_obj_t *args) {
    if (n_kw && m->kind != NCNN_MP_CALL_KW) {
        mp_raise_msg_varg(&mp_type_TypeError, NCNN_MP_FORMAT("%s: takes no keyword arguments"), m->name);
    }
    mp_obj_t self_native = MP_OBJ_NULL;
    if (m->self == NCNN_MP_SELF_INSTANCE && (n_args == 0 || !mp_obj_is_exact_type(args[0], m->self_type))) {
        // A bound method's self is always the native object; through the class
        // (Class.method(obj, ...)) it may be anything: a Python subclass's instance
        // gives its native object, as a bound method would, anything else a TypeError.
        if (n_args == 0) {
            mp_raise_msg_varg(&mp_type_TypeError, NCNN_MP_FORMAT("%s: missing self (a %q)"), m->name,
                (qstr)m->self_type->name);
        }
        self_native = MP_OBJ_FROM_PTR(ncnn_mp_cast(args[0], m->self_type, m->name));
    }
    if (n_args < m->n_min || n_args > m->n_max) {
        size_t skip = m->self != NCNN_MP_SELF_NONE;  // messages count what the caller wrote
        ncnn_mp_raise_arg_count(m->name, m->n_min - skip, m->n_max - skip, n_args - skip, m->kind == NCNN_MP_CALL_KW);
    }
    if (self_native == MP_OBJ_NULL) {  // (keywords given to a method that takes them)
        return ncnn_mp_method_run(m, n_args, args, n_kw, args + n_args);
    }
    mp_obj_t native[n_args];  // (n_args <= n_max: a handful)
    native[0] = self_native;
    for (size_t i = 1; i < n_args; i++) {
        native[i] = args[i];
    }
    return ncnn_mp_method_run(m, n_args, native, n_kw, args + n_args);
}

static mp_obj_t ncnn_mp_method_call(mp_obj_t fun, size_t n_args, size_t n_kw, const mp_obj_t *args) {
    const ncnn_mp_method_t *m = MP_OBJ_TO_PTR(fun);
    // The common case in as few instructions as can be: the right count, no keywords, a
    // native self (what a bound method passes). (A method's n_min is at least 1: args[0] is there.)
    if (n_kw == 0 && n_args >= m->n_min && n_args <= m->n_max
        && (m->self != NCNN_MP_SELF_INSTANCE || mp_obj_is_exact_type(args[0], m->self_type))) {
        return ncnn_mp_method_run(m, n_args, args, 0, NULL);
    }
    return ncnn_mp_method_call_checked(m, n_args, n_kw, args);
}

// Named "function" as MicroPython's own function types are (mp_obj_is_fun, repr). Not
// MP_TYPE_FLAG_BUILTIN_FUN: that would make a lookup through the class wrap it in
// MicroPython's self checker, whose message names no method; the call checks self itself.
MP_DEFINE_CONST_OBJ_TYPE(
    ncnn_mp_type_method, MP_QSTR_function, MP_TYPE_FLAG_BINDS_SELF,
    call, ncnn_mp_method_call
    );

mp_obj_t ncnn_mp_return_self(mp_obj_t self) {
    return self;
}

// __exit__(exc_type, exc, tb): `with` blocks release at their end.
mp_obj_t ncnn_mp_exit_closes(size_t n_args, const mp_obj_t *args) {
    (void)n_args;
    mp_obj_t close[2];
    mp_load_method(args[0], MP_QSTR_close, close);
    return mp_call_method_n_kw(0, 0, close);
}

// The qstr of a keyword given as a str (a ** dict's keys need not be interned), or MP_QSTRnull.
static qstr ncnn_mp_keyword(mp_obj_t key) {
    if (mp_obj_is_qstr(key)) {
        return MP_OBJ_QSTR_VALUE(key);
    }
    size_t len;
    const char *s = mp_obj_str_get_data(key, &len);
    return qstr_find_strn(s, len);
}

void ncnn_mp_parse_args(const char *where, size_t n_pos, const mp_obj_t *pos, mp_map_t *kws,
    size_t n_allowed, const mp_arg_t *allowed, mp_arg_val_t *out_vals) {
    size_t n_positional = 0, n_required = 0;
    while (n_positional < n_allowed && !(allowed[n_positional].flags & MP_ARG_KW_ONLY)) {
        n_required += (allowed[n_positional].flags & MP_ARG_REQUIRED) != 0;
        n_positional++;
    }
    if (n_pos > n_positional) {  // (too few: named below, as they may come by keyword)
        ncnn_mp_raise_arg_count(where, n_required, n_positional, n_pos, true);
    }
    for (size_t k = 0; k < kws->alloc; k++) {
        if (!mp_map_slot_is_filled(kws, k)) {
            continue;
        }
        qstr q = ncnn_mp_keyword(kws->table[k].key);
        size_t i = 0;
        while (i < n_allowed && allowed[i].qst != q) {
            i++;
        }
        if (i == n_allowed) {
            mp_raise_msg_varg(&mp_type_TypeError, NCNN_MP_FORMAT("%s: unexpected keyword argument '%s'"),
                where, mp_obj_str_get_str(kws->table[k].key));
        }
        if (i < n_pos) {
            mp_raise_msg_varg(&mp_type_TypeError, NCNN_MP_FORMAT("%s: %q given twice"), where, q);
        }
    }
    for (size_t i = n_pos; i < n_allowed; i++) {
        if ((allowed[i].flags & MP_ARG_REQUIRED)
            && mp_map_lookup(kws, MP_OBJ_NEW_QSTR(allowed[i].qst), MP_MAP_LOOKUP) == NULL) {
            mp_raise_msg_varg(&mp_type_TypeError, NCNN_MP_FORMAT("%s: missing argument '%q'"), where, allowed[i].qst);
        }
    }
    // Nothing left for MicroPython's parser to complain about (no MP_ARG_INT: no conversion).
    mp_arg_parse_all(n_pos, pos, kws, n_allowed, allowed, out_vals);
}

void ncnn_mp_parse_args_kw_array(const char *where, size_t n_pos, size_t n_kw, const mp_obj_t *args,
    size_t n_allowed, const mp_arg_t *allowed, mp_arg_val_t *out_vals) {
    mp_map_t kws;
    mp_map_init_fixed_table(&kws, n_kw, args + n_pos);
    ncnn_mp_parse_args(where, n_pos, args, &kws, n_allowed, allowed, out_vals);
}
