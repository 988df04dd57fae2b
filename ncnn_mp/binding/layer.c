// SPDX-License-Identifier: MIT
// Layer: one ncnn layer used on its own (ncnn_layer_*): a built-in type, or, for a
// Python subclass, a layer whose methods ncnn calls back in Python (trampoline.c).
#include <string.h>

#include "ncnn_mp.h"
#include "cxx_seam.h"

ncnn_mp_layer_obj_t *ncnn_mp_get_layer(mp_obj_t obj, const char *where) {
    ncnn_mp_layer_obj_t *self = ncnn_mp_cast(obj, &ncnn_mp_type_Layer, where);
    if (self->handle == NULL) {
        ncnn_mp_raise_value(where, NCNN_MP_TEXT("the layer was destroyed by its Net"));
    }
    return self;
}

// Layer(type: str) / Layer(typeindex: int) / Layer() for a Python custom layer
//   ncnn_layer_create_by_type / _by_typeindex / ncnn_layer_create
static mp_obj_t ncnn_mp_Layer_make_new(const mp_obj_type_t *type, size_t n_args, size_t n_kw, const mp_obj_t *all_args) {
    const char *where = "Layer()";
    enum { ARG_type, ARG_typeindex };
    static const mp_arg_t allowed[] = {
        { MP_QSTR_type, MP_ARG_OBJ, {.u_obj = mp_const_none} },
        { MP_QSTR_typeindex, MP_ARG_KW_ONLY | MP_ARG_OBJ, {.u_obj = mp_const_none} },
    };
    mp_arg_val_t args[MP_ARRAY_SIZE(allowed)];
    ncnn_mp_parse_args_kw_array(where, n_args, n_kw, all_args, MP_ARRAY_SIZE(allowed), allowed, args);
    mp_obj_t type_name = args[ARG_type].u_obj, typeindex = args[ARG_typeindex].u_obj;
    if (type_name != mp_const_none && typeindex != mp_const_none) {
        ncnn_mp_raise_type(where, NCNN_MP_TEXT("give type= or typeindex=, not both"));
    }
    ncnn_mp_layer_obj_t *self = mp_obj_malloc_with_finaliser(ncnn_mp_layer_obj_t, type);
    memset(&self->handle, 0, sizeof(*self) - offsetof(ncnn_mp_layer_obj_t, handle));
    ncnn_layer_t h;
    if (type_name != mp_const_none) {
        #if NCNN_STRING
        if (!mp_obj_is_str(type_name)) {
            mp_raise_msg_varg(&mp_type_TypeError, NCNN_MP_FORMAT("%s: type must be a str, not %s"),
                where, mp_obj_get_type_str(type_name));
        }
        h = ncnn_layer_create_by_type(mp_obj_str_get_str(type_name));
        if (h == NULL) {
            mp_raise_msg_varg(&mp_type_ValueError, NCNN_MP_FORMAT("%s: ncnn has no layer type '%s' (or it was not built in)"),
                where, mp_obj_str_get_str(type_name));
        }
        #else
        ncnn_mp_raise_not_built(where, NCNN_MP_TEXT("NCNN_STRING (use typeindex=)"));
        #endif
    } else if (typeindex != mp_const_none) {
        h = ncnn_layer_create_by_typeindex(ncnn_mp_get_int_in(typeindex, 0, INT32_MAX, where, "typeindex"));
        if (h == NULL) {
            mp_raise_msg_varg(&mp_type_ValueError, NCNN_MP_FORMAT("%s: ncnn has no layer with typeindex %d"),
                where, (int)mp_obj_get_int(typeindex));
        }
    } else {
        // The base of a Python custom layer: ncnn calls back into the Python methods.
        h = ncnn_mp_trampoline_layer_create();
        self->custom = true;
    }
    if (!self->custom) {
        ncnn_mp_cxx_guard_layer(h);  // a Convolution's forward refuses another channel count, ...
    }
    self->handle = h;
    self->owned = true;
    return MP_OBJ_FROM_PTR(self);
}

// __del__: ncnn_layer_destroy, unless ncnn owns the layer (it is part of a Net).
static mp_obj_t ncnn_mp_Layer_del(mp_obj_t self_in) {
    ncnn_mp_layer_obj_t *self = MP_OBJ_TO_PTR(self_in);
    if (self->owned && self->handle) {
        if (self->pipeline_opt) {
            // destroy_pipeline needs the option it was created with; no Python can run here.
            if (!self->custom) {
                self->handle->destroy_pipeline(self->handle, self->pipeline_opt);
            }
            ncnn_option_destroy(self->pipeline_opt);
            self->pipeline_opt = NULL;
        }
        ncnn_layer_destroy(self->handle);
    }
    self->handle = NULL;
    return mp_const_none;
}
static NCNN_MP_DEFINE_METHOD_1(ncnn_mp_Layer_del_obj, Layer, __del__, ncnn_mp_Layer_del);

static void ncnn_mp_layer_check_ret(int ret, const char *where) {
    if (ret != 0) {
        mp_raise_msg_varg(&mp_type_ValueError, NCNN_MP_FORMAT("%s: ncnn returned %d (ncnn's log on stderr says why)"),
            where, ret);
    }
}

