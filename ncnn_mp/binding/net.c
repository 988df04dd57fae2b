// SPDX-License-Identifier: MIT
// Net: a loaded network (ncnn_net_*): loading params and weights, its option, its blobs.
#include <stdlib.h>
#include <string.h>

#include "ncnn_mp.h"
#include "cxx_seam.h"

// A public method's use of a Net object's native net, from ncnn_mp_net_use until
// ncnn_mp_net_done or until the method raises (an nlr jump callback leaves the net then):
// entered shared or alone, so that no other thread loads, clears or closes it meanwhile.
// ValueError if the Net was closed, RuntimeError (ncnn_mp_net_raise_busy) if busy.
typedef struct {
    nlr_jump_callback_node_t leave;  // first: the callback gets its address
    ncnn_mp_net_native_t *net;
} ncnn_mp_net_use_t;

static void ncnn_mp_net_use_leave(void *use) {
    ncnn_mp_net_leave(((ncnn_mp_net_use_t *)use)->net);
}

static ncnn_mp_net_native_t *ncnn_mp_net_use(ncnn_mp_net_use_t *u, mp_obj_t obj, bool alone, const char *where) {
    ncnn_mp_net_obj_t *self = ncnn_mp_cast(obj, &ncnn_mp_type_Net, where);
    mp_uint_t l = ncnn_mp_lock();  // (close() takes self->native under it)
    ncnn_mp_net_native_t *n = self->native;
    bool entered = n != NULL && ncnn_mp_net_try_enter(n, alone);
    ncnn_mp_unlock(l);
    if (n == NULL) {
        ncnn_mp_raise_value(where, NCNN_MP_TEXT("the Net was closed"));
    }
    if (!entered) {
        ncnn_mp_net_raise_busy(where);
    }
    u->net = n;
    nlr_push_jump_callback(&u->leave, ncnn_mp_net_use_leave);
    return n;
}

static void ncnn_mp_net_done(ncnn_mp_net_use_t *u) {
    nlr_pop_jump_callback(true);
}

// Net()   ncnn_net_create
static mp_obj_t ncnn_mp_Net_make_new(const mp_obj_type_t *type, size_t n_args, size_t n_kw, const mp_obj_t *args) {
    ncnn_mp_parse_args_kw_array("Net()", n_args, n_kw, args, 0, NULL, NULL);
    ncnn_mp_net_obj_t *self = mp_obj_malloc_with_finaliser(ncnn_mp_net_obj_t, type);
    self->native = NULL;
    ncnn_mp_net_native_t *n = calloc(1, sizeof(*n));
    if (n == NULL) {
        ncnn_mp_raise_text(&mp_type_MemoryError, "Net()", NCNN_MP_TEXT("out of memory"));
    }
    n->refs = 1;
    n->handle = ncnn_net_create();
    self->native = n;
    if (ncnn_mp_cxx_guard_net(n->handle) != 0) {
        ncnn_mp_raise_text(&mp_type_MemoryError, "Net()", NCNN_MP_TEXT("out of memory"));
    }
    return MP_OBJ_FROM_PTR(self);
}

// __del__: drops this object's reference; ncnn_net_destroy runs once no Extractor
// or Option view uses the net any more. (Inside a collection ncnn_mp skips custom
// layers' destroy_pipeline: no Python may run there.)
static mp_obj_t ncnn_mp_Net_del(mp_obj_t self_in) {
    ncnn_mp_net_obj_t *self = MP_OBJ_TO_PTR(self_in);
    ncnn_mp_net_native_unref(self->native);
    self->native = NULL;
    return mp_const_none;
}
static NCNN_MP_DEFINE_METHOD_1(ncnn_mp_Net_del_obj, Net, __del__, ncnn_mp_Net_del);

// Net.close() / with Net() as net: release the net now (custom layers' destroy_pipeline
// runs, and its exceptions come out here); Extractors still alive keep it until they go.
static mp_obj_t ncnn_mp_Net_close(mp_obj_t self_in) {
    ncnn_mp_net_obj_t *self = ncnn_mp_cast(self_in, &ncnn_mp_type_Net, "Net.close");
    if (self->native == NULL) {
        return mp_const_none;  // closed already
    }
    ncnn_mp_net_use_t use;
    ncnn_mp_net_native_t *n = ncnn_mp_net_use(&use, self_in, true, "Net.close");
    mp_uint_t l = ncnn_mp_lock();
    self->native = NULL;
    ncnn_mp_unlock(l);
    ncnn_mp_net_done(&use);  // a later user can only be an Extractor made before, with its own reference
    ncnn_mp_call_t call;
    ncnn_mp_call_begin(&call);
    ncnn_mp_net_native_unref(n);
    ncnn_mp_call_end(&call);
    return mp_const_none;
}
static NCNN_MP_DEFINE_METHOD_1(ncnn_mp_Net_close_obj, Net, close, ncnn_mp_Net_close);
NCNN_MP_DEFINE_CONTEXT_MANAGER(Net);


