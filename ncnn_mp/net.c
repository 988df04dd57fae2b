// Net: a loaded network (ncnn_net_*): loading params and weights, its option, its blobs.
#include <stdio.h>
#include <stdlib.h>

#include "ncnn_mp.h"

ncnn_mp_net_native_t *ncnn_mp_net_native_ref(ncnn_mp_net_native_t *n) {
    if (n) {
        ncnn_mp_count(&n->refs, 1);
    }
    return n;
}

void ncnn_mp_net_native_unref(ncnn_mp_net_native_t *n) {
    if (n && ncnn_mp_count(&n->refs, -1) == 0) {
        // Every Extractor holds a reference, so none is left here.
        ncnn_net_destroy(n->handle);
        ncnn_mp_free_factories(n);
        ncnn_mp_allocator_set_assign(n->allocators, NULL);
        free(n);
    }
}

static NORETURN void ncnn_mp_net_raise_busy(const char *where) {
    mp_raise_msg_varg(&mp_type_RuntimeError, MP_ERROR_TEXT("%s: ncnn is loading, clearing or running this net "
        "(from one of its custom layers, or in another thread)"), where);
}

// (Under the lock.)
static bool ncnn_mp_net_try_enter(ncnn_mp_net_native_t *n, bool alone) {
    bool free_to_enter = alone ? n->users == 0 : n->users >= 0;
    if (free_to_enter) {
        n->users = alone ? -1 : n->users + 1;
    }
    return free_to_enter;
}

void ncnn_mp_net_enter(ncnn_mp_net_native_t *n, bool alone, const char *where) {
    mp_uint_t l = ncnn_mp_lock();
    bool entered = ncnn_mp_net_try_enter(n, alone);
    ncnn_mp_unlock(l);
    if (!entered) {
        ncnn_mp_net_raise_busy(where);
    }
}

void ncnn_mp_net_leave(ncnn_mp_net_native_t *n) {
    mp_uint_t l = ncnn_mp_lock();
    n->users = n->users < 0 ? 0 : n->users - 1;
    ncnn_mp_unlock(l);
}

void ncnn_mp_net_check_idle(ncnn_mp_net_native_t *n, const char *where) {
    if (n->users != 0) {
        ncnn_mp_net_raise_busy(where);
    }
}

// (With the net entered alone: no Extractor is in use, none is being made.)
void ncnn_mp_net_native_drop_extractors(ncnn_mp_net_native_t *n) {
    mp_uint_t l = ncnn_mp_lock();
    for (ncnn_mp_extractor_native_t *e = n->extractors; e; e = e->next) {
        if (e->handle) {
            ncnn_extractor_destroy(e->handle);  // frees memory only: no callback
            e->handle = NULL;
        }
    }
    ncnn_mp_unlock(l);
}

static void ncnn_mp_net_use_leave(void *use) {
    ncnn_mp_net_leave(((ncnn_mp_net_use_t *)use)->net);
}

ncnn_mp_net_native_t *ncnn_mp_net_use(ncnn_mp_net_use_t *u, mp_obj_t obj, bool alone, const char *where) {
    ncnn_mp_net_obj_t *self = ncnn_mp_cast(obj, &ncnn_mp_type_Net, where);
    mp_uint_t l = ncnn_mp_lock();  // (close() takes self->native under it)
    ncnn_mp_net_native_t *n = self->native;
    bool entered = n != NULL && ncnn_mp_net_try_enter(n, alone);
    ncnn_mp_unlock(l);
    if (n == NULL) {
        ncnn_mp_raise_value(where, "the Net was closed");
    }
    if (!entered) {
        ncnn_mp_net_raise_busy(where);
    }
    u->net = n;
    nlr_push_jump_callback(&u->leave, ncnn_mp_net_use_leave);
    return n;
}

void ncnn_mp_net_done(ncnn_mp_net_use_t *u) {
    nlr_pop_jump_callback(true);
}

