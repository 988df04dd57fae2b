// SPDX-License-Identifier: MIT
// ParamDict: a layer's parameters, id -> int | float | array (ncnn_paramdict_*).
#include "ncnn_mp.h"

typedef struct _ncnn_mp_paramdict_obj_t {
    mp_obj_base_t base;
    ncnn_paramdict_t handle;  // NULL once a lent ParamDict's callback returned
    const void *owner;        // lent: the thread
    bool borrowed;
} ncnn_mp_paramdict_obj_t;

// ncnn's NCNN_MAX_PARAM_COUNT (paramdict.h, not part of the C API): ids run 0..31.
// ncnn checks the range only when built with NCNN_VALIDATION, so ncnn_mp always does.
#define NCNN_MP_PARAM_COUNT 32

// ncnn's type codes (ParamDict::type).
enum { NCNN_MP_PARAM_NONE = 0, NCNN_MP_PARAM_AUTO = 1, NCNN_MP_PARAM_INT = 2, NCNN_MP_PARAM_FLOAT = 3,
       NCNN_MP_PARAM_ARRAY = 4, NCNN_MP_PARAM_INT_ARRAY = 5, NCNN_MP_PARAM_FLOAT_ARRAY = 6 };

static ncnn_mp_paramdict_obj_t *ncnn_mp_paramdict_new(const mp_obj_type_t *type) {
    ncnn_mp_paramdict_obj_t *self = mp_obj_malloc_with_finaliser(ncnn_mp_paramdict_obj_t, type);
    self->handle = NULL;
    self->owner = NULL;
    self->borrowed = false;
    return self;
}

static void ncnn_mp_paramdict_expire(mp_obj_t obj) {
    ((ncnn_mp_paramdict_obj_t *)MP_OBJ_TO_PTR(obj))->handle = NULL;
}

static const ncnn_mp_lent_kind_t ncnn_mp_paramdict_lent = { ncnn_mp_paramdict_expire, NULL };

mp_obj_t ncnn_mp_paramdict_lend(ncnn_paramdict_t handle, ncnn_mp_lent_t *lent) {
    ncnn_mp_paramdict_obj_t *self = ncnn_mp_paramdict_new(&ncnn_mp_type_ParamDict);
    self->owner = ncnn_mp_thread();
    self->borrowed = true;
    ncnn_mp_lend(lent, MP_OBJ_FROM_PTR(self), &ncnn_mp_paramdict_lent);
    self->handle = handle;
    return MP_OBJ_FROM_PTR(self);
}

ncnn_paramdict_t ncnn_mp_get_paramdict_handle(mp_obj_t obj, const char *where) {
    ncnn_mp_paramdict_obj_t *self = ncnn_mp_cast(obj, &ncnn_mp_type_ParamDict, where);
    if (self->handle == NULL) {
        ncnn_mp_raise_value(where, NCNN_MP_TEXT("ParamDict used after the load_param callback it was lent to returned"));
    }
    if (self->borrowed) {
        ncnn_mp_check_owner(self->owner, where);
    }
    return self->handle;
}

static int ncnn_mp_param_id(mp_obj_t id, const char *where) {
    return ncnn_mp_get_int_in(id, 0, NCNN_MP_PARAM_COUNT - 1, where, "id");
}

// ParamDict()   ncnn_paramdict_create
static mp_obj_t ncnn_mp_ParamDict_make_new(const mp_obj_type_t *type, size_t n_args, size_t n_kw, const mp_obj_t *args) {
    ncnn_mp_parse_args_kw_array("ParamDict()", n_args, n_kw, args, 0, NULL, NULL);
    ncnn_mp_paramdict_obj_t *self = ncnn_mp_paramdict_new(type);
    self->handle = ncnn_paramdict_create();
    return MP_OBJ_FROM_PTR(self);
}

// __del__   ncnn_paramdict_destroy (owned only)
static mp_obj_t ncnn_mp_ParamDict_del(mp_obj_t self_in) {
    ncnn_mp_paramdict_obj_t *self = MP_OBJ_TO_PTR(self_in);
    if (!self->borrowed && self->handle) {
        ncnn_paramdict_destroy(self->handle);
    }
    self->handle = NULL;
    return mp_const_none;
}
static NCNN_MP_DEFINE_METHOD_1(ncnn_mp_ParamDict_del_obj, ParamDict, __del__, ncnn_mp_ParamDict_del);

