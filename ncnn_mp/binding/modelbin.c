// SPDX-License-Identifier: MIT
// ModelBin: where a layer's load_model reads its weights from (ncnn_modelbin_*).
//
// ncnn_modelbin_create_from_mat_array keeps a pointer into a std::vector local to
// that function (dead once it returns), and its load() walks the array without a
// bound: using it reads freed memory. ncnn_mp makes an empty one instead (which owns
// no array) and points its load_1d/_2d/_3d callbacks, which the C++ object's own
// load() calls, at a bounded array of its own below.
#include <stdlib.h>

#include "ncnn_mp.h"

typedef struct _ncnn_mp_modelbin_obj_t {
    mp_obj_base_t base;
    ncnn_modelbin_t handle;  // NULL once closed, or once a lent ModelBin's callback returned
    mp_obj_t keep;           // the DataReader it reads through
    struct _ncnn_mp_mat_array_t *array;  // from_mat_array: the Mats it serves (C heap, owned)
    const void *owner;       // lent: the thread
    // Lent to a custom layer's load_model under a load_model(copy=False): the buffer the
    // weights lie in (load() hands out Mats over it), else MP_OBJ_NULL.
    mp_obj_t in_place;
    int users;               // calls reading through it now (use.c), under the lock
    bool borrowed;
} ncnn_mp_modelbin_obj_t;

typedef struct _ncnn_mp_mat_array_t {
    ncnn_modelbin_t handle;
    ncnn_mat_t *mats;  // owned copies
    size_t n, next;
    // Why the last load got an empty Mat (the layer's load_model then fails), or NULL.
    mp_rom_error_text_t refused;
    struct _ncnn_mp_mat_array_t *link;
} ncnn_mp_mat_array_t;

// The arrays alive now (MP_STATE_VM(ncnn_mp_mat_arrays), state.c), found by the
// ncnn_modelbin_t our callbacks receive; under the lock.

// Why ncnn cannot take `m` as `count` weights of a load of `type`, or NULL. ncnn's own
// loads hand a layer float32 (type 1: raw; type 0: float32 or converted fp16/bf16) or, for
// type 0 only, int8 weights (tag 0x000D4B38); a layer reads whatever it gets as one of those
// by its element size, packed one element a slot. Anything else it would read past.
static mp_rom_error_text_t ncnn_mp_mat_array_misfit(ncnn_mat_t m, size_t count, int type) {
    if (m == NULL) {
        return NCNN_MP_TEXT("the ModelBin's Mats are used up: the layer reads more weights than were given");
    }
    size_t have = (size_t)ncnn_mat_get_w(m) * ncnn_mat_get_h(m) * ncnn_mat_get_d(m) * ncnn_mat_get_c(m);
    if (ncnn_mat_get_elempack(m) != 1) {
        return NCNN_MP_TEXT("a weight Mat of elempack > 1: ncnn reads weights one element a slot (convert_packing(1, opt) first)");
    }
    size_t elemsize = ncnn_mat_get_elemsize(m);
    if (elemsize != 4 && !(elemsize == 1 && type == 0)) {
        return type == 0 ? NCNN_MP_TEXT("a weight Mat of elemsize other than 4 (float32) or 1 (int8): ncnn reads it as one of those")
                         : NCNN_MP_TEXT("a weight Mat of elemsize other than 4: this read takes raw float32 (type 1)");
    }
    if (have != count) {
        return NCNN_MP_TEXT("a weight Mat whose element count is not what the layer reads next");
    }
    return NULL;
}