// A load, with the net entered alone for it (net_load.c).
static void ncnn_mp_Net_load(mp_obj_t self_in, mp_obj_t src, ncnn_mp_load_kind_t kind, bool in_place, const char *where) {
    ncnn_mp_net_use_t use;
    ncnn_mp_net_native_t *n = ncnn_mp_net_use(&use, self_in, true, where);
    ncnn_mp_net_load(n, src, kind, in_place, where);
    ncnn_mp_net_done(&use);
}

// Net.load_param(src: str | DataReader | buffer) -> None   ncnn_net_load_param / _datareader
static mp_obj_t ncnn_mp_Net_load_param(mp_obj_t self_in, mp_obj_t src) {
    ncnn_mp_Net_load(self_in, src, NCNN_MP_LOAD_PARAM, false, "Net.load_param");
    return mp_const_none;
}
static NCNN_MP_DEFINE_METHOD_2(ncnn_mp_Net_load_param_obj, Net, load_param, ncnn_mp_Net_load_param);

// Net.load_param_mem(text: str | bytes) -> None   (CPython ncnn) param text held in memory
static mp_obj_t ncnn_mp_Net_load_param_mem(mp_obj_t self_in, mp_obj_t text) {
    const char *where = "Net.load_param_mem";
    mp_buffer_info_t info;
    if (!mp_get_buffer(text, &info, MP_BUFFER_READ)) {
        mp_raise_msg_varg(&mp_type_TypeError, NCNN_MP_FORMAT("%s: expected the param text as str or bytes, not %s"),
            where, mp_obj_get_type_str(text));
    }
    // A str would be taken for a path by load_param: hand its bytes over as a buffer.
    mp_obj_t buf = mp_obj_new_memoryview('B', info.len, info.buf);
    ncnn_mp_Net_load(self_in, buf, NCNN_MP_LOAD_PARAM, false, where);
    return mp_const_none;
}
static NCNN_MP_DEFINE_METHOD_2(ncnn_mp_Net_load_param_mem_obj, Net, load_param_mem, ncnn_mp_Net_load_param_mem);

// Net.load_param_bin(src: str | DataReader | buffer) -> None   ncnn_net_load_param_bin / _datareader
static mp_obj_t ncnn_mp_Net_load_param_bin(mp_obj_t self_in, mp_obj_t src) {
    ncnn_mp_Net_load(self_in, src, NCNN_MP_LOAD_PARAM_BIN, false, "Net.load_param_bin");
    return mp_const_none;
}
static NCNN_MP_DEFINE_METHOD_2(ncnn_mp_Net_load_param_bin_obj, Net, load_param_bin, ncnn_mp_Net_load_param_bin);

// Net.load_model(src: str | DataReader | buffer, *, copy=True) -> None
//   ncnn_net_load_model / _datareader; copy=False: Net::load_model through a reader
//   whose reference() lends ncnn the buffer (cxx_load.cpp)
// Copying, the buffer need not outlive the load; in place, the net keeps it alive.
static mp_obj_t ncnn_mp_Net_load_model(size_t n_args, const mp_obj_t *pos, mp_map_t *kws) {
    const char *where = "Net.load_model";
    enum { ARG_src, ARG_copy };
    static const mp_arg_t allowed[] = {
        { MP_QSTR_src, MP_ARG_REQUIRED | MP_ARG_OBJ, {.u_obj = MP_OBJ_NULL} },
        { MP_QSTR_copy, MP_ARG_KW_ONLY | MP_ARG_BOOL, {.u_bool = true} },
    };
    mp_arg_val_t args[MP_ARRAY_SIZE(allowed)];
    ncnn_mp_parse_args(where, n_args - 1, pos + 1, kws, MP_ARRAY_SIZE(allowed), allowed, args);
    ncnn_mp_Net_load(pos[0], args[ARG_src].u_obj, NCNN_MP_LOAD_MODEL, !args[ARG_copy].u_bool, where);
    return mp_const_none;
}
static NCNN_MP_DEFINE_METHOD_KW(ncnn_mp_Net_load_model_obj, Net, load_model, 1, 2, ncnn_mp_Net_load_model);