// A forward's -100 is a blob ncnn could not allocate (a load's -100 is any weight it could
// not read: ValueError like the rest).
static void ncnn_mp_layer_check_forward(int ret, const char *where) {
    if (ret == NCNN_MP_OUT_OF_MEMORY) {
        mp_raise_msg_varg(&mp_type_MemoryError, NCNN_MP_FORMAT("%s: ncnn ran out of memory (error -100)"), where);
    }
    ncnn_mp_layer_check_ret(ret, where);
}

// The shape guard's refusal (shape_guard.h) of a standalone layer's load or forward, if it refused.
static void ncnn_mp_layer_refused(ncnn_layer_t layer, ncnn_mp_call_t *call, int ret, const char *where) {
    if (ret == NCNN_MP_SHAPE_REFUSED && call->refusal.rule != NCNN_MP_FITS) {
        vstr_t label;
        vstr_init(&label, 24);
        vstr_printf(&label, "the layer (typeindex %d)", ncnn_layer_get_typeindex(layer));
        ncnn_mp_raise_shape_refused(where, "layer", vstr_null_terminated_str(&label), &call->refusal);
    }
}

// After a standalone forward (ncnn_mp_call_stop'ped): an interrupt that came meanwhile, the
// shape guard's refusal, or ncnn's failure code.
static void ncnn_mp_layer_forward_done(ncnn_layer_t layer, ncnn_mp_call_t *call, int ret, const char *where) {
    ncnn_mp_call_raise(call);
    ncnn_mp_layer_refused(layer, call, ret, where);
    ncnn_mp_layer_check_forward(ret, where);
}

// One step of a standalone built-in layer into ncnn, as the C++ seam runs it (cxx_seam.h).
typedef enum {
    NCNN_MP_STEP_LOAD_PARAM, NCNN_MP_STEP_LOAD_MODEL, NCNN_MP_STEP_CREATE_PIPELINE, NCNN_MP_STEP_DESTROY_PIPELINE,
    NCNN_MP_STEP_FORWARD, NCNN_MP_STEP_FORWARD_INPLACE,
} ncnn_mp_layer_step_kind_t;
typedef struct {
    ncnn_mp_layer_step_kind_t kind;
    ncnn_layer_t layer;
    void *with;           // the ParamDict, the C++ ModelBin (see Layer.load_model)
    ncnn_option_t opt;
    ncnn_mat_t *bottoms;  // (forward_inplace: the blobs)
    ncnn_mat_t *tops;
    int n, n_top;
    bool multi;           // the list forms (forward_n, forward_inplace_n)
    int ret;
} ncnn_mp_layer_step_t;

static void ncnn_mp_layer_step_call(void *arg) {
    ncnn_mp_layer_step_t *s = arg;
    ncnn_layer_t l = s->layer;
    switch (s->kind) {
        case NCNN_MP_STEP_LOAD_PARAM:
            s->ret = l->load_param(l, s->with);
            break;
        case NCNN_MP_STEP_LOAD_MODEL:
            s->ret = l->load_model(l, s->with);
            break;
        case NCNN_MP_STEP_CREATE_PIPELINE:
            s->ret = l->create_pipeline(l, s->opt);
            break;
        case NCNN_MP_STEP_DESTROY_PIPELINE:
            s->ret = l->destroy_pipeline(l, s->opt);
            break;
        case NCNN_MP_STEP_FORWARD:
            s->ret = s->multi ? l->forward_n(l, s->bottoms, s->n, s->tops, s->n_top, s->opt)
                : l->forward_1(l, s->bottoms[0], &s->tops[0], s->opt);
            break;
        default:
            s->ret = s->multi ? l->forward_inplace_n(l, s->bottoms, s->n, s->opt)
                : l->forward_inplace_1(l, s->bottoms[0], s->opt);
            break;
    }
}

// Runs the step through the C++ seam under `call` (begun by the caller: where the guard keeps
// what the layer threw, GuardLayer::caught). What the seam caught around the layer (c_api.cpp's
// glue allocating) is kept there the same way: the layer's refusal, raised by ncnn_mp_layer_refused.
static int ncnn_mp_layer_step(ncnn_mp_layer_step_t *s, ncnn_mp_call_t *call) {
    int caught = ncnn_mp_cxx_catch(ncnn_mp_layer_step_call, s);
    if (caught != 0) {
        call->refusal.rule = NCNN_MP_THREW;
        call->refusal.expected = caught;
        s->ret = NCNN_MP_SHAPE_REFUSED;
    }
    return s->ret;
}

// A step that runs no Python (load_param, create_pipeline, destroy_pipeline) under a call
// record of its own; then ncnn_mp_layer_step_raise.
static int ncnn_mp_layer_run(ncnn_mp_layer_step_t *s, ncnn_mp_call_t *call) {
    ncnn_mp_call_begin(call);
    int ret = ncnn_mp_layer_step(s, call);
    ncnn_mp_call_stop(call);
    return ret;
}

// After such a step: what the layer threw (or the guard refused), else ValueError for ncnn's code.
static void ncnn_mp_layer_step_raise(ncnn_layer_t layer, ncnn_mp_call_t *call, int ret, const char *where) {
    ncnn_mp_layer_refused(layer, call, ret, where);
    ncnn_mp_layer_check_ret(ret, where);
}