// Net()   ncnn_net_create
static mp_obj_t ncnn_mp_Net_make_new(const mp_obj_type_t *type, size_t n_args, size_t n_kw, const mp_obj_t *args) {
    ncnn_mp_parse_args_kw_array("Net()", n_args, n_kw, args, 0, NULL, NULL);
    ncnn_mp_net_obj_t *self = mp_obj_malloc_with_finaliser(ncnn_mp_net_obj_t, type);
    self->native = NULL;
    ncnn_mp_net_native_t *n = calloc(1, sizeof(*n));
    if (n == NULL) {
        mp_raise_msg(&mp_type_MemoryError, MP_ERROR_TEXT("Net(): out of memory"));
    }
    n->refs = 1;
    n->handle = ncnn_net_create();
    self->native = n;
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


typedef enum { NCNN_MP_LOAD_PARAM, NCNN_MP_LOAD_PARAM_BIN, NCNN_MP_LOAD_MODEL } ncnn_mp_load_kind_t;

static const char *const ncnn_mp_load_what[] = { "param", "binary param", "model weights" };

// Runs ncnn's loader of `kind` from a path or from a DataReader.
static int ncnn_mp_net_run_loader(ncnn_net_t net, ncnn_mp_load_kind_t kind, const char *path, ncnn_datareader_t dr) {
    #if NCNN_STDIO
    if (path) {
        #if NCNN_STRING
        if (kind == NCNN_MP_LOAD_PARAM) {
            return ncnn_net_load_param(net, path);
        }
        #endif
        return kind == NCNN_MP_LOAD_PARAM_BIN ? ncnn_net_load_param_bin(net, path) : ncnn_net_load_model(net, path);
    }
    #endif
    #if NCNN_STRING
    if (kind == NCNN_MP_LOAD_PARAM) {
        return ncnn_net_load_param_datareader(net, dr);
    }
    #endif
    return kind == NCNN_MP_LOAD_PARAM_BIN ? ncnn_net_load_param_bin_datareader(net, dr)
        : ncnn_net_load_model_datareader(net, dr);
}

// Runs one of ncnn's loaders on `src`: a path (str), a DataReader, or a buffer
// (read through a bounded reader: ncnn_net_load_*_memory would read past its end).
static void ncnn_mp_net_load(mp_obj_t self_in, mp_obj_t src, ncnn_mp_load_kind_t kind, const char *where) {
    ncnn_mp_net_use_t use;
    ncnn_mp_net_native_t *n = ncnn_mp_net_use(&use, self_in, true, where);
    #if !NCNN_STRING
    if (kind == NCNN_MP_LOAD_PARAM) {
        ncnn_mp_raise_not_built(where, "NCNN_STRING (use load_param_bin)");
    }
    #endif
    const char *path = NULL;
    ncnn_datareader_t dr = NULL;
    ncnn_mp_reader_t reader;
    mp_buffer_info_t info = { .buf = NULL };
    if (mp_obj_is_str(src)) {
        path = mp_obj_str_get_str(src);
        #if NCNN_STDIO
        // ncnn reports a missing file and a malformed one alike (-1): look first.
        FILE *fp = fopen(path, "rb");
        if (fp == NULL) {
            mp_raise_msg_varg(&mp_type_OSError, MP_ERROR_TEXT("%s: cannot open '%s'"), where, path);
        }
        fclose(fp);
        #else
        ncnn_mp_raise_not_built(where, "NCNN_STDIO (load from a buffer or DataReader instead)");
        #endif
    } else if (mp_obj_cast_to_native_base(src, MP_OBJ_FROM_PTR(&ncnn_mp_type_DataReader)) != MP_OBJ_NULL) {
        dr = ncnn_mp_get_datareader_handle(src, where);
    } else {
        if (!mp_get_buffer(src, &info, MP_BUFFER_READ)) {
            mp_raise_msg_varg(&mp_type_TypeError, MP_ERROR_TEXT("%s: expected a path (str), a DataReader or a buffer, not %s"),
                where, mp_obj_get_type_str(src));
        }
    }
    bool own_reader = path == NULL && dr == NULL;
    if (own_reader) {  // (linked where ncnn's callbacks find it: nothing may raise until it is closed)
        ncnn_mp_reader_open(&reader, info.buf, info.len, false);
        dr = reader.handle;
    }
    ncnn_mp_net_native_drop_extractors(n);
    // Nothing raises from here to ncnn_mp_call_end: custom layers' exceptions wait there.
    ncnn_mp_call_t call;
    ncnn_mp_call_begin(&call);
    int ret = ncnn_mp_net_run_loader(n->handle, kind, path, dr);
    if (kind == NCNN_MP_LOAD_MODEL) {
        bool has_layers = n->stage == NCNN_MP_NET_PARAMS || n->stage == NCNN_MP_NET_READY;
        n->stage = ret == 0 && call.error == MP_OBJ_NULL ? NCNN_MP_NET_READY
            : has_layers ? NCNN_MP_NET_PARAMS : NCNN_MP_NET_PARAMS_FAILED;
    } else {
        // Even a failed load may have prepared some layers with the option.
        n->stage = ret == 0 ? NCNN_MP_NET_PARAMS : NCNN_MP_NET_PARAMS_FAILED;
        n->named = kind == NCNN_MP_LOAD_PARAM && ret == 0;
    }
    if (own_reader) {
        ncnn_mp_reader_close(&reader);
    }
    ncnn_mp_net_done(&use);
    ncnn_mp_call_end(&call);
    if (ret != 0) {
        mp_raise_msg_varg(&mp_type_ValueError, MP_ERROR_TEXT("%s: ncnn could not load the %s (error %d; ncnn's log on stderr says why)"),
            where, ncnn_mp_load_what[kind], ret);
    }
}

// Net.load_param(src: str | DataReader | buffer) -> None   ncnn_net_load_param / _datareader
static mp_obj_t ncnn_mp_Net_load_param(mp_obj_t self_in, mp_obj_t src) {
    ncnn_mp_net_load(self_in, src, NCNN_MP_LOAD_PARAM, "Net.load_param");
    return mp_const_none;
}
static NCNN_MP_DEFINE_METHOD_2(ncnn_mp_Net_load_param_obj, Net, load_param, ncnn_mp_Net_load_param);

// Net.load_param_mem(text: str | bytes) -> None   (CPython ncnn) param text held in memory
static mp_obj_t ncnn_mp_Net_load_param_mem(mp_obj_t self_in, mp_obj_t text) {
    const char *where = "Net.load_param_mem";
    mp_buffer_info_t info;
    if (!mp_get_buffer(text, &info, MP_BUFFER_READ)) {
        mp_raise_msg_varg(&mp_type_TypeError, MP_ERROR_TEXT("%s: expected the param text as str or bytes, not %s"),
            where, mp_obj_get_type_str(text));
    }
    // A str would be taken for a path by load_param: hand its bytes over as a buffer.
    mp_obj_t buf = mp_obj_new_memoryview('B', info.len, info.buf);
    ncnn_mp_net_load(self_in, buf, NCNN_MP_LOAD_PARAM, where);
    return mp_const_none;
}
static NCNN_MP_DEFINE_METHOD_2(ncnn_mp_Net_load_param_mem_obj, Net, load_param_mem, ncnn_mp_Net_load_param_mem);

// Net.load_param_bin(src: str | DataReader | buffer) -> None   ncnn_net_load_param_bin / _datareader
static mp_obj_t ncnn_mp_Net_load_param_bin(mp_obj_t self_in, mp_obj_t src) {
    ncnn_mp_net_load(self_in, src, NCNN_MP_LOAD_PARAM_BIN, "Net.load_param_bin");
    return mp_const_none;
}
static NCNN_MP_DEFINE_METHOD_2(ncnn_mp_Net_load_param_bin_obj, Net, load_param_bin, ncnn_mp_Net_load_param_bin);

// Net.load_model(src: str | DataReader | buffer) -> None   ncnn_net_load_model / _datareader
// The weights are copied out of a buffer, so it need not outlive the Net.
static mp_obj_t ncnn_mp_Net_load_model(mp_obj_t self_in, mp_obj_t src) {
    ncnn_mp_net_load(self_in, src, NCNN_MP_LOAD_MODEL, "Net.load_model");
    return mp_const_none;
}
static NCNN_MP_DEFINE_METHOD_2(ncnn_mp_Net_load_model_obj, Net, load_model, ncnn_mp_Net_load_model);

// Net.load_model_mem(buffer) -> None   (CPython ncnn) same as load_model(buffer)
static mp_obj_t ncnn_mp_Net_load_model_mem(mp_obj_t self_in, mp_obj_t src) {
    if (mp_obj_is_str(src)) {
        ncnn_mp_raise_type("Net.load_model_mem", "expected a buffer of weights, not str");
    }
    ncnn_mp_net_load(self_in, src, NCNN_MP_LOAD_MODEL, "Net.load_model_mem");
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
        ncnn_mp_raise_value(where, "a net loaded from a binary param has no blob names (use the index functions)");
    } else {
        #if NCNN_STRING
        result = mp_obj_new_str_from_cstr(output ? ncnn_net_get_output_name(net, k) : ncnn_net_get_input_name(net, k));
        #else
        ncnn_mp_raise_not_built(where, "NCNN_STRING (use the index functions)");
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
        ncnn_mp_raise_value(where, "the net has layers: register custom layers before load_param (or clear() first)");
    }
    ncnn_mp_register_custom_layer(n, type, creator, where);
    ncnn_mp_net_done(&use);
    return mp_const_none;
}
static NCNN_MP_DEFINE_METHOD_3(ncnn_mp_Net_register_custom_layer_obj, Net, register_custom_layer, ncnn_mp_Net_register_custom_layer);