// Net.weights_info() -> dict   what the last load_model did with the .bin's bytes:
// in_place, copied, converted (to fp32), unused (past the last weight): bytes, None where
// ncnn read a file itself; ram: the C heap the load left in use, None where unknown.
static mp_obj_t ncnn_mp_Net_weights_info(mp_obj_t self_in) {
    const char *where = "Net.weights_info";
    ncnn_mp_net_use_t use;
    ncnn_mp_net_native_t *n = ncnn_mp_net_use(&use, self_in, false, where);
    if (n->stage != NCNN_MP_NET_READY) {
        ncnn_mp_raise_value(where, NCNN_MP_TEXT("no weights loaded since the last load_param or clear"));
    }
    const ncnn_mp_weights_t *w = &n->weights;
    bool c = n->weights_counted;
    const struct { qstr key; size_t value; bool known; } items[] = {
        { MP_QSTR_in_place, w->in_place, true },
        { MP_QSTR_copied, w->copied, c },
        { MP_QSTR_converted, w->converted, c },
        { MP_QSTR_unused, w->unused, c && !w->stream },  // (a Python reader's data may go on)
        { MP_QSTR_ram, (size_t)n->weights_heap, n->weights_heap >= 0 },
    };
    ncnn_mp_net_done(&use);
    mp_obj_t d = mp_obj_new_dict(MP_ARRAY_SIZE(items));
    for (size_t i = 0; i < MP_ARRAY_SIZE(items); i++) {
        mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(items[i].key),
            items[i].known ? mp_obj_new_int_from_uint(items[i].value) : mp_const_none);
    }
    return d;
}
static NCNN_MP_DEFINE_METHOD_1(ncnn_mp_Net_weights_info_obj, Net, weights_info, ncnn_mp_Net_weights_info);

// Net.input_int8_scale(blob: str | int) -> float | None   the scale the layers reading input
// `blob` quantize it with (ncnn's bottom_blob_int8_scales), which an int8 input Mat must be
// made with (Mat.from_pixels_int8); None where a layer reads it as float32.
static mp_obj_t ncnn_mp_Net_input_int8_scale(mp_obj_t self_in, mp_obj_t key) {
    const char *where = "Net.input_int8_scale";
    int index = ncnn_mp_blob_key(key, where);
    ncnn_mp_net_use_t use;
    ncnn_mp_net_native_t *n = ncnn_mp_net_use(&use, self_in, false, where);
    if (n->stage != NCNN_MP_NET_READY) {
        ncnn_mp_raise_value(where, NCNN_MP_TEXT("no weights loaded since the last load_param or clear"));
    }
    float scale;
    int layer;
    int code = ncnn_mp_cxx_int8_input(n->handle, index, index < 0 ? mp_obj_str_get_str(key) : NULL, &scale, &layer);
    ncnn_mp_net_done(&use);
    if (code == NCNN_MP_INT8_INPUT_MISSING) {
        ncnn_mp_raise_blob_missing(key, where);
    }
    if (code == NCNN_MP_INT8_INPUT_SCALES) {
        ncnn_mp_raise_value(where, NCNN_MP_TEXT("the layers reading the blob take different input scales: it cannot be int8"));
    }
    return code == NCNN_MP_INT8_INPUT_OK ? mp_obj_new_float(scale) : mp_const_none;
}
static NCNN_MP_DEFINE_METHOD_2(ncnn_mp_Net_input_int8_scale_obj, Net, input_int8_scale, ncnn_mp_Net_input_int8_scale);

// Net.output_int8_scale(blob: str | int) -> float | None   the scale of an int8 output (a
// model quantized with int8 outputs: quantize_int8 --int8-outputs), whose values are q / scale;
// None where the output is float32.
static mp_obj_t ncnn_mp_Net_output_int8_scale(mp_obj_t self_in, mp_obj_t key) {
    const char *where = "Net.output_int8_scale";
    int index = ncnn_mp_blob_key(key, where);
    ncnn_mp_net_use_t use;
    ncnn_mp_net_native_t *n = ncnn_mp_net_use(&use, self_in, false, where);
    if (n->stage != NCNN_MP_NET_READY) {
        ncnn_mp_raise_value(where, NCNN_MP_TEXT("no weights loaded since the last load_param or clear"));
    }
    float scale = ncnn_mp_cxx_int8_output(n->handle, index, index < 0 ? mp_obj_str_get_str(key) : NULL);
    ncnn_mp_net_done(&use);
    if (scale < 0.f) {
        ncnn_mp_raise_blob_missing(key, where);
    }
    return scale > 0.f ? mp_obj_new_float(scale) : mp_const_none;
}
static NCNN_MP_DEFINE_METHOD_2(ncnn_mp_Net_output_int8_scale_obj, Net, output_int8_scale, ncnn_mp_Net_output_int8_scale);

