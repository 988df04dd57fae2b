// SPDX-License-Identifier: MIT
// The trampoline: ncnn calling the methods of a Layer subclass written in Python.
//
// Rules (docs/custom-layers.md for users, docs/internals.md for these; the frames, lending
// and the kept error are lend.c's):
// - Every callback runs in a frame (ncnn_mp_frame_open/close): its Python under nlr_push,
//   an exception kept for the public method that entered ncnn, which re-raises it once
//   ncnn has returned; the callback returns an error code and ncnn unwinds normally.
// - ncnn destroys every top-blob handle a forward callback hands back, and
//   dereferences it even on error: each top slot always gets a handle of its own,
//   an empty Mat on every error path.
// - Mats, ParamDicts, ModelBins and Options handed to a callback are lent to it, in
//   its thread: their wrappers, and the Mats computed from them that may share their
//   storage (ncnn_mp_result_wrap lends those too), expire when the callback returns.
// - The Python objects ncnn can reach (layer instances, creators) are kept in the
//   roots table (state.c), keyed by the address of the C record ncnn holds, and dropped
//   without allocating (a Net may be destroyed from a finaliser, inside a collection).
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "py/objfun.h"
#include "py/bc.h"
#include "ncnn_mp.h"


// The support_* flags and one_blob_only, as data: one row per get/set pair.
#define NCNN_MP_LAYER_FLAG(n) { MP_QSTR_##n, ncnn_layer_get_##n, ncnn_layer_set_##n }
static const ncnn_mp_layer_flag_t ncnn_mp_layer_flags[] = {
    NCNN_MP_LAYER_FLAG(one_blob_only),
    NCNN_MP_LAYER_FLAG(support_inplace),
    NCNN_MP_LAYER_FLAG(support_vulkan),
    NCNN_MP_LAYER_FLAG(support_packing),
    NCNN_MP_LAYER_FLAG(support_bf16_storage),
    NCNN_MP_LAYER_FLAG(support_fp16_storage),
    NCNN_MP_LAYER_FLAG(support_vulkan_packing),
    NCNN_MP_LAYER_FLAG(support_any_packing),
    NCNN_MP_LAYER_FLAG(support_vulkan_any_packing),
};
#undef NCNN_MP_LAYER_FLAG

static void ncnn_mp_layer_copy_flags_from_instance(mp_obj_t instance, ncnn_layer_t handle) {
    for (size_t i = 0; i < MP_ARRAY_SIZE(ncnn_mp_layer_flags); i++) {
        mp_obj_t v = mp_load_attr(instance, ncnn_mp_layer_flags[i].name);
        ncnn_mp_layer_flags[i].set(handle, mp_obj_is_true(v));
    }
}

const ncnn_mp_layer_flag_t *ncnn_mp_layer_flag(qstr name) {
    for (size_t i = 0; i < MP_ARRAY_SIZE(ncnn_mp_layer_flags); i++) {
        if (ncnn_mp_layer_flags[i].name == name) {
            return &ncnn_mp_layer_flags[i];
        }
    }
    return NULL;
}

// "MyLayer.forward: WHAT" (what: an NCNN_MP_TEXT).
static mp_obj_t ncnn_mp_layer_error(const mp_obj_type_t *type, mp_obj_t instance, qstr method, mp_rom_error_text_t what) {
    ncnn_mp_text_buf_t buf;
    return mp_obj_new_exception_msg_varg(type, NCNN_MP_FORMAT("%s.%q: %s"), mp_obj_get_type_str(instance), method,
        ncnn_mp_text(what, &buf));
}

// ---------------------------------------------------------------------------
// Calling the Python side.

// Whether the Python class of `instance` defines the method `name` (loaded into dest):
// false when only the Layer base class's own one is found, a C method (ncnn_mp_type_method),
// as every method of ncnn_mp's classes is.
static bool ncnn_mp_find_method(mp_obj_t instance, qstr name, mp_obj_t *dest) {
    mp_load_method_maybe(instance, name, dest);
    return dest[0] != MP_OBJ_NULL && !mp_obj_is_type(dest[0], &ncnn_mp_type_method);
}