// ParamDict.get_type(id) -> int   ncnn_paramdict_get_type (0 none, 2 int, 3 float, 4-6 array, 1 either)
static mp_obj_t ncnn_mp_ParamDict_get_type(mp_obj_t self_in, mp_obj_t id) {
    const char *where = "ParamDict.get_type";
    ncnn_paramdict_t pd = ncnn_mp_get_paramdict_handle(self_in, where);
    return MP_OBJ_NEW_SMALL_INT(ncnn_paramdict_get_type(pd, ncnn_mp_param_id(id, where)));
}
static NCNN_MP_DEFINE_METHOD_2(ncnn_mp_ParamDict_get_type_obj, ParamDict, get_type, ncnn_mp_ParamDict_get_type);

static mp_obj_t ncnn_mp_paramdict_get_int(ncnn_paramdict_t pd, int id, mp_obj_t def, const char *where) {
    int d = ncnn_mp_get_int_in(def, INT32_MIN, INT32_MAX, where, "default");
    return mp_obj_new_int(ncnn_paramdict_get_int(pd, id, d));
}

static mp_obj_t ncnn_mp_paramdict_get_float(ncnn_paramdict_t pd, int id, mp_obj_t def, const char *where) {
    return mp_obj_new_float_from_f(ncnn_paramdict_get_float(pd, id, ncnn_mp_get_float(def, where, "default")));
}

// An array parameter as a new Mat sharing ncnn's (reference-counted) storage;
// `def` (a Mat, or None for an empty Mat) when the id holds no array.
static mp_obj_t ncnn_mp_paramdict_get_array(ncnn_paramdict_t pd, int id, mp_obj_t def, const char *where) {
    int t = ncnn_paramdict_get_type(pd, id);
    if (t != NCNN_MP_PARAM_ARRAY && t != NCNN_MP_PARAM_INT_ARRAY && t != NCNN_MP_PARAM_FLOAT_ARRAY) {
        if (def != mp_const_none) {
            ncnn_mp_get_mat(def, where);  // type-check the default
        }
        return def;
    }
    ncnn_mat_t empty = ncnn_mat_create();
    ncnn_mat_t m = ncnn_paramdict_get_array(pd, id, empty);
    ncnn_mat_destroy(empty);
    ncnn_mp_result_t r;  // ncnn's own counted copy: it outlives the ParamDict
    ncnn_mp_result_from_allocator(&r, mp_const_none, MP_OBJ_NULL, where);
    return ncnn_mp_result_wrap(&r, m, where);
}

// ParamDict.get_int(id, default=0) -> int   ncnn_paramdict_get_int
static mp_obj_t ncnn_mp_ParamDict_get_int(size_t n_args, const mp_obj_t *args) {
    const char *where = "ParamDict.get_int";
    ncnn_paramdict_t pd = ncnn_mp_get_paramdict_handle(args[0], where);
    return ncnn_mp_paramdict_get_int(pd, ncnn_mp_param_id(args[1], where),
        n_args > 2 ? args[2] : MP_OBJ_NEW_SMALL_INT(0), where);
}
static NCNN_MP_DEFINE_METHOD_VAR_BETWEEN(ncnn_mp_ParamDict_get_int_obj, ParamDict, get_int, 2, 3, ncnn_mp_ParamDict_get_int);

// ParamDict.get_float(id, default=0.0) -> float   ncnn_paramdict_get_float
static mp_obj_t ncnn_mp_ParamDict_get_float(size_t n_args, const mp_obj_t *args) {
    const char *where = "ParamDict.get_float";
    ncnn_paramdict_t pd = ncnn_mp_get_paramdict_handle(args[0], where);
    return ncnn_mp_paramdict_get_float(pd, ncnn_mp_param_id(args[1], where),
        n_args > 2 ? args[2] : mp_obj_new_float(0), where);
}
static NCNN_MP_DEFINE_METHOD_VAR_BETWEEN(ncnn_mp_ParamDict_get_float_obj, ParamDict, get_float, 2, 3, ncnn_mp_ParamDict_get_float);

// ParamDict.get_array(id, default=None) -> Mat | None   ncnn_paramdict_get_array
static mp_obj_t ncnn_mp_ParamDict_get_array(size_t n_args, const mp_obj_t *args) {
    const char *where = "ParamDict.get_array";
    ncnn_paramdict_t pd = ncnn_mp_get_paramdict_handle(args[0], where);
    return ncnn_mp_paramdict_get_array(pd, ncnn_mp_param_id(args[1], where), n_args > 2 ? args[2] : mp_const_none, where);
}
static NCNN_MP_DEFINE_METHOD_VAR_BETWEEN(ncnn_mp_ParamDict_get_array_obj, ParamDict, get_array, 2, 3, ncnn_mp_ParamDict_get_array);