// Net.stack_needed() -> int   the C stack ncnn_mp asks of a thread before an extract of
// this net (stack.c): size a thread's stack with it.
static mp_obj_t ncnn_mp_Net_stack_needed(mp_obj_t self_in) {
    const char *where = "Net.stack_needed";
    ncnn_mp_net_use_t use;
    ncnn_mp_net_native_t *n = ncnn_mp_net_use(&use, self_in, false, where);
    if (n->stage != NCNN_MP_NET_PARAMS && n->stage != NCNN_MP_NET_READY) {
        ncnn_mp_raise_value(where, NCNN_MP_TEXT("no param loaded (load_param first)"));
    }
    size_t need = ncnn_mp_stack_need(n->depth);
    ncnn_mp_net_done(&use);
    return mp_obj_new_int_from_uint(need);
}
static NCNN_MP_DEFINE_METHOD_1(ncnn_mp_Net_stack_needed_obj, Net, stack_needed, ncnn_mp_Net_stack_needed);

// Net.load_model_mem(buffer) -> None   (CPython ncnn) same as load_model(buffer)
static mp_obj_t ncnn_mp_Net_load_model_mem(mp_obj_t self_in, mp_obj_t src) {
    if (mp_obj_is_str(src)) {
        ncnn_mp_raise_type("Net.load_model_mem", NCNN_MP_TEXT("expected a buffer of weights, not str"));
    }
    ncnn_mp_Net_load(self_in, src, NCNN_MP_LOAD_MODEL, false, "Net.load_model_mem");
    return mp_const_none;
}
static NCNN_MP_DEFINE_METHOD_2(ncnn_mp_Net_load_model_mem_obj, Net, load_model_mem, ncnn_mp_Net_load_model_mem);

// Net.clear() -> None   ncnn_net_clear (its Extractors stop working)
static mp_obj_t ncnn_mp_Net_clear(mp_obj_t self_in) {
    ncnn_mp_net_use_t use;
    ncnn_mp_net_native_t *n = ncnn_mp_net_use(&use, self_in, true, "Net.clear");
    ncnn_mp_net_native_drop_extractors(n);
    ncnn_mp_call_t call;  // ncnn calls custom layers' destroy_pipeline
    ncnn_mp_call_begin(&call);
    ncnn_net_clear(n->handle);
    n->pipelines = false;
    ncnn_mp_net_release_weights(n);
    n->stage = NCNN_MP_NET_EMPTY;
    n->named = false;
    ncnn_mp_net_done(&use);
    ncnn_mp_call_end(&call);
    return mp_const_none;
}
static NCNN_MP_DEFINE_METHOD_1(ncnn_mp_Net_clear_obj, Net, clear, ncnn_mp_Net_clear);

// An index argument in [0, count).
static int ncnn_mp_net_index(mp_obj_t i, int count, const char *where) {
    return ncnn_mp_get_index(i, count, false, where, "index", "the net has");
}

// Net.get_input_name(i) / get_output_name(i) -> str   ncnn_net_get_{input,output}_name
// Net.get_input_index(i) / get_output_index(i) -> int   ncnn_net_get_{input,output}_index
static mp_obj_t ncnn_mp_net_io(mp_obj_t self_in, mp_obj_t i, bool output, bool name, const char *where) {
    ncnn_mp_net_use_t use;
    ncnn_mp_net_native_t *native = ncnn_mp_net_use(&use, self_in, false, where);
    ncnn_net_t net = native->handle;
    int n = output ? ncnn_net_get_output_count(net) : ncnn_net_get_input_count(net);
    int k = ncnn_mp_net_index(i, n, where);
    mp_obj_t result;
    if (!name) {
        result = mp_obj_new_int(output ? ncnn_net_get_output_index(net, k) : ncnn_net_get_input_index(net, k));
    } else if (!native->named) {
        ncnn_mp_raise_value(where, NCNN_MP_TEXT("a net loaded from a binary param has no blob names (use the index functions)"));
    } else {
        #if NCNN_STRING
        result = mp_obj_new_str_from_cstr(output ? ncnn_net_get_output_name(net, k) : ncnn_net_get_input_name(net, k));
        #else
        ncnn_mp_raise_not_built(where, NCNN_MP_TEXT("NCNN_STRING (use the index functions)"));
        #endif
    }
    ncnn_mp_net_done(&use);
    return result;
}