// The number of positional parameters of a Python function (self included), or -1
// where it cannot be read (viper functions keep no signature).
static int ncnn_mp_arity(mp_obj_t fun) {
    if (mp_obj_is_type(fun, &mp_type_fun_bc)) {
        const byte *ip = ((mp_obj_fun_bc_t *)MP_OBJ_TO_PTR(fun))->bytecode;
        MP_BC_PRELUDE_SIG_DECODE(ip);
        (void)n_state; (void)n_exc_stack; (void)scope_flags; (void)n_kwonly_args; (void)n_def_pos_args;
        return n_pos_args;
    }
    #if MICROPY_EMIT_NATIVE
    if (mp_obj_is_type(fun, &mp_type_fun_native)) {
        const byte *ip = mp_obj_fun_native_get_prelude_ptr(MP_OBJ_TO_PTR(fun));
        MP_BC_PRELUDE_SIG_DECODE(ip);
        (void)n_state; (void)n_exc_stack; (void)scope_flags; (void)n_kwonly_args; (void)n_def_pos_args;
        return n_pos_args;
    }
    #endif
    return -1;
}

// What a load_param/load_model/create_pipeline/forward_inplace method returned: None or 0
// is success; another int is ncnn's error code, reported as an exception naming the layer.
static int ncnn_mp_status(mp_obj_t instance, qstr method, mp_obj_t r) {
    if (r == mp_const_none) {
        return 0;
    }
    if (!mp_obj_is_int(r) || mp_obj_is_bool(r)) {
        nlr_raise(ncnn_mp_layer_error(&mp_type_TypeError, instance, method, NCNN_MP_TEXT("must return None or an int")));
    }
    if (!mp_obj_is_small_int(r)) {  // (a big int is never 0)
        nlr_raise(ncnn_mp_layer_error(&mp_type_RuntimeError, instance, method, NCNN_MP_TEXT("returned a failure code (a big int)")));
    }
    mp_int_t code = MP_OBJ_SMALL_INT_VALUE(r);
    if (code != 0) {
        mp_raise_msg_varg(&mp_type_RuntimeError, NCNN_MP_FORMAT("%s.%q: returned %d (a failure code)"),
            mp_obj_get_type_str(instance), method, (int)code);
    }
    return 0;
}