// ParamDict.get(id, default) -> int | float | Mat   (CPython ncnn) read as the default's type
// (int, float, Mat or None for an array); without a default, as the type ncnn stored.
static mp_obj_t ncnn_mp_ParamDict_get(size_t n_args, const mp_obj_t *args) {
    const char *where = "ParamDict.get";
    ncnn_paramdict_t pd = ncnn_mp_get_paramdict_handle(args[0], where);
    int id = ncnn_mp_param_id(args[1], where);
    if (n_args > 2) {
        mp_obj_t def = args[2];
        if (mp_obj_is_bool(def) || mp_obj_is_int(def)) {
            return ncnn_mp_paramdict_get_int(pd, id, def, where);
        }
        if (mp_obj_is_float(def)) {
            return ncnn_mp_paramdict_get_float(pd, id, def, where);
        }
        if (def == mp_const_none || mp_obj_cast_to_native_base(def, MP_OBJ_FROM_PTR(&ncnn_mp_type_Mat)) != MP_OBJ_NULL) {
            return ncnn_mp_paramdict_get_array(pd, id, def, where);
        }
        mp_raise_msg_varg(&mp_type_TypeError, NCNN_MP_FORMAT("%s: default must be an int, a float, a Mat or None, not %s"),
            where, mp_obj_get_type_str(def));
    }
    switch (ncnn_paramdict_get_type(pd, id)) {
        case NCNN_MP_PARAM_NONE: return mp_const_none;
        case NCNN_MP_PARAM_INT: return ncnn_mp_paramdict_get_int(pd, id, MP_OBJ_NEW_SMALL_INT(0), where);
        case NCNN_MP_PARAM_AUTO: case NCNN_MP_PARAM_FLOAT:
            return ncnn_mp_paramdict_get_float(pd, id, mp_obj_new_float(0), where);
        default: return ncnn_mp_paramdict_get_array(pd, id, mp_const_none, where);
    }
}
static NCNN_MP_DEFINE_METHOD_VAR_BETWEEN(ncnn_mp_ParamDict_get_obj, ParamDict, get, 2, 3, ncnn_mp_ParamDict_get);

static ncnn_paramdict_t ncnn_mp_get_paramdict_writable(mp_obj_t obj, const char *where) {
    ncnn_mp_paramdict_obj_t *self = ncnn_mp_cast(obj, &ncnn_mp_type_ParamDict, where);
    if (self->borrowed) {
        ncnn_mp_raise_value(where, NCNN_MP_TEXT("a ParamDict lent by ncnn is read-only"));
    }
    return ncnn_mp_get_paramdict_handle(obj, where);
}

static void ncnn_mp_paramdict_set_int(mp_obj_t self_in, mp_obj_t id, mp_obj_t v, const char *where) {
    ncnn_paramdict_t pd = ncnn_mp_get_paramdict_writable(self_in, where);
    int i = ncnn_mp_param_id(id, where);
    ncnn_paramdict_set_int(pd, i, ncnn_mp_get_int_in(v, INT32_MIN, INT32_MAX, where, "value"));
}

static void ncnn_mp_paramdict_set_float(mp_obj_t self_in, mp_obj_t id, mp_obj_t v, const char *where) {
    ncnn_paramdict_t pd = ncnn_mp_get_paramdict_writable(self_in, where);
    int i = ncnn_mp_param_id(id, where);
    ncnn_paramdict_set_float(pd, i, ncnn_mp_get_float(v, where, "value"));
}

// The ParamDict keeps a deep copy made with ncnn's default allocator: the Mat
// given may be over a Python buffer or an Allocator that dies before the ParamDict.
static void ncnn_mp_paramdict_set_array(mp_obj_t self_in, mp_obj_t id, mp_obj_t v, const char *where) {
    ncnn_paramdict_t pd = ncnn_mp_get_paramdict_writable(self_in, where);
    int i = ncnn_mp_param_id(id, where);
    ncnn_mat_t src = ncnn_mp_get_mat_handle(v, where);
    ncnn_mat_t copy = ncnn_mat_clone(src, NULL);
    if (ncnn_mat_get_dims(src) && ncnn_mat_get_data(copy) == NULL) {
        ncnn_mat_destroy(copy);
        mp_raise_msg_varg(&mp_type_MemoryError, NCNN_MP_FORMAT("%s: ncnn could not copy the array"), where);
    }
    ncnn_paramdict_set_array(pd, i, copy);
    ncnn_mat_destroy(copy);  // the ParamDict holds its own reference to the data
}