static mp_obj_t ncnn_mp_Net_get_input_name(mp_obj_t self_in, mp_obj_t i) {
    return ncnn_mp_net_io(self_in, i, false, true, "Net.get_input_name");
}
static NCNN_MP_DEFINE_METHOD_2(ncnn_mp_Net_get_input_name_obj, Net, get_input_name, ncnn_mp_Net_get_input_name);

static mp_obj_t ncnn_mp_Net_get_output_name(mp_obj_t self_in, mp_obj_t i) {
    return ncnn_mp_net_io(self_in, i, true, true, "Net.get_output_name");
}
static NCNN_MP_DEFINE_METHOD_2(ncnn_mp_Net_get_output_name_obj, Net, get_output_name, ncnn_mp_Net_get_output_name);

static mp_obj_t ncnn_mp_Net_get_input_index(mp_obj_t self_in, mp_obj_t i) {
    return ncnn_mp_net_io(self_in, i, false, false, "Net.get_input_index");
}
static NCNN_MP_DEFINE_METHOD_2(ncnn_mp_Net_get_input_index_obj, Net, get_input_index, ncnn_mp_Net_get_input_index);

static mp_obj_t ncnn_mp_Net_get_output_index(mp_obj_t self_in, mp_obj_t i) {
    return ncnn_mp_net_io(self_in, i, true, false, "Net.get_output_index");
}
static NCNN_MP_DEFINE_METHOD_2(ncnn_mp_Net_get_output_index_obj, Net, get_output_index, ncnn_mp_Net_get_output_index);

// Net.input_names() / output_names() -> list[str]   (CPython ncnn)
// A net loaded from a binary param has none: [] (as ncnn's C++ input_names() gives).
static mp_obj_t ncnn_mp_net_names(mp_obj_t self_in, bool output, const char *where) {
    ncnn_mp_net_use_t use;
    ncnn_mp_net_native_t *native = ncnn_mp_net_use(&use, self_in, false, where);
    ncnn_net_t net = native->handle;
    int n = !native->named ? 0 : output ? ncnn_net_get_output_count(net) : ncnn_net_get_input_count(net);
    mp_obj_t list = mp_obj_new_list(0, NULL);
    for (int i = 0; i < n; i++) {
        mp_obj_list_append(list, ncnn_mp_net_io(self_in, MP_OBJ_NEW_SMALL_INT(i), output, true, where));
    }
    ncnn_mp_net_done(&use);
    return list;
}

static mp_obj_t ncnn_mp_Net_input_names(mp_obj_t self_in) {
    return ncnn_mp_net_names(self_in, false, "Net.input_names");
}
static NCNN_MP_DEFINE_METHOD_1(ncnn_mp_Net_input_names_obj, Net, input_names, ncnn_mp_Net_input_names);

static mp_obj_t ncnn_mp_Net_output_names(mp_obj_t self_in) {
    return ncnn_mp_net_names(self_in, true, "Net.output_names");
}
static NCNN_MP_DEFINE_METHOD_1(ncnn_mp_Net_output_names_obj, Net, output_names, ncnn_mp_Net_output_names);

#if NCNN_MP_HAS_GRAPH_INFO
static mp_obj_t ncnn_mp_net_indexes(int n, const int *v) {
    mp_obj_t list = mp_obj_new_list(n, NULL);
    for (int i = 0; i < n; i++) {
        mp_obj_list_store(list, MP_OBJ_NEW_SMALL_INT(i), MP_OBJ_NEW_SMALL_INT(v[i]));
    }
    return list;
}

static mp_obj_t ncnn_mp_net_name(const char *name) {
    return name ? mp_obj_new_str_from_cstr(name) : mp_const_none;
}