// A handle ncnn may own and destroy, with the data of the Mat `out` a Python method
// produced. It shares ncnn's reference-counted storage when the Mat owns such storage
// outright, and is a copy otherwise (a Python buffer, an Allocator, a lent Mat).
static ncnn_mat_t ncnn_mp_output_handle(mp_obj_t instance, qstr method, mp_obj_t out, ncnn_mp_lent_t *lent) {
    if (mp_obj_cast_to_native_base(out, MP_OBJ_FROM_PTR(&ncnn_mp_type_Mat)) == MP_OBJ_NULL) {
        mp_raise_msg_varg(&mp_type_TypeError, NCNN_MP_FORMAT("%s.%q: a top blob must be a Mat, not %s"),
            mp_obj_get_type_str(instance), method, mp_obj_get_type_str(out));
    }
    char where[NCNN_MP_WHERE_LEN];  // the user's method: "MyLayer.forward: the Mat was released"
    ncnn_mp_mat_obj_t *m = ncnn_mp_get_mat(out, ncnn_mp_attr_where(where, mp_obj_get_type_str(instance), method));
    if (m->kind == NCNN_MP_MAT_BORROWED && m->lent == lent) {
        nlr_raise(ncnn_mp_layer_error(&mp_type_ValueError, instance, method,
            NCNN_MP_TEXT("returned a Mat ncnn lent it (return bottom.clone(), or use forward_inplace)")));
    }
    if (ncnn_mat_get_dims(m->handle) == 0) {
        nlr_raise(ncnn_mp_layer_error(&mp_type_ValueError, instance, method, NCNN_MP_TEXT("produced an empty Mat")));
    }
    // The layers after it read float32 (a custom layer's top is never an int8 blob to the
    // Net's check: shape_guard.h), as Extractor.input requires: an int8 or fp16 Mat would be
    // read past its end.
    if (ncnn_mat_get_elemsize(m->handle) != 4u * (size_t)ncnn_mat_get_elempack(m->handle)) {
        nlr_raise(ncnn_mp_layer_error(&mp_type_ValueError, instance, method,
            NCNN_MP_TEXT("produced a Mat of other elements than float32 (the layers after it read float32)")));
    }
    ncnn_mat_t h = m->handle;
    int dims = ncnn_mat_get_dims(h);
    bool shareable = m->kind == NCNN_MP_MAT_OWNED && m->keep == MP_OBJ_NULL && m->allocator == NULL
        && m->external == NULL;
    ncnn_mat_t copy;
    if (shareable) {
        int w = ncnn_mat_get_w(h), hh = ncnn_mat_get_h(h), d = ncnn_mat_get_d(h), c = ncnn_mat_get_c(h);
        copy = dims == 1 ? ncnn_mat_reshape_1d(h, w, NULL)
            : dims == 2 ? ncnn_mat_reshape_2d(h, w, hh, NULL)
            : dims == 3 ? ncnn_mat_reshape_3d(h, w, hh, c, NULL)
            : ncnn_mat_reshape_4d(h, w, hh, d, c, NULL);
    } else {
        copy = ncnn_mat_clone(h, NULL);
    }
    if (ncnn_mat_get_data(copy) == NULL) {
        ncnn_mat_destroy(copy);
        nlr_raise(ncnn_mp_layer_error(&mp_type_MemoryError, instance, method, NCNN_MP_TEXT("ncnn could not allocate the top blob")));
    }
    return copy;
}

// load_param / load_model / create_pipeline / destroy_pipeline: one lent argument, a status back.
static int ncnn_mp_simple_callback(ncnn_layer_t layer, qstr method, mp_obj_t (*lend)(ncnn_mp_frame_t *f, void *arg),
    void *arg) {
    ncnn_mp_frame_t f;
    if (!ncnn_mp_frame_open(&f, layer, MP_OBJ_NULL)) {
        return method == MP_QSTR_destroy_pipeline ? 0 : -1;
    }
    nlr_buf_t nlr;
    if (nlr_push(&nlr) == 0) {
        mp_obj_t dest[3];
        if (ncnn_mp_find_method(f.instance, method, dest)) {
            dest[2] = lend(&f, arg);
            ncnn_mp_status(f.instance, method, mp_call_method_n_kw(1, 0, dest));
        }
        nlr_pop();
        return ncnn_mp_frame_close(&f, NULL, method);
    }
    return ncnn_mp_frame_close(&f, &nlr, method);
}

static mp_obj_t ncnn_mp_lend_paramdict(ncnn_mp_frame_t *f, void *p) {
    return ncnn_mp_paramdict_lend(p, &f->lent);
}
// Under a load_model(copy=False), the ModelBin is given the buffer the weights lie in.
static mp_obj_t ncnn_mp_lend_modelbin(ncnn_mp_frame_t *f, void *p) {
    return ncnn_mp_modelbin_lend(p, f->call ? f->call->weights : MP_OBJ_NULL, &f->lent);
}
static mp_obj_t ncnn_mp_lend_option_arg(ncnn_mp_frame_t *f, void *p) {
    return ncnn_mp_option_lend(p, &f->lent);
}