// Runs one of the layer's own steps on a standalone layer. A Python custom layer
// runs the Python method directly (no ncnn in between), so it never gets here.
static ncnn_mp_layer_obj_t *ncnn_mp_get_builtin_layer(mp_obj_t obj, const char *where) {
    ncnn_mp_layer_obj_t *self = ncnn_mp_get_layer(obj, where);
    if (self->custom) {
        mp_raise_msg_varg(&mp_type_NotImplementedError, NCNN_MP_FORMAT("%s: this custom layer does not define it"), where);
    }
    if (!self->owned) {
        ncnn_mp_raise_value(where, NCNN_MP_TEXT("a layer inside a Net is run by the Net (Extractor.extract)"));
    }
    return self;
}

// Layer.load_param(pd: ParamDict) -> None   layer->load_param
static mp_obj_t ncnn_mp_Layer_load_param(mp_obj_t self_in, mp_obj_t pd) {
    const char *where = "Layer.load_param";
    ncnn_mp_layer_obj_t *self = ncnn_mp_get_builtin_layer(self_in, where);
    if (self->pipeline_opt) {
        ncnn_mp_raise_value(where, NCNN_MP_TEXT("load parameters before create_pipeline (or destroy_pipeline first)"));
    }
    ncnn_mp_layer_step_t s = { NCNN_MP_STEP_LOAD_PARAM, self->handle, ncnn_mp_get_paramdict_handle(pd, where), NULL, NULL, NULL, 0, 0, false, 0 };
    ncnn_mp_call_t call;
    ncnn_mp_layer_step_raise(self->handle, &call, ncnn_mp_layer_run(&s, &call), where);
    self->stage = 1;
    return mp_const_none;
}
static NCNN_MP_DEFINE_METHOD_2(ncnn_mp_Layer_load_param_obj, Layer, load_param, ncnn_mp_Layer_load_param);

// Layer.load_model(mb: ModelBin) -> None   layer->load_model
static mp_obj_t ncnn_mp_Layer_load_model(mp_obj_t self_in, mp_obj_t mb) {
    const char *where = "Layer.load_model";
    ncnn_mp_layer_obj_t *self = ncnn_mp_get_builtin_layer(self_in, where);
    if (self->pipeline_opt) {
        ncnn_mp_raise_value(where, NCNN_MP_TEXT("load weights before create_pipeline (or destroy_pipeline first)"));
    }
    if (self->stage < 1) {
        ncnn_mp_raise_value(where, NCNN_MP_TEXT("call load_param first: it tells the layer how many weights to read"));
    }
    // ncnn's C API quirk: a built-in layer's load_model (__ncnn_layer_load_model) reads
    // its argument as the C++ ModelBin itself, not as the ncnn_modelbin_t around it
    // (custom layers get the ncnn_modelbin_t). Handing it the struct crashes in ncnn.
    // Neither the ModelBin nor its DataReader closes while ncnn reads (a Python reader's
    // read() runs under this call, and may try), and the reader reads where its buffer is now.
    ncnn_mp_use_t use;
    ncnn_mp_use_begin(&use, 2);
    ncnn_modelbin_t h = ncnn_mp_modelbin_use(&use, mb, where);
    ncnn_mp_call_t call;
    ncnn_mp_call_begin(&call);
    ncnn_mp_layer_step_t s = { NCNN_MP_STEP_LOAD_MODEL, self->handle, h->pthis, NULL, NULL, NULL, 0, 0, false, 0 };
    int ret = ncnn_mp_layer_step(&s, &call);
    ncnn_mp_use_end(&use);
    ncnn_mp_call_stop(&call);
    ncnn_mp_call_raise(&call);
    if (ret != 0) {
        ncnn_mp_modelbin_raise_refused(mb, where);
        ncnn_mp_layer_refused(self->handle, &call, ret, where);
    }
    ncnn_mp_layer_check_ret(ret, where);
    self->stage = 2;
    return mp_const_none;
}
static NCNN_MP_DEFINE_METHOD_2(ncnn_mp_Layer_load_model_obj, Layer, load_model, ncnn_mp_Layer_load_model);

// Layer.create_pipeline(opt: Option) -> None   layer->create_pipeline
// The layer keeps a copy of opt: forward must run with the same pipeline flags,
// and destroy_pipeline (also run on collection) needs it.
static mp_obj_t ncnn_mp_Layer_create_pipeline(mp_obj_t self_in, mp_obj_t opt_in) {
    const char *where = "Layer.create_pipeline";
    ncnn_mp_layer_obj_t *self = ncnn_mp_get_builtin_layer(self_in, where);
    ncnn_mp_result_t r;  // the pipeline's buffers come from the Option's allocators
    ncnn_mp_result_from_option(&r, opt_in, MP_OBJ_NULL, where);
    ncnn_option_t opt = r.opt;
    if (self->pipeline_opt) {
        ncnn_mp_raise_value(where, NCNN_MP_TEXT("the pipeline exists already (destroy_pipeline first)"));
    }
    if (self->stage < 1) {
        ncnn_mp_raise_value(where, NCNN_MP_TEXT("call load_param (and load_model for a layer with weights) first"));
    }
    ncnn_mp_layer_step_t s = { NCNN_MP_STEP_CREATE_PIPELINE, self->handle, NULL, opt, NULL, NULL, 0, 0, false, 0 };
    ncnn_mp_call_t call;
    ncnn_mp_layer_step_raise(self->handle, &call, ncnn_mp_layer_run(&s, &call), where);
    self->pipeline_opt = ncnn_option_create();
    ncnn_mp_option_copy_flags(self->pipeline_opt, opt);
    return mp_const_none;
}
static NCNN_MP_DEFINE_METHOD_2(ncnn_mp_Layer_create_pipeline_obj, Layer, create_pipeline, ncnn_mp_Layer_create_pipeline);