// Net.layers() -> list[dict]   (CPython ncnn's net.layers()) each layer, in order: name,
// type (None without NCNN_STRING), typeindex, bottoms and tops (blob indexes)
static mp_obj_t ncnn_mp_Net_layers(mp_obj_t self_in) {
    ncnn_mp_net_use_t use;
    ncnn_mp_net_native_t *n = ncnn_mp_net_use(&use, self_in, false, "Net.layers");
    int count = ncnn_mp_cxx_layer_count(n->handle);
    mp_obj_t list = mp_obj_new_list(0, NULL);
    for (int i = 0; i < count; i++) {
        ncnn_mp_layer_info_t l;
        ncnn_mp_cxx_layer_info(n->handle, i, &l);
        mp_obj_t d = mp_obj_new_dict(5);
        mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(MP_QSTR_name), ncnn_mp_net_name(l.name));
        mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(MP_QSTR_type), ncnn_mp_net_name(l.type));
        mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(MP_QSTR_typeindex), MP_OBJ_NEW_SMALL_INT(l.typeindex));
        mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(MP_QSTR_bottoms), ncnn_mp_net_indexes(l.n_bottoms, l.bottoms));
        mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(MP_QSTR_tops), ncnn_mp_net_indexes(l.n_tops, l.tops));
        mp_obj_list_append(list, d);
    }
    ncnn_mp_net_done(&use);
    return list;
}
static NCNN_MP_DEFINE_METHOD_1(ncnn_mp_Net_layers_obj, Net, layers, ncnn_mp_Net_layers);

// Net.blobs() -> list[dict]   (CPython ncnn's net.blobs()) each blob, in order: name (None
// without NCNN_STRING), producer and consumer (layer indexes, -1 none), shape (the param's
// shape hint as Mat's (w,), (w, h), (w, h, c) or (w, h, d, c); None when it gives none)
static mp_obj_t ncnn_mp_Net_blobs(mp_obj_t self_in) {
    ncnn_mp_net_use_t use;
    ncnn_mp_net_native_t *n = ncnn_mp_net_use(&use, self_in, false, "Net.blobs");
    int count = ncnn_mp_cxx_blob_count(n->handle);
    mp_obj_t list = mp_obj_new_list(0, NULL);
    for (int i = 0; i < count; i++) {
        ncnn_mp_blob_info_t b;
        ncnn_mp_cxx_blob_info(n->handle, i, &b);
        int dims = b.dims < 0 || b.dims > 4 ? 0 : b.dims;
        mp_obj_t shape = mp_const_none;
        if (dims > 0) {
            mp_obj_t all[4] = { MP_OBJ_NEW_SMALL_INT(b.w), MP_OBJ_NEW_SMALL_INT(b.h), MP_OBJ_NEW_SMALL_INT(b.d),
                                MP_OBJ_NEW_SMALL_INT(b.c) };
            mp_obj_t by_dims[4] = { all[0], all[1], dims == 3 ? all[3] : all[2], all[3] };
            shape = mp_obj_new_tuple(dims, by_dims);
        }
        mp_obj_t d = mp_obj_new_dict(4);
        mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(MP_QSTR_name), ncnn_mp_net_name(b.name));
        mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(MP_QSTR_producer), mp_obj_new_int(b.producer));
        mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(MP_QSTR_consumer), mp_obj_new_int(b.consumer));
        mp_obj_dict_store(d, MP_OBJ_NEW_QSTR(MP_QSTR_shape), shape);
        mp_obj_list_append(list, d);
    }
    ncnn_mp_net_done(&use);
    return list;
}
static NCNN_MP_DEFINE_METHOD_1(ncnn_mp_Net_blobs_obj, Net, blobs, ncnn_mp_Net_blobs);
#endif

// Net.register_custom_layer(type: str | int, creator) -> None
//   ncnn_net_register_custom_layer_by_type / _by_typeindex (see trampoline.c)
// creator: a Layer subclass, or any callable returning a new instance of one.
static mp_obj_t ncnn_mp_Net_register_custom_layer(mp_obj_t self_in, mp_obj_t type, mp_obj_t creator) {
    const char *where = "Net.register_custom_layer";
    ncnn_mp_net_use_t use;
    ncnn_mp_net_native_t *n = ncnn_mp_net_use(&use, self_in, true, where);
    if (n->stage == NCNN_MP_NET_PARAMS || n->stage == NCNN_MP_NET_READY) {
        // ncnn would destroy the layers it made already (a built-in ReLU, say) with the
        // new type's destroyer, which takes them for ncnn_mp's own.
        ncnn_mp_raise_value(where, NCNN_MP_TEXT("the net has layers: register custom layers before load_param (or clear() first)"));
    }
    ncnn_mp_register_custom_layer(n, type, creator, where);
    ncnn_mp_net_done(&use);
    return mp_const_none;
}
static NCNN_MP_DEFINE_METHOD_3(ncnn_mp_Net_register_custom_layer_obj, Net, register_custom_layer, ncnn_mp_Net_register_custom_layer);