// What ncnn's forward takes for granted of a layer's blobs, given its flags (its
// bottoms and tops are known from here on): a one_blob_only layer reads bottoms[0] and
// writes tops[0]; an in-place layer of several blobs hands its bottoms back as its tops.
static void ncnn_mp_check_blob_counts(mp_obj_t instance, ncnn_layer_t layer) {
    int bottoms = ncnn_layer_get_bottom_count(layer), tops = ncnn_layer_get_top_count(layer);
    bool one = ncnn_layer_get_one_blob_only(layer);
    if (one ? bottoms != 1 || tops != 1 : ncnn_layer_get_support_inplace(layer) && bottoms != tops) {
        mp_raise_msg_varg(&mp_type_ValueError, NCNN_MP_FORMAT("%s.load_param: the .param gives the layer %d bottom(s) and %d top(s), which %s cannot serve"), mp_obj_get_type_str(instance), bottoms, tops,
            one ? "one_blob_only = True" : "support_inplace = True");
    }
}

static int ncnn_mp_tr_load_param(ncnn_layer_t layer, const ncnn_paramdict_t pd) {
    ncnn_mp_frame_t f;
    if (ncnn_mp_frame_open(&f, layer, MP_OBJ_NULL)) {
        nlr_buf_t nlr;
        if (nlr_push(&nlr) == 0) {
            ncnn_mp_check_blob_counts(f.instance, layer);
            nlr_pop();
            ncnn_mp_frame_close(&f, NULL, MP_QSTR_load_param);
        } else {
            return ncnn_mp_frame_close(&f, &nlr, MP_QSTR_load_param);
        }
    }
    int ret = ncnn_mp_simple_callback(layer, MP_QSTR_load_param, ncnn_mp_lend_paramdict, pd);
    mp_obj_t instance = ncnn_mp_root_get(layer);
    if (instance != MP_OBJ_NULL) {  // ncnn sizes the shape lists once this returns
        mp_obj_t native = mp_obj_cast_to_native_base(instance, MP_OBJ_FROM_PTR(&ncnn_mp_type_Layer));
        ((ncnn_mp_layer_obj_t *)MP_OBJ_TO_PTR(native))->shapes_ready = true;
    }
    return ret;
}
static int ncnn_mp_tr_load_model(ncnn_layer_t layer, const ncnn_modelbin_t mb) {
    return ncnn_mp_simple_callback(layer, MP_QSTR_load_model, ncnn_mp_lend_modelbin, mb);
}
static int ncnn_mp_tr_create_pipeline(ncnn_layer_t layer, const ncnn_option_t opt) {
    return ncnn_mp_simple_callback(layer, MP_QSTR_create_pipeline, ncnn_mp_lend_option_arg, opt);
}
static int ncnn_mp_tr_destroy_pipeline(ncnn_layer_t layer, const ncnn_option_t opt) {
    return ncnn_mp_simple_callback(layer, MP_QSTR_destroy_pipeline, ncnn_mp_lend_option_arg, opt);
}

// A lent Mat for a bottom blob: ncnn's, read-only (other layers may read the same blob).
static mp_obj_t ncnn_mp_lend_bottom(ncnn_mp_lent_t *lent, ncnn_mat_t h) {
    mp_obj_t m = ncnn_mp_mat_lend(h, lent);
    ((ncnn_mp_mat_obj_t *)MP_OBJ_TO_PTR(m))->readonly = true;
    return m;
}

// The Option for a forward. Under a call, the call's (ncnn_mp_call_t.option): made once
// for the many layers of an extract, where it was made per layer (an allocation of
// several GC blocks each). It is valid wherever a layer may keep and use it: in this
// thread's callbacks under the call, each of which first makes sure it wraps the option
// ncnn handed that callback (a layer with a featmask gets a masked copy; the old wrapper
// expires then), and never after the call, or in another thread.
static mp_obj_t ncnn_mp_lend_option(ncnn_mp_frame_t *f, ncnn_option_t opt) {
    return f->call ? ncnn_mp_option_lend_to_call(opt, &f->call->option) : ncnn_mp_option_lend(opt, &f->lent);
}