// Layer.destroy_pipeline(opt: Option) -> None   layer->destroy_pipeline
static mp_obj_t ncnn_mp_Layer_destroy_pipeline(mp_obj_t self_in, mp_obj_t opt_in) {
    const char *where = "Layer.destroy_pipeline";
    ncnn_mp_layer_obj_t *self = ncnn_mp_get_builtin_layer(self_in, where);
    ncnn_mp_get_option(opt_in, where);
    if (self->pipeline_opt == NULL) {
        return mp_const_none;
    }
    ncnn_mp_layer_step_t s = { NCNN_MP_STEP_DESTROY_PIPELINE, self->handle, NULL, self->pipeline_opt, NULL, NULL, 0, 0, false, 0 };
    ncnn_mp_call_t call;
    int ret = ncnn_mp_layer_run(&s, &call);
    ncnn_option_destroy(self->pipeline_opt);
    self->pipeline_opt = NULL;  // (ended, or failed to end: either way not ended twice)
    ncnn_mp_layer_step_raise(self->handle, &call, ret, where);
    return mp_const_none;
}
static NCNN_MP_DEFINE_METHOD_2(ncnn_mp_Layer_destroy_pipeline_obj, Layer, destroy_pipeline, ncnn_mp_Layer_destroy_pipeline);

// Before a forward: the steps ncnn's Net always runs, done here if the user skipped
// them (a layer run without load_param/create_pipeline reads unset weights).
static void ncnn_mp_layer_ready(ncnn_mp_layer_obj_t *self, ncnn_option_t opt, const char *where) {
    ncnn_mp_stack_check(0, where);
    if (self->stage < 1) {
        ncnn_paramdict_t pd = ncnn_paramdict_create();
        ncnn_mp_layer_step_t s = { NCNN_MP_STEP_LOAD_PARAM, self->handle, pd, NULL, NULL, NULL, 0, 0, false, 0 };
        ncnn_mp_call_t call;
        int ret = ncnn_mp_layer_run(&s, &call);
        ncnn_paramdict_destroy(pd);
        ncnn_mp_layer_step_raise(self->handle, &call, ret, where);
        self->stage = 1;
    }
    if (self->stage < 2) {
        ncnn_modelbin_t mb = ncnn_modelbin_create_from_mat_array(NULL, 0);
        ncnn_mp_layer_step_t s = { NCNN_MP_STEP_LOAD_MODEL, self->handle, mb->pthis, NULL, NULL, NULL, 0, 0, false, 0 };
        ncnn_mp_call_t call;  // (mb->pthis: see Layer.load_model)
        int ret = ncnn_mp_layer_run(&s, &call);
        ncnn_modelbin_destroy(mb);
        ncnn_mp_layer_refused(self->handle, &call, ret, where);
        if (ret != 0) {
            ncnn_mp_raise_value(where, NCNN_MP_TEXT("the layer needs weights: call load_model first"));
        }
        self->stage = 2;
    }
    if (self->pipeline_opt == NULL) {
        ncnn_mp_layer_step_t s = { NCNN_MP_STEP_CREATE_PIPELINE, self->handle, NULL, opt, NULL, NULL, 0, 0, false, 0 };
        ncnn_mp_call_t call;
        ncnn_mp_layer_step_raise(self->handle, &call, ncnn_mp_layer_run(&s, &call), where);
        self->pipeline_opt = ncnn_option_create();
        ncnn_mp_option_copy_flags(self->pipeline_opt, opt);
    }
    qstr differs = ncnn_mp_option_pipeline_mismatch(opt, self->pipeline_opt);
    if (differs != MP_QSTRnull) {
        mp_raise_msg_varg(&mp_type_ValueError, NCNN_MP_FORMAT("%s: opt.%q differs from the Option the pipeline was created with"),
            where, differs);
    }
}

// Why the ready layer cannot take `m`'s elements as they are, or NULL. Inside a Net, ncnn
// converts each bottom to what its layer takes (NetPrivate::convert_layout); a standalone
// forward hands the Mat over as it is, and a layer given elements it does not take reads
// them as float32, past their end (a Sigmoid given an int8 Mat segfaulted).
static mp_rom_error_text_t ncnn_mp_layer_refusal(ncnn_layer_t layer, ncnn_option_t opt, ncnn_mat_t m) {
    int elempack = ncnn_mat_get_elempack(m);
    if (elempack > 1 && !(ncnn_layer_get_support_packing(layer) && ncnn_option_get_use_packing_layout(opt))) {
        return NCNN_MP_TEXT("this layer takes Mats of elempack 1 here (convert_packing(1, opt) first)");
    }
    size_t bits = ncnn_mat_get_elemsize(m) * 8 / (size_t)elempack;
    bool half = (ncnn_layer_get_support_fp16_storage(layer) && ncnn_option_get_use_fp16_storage(opt))
        || (ncnn_layer_get_support_bf16_storage(layer) && ncnn_option_get_use_bf16_storage(opt));
    if (bits != 32 && !(bits == 16 && half)) {
        return NCNN_MP_TEXT("this layer takes float32 Mats here");
    }
    return NULL;
}