// The next Mat of the array, as a new handle (ncnn takes it and destroys it). An empty
// Mat when the array is used up or the Mat does not fit the read (the reason is kept for
// the method that called ncnn): the layer then fails its load_model instead of reading
// past the weights.
static ncnn_mat_t ncnn_mp_mat_array_load(const ncnn_modelbin_t mb, int w, int h, int c, int dims, int type) {
    size_t count = (size_t)w * (size_t)h * (size_t)c;
    mp_uint_t l = ncnn_mp_lock();
    ncnn_mp_mat_array_t *a = MP_STATE_VM(ncnn_mp_mat_arrays);
    while (a && a->handle != mb) {
        a = a->link;
    }
    ncnn_mat_t m = a && a->next < a->n ? a->mats[a->next++] : NULL;
    mp_rom_error_text_t why = a ? ncnn_mp_mat_array_misfit(m, count, type) : NCNN_MP_TEXT("the ModelBin was closed");
    if (a && why && !a->refused) {
        a->refused = why;
    }
    ncnn_mp_unlock(l);
    if (why) {
        return ncnn_mat_create();
    }
    // In the shape the layer asked for: it indexes rows and channels (an RNN's weights as
    // w x h x c), and a flat Mat of the same count would be read past its end.
    ncnn_mat_t copy = ncnn_mat_clone(m, NULL);
    ncnn_mat_t shaped = copy == NULL ? NULL : dims == 1 ? ncnn_mat_reshape_1d(copy, w, NULL)
        : dims == 2 ? ncnn_mat_reshape_2d(copy, w, h, NULL) : ncnn_mat_reshape_3d(copy, w, h, c, NULL);
    if (copy) {
        ncnn_mat_destroy(copy);
    }
    return shaped ? shaped : ncnn_mat_create();
}

static ncnn_mat_t ncnn_mp_mat_array_load_1d(const ncnn_modelbin_t mb, int w, int type) {
    return ncnn_mp_mat_array_load(mb, w, 1, 1, 1, type);
}

static ncnn_mat_t ncnn_mp_mat_array_load_2d(const ncnn_modelbin_t mb, int w, int h, int type) {
    return ncnn_mp_mat_array_load(mb, w, h, 1, 2, type);
}

static ncnn_mat_t ncnn_mp_mat_array_load_3d(const ncnn_modelbin_t mb, int w, int h, int c, int type) {
    return ncnn_mp_mat_array_load(mb, w, h, c, 3, type);
}

static void ncnn_mp_mat_array_free(ncnn_mp_mat_array_t *a) {
    mp_uint_t l = ncnn_mp_lock();
    ncnn_mp_mat_array_t **link = &MP_STATE_VM(ncnn_mp_mat_arrays);
    while (*link && *link != a) {
        link = &(*link)->link;
    }
    if (*link) {
        *link = a->link;
    }
    ncnn_mp_unlock(l);
    for (size_t i = 0; i < a->n; i++) {
        ncnn_mat_destroy(a->mats[i]);
    }
    free(a->mats);
    free(a);
}

static ncnn_mp_modelbin_obj_t *ncnn_mp_modelbin_new(const mp_obj_type_t *type) {
    ncnn_mp_modelbin_obj_t *self = mp_obj_malloc_with_finaliser(ncnn_mp_modelbin_obj_t, type);
    self->handle = NULL;
    self->keep = MP_OBJ_NULL;
    self->array = NULL;
    self->owner = NULL;
    self->borrowed = false;
    self->users = 0;
    self->in_place = MP_OBJ_NULL;
    return self;
}

static void ncnn_mp_modelbin_expire(mp_obj_t obj) {
    ncnn_mp_modelbin_obj_t *self = MP_OBJ_TO_PTR(obj);
    self->handle = NULL;
    self->in_place = MP_OBJ_NULL;
}

static const ncnn_mp_lent_kind_t ncnn_mp_modelbin_lent = { ncnn_mp_modelbin_expire, NULL };

mp_obj_t ncnn_mp_modelbin_lend(ncnn_modelbin_t handle, mp_obj_t in_place, ncnn_mp_lent_t *lent) {
    ncnn_mp_modelbin_obj_t *self = ncnn_mp_modelbin_new(&ncnn_mp_type_ModelBin);
    self->owner = ncnn_mp_thread();
    self->borrowed = true;
    ncnn_mp_lend(lent, MP_OBJ_FROM_PTR(self), &ncnn_mp_modelbin_lent);
    self->handle = handle;
    self->in_place = in_place;
    return MP_OBJ_FROM_PTR(self);
}