// forward with n bottoms and n2 tops (n = n2 = 1 for a one_blob_only layer).
// Two styles, told apart by the method's arity: forward(self, bottom, top, opt) -> int
// fills the top Mat(s) it is given (CPython ncnn); forward(self, bottom, opt) returns
// the top Mat, or a tuple/list of them (the earlier ncnn_mp).
static int ncnn_mp_forward(ncnn_layer_t layer, const ncnn_mat_t *bottoms, int n, ncnn_mat_t *tops, int n2,
    ncnn_option_t opt, bool single) {
    for (int i = 0; i < n2; i++) {
        tops[i] = NULL;
    }
    ncnn_mp_frame_t f;
    int ret = -1;
    nlr_buf_t nlr;
    if (ncnn_mp_frame_open(&f, layer, MP_OBJ_NULL)) {
        if (nlr_push(&nlr) == 0) {
            mp_obj_t dest[5];
            if (!ncnn_mp_find_method(f.instance, MP_QSTR_forward, dest)) {
                nlr_raise(ncnn_mp_layer_error(&mp_type_NotImplementedError, f.instance, MP_QSTR_forward,
                    NCNN_MP_TEXT("not defined (define forward, or set support_inplace and define forward_inplace)")));
            }
            mp_obj_t bottom;
            if (single) {
                bottom = ncnn_mp_lend_bottom(&f.lent, bottoms[0]);
            } else {
                bottom = mp_obj_new_list(n, NULL);
                for (int i = 0; i < n; i++) {
                    mp_obj_list_store(bottom, MP_OBJ_NEW_SMALL_INT(i), ncnn_mp_lend_bottom(&f.lent, bottoms[i]));
                }
            }
            mp_obj_t o = ncnn_mp_lend_option(&f, opt);
            dest[2] = bottom;
            if (ncnn_mp_arity(dest[0]) == 4) {
                // CPython style: the method fills top Mats made here (top.create / clone_from / ...).
                // They are kept in a tuple of their own (the list handed over may be changed),
                // not a variable-length array: nothing on this frame may move the stack
                // pointer after nlr_push.
                mp_obj_tuple_t *made = MP_OBJ_TO_PTR(mp_obj_new_tuple(n2, NULL));
                ncnn_mp_result_t fresh = { NULL, NULL, MP_OBJ_NULL };
                char where[NCNN_MP_WHERE_LEN];
                ncnn_mp_attr_where(where, mp_obj_get_type_str(f.instance), MP_QSTR_forward);
                for (int i = 0; i < n2; i++) {
                    made->items[i] = ncnn_mp_result_wrap(&fresh, ncnn_mat_create(), where);
                }
                dest[3] = single ? made->items[0] : mp_obj_new_list(n2, made->items);
                dest[4] = o;
                ncnn_mp_status(f.instance, MP_QSTR_forward, mp_call_method_n_kw(3, 0, dest));
                for (int i = 0; i < n2; i++) {
                    tops[i] = ncnn_mp_output_handle(f.instance, MP_QSTR_forward, made->items[i], &f.lent);
                }
            } else {
                dest[3] = o;
                mp_obj_t r = mp_call_method_n_kw(2, 0, dest);
                if (mp_obj_is_int(r) && !mp_obj_is_bool(r)) {
                    // A status instead of the top Mat(s): a failure code, or 0 with nothing to give.
                    ncnn_mp_status(f.instance, MP_QSTR_forward, r);
                    nlr_raise(ncnn_mp_layer_error(&mp_type_TypeError, f.instance, MP_QSTR_forward,
                        NCNN_MP_TEXT("returned 0 but no top Mat (return the Mat, or define forward(self, bottom, top, opt))")));
                }
                size_t count = 1;
                mp_obj_t *items = &r;
                if (mp_obj_is_type(r, &mp_type_tuple) || mp_obj_is_type(r, &mp_type_list)) {
                    mp_obj_get_array(r, &count, &items);
                }
                if (count != (size_t)n2) {
                    mp_raise_msg_varg(&mp_type_ValueError, NCNN_MP_FORMAT("%s.forward: returned %d top blob(s), the net expects %d"),
                        mp_obj_get_type_str(f.instance), (int)count, n2);
                }
                for (int i = 0; i < n2; i++) {
                    tops[i] = ncnn_mp_output_handle(f.instance, MP_QSTR_forward, items[i], &f.lent);
                }
            }
            nlr_pop();
            ret = ncnn_mp_frame_close(&f, NULL, MP_QSTR_forward);
        } else {
            ret = ncnn_mp_frame_close(&f, &nlr, MP_QSTR_forward);
        }
    }
    if (ret != 0) {
        // ncnn takes and destroys every top handle whatever the return code.
        for (int i = 0; i < n2; i++) {
            if (tops[i]) {
                ncnn_mat_destroy(tops[i]);
            }
            tops[i] = ncnn_mat_create();
        }
    }
    return ret;
}