// Net.create_extractor() -> Extractor   ncnn_extractor_create
static mp_obj_t ncnn_mp_Net_create_extractor(mp_obj_t self_in) {
    return ncnn_mp_extractor_new(self_in, ncnn_mp_cast(self_in, &ncnn_mp_type_Net, "Net.create_extractor"));
}
static NCNN_MP_DEFINE_METHOD_1(ncnn_mp_Net_create_extractor_obj, Net, create_extractor, ncnn_mp_Net_create_extractor);

// Net.opt / Net.option: Option (a view of the net's own option; assigning copies)
//   ncnn_net_get_option / ncnn_net_set_option
// Net.input_count / Net.output_count: int   ncnn_net_get_{input,output}_count
static void ncnn_mp_Net_attr(mp_obj_t self_in, qstr attr, mp_obj_t *dest) {
    bool opt = attr == MP_QSTR_opt || attr == MP_QSTR_option;
    bool count = attr == MP_QSTR_input_count || attr == MP_QSTR_output_count;
    if (!opt && !count) {
        dest[1] = MP_OBJ_SENTINEL;  // methods go to locals_dict
        return;
    }
    if (dest[0] != MP_OBJ_NULL && (count || dest[1] == MP_OBJ_NULL)) {
        ncnn_mp_raise_attr_fixed("Net", attr, dest);
    }
    bool load = dest[0] == MP_OBJ_NULL, store = !load;
    char where[NCNN_MP_WHERE_LEN];
    ncnn_mp_attr_where(where, "Net", attr);
    ncnn_mp_net_use_t use;  // assigning the option: alone, as ncnn may be reading it
    ncnn_mp_net_native_t *n = ncnn_mp_net_use(&use, self_in, store, where);
    if (load && opt) {
        dest[0] = ncnn_mp_option_wrap_net_view(n);
    } else if (load) {
        dest[0] = MP_OBJ_NEW_SMALL_INT(attr == MP_QSTR_input_count
            ? ncnn_net_get_input_count(n->handle) : ncnn_net_get_output_count(n->handle));
    } else {
        ncnn_mp_option_obj_t *o = ncnn_mp_get_option(dest[1], where);
        if (o->kind == NCNN_MP_OPTION_BORROWED) {
            ncnn_mp_raise_value(where, NCNN_MP_TEXT("cannot assign an Option lent to a callback"));
        }
        if (o->kind != NCNN_MP_OPTION_NET_VIEW || o->net != n) {  // (else net.opt = net.opt)
            qstr differs = n->stage != NCNN_MP_NET_EMPTY
                ? ncnn_mp_option_pipeline_mismatch(o->handle, ncnn_net_get_option(n->handle)) : MP_QSTRnull;
            if (differs != MP_QSTRnull) {
                mp_raise_msg_varg(&mp_type_ValueError, NCNN_MP_FORMAT("%s: %q differs from what the loaded layers were prepared with; assign options before loading (or clear() first)"), where, differs);
            }
            ncnn_net_set_option(n->handle, o->handle);
            // The net now points at the Option's allocators: hold them as long as it does.
            ncnn_mp_allocator_set_assign(n->allocators, o->kind == NCNN_MP_OPTION_NET_VIEW ? o->net->allocators : o->allocators);
        }
        dest[0] = MP_OBJ_NULL;
    }
    ncnn_mp_net_done(&use);
}

static void ncnn_mp_Net_print(const mp_print_t *print, mp_obj_t self_in, mp_print_kind_t kind) {
    (void)kind;
    ncnn_mp_net_obj_t *self = MP_OBJ_TO_PTR(self_in);
    mp_uint_t l = ncnn_mp_lock();  // as ncnn_mp_net_use, without raising
    ncnn_mp_net_native_t *n = self->native;
    bool entered = n != NULL && ncnn_mp_net_try_enter(n, false);
    ncnn_mp_unlock(l);
    if (!entered) {
        mp_print_str(print, n ? "<Net busy>" : "<Net closed>");
        return;
    }
    mp_printf(print, "<Net inputs=%d outputs=%d>", ncnn_net_get_input_count(n->handle), ncnn_net_get_output_count(n->handle));
    ncnn_mp_net_leave(n);
}