// ValueError unless the ready layer reads n inputs and writes n_top outputs: ncnn's layers
// index their blob lists without checking their size (arity.cpp).
static void ncnn_mp_layer_check_arity(ncnn_layer_t layer, size_t n, int n_top, const char *where) {
    ncnn_mp_arity_t a;
    if (ncnn_mp_cxx_arity_fits(layer, (int)n, n_top, &a)) {
        return;
    }
    if (a.max_bottoms == 0 && a.max_tops == 0 && a.min_tops == 0) {
        ncnn_mp_raise_value(where, NCNN_MP_TEXT("ncnn_mp does not know how many blobs this layer type reads with these parameters (run it in a Net, whose param file says)"));
    }
    vstr_t text;
    mp_print_t print;
    vstr_init_print(&text, 64, &print);
    bool inputs = (int)n < a.min_bottoms || (a.max_bottoms >= 0 && (int)n > a.max_bottoms);
    mp_printf(&print, "%s: this layer %s ", where, inputs ? "reads" : "writes");
    if (inputs) {
        ncnn_mp_print_count(&print, a.min_bottoms, a.max_bottoms);
        mp_printf(&print, " input(s) with these parameters, got %d", (int)n);
    } else {
        ncnn_mp_print_count(&print, a.min_tops, a.max_tops == -2 ? (int)n : a.max_tops);  // (-2: no more than the inputs)
        mp_printf(&print, " output(s) with these parameters (and %d input(s)), n_top was %d", (int)n, n_top);
    }
    mp_raise_msg_varg(&mp_type_ValueError, NCNN_MP_FORMAT("%s"), vstr_null_terminated_str(&text));
}

// The handle of bottom number i of a standalone forward on the ready layer, checked, and
// used (u) until the forward returns: the GIL is let go meanwhile, and another thread could
// release it.
static ncnn_mat_t ncnn_mp_layer_input(ncnn_mp_use_t *u, mp_obj_t mat, ncnn_layer_t layer, ncnn_option_t opt, size_t i,
    const char *where) {
    ncnn_mat_t h = ncnn_mp_mat_use(u, mat, where);
    if (ncnn_mat_get_dims(h) == 0) {
        ncnn_mp_raise_value(where, NCNN_MP_TEXT("the input Mat is empty"));
    }
    #if NCNN_BATCH
    if (ncnn_mat_get_n(h) > 1) {
        ncnn_mp_raise_value(where, NCNN_MP_TEXT("a batch Mat (n > 1) is not an input: give one batch(b) at a time"));
    }
    #endif
    mp_rom_error_text_t why = ncnn_mp_layer_refusal(layer, opt, h);
    if (why) {
        ncnn_mp_text_buf_t buf;
        mp_raise_msg_varg(&mp_type_ValueError, NCNN_MP_FORMAT("%s: input %d has elemsize %d and elempack %d: %s"),
            where, (int)i, (int)ncnn_mat_get_elemsize(h), ncnn_mat_get_elempack(h), ncnn_mp_text(why, &buf));
    }
    return h;
}

// Layer.forward(mat, opt) -> Mat, or forward([mats], n_top, opt) -> tuple[Mat, ...]
//   layer->forward_1 / layer->forward_n
// Other threads run while ncnn computes (a built-in layer calls no Python back). The tops
// may be the bottoms' own storage (Split, Noop, Reshape...): they are results of the bottoms.
static mp_obj_t ncnn_mp_Layer_forward(size_t n_args, const mp_obj_t *args) {
    const char *where = "Layer.forward";
    ncnn_mp_layer_obj_t *self = ncnn_mp_get_builtin_layer(args[0], where);
    bool multi = mp_obj_is_type(args[1], &mp_type_list) || mp_obj_is_type(args[1], &mp_type_tuple);
    if (n_args != (multi ? 4u : 3u)) {
        ncnn_mp_raise_type(where, NCNN_MP_TEXT("expected forward(mat, opt) or forward([mats], n_top, opt)"));
    }
    size_t n = 1;
    mp_obj_t *items = (mp_obj_t *)&args[1];
    if (multi) {
        mp_obj_get_array(args[1], &n, &items);
        if (n == 0) {
            ncnn_mp_raise_value(where, NCNN_MP_TEXT("no input Mats"));
        }
    }
    int n_top = multi ? ncnn_mp_get_int_in(args[2], 1, 64, where, "n_top") : 1;
    ncnn_mp_result_t r;  // (a tuple of the bottoms: the caller's list may change later)
    ncnn_mp_result_from_option(&r, args[n_args - 1], multi ? mp_obj_new_tuple(n, items) : args[1], where);
    ncnn_mp_layer_ready(self, r.opt, where);
    ncnn_mp_layer_check_arity(self->handle, n, n_top, where);
    ncnn_mat_t *bottoms = m_new(ncnn_mat_t, n);
    ncnn_mat_t *tops = m_new0(ncnn_mat_t, n_top);
    mp_obj_t *out = m_new(mp_obj_t, n_top);
    ncnn_mp_use_t use;
    ncnn_mp_use_begin(&use, n);
    for (size_t i = 0; i < n; i++) {
        bottoms[i] = ncnn_mp_layer_input(&use, items[i], self->handle, r.opt, i, where);
    }
    ncnn_mp_call_t call;  // (the GIL let go meanwhile; where a shape guard's refusal waits)
    ncnn_mp_call_begin(&call);
    // A one_blob_only layer runs through its one-blob forward, as a Net runs it (the list
    // form reaches ncnn's multi-blob code: a Scale's forward_inplace of a list reads a second blob).
    bool one = ncnn_layer_get_one_blob_only(self->handle);
    ncnn_mp_layer_step_t s = { NCNN_MP_STEP_FORWARD, self->handle, NULL, r.opt, bottoms, tops, (int)n, n_top, multi && !one, 0 };
    int ret = ncnn_mp_layer_step(&s, &call);
    ncnn_mp_use_end(&use);
    ncnn_mp_call_stop(&call);
    if (ret != 0 || call.error != MP_OBJ_NULL) {
        for (int i = 0; i < n_top; i++) {
            ncnn_mat_destroy(tops[i]);
        }
        ncnn_mp_layer_forward_done(self->handle, &call, ret, where);
    }
    for (int i = 0; i < n_top; i++) {
        out[i] = ncnn_mp_result_wrap(&r, tops[i], where);  // (wrap destroys the handle if it raises)
        tops[i] = NULL;
    }
    mp_obj_t result = multi ? mp_obj_new_tuple(n_top, out) : out[0];
    m_del(ncnn_mat_t, bottoms, n);
    m_del(ncnn_mat_t, tops, n_top);
    m_del(mp_obj_t, out, n_top);
    return result;
}
static NCNN_MP_DEFINE_METHOD_VAR_BETWEEN(ncnn_mp_Layer_forward_obj, Layer, forward, 3, 4, ncnn_mp_Layer_forward);

