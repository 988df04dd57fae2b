// ModelBin: where a layer's load_model reads its weights from (ncnn_modelbin_*).
#include "ncnn_mp.h"

static ncnn_mp_modelbin_obj_t *ncnn_mp_modelbin_new(const mp_obj_type_t *type) {
    ncnn_mp_modelbin_obj_t *self = mp_obj_malloc_with_finaliser(ncnn_mp_modelbin_obj_t, type);
    self->handle = NULL;
    self->keep = MP_OBJ_NULL;
    self->borrowed = false;
    return self;
}

mp_obj_t ncnn_mp_modelbin_wrap_borrowed(ncnn_modelbin_t handle) {
    ncnn_mp_modelbin_obj_t *self = ncnn_mp_modelbin_new(&ncnn_mp_type_ModelBin);
    self->handle = handle;
    self->borrowed = true;
    return MP_OBJ_FROM_PTR(self);
}

void ncnn_mp_modelbin_expire(mp_obj_t obj) {
    ((ncnn_mp_modelbin_obj_t *)MP_OBJ_TO_PTR(obj))->handle = NULL;
}

ncnn_modelbin_t ncnn_mp_get_modelbin_handle(mp_obj_t obj, const char *where) {
    ncnn_mp_modelbin_obj_t *self = ncnn_mp_cast(obj, &ncnn_mp_type_ModelBin, where);
    if (self->handle == NULL) {
        ncnn_mp_raise_value(where, self->borrowed
            ? "ModelBin used after the load_model callback it was lent to returned"
            : "the ModelBin was closed");
    }
    if (self->keep != MP_OBJ_NULL && mp_obj_is_type(self->keep, &ncnn_mp_type_DataReader)) {
        ncnn_mp_get_datareader(self->keep, where);  // still open, buffer still in place
    }
    return self->handle;
}

// ModelBin(*, from_datareader=dr | from_mat_array=[Mat, ...])
//   ncnn_modelbin_create_from_datareader / ncnn_modelbin_create_from_mat_array
static mp_obj_t ncnn_mp_ModelBin_make_new(const mp_obj_type_t *type, size_t n_args, size_t n_kw, const mp_obj_t *all_args) {
    const char *where = "ModelBin()";
    enum { ARG_from_datareader, ARG_from_mat_array };
    static const mp_arg_t allowed[] = {
        { MP_QSTR_from_datareader, MP_ARG_KW_ONLY | MP_ARG_OBJ, {.u_obj = MP_OBJ_NULL} },
        { MP_QSTR_from_mat_array, MP_ARG_KW_ONLY | MP_ARG_OBJ, {.u_obj = MP_OBJ_NULL} },
    };
    mp_arg_val_t args[MP_ARRAY_SIZE(allowed)];
    mp_arg_parse_all_kw_array(n_args, n_kw, all_args, MP_ARRAY_SIZE(allowed), allowed, args);
    mp_obj_t dr = args[ARG_from_datareader].u_obj;
    mp_obj_t mats = args[ARG_from_mat_array].u_obj;
    if ((dr == MP_OBJ_NULL) == (mats == MP_OBJ_NULL)) {
        ncnn_mp_raise_type(where, "give exactly one of from_datareader= or from_mat_array=");
    }
    ncnn_mp_modelbin_obj_t *self = ncnn_mp_modelbin_new(type);
    if (dr != MP_OBJ_NULL) {
        // ncnn's ModelBin reads through the DataReader on every load(): keep it.
        ncnn_datareader_t h = ncnn_mp_get_datareader_handle(dr, where);
        self->keep = dr;
        self->handle = ncnn_modelbin_create_from_datareader(h);
        return MP_OBJ_FROM_PTR(self);
    }
    if (!mp_obj_is_type(mats, &mp_type_list) && !mp_obj_is_type(mats, &mp_type_tuple)) {
        mp_raise_msg_varg(&mp_type_TypeError, MP_ERROR_TEXT("%s: from_mat_array must be a list or tuple of Mats, not %s"),
            where, mp_obj_get_type_str(mats));
    }
    size_t n;
    mp_obj_t *items;
    mp_obj_get_array(mats, &n, &items);
    // Deep copies with ncnn's default allocator: ncnn keeps them for the ModelBin's
    // life, which may outlast the Python buffers or Allocators of the Mats given.
    ncnn_mat_t *copies = m_new0(ncnn_mat_t, n ? n : 1);
    for (size_t i = 0; i < n; i++) {  // check them all before copying any: nothing may leak
        copies[i] = ncnn_mp_get_mat_handle(items[i], where);
    }
    for (size_t i = 0; i < n; i++) {
        copies[i] = ncnn_mat_clone(copies[i], NULL);
    }
    self->handle = ncnn_modelbin_create_from_mat_array(copies, (int)n);
    for (size_t i = 0; i < n; i++) {
        ncnn_mat_destroy(copies[i]);  // the ModelBin holds its own references
    }
    m_del(ncnn_mat_t, copies, n ? n : 1);
    return MP_OBJ_FROM_PTR(self);
}