// Net.create_extractor() -> Extractor   ncnn_extractor_create
static mp_obj_t ncnn_mp_Net_create_extractor(mp_obj_t self_in) {
    const char *where = "Net.create_extractor";
    ncnn_mp_net_use_t use;
    ncnn_mp_net_native_t *n = ncnn_mp_net_use(&use, self_in, false, where);
    if (n->stage != NCNN_MP_NET_READY) {
        ncnn_mp_raise_value(where, "no weights loaded since the last load_param or clear "
            "(load_model failed or was not called; a weightless net loads DataReader(zeros=True))");
    }
    mp_obj_t ex = ncnn_mp_extractor_new(self_in, n);
    ncnn_mp_net_done(&use);
    return ex;
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
            ncnn_mp_raise_value(where, "cannot assign an Option lent to a callback");
        }
        if (o->kind != NCNN_MP_OPTION_NET_VIEW || o->net != n) {  // (else net.opt = net.opt)
            qstr differs = n->stage != NCNN_MP_NET_EMPTY
                ? ncnn_mp_option_pipeline_mismatch(o->handle, ncnn_net_get_option(n->handle)) : MP_QSTRnull;
            if (differs != MP_QSTRnull) {
                mp_raise_msg_varg(&mp_type_ValueError, MP_ERROR_TEXT("%s: %q differs from what the loaded "
                    "layers were prepared with; assign options before loading (or clear() first)"), where, differs);
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