// Layer.forward_inplace(mat | [mats], opt) -> None   layer->forward_inplace_1 / _n
static mp_obj_t ncnn_mp_Layer_forward_inplace(mp_obj_t self_in, mp_obj_t mats, mp_obj_t opt_in) {
    const char *where = "Layer.forward_inplace";
    ncnn_mp_layer_obj_t *self = ncnn_mp_get_builtin_layer(self_in, where);
    if (!ncnn_layer_get_support_inplace(self->handle)) {
        ncnn_mp_raise_value(where, NCNN_MP_TEXT("this layer type does not support in-place forward"));
    }
    ncnn_mp_result_t r;  // nothing is made; the Option is read as for a result
    ncnn_mp_result_from_option(&r, opt_in, MP_OBJ_NULL, where);
    ncnn_mp_layer_ready(self, r.opt, where);
    bool multi = mp_obj_is_type(mats, &mp_type_list) || mp_obj_is_type(mats, &mp_type_tuple);
    size_t n = 1;
    mp_obj_t *items = &mats;
    if (multi) {
        mp_obj_get_array(mats, &n, &items);
    }
    ncnn_mp_layer_check_arity(self->handle, n, n, where);
    ncnn_mat_t *handles = m_new(ncnn_mat_t, n ? n : 1);
    ncnn_mp_use_t use;
    ncnn_mp_use_begin(&use, n);
    for (size_t i = 0; i < n; i++) {
        ncnn_mp_mat_obj_t *m = ncnn_mp_get_mat(items[i], where);
        if (m->readonly) {
            ncnn_mp_raise_value(where, NCNN_MP_TEXT("the Mat is read-only (over bytes, or a bottom blob ncnn lent)"));
        }
        handles[i] = ncnn_mp_layer_input(&use, items[i], self->handle, r.opt, i, where);
    }
    ncnn_mp_call_t call;
    ncnn_mp_call_begin(&call);
    bool one = ncnn_layer_get_one_blob_only(self->handle);  // (as in forward)
    ncnn_mp_layer_step_t s = { NCNN_MP_STEP_FORWARD_INPLACE, self->handle, NULL, r.opt, handles, NULL, (int)n, 0, multi && !one, 0 };
    int ret = ncnn_mp_layer_step(&s, &call);
    ncnn_mp_use_end(&use);
    ncnn_mp_call_stop(&call);
    m_del(ncnn_mat_t, handles, n ? n : 1);
    ncnn_mp_layer_forward_done(self->handle, &call, ret, where);
    return mp_const_none;
}
static NCNN_MP_DEFINE_METHOD_3(ncnn_mp_Layer_forward_inplace_obj, Layer, forward_inplace, ncnn_mp_Layer_forward_inplace);

// The bottom or top blob i of a layer inside a Net; *handle is the layer's.
static int ncnn_mp_layer_blob_index(mp_obj_t self_in, mp_obj_t i_in, bool top, bool shape, const char *where,
    ncnn_layer_t *handle) {
    ncnn_mp_layer_obj_t *self = ncnn_mp_get_layer(self_in, where);
    *handle = self->handle;
    if (shape && self->custom && !self->shapes_ready) {
        ncnn_mp_raise_value(where, NCNN_MP_TEXT("ncnn knows the blob shapes only after load_param returns"));
    }
    int count = top ? ncnn_layer_get_top_count(self->handle) : ncnn_layer_get_bottom_count(self->handle);
    return ncnn_mp_get_index(i_in, count, false, where, "index", "the layer has");
}