// ModelBin.close() / __del__   ncnn_modelbin_destroy (owned only)
static mp_obj_t ncnn_mp_ModelBin_close(mp_obj_t self_in) {
    ncnn_mp_modelbin_obj_t *self = MP_OBJ_TO_PTR(self_in);
    if (!self->borrowed && self->handle) {
        ncnn_modelbin_destroy(self->handle);
    }
    self->handle = NULL;
    return mp_const_none;
}
static MP_DEFINE_CONST_FUN_OBJ_1(ncnn_mp_ModelBin_close_obj, ncnn_mp_ModelBin_close);

// ModelBin.load(w, type) / load(w, h, type) / load(w, h, c, type) -> Mat   mb->load_1d/_2d/_3d
// type 0: ncnn's tagged format (float32, fp16 or quantized), 1: raw float32.
static mp_obj_t ncnn_mp_ModelBin_load(size_t n_args, const mp_obj_t *args) {
    const char *where = "ModelBin.load";
    ncnn_modelbin_t mb = ncnn_mp_get_modelbin_handle(args[0], where);
    static const char *const names[] = { "w", "h", "c" };
    int dims = (int)n_args - 2;
    int s[3];
    unsigned long long total = 4;
    for (int i = 0; i < dims; i++) {
        s[i] = ncnn_mp_get_int_in(args[1 + i], 1, INT32_MAX, where, names[i]);
        total *= (unsigned)s[i];
        if (total > INT32_MAX) {
            ncnn_mp_raise_value(where, "too many weights for one Mat (more than 2 GiB)");
        }
    }
    int type = ncnn_mp_get_int_in(args[n_args - 1], 0, 1, where, "type");
    ncnn_mat_t m;
    switch (dims) {
        case 1: m = mb->load_1d(mb, s[0], type); break;
        case 2: m = mb->load_2d(mb, s[0], s[1], type); break;
        default: m = mb->load_3d(mb, s[0], s[1], s[2], type); break;
    }
    if (m && ncnn_mat_get_dims(m) == 0) {
        ncnn_mat_destroy(m);
        ncnn_mp_raise_value(where, "no weights could be read (the data ran out, or a bad weight tag)");
    }
    return ncnn_mp_mat_wrap_owned(m, MP_OBJ_NULL, NULL, where);
}
static MP_DEFINE_CONST_FUN_OBJ_VAR_BETWEEN(ncnn_mp_ModelBin_load_obj, 3, 5, ncnn_mp_ModelBin_load);

static const mp_rom_map_elem_t ncnn_mp_ModelBin_locals_table[] = {
    { MP_ROM_QSTR(MP_QSTR_load), MP_ROM_PTR(&ncnn_mp_ModelBin_load_obj) },
    { MP_ROM_QSTR(MP_QSTR_close), MP_ROM_PTR(&ncnn_mp_ModelBin_close_obj) },
    { MP_ROM_QSTR(MP_QSTR___del__), MP_ROM_PTR(&ncnn_mp_ModelBin_close_obj) },
};
static MP_DEFINE_CONST_DICT(ncnn_mp_ModelBin_locals, ncnn_mp_ModelBin_locals_table);

MP_DEFINE_CONST_OBJ_TYPE(
    ncnn_mp_type_ModelBin, MP_QSTR_ModelBin, MP_TYPE_FLAG_NONE,
    make_new, ncnn_mp_ModelBin_make_new,
    locals_dict, &ncnn_mp_ModelBin_locals
    );