static int ncnn_mp_tr_forward_1(const ncnn_layer_t layer, const ncnn_mat_t bottom, ncnn_mat_t *top, const ncnn_option_t opt) {
    return ncnn_mp_forward(layer, &bottom, 1, top, 1, opt, true);
}

static int ncnn_mp_tr_forward_n(const ncnn_layer_t layer, const ncnn_mat_t *bottoms, int n, ncnn_mat_t *tops, int n2,
    const ncnn_option_t opt) {
    return ncnn_mp_forward(layer, bottoms, n, tops, n2, opt, false);
}

static int ncnn_mp_forward_inplace(ncnn_layer_t layer, ncnn_mat_t *blobs, int n, ncnn_option_t opt, bool single) {
    ncnn_mp_frame_t f;
    if (!ncnn_mp_frame_open(&f, layer, MP_OBJ_NULL)) {
        return -1;
    }
    nlr_buf_t nlr;
    if (nlr_push(&nlr) == 0) {
        mp_obj_t dest[4];
        if (!ncnn_mp_find_method(f.instance, MP_QSTR_forward_inplace, dest)) {
            nlr_raise(ncnn_mp_layer_error(&mp_type_NotImplementedError, f.instance, MP_QSTR_forward_inplace, NCNN_MP_TEXT("not defined")));
        }
        mp_obj_t arg;
        if (single) {
            arg = ncnn_mp_mat_lend(blobs[0], &f.lent);
        } else {
            arg = mp_obj_new_list(n, NULL);
            for (int i = 0; i < n; i++) {
                mp_obj_list_store(arg, MP_OBJ_NEW_SMALL_INT(i), ncnn_mp_mat_lend(blobs[i], &f.lent));
            }
        }
        dest[2] = arg;
        dest[3] = ncnn_mp_lend_option(&f, opt);
        ncnn_mp_status(f.instance, MP_QSTR_forward_inplace, mp_call_method_n_kw(2, 0, dest));
        nlr_pop();
        return ncnn_mp_frame_close(&f, NULL, MP_QSTR_forward_inplace);
    }
    return ncnn_mp_frame_close(&f, &nlr, MP_QSTR_forward_inplace);
}

static int ncnn_mp_tr_forward_inplace_1(const ncnn_layer_t layer, ncnn_mat_t blob, const ncnn_option_t opt) {
    return ncnn_mp_forward_inplace(layer, &blob, 1, opt, true);
}

static int ncnn_mp_tr_forward_inplace_n(const ncnn_layer_t layer, ncnn_mat_t *blobs, int n, const ncnn_option_t opt) {
    return ncnn_mp_forward_inplace(layer, blobs, n, opt, false);
}