static const mp_rom_map_elem_t ncnn_mp_Net_locals_table[] = {
    { MP_ROM_QSTR(MP_QSTR_load_param), MP_ROM_PTR(&ncnn_mp_Net_load_param_obj) },
    { MP_ROM_QSTR(MP_QSTR_load_param_mem), MP_ROM_PTR(&ncnn_mp_Net_load_param_mem_obj) },
    { MP_ROM_QSTR(MP_QSTR_load_param_bin), MP_ROM_PTR(&ncnn_mp_Net_load_param_bin_obj) },
    { MP_ROM_QSTR(MP_QSTR_load_model), MP_ROM_PTR(&ncnn_mp_Net_load_model_obj) },
    { MP_ROM_QSTR(MP_QSTR_load_model_mem), MP_ROM_PTR(&ncnn_mp_Net_load_model_mem_obj) },
    { MP_ROM_QSTR(MP_QSTR_weights_info), MP_ROM_PTR(&ncnn_mp_Net_weights_info_obj) },
    { MP_ROM_QSTR(MP_QSTR_stack_needed), MP_ROM_PTR(&ncnn_mp_Net_stack_needed_obj) },
    { MP_ROM_QSTR(MP_QSTR_input_int8_scale), MP_ROM_PTR(&ncnn_mp_Net_input_int8_scale_obj) },
    { MP_ROM_QSTR(MP_QSTR_output_int8_scale), MP_ROM_PTR(&ncnn_mp_Net_output_int8_scale_obj) },
    #if NCNN_MP_HAS_GRAPH_INFO
    { MP_ROM_QSTR(MP_QSTR_layers), MP_ROM_PTR(&ncnn_mp_Net_layers_obj) },
    { MP_ROM_QSTR(MP_QSTR_blobs), MP_ROM_PTR(&ncnn_mp_Net_blobs_obj) },
    #endif
    { MP_ROM_QSTR(MP_QSTR_clear), MP_ROM_PTR(&ncnn_mp_Net_clear_obj) },
    { MP_ROM_QSTR(MP_QSTR_get_input_name), MP_ROM_PTR(&ncnn_mp_Net_get_input_name_obj) },
    { MP_ROM_QSTR(MP_QSTR_get_output_name), MP_ROM_PTR(&ncnn_mp_Net_get_output_name_obj) },
    { MP_ROM_QSTR(MP_QSTR_get_input_index), MP_ROM_PTR(&ncnn_mp_Net_get_input_index_obj) },
    { MP_ROM_QSTR(MP_QSTR_get_output_index), MP_ROM_PTR(&ncnn_mp_Net_get_output_index_obj) },
    { MP_ROM_QSTR(MP_QSTR_input_names), MP_ROM_PTR(&ncnn_mp_Net_input_names_obj) },
    { MP_ROM_QSTR(MP_QSTR_output_names), MP_ROM_PTR(&ncnn_mp_Net_output_names_obj) },
    { MP_ROM_QSTR(MP_QSTR_create_extractor), MP_ROM_PTR(&ncnn_mp_Net_create_extractor_obj) },
    { MP_ROM_QSTR(MP_QSTR_register_custom_layer), MP_ROM_PTR(&ncnn_mp_Net_register_custom_layer_obj) },
    { MP_ROM_QSTR(MP_QSTR_close), MP_ROM_PTR(&ncnn_mp_Net_close_obj) },
    { MP_ROM_QSTR(MP_QSTR___enter__), MP_ROM_PTR(&ncnn_mp_Net_enter_obj) },
    { MP_ROM_QSTR(MP_QSTR___exit__), MP_ROM_PTR(&ncnn_mp_Net_exit_obj) },
    { MP_ROM_QSTR(MP_QSTR___del__), MP_ROM_PTR(&ncnn_mp_Net_del_obj) },
};
static MP_DEFINE_CONST_DICT(ncnn_mp_Net_locals, ncnn_mp_Net_locals_table);

MP_DEFINE_CONST_OBJ_TYPE(
    ncnn_mp_type_Net, MP_QSTR_Net, MP_TYPE_FLAG_NONE,
    make_new, ncnn_mp_Net_make_new,
    print, ncnn_mp_Net_print,
    attr, ncnn_mp_Net_attr,
    locals_dict, &ncnn_mp_Net_locals
    );