// ParamDict.set_int(id, v) / set_float(id, v) / set_array(id, mat)   ncnn_paramdict_set_*
static mp_obj_t ncnn_mp_ParamDict_set_int(mp_obj_t self_in, mp_obj_t id, mp_obj_t v) {
    ncnn_mp_paramdict_set_int(self_in, id, v, "ParamDict.set_int");
    return mp_const_none;
}
static NCNN_MP_DEFINE_METHOD_3(ncnn_mp_ParamDict_set_int_obj, ParamDict, set_int, ncnn_mp_ParamDict_set_int);

static mp_obj_t ncnn_mp_ParamDict_set_float(mp_obj_t self_in, mp_obj_t id, mp_obj_t v) {
    ncnn_mp_paramdict_set_float(self_in, id, v, "ParamDict.set_float");
    return mp_const_none;
}
static NCNN_MP_DEFINE_METHOD_3(ncnn_mp_ParamDict_set_float_obj, ParamDict, set_float, ncnn_mp_ParamDict_set_float);

static mp_obj_t ncnn_mp_ParamDict_set_array(mp_obj_t self_in, mp_obj_t id, mp_obj_t v) {
    ncnn_mp_paramdict_set_array(self_in, id, v, "ParamDict.set_array");
    return mp_const_none;
}
static NCNN_MP_DEFINE_METHOD_3(ncnn_mp_ParamDict_set_array_obj, ParamDict, set_array, ncnn_mp_ParamDict_set_array);

// ParamDict.set(id, value) -> None   (CPython ncnn) by the value's type: int, float or Mat
static mp_obj_t ncnn_mp_ParamDict_set(mp_obj_t self_in, mp_obj_t id, mp_obj_t v) {
    const char *where = "ParamDict.set";
    if (mp_obj_is_bool(v) || mp_obj_is_int(v)) {
        ncnn_mp_paramdict_set_int(self_in, id, v, where);
    } else if (mp_obj_is_float(v)) {
        ncnn_mp_paramdict_set_float(self_in, id, v, where);
    } else if (mp_obj_cast_to_native_base(v, MP_OBJ_FROM_PTR(&ncnn_mp_type_Mat)) != MP_OBJ_NULL) {
        ncnn_mp_paramdict_set_array(self_in, id, v, where);
    } else {
        mp_raise_msg_varg(&mp_type_TypeError, NCNN_MP_FORMAT("%s: value must be an int, a float or a Mat, not %s"),
            where, mp_obj_get_type_str(v));
    }
    return mp_const_none;
}
static NCNN_MP_DEFINE_METHOD_3(ncnn_mp_ParamDict_set_obj, ParamDict, set, ncnn_mp_ParamDict_set);

static const mp_rom_map_elem_t ncnn_mp_ParamDict_locals_table[] = {
    { MP_ROM_QSTR(MP_QSTR_get_type), MP_ROM_PTR(&ncnn_mp_ParamDict_get_type_obj) },
    { MP_ROM_QSTR(MP_QSTR_get_int), MP_ROM_PTR(&ncnn_mp_ParamDict_get_int_obj) },
    { MP_ROM_QSTR(MP_QSTR_get_float), MP_ROM_PTR(&ncnn_mp_ParamDict_get_float_obj) },
    { MP_ROM_QSTR(MP_QSTR_get_array), MP_ROM_PTR(&ncnn_mp_ParamDict_get_array_obj) },
    { MP_ROM_QSTR(MP_QSTR_get), MP_ROM_PTR(&ncnn_mp_ParamDict_get_obj) },
    { MP_ROM_QSTR(MP_QSTR_set_int), MP_ROM_PTR(&ncnn_mp_ParamDict_set_int_obj) },
    { MP_ROM_QSTR(MP_QSTR_set_float), MP_ROM_PTR(&ncnn_mp_ParamDict_set_float_obj) },
    { MP_ROM_QSTR(MP_QSTR_set_array), MP_ROM_PTR(&ncnn_mp_ParamDict_set_array_obj) },
    { MP_ROM_QSTR(MP_QSTR_set), MP_ROM_PTR(&ncnn_mp_ParamDict_set_obj) },
    { MP_ROM_QSTR(MP_QSTR___del__), MP_ROM_PTR(&ncnn_mp_ParamDict_del_obj) },
};
static MP_DEFINE_CONST_DICT(ncnn_mp_ParamDict_locals, ncnn_mp_ParamDict_locals_table);

MP_DEFINE_CONST_OBJ_TYPE(
    ncnn_mp_type_ParamDict, MP_QSTR_ParamDict, MP_TYPE_FLAG_NONE,
    make_new, ncnn_mp_ParamDict_make_new,
    locals_dict, &ncnn_mp_ParamDict_locals
    );