// Layer.get_bottom(i) / get_top(i) -> int (blob index)   ncnn_layer_get_bottom / _top
static mp_obj_t ncnn_mp_Layer_get_bottom(mp_obj_t self_in, mp_obj_t i) {
    ncnn_layer_t h;
    int k = ncnn_mp_layer_blob_index(self_in, i, false, false, "Layer.get_bottom", &h);
    return MP_OBJ_NEW_SMALL_INT(ncnn_layer_get_bottom(h, k));
}
static NCNN_MP_DEFINE_METHOD_2(ncnn_mp_Layer_get_bottom_obj, Layer, get_bottom, ncnn_mp_Layer_get_bottom);

static mp_obj_t ncnn_mp_Layer_get_top(mp_obj_t self_in, mp_obj_t i) {
    ncnn_layer_t h;
    int k = ncnn_mp_layer_blob_index(self_in, i, true, false, "Layer.get_top", &h);
    return MP_OBJ_NEW_SMALL_INT(ncnn_layer_get_top(h, k));
}
static NCNN_MP_DEFINE_METHOD_2(ncnn_mp_Layer_get_top_obj, Layer, get_top, ncnn_mp_Layer_get_top);

static mp_obj_t ncnn_mp_shape_tuple(int dims, int w, int h, int c) {
    mp_obj_t t[4] = { MP_OBJ_NEW_SMALL_INT(dims), MP_OBJ_NEW_SMALL_INT(w), MP_OBJ_NEW_SMALL_INT(h), MP_OBJ_NEW_SMALL_INT(c) };
    return mp_obj_new_tuple(4, t);
}

// Layer.get_bottom_shape(i) / get_top_shape(i) -> (dims, w, h, c)   ncnn_blob_get_bottom_shape / _top_shape
// The shapes written in the .param (shape hints); all 0 when the file has none.
static mp_obj_t ncnn_mp_Layer_get_bottom_shape(mp_obj_t self_in, mp_obj_t i) {
    const char *where = "Layer.get_bottom_shape";
    ncnn_layer_t layer;
    int k = ncnn_mp_layer_blob_index(self_in, i, false, true, where, &layer);
    int dims = 0, w = 0, h = 0, c = 0;
    ncnn_blob_get_bottom_shape(layer, k, &dims, &w, &h, &c);
    return ncnn_mp_shape_tuple(dims, w, h, c);
}
static NCNN_MP_DEFINE_METHOD_2(ncnn_mp_Layer_get_bottom_shape_obj, Layer, get_bottom_shape, ncnn_mp_Layer_get_bottom_shape);

static mp_obj_t ncnn_mp_Layer_get_top_shape(mp_obj_t self_in, mp_obj_t i) {
    const char *where = "Layer.get_top_shape";
    ncnn_layer_t layer;
    int k = ncnn_mp_layer_blob_index(self_in, i, true, true, where, &layer);
    int dims = 0, w = 0, h = 0, c = 0;
    ncnn_blob_get_top_shape(layer, k, &dims, &w, &h, &c);
    return ncnn_mp_shape_tuple(dims, w, h, c);
}
static NCNN_MP_DEFINE_METHOD_2(ncnn_mp_Layer_get_top_shape_obj, Layer, get_top_shape, ncnn_mp_Layer_get_top_shape);

// Layer.type_to_index(type: str) -> int   ncnn_layer_type_to_index (-1: no such type)
static mp_obj_t ncnn_mp_Layer_type_to_index(mp_obj_t type_name) {
    #if NCNN_STRING
    if (!mp_obj_is_str(type_name)) {
        ncnn_mp_raise_type("Layer.type_to_index", NCNN_MP_TEXT("type must be a str"));
    }
    return MP_OBJ_NEW_SMALL_INT(ncnn_layer_type_to_index(mp_obj_str_get_str(type_name)));
    #else
    ncnn_mp_raise_not_built("Layer.type_to_index", NCNN_MP_TEXT("NCNN_STRING"));
    #endif
}
static NCNN_MP_DEFINE_STATIC_1(ncnn_mp_Layer_type_to_index_fun_obj, Layer, type_to_index, ncnn_mp_Layer_type_to_index);
static MP_DEFINE_CONST_STATICMETHOD_OBJ(ncnn_mp_Layer_type_to_index_obj, MP_ROM_PTR(&ncnn_mp_Layer_type_to_index_fun_obj));

static mp_obj_t ncnn_mp_layer_blob_list(ncnn_layer_t h, bool top) {
    int n = top ? ncnn_layer_get_top_count(h) : ncnn_layer_get_bottom_count(h);
    mp_obj_t list = mp_obj_new_list(n, NULL);
    for (int i = 0; i < n; i++) {
        mp_obj_list_store(list, MP_OBJ_NEW_SMALL_INT(i),
            MP_OBJ_NEW_SMALL_INT(top ? ncnn_layer_get_top(h, i) : ncnn_layer_get_bottom(h, i)));
    }
    return list;
}