ncnn_modelbin_t ncnn_mp_get_modelbin_handle(mp_obj_t obj, const char *where) {
    ncnn_mp_modelbin_obj_t *self = ncnn_mp_cast(obj, &ncnn_mp_type_ModelBin, where);
    if (self->handle == NULL) {
        ncnn_mp_raise_value(where, self->borrowed
            ? NCNN_MP_TEXT("ModelBin used after the load_model callback it was lent to returned")
            : NCNN_MP_TEXT("the ModelBin was closed"));
    }
    if (self->borrowed) {
        ncnn_mp_check_owner(self->owner, where);
    }
    return self->handle;
}

// A use of the ModelBin and of the DataReader it reads through (u has room for both):
// neither closes while ncnn reads, and the reader reads where its buffer is now.
ncnn_modelbin_t ncnn_mp_modelbin_use(ncnn_mp_use_t *u, mp_obj_t obj, const char *where) {
    ncnn_mp_get_modelbin_handle(obj, where);
    ncnn_mp_modelbin_obj_t *self = MP_OBJ_TO_PTR(mp_obj_cast_to_native_base(obj, MP_OBJ_FROM_PTR(&ncnn_mp_type_ModelBin)));
    if (!ncnn_mp_use_add(u, &self->users, (void *const *)&self->handle)) {
        ncnn_mp_get_modelbin_handle(obj, where);  // (closed or expired since: raises why)
    }
    if (self->keep != MP_OBJ_NULL) {
        ncnn_mp_reader_use(u, self->keep, NULL, where);
    }
    mp_uint_t l = ncnn_mp_lock();
    if (self->array) {
        self->array->refused = NULL;
    }
    ncnn_mp_unlock(l);
    return self->handle;
}

void ncnn_mp_modelbin_raise_refused(mp_obj_t obj, const char *where) {
    ncnn_mp_modelbin_obj_t *self = MP_OBJ_TO_PTR(mp_obj_cast_to_native_base(obj, MP_OBJ_FROM_PTR(&ncnn_mp_type_ModelBin)));
    mp_uint_t l = ncnn_mp_lock();
    mp_rom_error_text_t why = self->array ? self->array->refused : NULL;
    ncnn_mp_unlock(l);
    if (why) {
        ncnn_mp_text_buf_t buf;
        mp_raise_msg_varg(&mp_type_ValueError, NCNN_MP_FORMAT("%s: from_mat_array: %s"), where, ncnn_mp_text(why, &buf));
    }
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
    ncnn_mp_parse_args_kw_array(where, n_args, n_kw, all_args, MP_ARRAY_SIZE(allowed), allowed, args);
    mp_obj_t dr = args[ARG_from_datareader].u_obj;
    mp_obj_t mats = args[ARG_from_mat_array].u_obj;
    if ((dr == MP_OBJ_NULL) == (mats == MP_OBJ_NULL)) {
        ncnn_mp_raise_type(where, NCNN_MP_TEXT("give exactly one of from_datareader= or from_mat_array="));
    }
    ncnn_mp_modelbin_obj_t *self = ncnn_mp_modelbin_new(type);
    if (dr != MP_OBJ_NULL) {
        // ncnn's ModelBin reads through the DataReader on every load(): keep it (each
        // load() uses it, ncnn_mp_reader_use).
        ncnn_mp_use_t use;
        ncnn_mp_use_begin(&use, 1);
        ncnn_datareader_t h = ncnn_mp_reader_use(&use, dr, NULL, where);
        self->keep = dr;
        self->handle = ncnn_modelbin_create_from_datareader(h);
        ncnn_mp_use_end(&use);
        return MP_OBJ_FROM_PTR(self);
    }
    if (!mp_obj_is_type(mats, &mp_type_list) && !mp_obj_is_type(mats, &mp_type_tuple)) {
        mp_raise_msg_varg(&mp_type_TypeError, NCNN_MP_FORMAT("%s: from_mat_array must be a list or tuple of Mats, not %s"),
            where, mp_obj_get_type_str(mats));
    }
    size_t n;
    mp_obj_t *items;
    mp_obj_get_array(mats, &n, &items);
    for (size_t i = 0; i < n; i++) {  // check them all before copying any: nothing may leak
        ncnn_mp_get_mat_handle(items[i], where);
    }
    ncnn_mp_mat_array_t *a = calloc(1, sizeof(*a));
    ncnn_mat_t *copies = calloc(n ? n : 1, sizeof(ncnn_mat_t));
    if (a == NULL || copies == NULL) {
        free(a);
        free(copies);
        mp_raise_msg_varg(&mp_type_MemoryError, NCNN_MP_FORMAT("%s: out of memory"), where);
    }
    // Deep copies with ncnn's default allocator: the ModelBin may outlast the Python
    // buffers or Allocators of the Mats given.
    for (size_t i = 0; i < n; i++) {
        copies[i] = ncnn_mat_clone(ncnn_mp_get_mat_handle(items[i], where), NULL);
    }
    a->mats = copies;
    a->n = n;
    a->handle = ncnn_modelbin_create_from_mat_array(NULL, 0);
    a->handle->load_1d = ncnn_mp_mat_array_load_1d;
    a->handle->load_2d = ncnn_mp_mat_array_load_2d;
    a->handle->load_3d = ncnn_mp_mat_array_load_3d;
    mp_uint_t l = ncnn_mp_lock();
    a->link = MP_STATE_VM(ncnn_mp_mat_arrays);
    MP_STATE_VM(ncnn_mp_mat_arrays) = a;
    ncnn_mp_unlock(l);
    self->array = a;
    self->handle = a->handle;
    return MP_OBJ_FROM_PTR(self);
}