ncnn_layer_t ncnn_mp_trampoline_layer_create(void) {
    ncnn_layer_t h = ncnn_layer_create();
    h->load_param = ncnn_mp_tr_load_param;
    h->load_model = ncnn_mp_tr_load_model;
    h->create_pipeline = ncnn_mp_tr_create_pipeline;
    h->destroy_pipeline = ncnn_mp_tr_destroy_pipeline;
    h->forward_1 = ncnn_mp_tr_forward_1;
    h->forward_n = ncnn_mp_tr_forward_n;
    h->forward_inplace_1 = ncnn_mp_tr_forward_inplace_1;
    h->forward_inplace_n = ncnn_mp_tr_forward_inplace_n;
    return h;
}

// ---------------------------------------------------------------------------
// Registration: the creator and destroyer ncnn calls while it loads and clears a Net.

static int ncnn_mp_fail_load_param(ncnn_layer_t layer, const ncnn_paramdict_t pd) {
    (void)layer;
    (void)pd;
    return -1;
}

// What ncnn gets when the Python creator failed: ncnn dereferences whatever the creator
// returns, so never NULL, but a layer whose load_param fails and so stops the load.
static ncnn_layer_t ncnn_mp_failed_layer(void) {
    ncnn_layer_t h = ncnn_layer_create();
    h->load_param = ncnn_mp_fail_load_param;
    return h;
}

// The checks a class must pass before ncnn gets its layer: the flags it set in
// __init__ must be servable by the methods it defines. (support_packing and the
// fp16/bf16 flags are the class's promise to handle such blobs; nothing to check.)
static void ncnn_mp_check_layer_class(mp_obj_t instance, ncnn_layer_t h) {
    mp_obj_t dest[2];
    bool has_forward = ncnn_mp_find_method(instance, MP_QSTR_forward, dest);
    bool has_inplace = ncnn_mp_find_method(instance, MP_QSTR_forward_inplace, dest);
    if (ncnn_layer_get_support_inplace(h) && !has_inplace) {
        nlr_raise(ncnn_mp_layer_error(&mp_type_TypeError, instance, MP_QSTR_forward_inplace,
            NCNN_MP_TEXT("missing, but support_inplace is True")));
    }
    if (!ncnn_layer_get_support_inplace(h) && !has_forward) {
        nlr_raise(ncnn_mp_layer_error(&mp_type_TypeError, instance, MP_QSTR_forward,
            NCNN_MP_TEXT("missing (or set support_inplace = True and define forward_inplace)")));
    }
}

static ncnn_layer_t ncnn_mp_creator(void *userdata) {
    ncnn_mp_factory_t *factory = userdata;
    if (ncnn_mp_in_collection()) {
        return ncnn_mp_failed_layer();
    }
    bool gil = ncnn_mp_call_take_gil(ncnn_mp_call_current());
    ncnn_layer_t made = NULL;
    nlr_buf_t nlr;
    if (nlr_push(&nlr) == 0) {
        mp_obj_t instance = mp_call_function_0(factory->creator);
        mp_obj_t native = mp_obj_cast_to_native_base(instance, MP_OBJ_FROM_PTR(&ncnn_mp_type_Layer));
        if (native == MP_OBJ_NULL || !mp_obj_is_type(native, &ncnn_mp_type_Layer)
            || !((ncnn_mp_layer_obj_t *)MP_OBJ_TO_PTR(native))->custom) {
            mp_raise_msg_varg(&mp_type_TypeError, NCNN_MP_FORMAT("%s: the creator for '%s' returned %s, not an instance of a Layer subclass (did __init__ call super().__init__()?)"),
                "Net.register_custom_layer", factory->name, mp_obj_get_type_str(instance));
        }
        ncnn_mp_layer_obj_t *l = MP_OBJ_TO_PTR(native);
        if (!l->owned || l->handle == NULL) {
            mp_raise_msg_varg(&mp_type_ValueError, NCNN_MP_FORMAT("%s: the creator for '%s' returned a layer instance that a Net already uses (return a new instance each time)"),
                "Net.register_custom_layer", factory->name);
        }
        // ncnn copies these flags from the layer right after this returns.
        ncnn_mp_layer_copy_flags_from_instance(instance, l->handle);
        ncnn_mp_check_layer_class(instance, l->handle);
        ncnn_mp_root_add(l->handle, instance);
        l->owned = false;  // ncnn destroys it (ncnn_mp_destroyer)
        ncnn_mp_live_layers_add(1);
        made = l->handle;
        nlr_pop();
    } else {
        ncnn_mp_keep_error(MP_OBJ_FROM_PTR(nlr.ret_val), NULL, MP_QSTR___init__);
    }
    if (gil) {
        ncnn_mp_call_give_gil();
    }
    return made ? made : ncnn_mp_failed_layer();
}