// Layer.one_blob_only / support_*: bool (read-write)   ncnn_layer_get_* / ncnn_layer_set_*
// Layer.name / type: str, typeindex / bottom_count / top_count: int, bottoms / tops: list[int] (read-only)
static void ncnn_mp_Layer_attr(mp_obj_t self_in, qstr attr, mp_obj_t *dest) {
    const ncnn_mp_layer_flag_t *flag = ncnn_mp_layer_flag(attr);
    static const qstr readonly[] = { MP_QSTR_name, MP_QSTR_type, MP_QSTR_typeindex, MP_QSTR_bottom_count,
                                     MP_QSTR_top_count, MP_QSTR_bottoms, MP_QSTR_tops };
    size_t ro = 0;
    while (ro < MP_ARRAY_SIZE(readonly) && readonly[ro] != attr) {
        ro++;
    }
    if (flag == NULL && ro == MP_ARRAY_SIZE(readonly)) {
        dest[1] = MP_OBJ_SENTINEL;
        return;
    }
    if (dest[0] != MP_OBJ_NULL && (flag == NULL || dest[1] == MP_OBJ_NULL)) {
        ncnn_mp_raise_attr_fixed("Layer", attr, dest);
    }
    char where[NCNN_MP_WHERE_LEN];
    ncnn_layer_t h = ncnn_mp_get_layer(self_in, ncnn_mp_attr_where(where, "Layer", attr))->handle;
    if (dest[0] != MP_OBJ_NULL) {
        flag->set(h, mp_obj_is_true(dest[1]));
        dest[0] = MP_OBJ_NULL;
        return;
    }
    if (flag) {
        dest[0] = mp_obj_new_bool(flag->get(h));
        return;
    }
    switch (ro) {
        #if NCNN_STRING
        case 0: dest[0] = mp_obj_new_str_from_cstr(ncnn_mp_layer_name(h)); break;
        case 1: dest[0] = mp_obj_new_str_from_cstr(ncnn_mp_layer_type(h)); break;
        #else
        case 0: case 1: dest[0] = mp_const_none; break;
        #endif
        case 2: dest[0] = mp_obj_new_int(ncnn_layer_get_typeindex(h)); break;
        case 3: dest[0] = MP_OBJ_NEW_SMALL_INT(ncnn_layer_get_bottom_count(h)); break;
        case 4: dest[0] = MP_OBJ_NEW_SMALL_INT(ncnn_layer_get_top_count(h)); break;
        case 5: dest[0] = ncnn_mp_layer_blob_list(h, false); break;
        default: dest[0] = ncnn_mp_layer_blob_list(h, true); break;
    }
}

static void ncnn_mp_Layer_print(const mp_print_t *print, mp_obj_t self_in, mp_print_kind_t kind) {
    (void)kind;
    ncnn_mp_layer_obj_t *self = MP_OBJ_TO_PTR(self_in);
    if (self->handle == NULL) {
        mp_printf(print, "<Layer destroyed>");
        return;
    }
    #if NCNN_STRING
    mp_printf(print, "<Layer type='%s' name='%s' typeindex=%d>", ncnn_mp_layer_type(self->handle),
        ncnn_mp_layer_name(self->handle), ncnn_layer_get_typeindex(self->handle));
    #else
    mp_printf(print, "<Layer typeindex=%d>", ncnn_layer_get_typeindex(self->handle));
    #endif
}

static const mp_rom_map_elem_t ncnn_mp_Layer_locals_table[] = {
    { MP_ROM_QSTR(MP_QSTR_load_param), MP_ROM_PTR(&ncnn_mp_Layer_load_param_obj) },
    { MP_ROM_QSTR(MP_QSTR_load_model), MP_ROM_PTR(&ncnn_mp_Layer_load_model_obj) },
    { MP_ROM_QSTR(MP_QSTR_create_pipeline), MP_ROM_PTR(&ncnn_mp_Layer_create_pipeline_obj) },
    { MP_ROM_QSTR(MP_QSTR_destroy_pipeline), MP_ROM_PTR(&ncnn_mp_Layer_destroy_pipeline_obj) },
    { MP_ROM_QSTR(MP_QSTR_forward), MP_ROM_PTR(&ncnn_mp_Layer_forward_obj) },
    { MP_ROM_QSTR(MP_QSTR_forward_inplace), MP_ROM_PTR(&ncnn_mp_Layer_forward_inplace_obj) },
    { MP_ROM_QSTR(MP_QSTR_get_bottom), MP_ROM_PTR(&ncnn_mp_Layer_get_bottom_obj) },
    { MP_ROM_QSTR(MP_QSTR_get_top), MP_ROM_PTR(&ncnn_mp_Layer_get_top_obj) },
    { MP_ROM_QSTR(MP_QSTR_get_bottom_shape), MP_ROM_PTR(&ncnn_mp_Layer_get_bottom_shape_obj) },
    { MP_ROM_QSTR(MP_QSTR_get_top_shape), MP_ROM_PTR(&ncnn_mp_Layer_get_top_shape_obj) },
    { MP_ROM_QSTR(MP_QSTR_type_to_index), MP_ROM_PTR(&ncnn_mp_Layer_type_to_index_obj) },
    { MP_ROM_QSTR(MP_QSTR___del__), MP_ROM_PTR(&ncnn_mp_Layer_del_obj) },
};
static MP_DEFINE_CONST_DICT(ncnn_mp_Layer_locals, ncnn_mp_Layer_locals_table);

MP_DEFINE_CONST_OBJ_TYPE(
    ncnn_mp_type_Layer, MP_QSTR_Layer, MP_TYPE_FLAG_NONE,
    make_new, ncnn_mp_Layer_make_new,
    print, ncnn_mp_Layer_print,
    attr, ncnn_mp_Layer_attr,
    locals_dict, &ncnn_mp_Layer_locals
    );