// ModelBin.close() / __del__   ncnn_modelbin_destroy (owned only)
// Refused while a call reads through it (a Python reader's read() may try, or another
// thread): checked and detached under the lock, so no use begins in between. (__del__: a
// ModelBin in use is reachable from its user's stack; a collection never finalises it.)
static void ncnn_mp_modelbin_release(ncnn_mp_modelbin_obj_t *self, bool refuse_in_use) {
    mp_uint_t l = ncnn_mp_lock();
    if (refuse_in_use && self->users > 0) {
        ncnn_mp_unlock(l);
        ncnn_mp_raise_in_use("ModelBin.close");
    }
    ncnn_modelbin_t handle = self->borrowed ? NULL : self->handle;
    ncnn_mp_mat_array_t *array = self->array;
    self->handle = NULL;
    self->array = NULL;
    ncnn_mp_unlock(l);
    if (handle) {
        ncnn_modelbin_destroy(handle);
    }
    if (array) {
        ncnn_mp_mat_array_free(array);
    }
}

static mp_obj_t ncnn_mp_ModelBin_close(mp_obj_t self_in) {
    ncnn_mp_modelbin_release(MP_OBJ_TO_PTR(self_in), true);
    return mp_const_none;
}

static mp_obj_t ncnn_mp_ModelBin_del(mp_obj_t self_in) {
    ncnn_mp_modelbin_release(MP_OBJ_TO_PTR(self_in), false);
    return mp_const_none;
}
static NCNN_MP_DEFINE_METHOD_1(ncnn_mp_ModelBin_close_obj, ModelBin, close, ncnn_mp_ModelBin_close);
static NCNN_MP_DEFINE_METHOD_1(ncnn_mp_ModelBin_del_obj, ModelBin, __del__, ncnn_mp_ModelBin_del);