// May run inside a garbage collection (a Net torn down by a finaliser): no allocation.
static void ncnn_mp_destroyer(ncnn_layer_t layer, void *userdata) {
    (void)userdata;
    mp_obj_t instance = ncnn_mp_root_remove(layer);
    if (instance != MP_OBJ_NULL) {
        mp_obj_t native = mp_obj_cast_to_native_base(instance, MP_OBJ_FROM_PTR(&ncnn_mp_type_Layer));
        ((ncnn_mp_layer_obj_t *)MP_OBJ_TO_PTR(native))->handle = NULL;
        ncnn_mp_live_layers_add(-1);
    }
    ncnn_layer_destroy(layer);
}

void ncnn_mp_register_custom_layer(ncnn_mp_net_native_t *net, mp_obj_t type, mp_obj_t creator, const char *where) {
    if (!mp_obj_is_callable(creator)) {
        mp_raise_msg_varg(&mp_type_TypeError, NCNN_MP_FORMAT("%s: the creator must be a Layer subclass or a callable returning a Layer instance, not %s"), where, mp_obj_get_type_str(creator));
    }
    const char *name = NULL;
    int index = -1;
    if (mp_obj_is_str(type)) {
        #if NCNN_STRING
        name = mp_obj_str_get_str(type);
        if (name[0] == 0) {
            ncnn_mp_raise_value(where, NCNN_MP_TEXT("the type name is empty"));
        }
        #else
        ncnn_mp_raise_not_built(where, NCNN_MP_TEXT("NCNN_STRING (register by type index)"));
        #endif
    } else if (mp_obj_is_int(type)) {
        index = ncnn_mp_get_int_in(type, 0, INT32_MAX, where, "type index");
    } else {
        mp_raise_msg_varg(&mp_type_TypeError, NCNN_MP_FORMAT("%s: type must be a name (str) or a type index (int), not %s"),
            where, mp_obj_get_type_str(type));
    }
    // ncnn keeps the type name's pointer: the record holds a copy that lives with the net.
    size_t len = name ? strlen(name) : 15;
    ncnn_mp_factory_t *f = malloc(sizeof(*f) + len + 1);
    if (f == NULL) {
        mp_raise_msg_varg(&mp_type_MemoryError, NCNN_MP_FORMAT("%s: out of memory"), where);
    }
    f->creator = creator;
    f->next = net->factories;
    if (name) {
        memcpy(f->name, name, len + 1);
    } else {
        snprintf(f->name, len + 1, "#%d", index);  // for messages only
    }
    nlr_buf_t nlr;
    if (nlr_push(&nlr) == 0) {
        ncnn_mp_root_add(f, creator);
        nlr_pop();
    } else {
        free(f);
        nlr_jump(nlr.ret_val);
    }
    net->factories = f;
    #if NCNN_STRING
    if (name) {
        ncnn_net_register_custom_layer_by_type(net->handle, f->name, ncnn_mp_creator, ncnn_mp_destroyer, f);
        return;
    }
    #endif
    ncnn_net_register_custom_layer_by_typeindex(net->handle, index, ncnn_mp_creator, ncnn_mp_destroyer, f);
}