// ModelBin.load(w, type) / load(w, h, type) / load(w, h, c, type) -> Mat   mb->load_1d/_2d/_3d
// type 0: ncnn's tagged format (float32, fp16 or quantized), 1: raw float32.
static mp_obj_t ncnn_mp_ModelBin_load(size_t n_args, const mp_obj_t *args) {
    const char *where = "ModelBin.load";
    ncnn_mp_get_modelbin_handle(args[0], where);
    static const char *const names[] = { "w", "h", "c" };
    int dims = (int)n_args - 2;
    int s[3];
    unsigned long long total = 4;
    for (int i = 0; i < dims; i++) {
        s[i] = ncnn_mp_get_int_in(args[1 + i], 1, INT32_MAX, where, names[i]);
        total *= (unsigned)s[i];
        if (total > INT32_MAX) {
            ncnn_mp_raise_value(where, NCNN_MP_TEXT("too many weights for one Mat (more than 2 GiB)"));
        }
    }
    int type = ncnn_mp_get_int_in(args[n_args - 1], 0, 1, where, "type");
    // Neither the ModelBin nor its DataReader closes while ncnn reads (a Python reader's
    // read() may try), and the reader reads where its buffer is now.
    ncnn_mp_use_t use;
    ncnn_mp_use_begin(&use, 2);
    ncnn_modelbin_t mb = ncnn_mp_modelbin_use(&use, args[0], where);
    // Lent during a load_model(copy=False), the ModelBin may hand back weights where they
    // lie in that buffer: such a Mat keeps the buffer alive, and is read-only.
    mp_obj_t weights = ((ncnn_mp_modelbin_obj_t *)ncnn_mp_cast(args[0], &ncnn_mp_type_ModelBin, where))->in_place;
    // A Python reader's exception waits in this call, and is raised here.
    ncnn_mp_call_t call;
    ncnn_mp_call_begin(&call);
    ncnn_mat_t m;
    switch (dims) {
        case 1: m = mb->load_1d(mb, s[0], type); break;
        case 2: m = mb->load_2d(mb, s[0], s[1], type); break;
        default: m = mb->load_3d(mb, s[0], s[1], s[2], type); break;
    }
    ncnn_mp_use_end(&use);
    ncnn_mp_call_stop(&call);
    bool empty = m && (call.error != MP_OBJ_NULL || ncnn_mat_get_dims(m) == 0);
    if (empty) {
        ncnn_mat_destroy(m);
    }
    ncnn_mp_call_raise(&call);
    if (empty) {
        ncnn_mp_modelbin_raise_refused(args[0], where);
        ncnn_mp_raise_value(where, NCNN_MP_TEXT("no weights could be read (the data ran out, or a bad weight tag)"));
    }
    mp_buffer_info_t info;
    if (m && weights != MP_OBJ_NULL && mp_get_buffer(weights, &info, MP_BUFFER_READ)) {
        const uint8_t *data = ncnn_mat_get_data(m), *base = info.buf;
        if (data >= base && data < base + info.len) {
            return ncnn_mp_mat_wrap_over_buffer(m, weights, info.buf, true, where);
        }
    }
    ncnn_mp_result_t r;  // ncnn read the weights into a Mat of their own
    ncnn_mp_result_from_allocator(&r, mp_const_none, MP_OBJ_NULL, where);
    return ncnn_mp_result_wrap(&r, m, where);
}
static NCNN_MP_DEFINE_METHOD_VAR_BETWEEN(ncnn_mp_ModelBin_load_obj, ModelBin, load, 3, 5, ncnn_mp_ModelBin_load);

static const mp_rom_map_elem_t ncnn_mp_ModelBin_locals_table[] = {
    { MP_ROM_QSTR(MP_QSTR_load), MP_ROM_PTR(&ncnn_mp_ModelBin_load_obj) },
    { MP_ROM_QSTR(MP_QSTR_close), MP_ROM_PTR(&ncnn_mp_ModelBin_close_obj) },
    { MP_ROM_QSTR(MP_QSTR___del__), MP_ROM_PTR(&ncnn_mp_ModelBin_del_obj) },
};
static MP_DEFINE_CONST_DICT(ncnn_mp_ModelBin_locals, ncnn_mp_ModelBin_locals_table);

MP_DEFINE_CONST_OBJ_TYPE(
    ncnn_mp_type_ModelBin, MP_QSTR_ModelBin, MP_TYPE_FLAG_NONE,
    make_new, ncnn_mp_ModelBin_make_new,
    locals_dict, &ncnn_mp_ModelBin_locals
    );
