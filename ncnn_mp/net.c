// Net: a loaded network (ncnn_net_*): loading params and weights, its option, its blobs.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__GLIBC__) || defined(_NEWLIB_VERSION) || defined(__PICOLIBC__)
#include <malloc.h>
#endif
#ifdef ESP_PLATFORM
#include "esp_heap_caps.h"
#endif

#include "py/gc.h"
#include "py/objarray.h"
#include "ncnn_mp.h"
#include "net_cxx.h"

// Keeps `buffer` alive for as long as the net's layers may point into it.
static void ncnn_mp_net_keep_weights(ncnn_mp_net_native_t *n, mp_obj_t buffer) {
    mp_obj_t kept = n->kept_weights ? ncnn_mp_root_get(&n->kept_weights) : MP_OBJ_NULL;
    if (kept == MP_OBJ_NULL) {
        ncnn_mp_root_add(&n->kept_weights, mp_obj_new_list(1, &buffer));
        n->kept_weights = true;
    } else {
        mp_obj_list_append(kept, buffer);  // (a failed reload leaves layers in the old buffers too)
        ncnn_mp_gc_settle(buffer);
    }
}

// Once ncnn destroyed the layers. Never allocates: a finaliser may call it.
static void ncnn_mp_net_release_weights(ncnn_mp_net_native_t *n) {
    if (n->kept_weights) {
        ncnn_mp_root_remove(&n->kept_weights);
        n->kept_weights = false;
    }
    n->weights_counted = false;
}

// Bytes of C heap in use (where ncnn's weights and blobs live), or -1 where the C library
// cannot say (a sanitizer's or valgrind's malloc reports nothing).
static long ncnn_mp_c_heap_in_use(void) {
    long used = -1;
    #if defined(ESP_PLATFORM)
    used = (long)(heap_caps_get_total_size(MALLOC_CAP_DEFAULT) - heap_caps_get_free_size(MALLOC_CAP_DEFAULT));
    #elif defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33)
    struct mallinfo2 mi = mallinfo2();
    used = (long)(mi.uordblks + mi.hblkhd);
    #elif defined(_NEWLIB_VERSION) || defined(__PICOLIBC__)
    struct mallinfo mi = mallinfo();
    used = (long)mi.uordblks;
    #endif
    return used > 0 ? used : -1;
}

ncnn_mp_net_native_t *ncnn_mp_net_native_ref(ncnn_mp_net_native_t *n) {
    if (n) {
        ncnn_mp_count(&n->refs, 1);
    }
    return n;
}

void ncnn_mp_net_native_destroy(ncnn_mp_net_native_t *n) {
    // Every Extractor holds a reference, so none is left here.
    ncnn_net_destroy(n->handle);
    ncnn_mp_net_release_weights(n);
    ncnn_mp_free_factories(n);
    ncnn_mp_allocator_set_assign(n->allocators, NULL);
    free(n);
}

void ncnn_mp_net_native_unref(ncnn_mp_net_native_t *n) {
    if (n && ncnn_mp_count(&n->refs, -1) == 0) {
        ncnn_mp_net_native_destroy(n);
    }
}

NORETURN void ncnn_mp_net_raise_busy(const char *where) {
    mp_raise_msg_varg(&mp_type_RuntimeError, MP_ERROR_TEXT("%s: ncnn is loading, clearing or running this net "
        "(from one of its custom layers, or in another thread)"), where);
}

bool ncnn_mp_net_try_enter(ncnn_mp_net_native_t *n, bool alone) {
    bool free_to_enter = alone ? n->users == 0 : n->users >= 0;
    if (free_to_enter) {
        n->users = alone ? -1 : n->users + 1;
    }
    return free_to_enter;
}

void ncnn_mp_net_exit(ncnn_mp_net_native_t *n) {
    n->users = n->users < 0 ? 0 : n->users - 1;
}

void ncnn_mp_net_leave(ncnn_mp_net_native_t *n) {
    mp_uint_t l = ncnn_mp_lock();
    ncnn_mp_net_exit(n);
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
    if (ncnn_mp_cxx_guard_net(n->handle) != 0) {
        mp_raise_msg(&mp_type_MemoryError, MP_ERROR_TEXT("Net(): out of memory"));
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

// Where the board keeps what never changes (flash, a ROMFS image), for copy=False: a board's
// glue overrides it (ci/mcu/board.c); the Unix port has none (bytes are taken by their type).
MP_WEAK bool ncnn_mp_port_read_only(const void *p, size_t len) {
    (void)p;
    (void)len;
    return false;
}

#if MICROPY_GC_SPLIT_HEAP
#define NCNN_MP_NEXT_AREA(area) ((area)->next)
#else
#define NCNN_MP_NEXT_AREA(area) ((mp_state_mem_area_t *)NULL)
#endif

// Whether the read-only buffer `src` lies in memory that neither moves nor is freed while
// the Net keeps src: a bytes object's data (its own, or constants in flash); memory the port
// calls read-only; or a GC heap allocation that src's pointer keeps alive (the collector
// follows a pointer into an allocation's first block only, so a view into the middle of
// another object does not keep it). Not a Mat's storage, nor any other C heap memory.
static bool ncnn_mp_memory_stays(mp_obj_t src, const mp_buffer_info_t *info) {
    if (mp_obj_is_type(src, &mp_type_bytes) || ncnn_mp_port_read_only(info->buf, info->len)) {
        return true;
    }
    // (a memoryview's slice keeps the pointer it was made over, and an offset from it)
    const void *held = mp_obj_is_type(src, &mp_type_memoryview) ? ((mp_obj_array_t *)MP_OBJ_TO_PTR(src))->items : info->buf;
    size_t block = gc_nbytes(held);
    if (block == 0) {
        return false;
    }
    for (mp_state_mem_area_t *area = &MP_STATE_MEM(area); area; area = NCNN_MP_NEXT_AREA(area)) {
        uintptr_t pool = (uintptr_t)area->gc_pool_start, h = (uintptr_t)held, p = (uintptr_t)info->buf;
        if (h >= pool && h < (uintptr_t)area->gc_pool_end) {
            uintptr_t start = pool + (h - pool) / MICROPY_BYTES_PER_GC_BLOCK * MICROPY_BYTES_PER_GC_BLOCK;
            return p >= start && p - start <= block && info->len <= block - (p - start);
        }
    }
    return false;
}

// One load, as the C++ seam calls it (net_cxx.h: what ncnn throws is caught there).
typedef struct {
    ncnn_net_t net;
    ncnn_mp_load_kind_t kind;
    const char *path;
    ncnn_datareader_t dr;
    ncnn_mp_reader_t *in_place;  // load_model(copy=False): the reader ncnn keeps weights through
    int ret;
} ncnn_mp_load_call_t;

static void ncnn_mp_net_load_call(void *arg) {
    ncnn_mp_load_call_t *c = arg;
    c->ret = c->in_place ? ncnn_mp_cxx_load_model_in_place(c->net, c->in_place)
        : ncnn_mp_net_run_loader(c->net, c->kind, c->path, c->dr);
}

// The checks a buffer passes before ncnn may keep weights in it (load_model(copy=False)).
static void ncnn_mp_net_check_in_place(mp_obj_t src, const mp_buffer_info_t *info, const char *where) {
    if (mp_obj_cast_to_native_base(src, MP_OBJ_FROM_PTR(&ncnn_mp_type_Mat)) != MP_OBJ_NULL) {
        // Even over bytes: create() or clone_from() give it new storage and let the old go.
        ncnn_mp_raise_value(where, "copy=False cannot keep weights in a Mat (its storage can be replaced): "
            "pass the bytes or memoryview it lies over");
    }
    mp_buffer_info_t rw;
    if (mp_get_buffer(src, &rw, MP_BUFFER_WRITE)) {
        mp_raise_msg_varg(&mp_type_ValueError, MP_ERROR_TEXT("%s: copy=False needs a read-only buffer (bytes, "
            "a memoryview of bytes or flash, a ROMFS file): a writable %s can change or move under the net's "
            "layers (pass bytes(buf), or copy=True)"), where, mp_obj_get_type_str(src));
    }
    if (ncnn_mp_lent_holding(info->buf) != NULL) {
        ncnn_mp_raise_value(where, "copy=False cannot keep weights in a blob ncnn lent a callback (it dies when "
            "the callback returns): copy=True");
    }
    if ((uintptr_t)info->buf % 4 != 0) {
        mp_raise_msg_varg(&mp_type_ValueError, MP_ERROR_TEXT("%s: copy=False needs the weights 4-byte aligned "
            "(ncnn reads them as floats where they lie); this buffer starts %u bytes past a multiple of 4 "
            "(pack models with examples/romfs_pack.py, or use copy=True)"), where, (unsigned)((uintptr_t)info->buf % 4));
    }
    if (!ncnn_mp_memory_stays(src, info)) {
        mp_raise_msg_varg(&mp_type_ValueError, MP_ERROR_TEXT("%s: copy=False needs weights in memory that stays as "
            "it is while the net lives: bytes, a memoryview of bytes or flash, a ROMFS file; this %s lies in memory "
            "ncnn_mp cannot prove that of (a Mat's storage, a view into the middle of another object): copy=True"),
            where, mp_obj_get_type_str(src));
    }
}

// Whether the param just loaded gives a layer an int8 blob it cannot read (shape_guard.h:
// ncnn's layers would read it as floats, past its end); if so, what, in `buf`. Raises
// nothing (the load's caller holds ncnn's callbacks open).
static bool ncnn_mp_net_int8_misfit(ncnn_mp_net_native_t *n, char *buf, size_t len) {
    int layer, blob, why;
    if (!ncnn_mp_cxx_int8_misfit(n->handle, &layer, &blob, &why)) {
        return false;
    }
    ncnn_mp_layer_info_t l;
    ncnn_mp_blob_info_t b;
    ncnn_mp_cxx_layer_info(n->handle, layer, &l);
    ncnn_mp_cxx_blob_info(n->handle, blob, &b);
    const char *what = why == 2 ? "takes int8 and float blobs together, int8 from"
        : "cannot read the int8 blob";
    #if NCNN_STRING
    snprintf(buf, len, "layer '%s' (%s) %s '%s'", l.name, l.type, what, b.name);
    #else
    snprintf(buf, len, "layer %d (type %d) %s %d", layer, l.typeindex, what, blob);
    #endif
    return true;
}

// Runs one of ncnn's loaders on `src`: a path (str), a DataReader, or a buffer (read
// through a bounded reader: ncnn_net_load_*_memory would read past its end). in_place:
// a buffer ncnn keeps the weights in, which the net then keeps alive.
static void ncnn_mp_net_load(mp_obj_t self_in, mp_obj_t src, ncnn_mp_load_kind_t kind, bool in_place, const char *where) {
    ncnn_mp_net_use_t use;
    ncnn_mp_net_native_t *n = ncnn_mp_net_use(&use, self_in, true, where);
    ncnn_mp_stack_check(0, where);
    #if !NCNN_STRING
    if (kind == NCNN_MP_LOAD_PARAM) {
        ncnn_mp_raise_not_built(where, "NCNN_STRING (use load_param_bin)");
    }
    #endif
    const char *path = NULL;
    ncnn_datareader_t dr = NULL;
    ncnn_mp_reader_t reader, *counted = NULL;
    ncnn_mp_use_t reader_use;
    mp_buffer_info_t info = { .buf = NULL };
    bool is_reader = !mp_obj_is_str(src) && mp_obj_cast_to_native_base(src, MP_OBJ_FROM_PTR(&ncnn_mp_type_DataReader)) != MP_OBJ_NULL;
    if (in_place && (mp_obj_is_str(src) || is_reader)) {
        mp_raise_msg_varg(&mp_type_TypeError, MP_ERROR_TEXT("%s: copy=False needs the weights in a buffer "
            "(bytes, a memoryview, a ROMFS file), not %s"), where, mp_obj_get_type_str(src));
    }
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
    } else if (is_reader) {
        ncnn_mp_use_begin(&reader_use, 1);  // (pushed after the net's use: ended before it)
        dr = ncnn_mp_reader_use(&reader_use, src, &counted, where);
    } else {
        if (!mp_get_buffer(src, &info, MP_BUFFER_READ)) {
            mp_raise_msg_varg(&mp_type_TypeError, MP_ERROR_TEXT("%s: expected a path (str), a DataReader or a buffer, not %s"),
                where, mp_obj_get_type_str(src));
        }
        if (in_place) {
            ncnn_mp_net_check_in_place(src, &info, where);
            ncnn_mp_net_keep_weights(n, src);
        }
    }
    bool own_reader = path == NULL && dr == NULL;
    if (own_reader) {  // (linked where ncnn's callbacks find it: nothing may raise until it is closed)
        ncnn_mp_reader_open(&reader, info.buf, info.len, false);
        dr = reader.handle;
        counted = &reader;
    }
    if (counted) {
        memset(&counted->counts, 0, sizeof(counted->counts));
    }
    ncnn_mp_net_native_drop_extractors(n);
    // Nothing raises from here to ncnn_mp_call_end: custom layers' exceptions wait there.
    long heap_before = kind == NCNN_MP_LOAD_MODEL ? ncnn_mp_c_heap_in_use() : -1;
    ncnn_mp_call_t call;
    ncnn_mp_call_begin(&call);
    call.weights = in_place ? src : MP_OBJ_NULL;
    if (kind == NCNN_MP_LOAD_MODEL && n->pipelines) {
        ncnn_mp_cxx_destroy_pipelines(n->handle);  // (ncnn would create them over the old ones)
    }
    ncnn_mp_load_call_t load = { n->handle, kind, path, dr, in_place ? &reader : NULL, 0 };
    char misfit[192];
    int caught = ncnn_mp_cxx_catch(ncnn_mp_net_load_call, &load);  // (a param's layer list too large: bad_alloc)
    int ret = caught ? NCNN_MP_OUT_OF_MEMORY : load.ret;
    // ncnn ignores some short reads (an int8 layer's scales): any one fails the load.
    bool ran_out = kind == NCNN_MP_LOAD_MODEL && counted != NULL && counted->counts.short_read;
    if (kind == NCNN_MP_LOAD_MODEL) {
        bool has_layers = n->stage == NCNN_MP_NET_PARAMS || n->stage == NCNN_MP_NET_READY;
        n->pipelines = has_layers;
        n->stage = ret == 0 && !ran_out && call.error == MP_OBJ_NULL ? NCNN_MP_NET_READY
            : has_layers ? NCNN_MP_NET_PARAMS : NCNN_MP_NET_PARAMS_FAILED;
        long heap_after = ncnn_mp_c_heap_in_use();
        n->weights_heap = heap_before >= 0 && heap_after >= 0 ? heap_after - heap_before : -1;
        n->weights_counted = counted != NULL;
        if (counted) {
            n->weights = counted->counts;
            n->weights.unused = counted->zeros || counted->python ? 0 : counted->len - counted->offset;
            n->weights.stream = counted->python;
        }
    } else {
        if (ret == 0 && ncnn_mp_net_int8_misfit(n, misfit, sizeof(misfit))) {
            ret = NCNN_MP_INT8_MISFIT;
        }
        // Even a failed load may have prepared some layers with the option.
        n->stage = ret == 0 ? NCNN_MP_NET_PARAMS : NCNN_MP_NET_PARAMS_FAILED;
        n->named = kind == NCNN_MP_LOAD_PARAM && ret == 0;
        n->depth = ncnn_mp_cxx_graph_depth(n->handle);
        n->pipelines = false;
        ncnn_mp_net_release_weights(n);  // ncnn destroyed the old layers first
    }
    if (own_reader) {
        ncnn_mp_reader_close(&reader);
    }
    if (is_reader) {
        ncnn_mp_use_end(&reader_use);
    }
    ncnn_mp_net_done(&use);
    ncnn_mp_call_end(&call);
    if (ran_out) {
        mp_raise_msg_varg(&mp_type_ValueError, MP_ERROR_TEXT("%s: the weights ran out: the .bin is shorter than "
            "the model needs (truncated, or another model's)"), where);
    }
    if (caught) {
        mp_raise_msg_varg(&mp_type_MemoryError, MP_ERROR_TEXT("%s: ncnn ran out of memory loading the %s"),
            where, ncnn_mp_load_what[kind]);
    }
    if (ret == NCNN_MP_INT8_MISFIT) {
        mp_raise_msg_varg(&mp_type_ValueError, MP_ERROR_TEXT("%s: %s (docs/models.md: int8 between layers)"), where, misfit);
    }
    if (ret != 0) {
        mp_raise_msg_varg(&mp_type_ValueError, MP_ERROR_TEXT("%s: ncnn could not load the %s (error %d; ncnn's log on stderr says why)"),
            where, ncnn_mp_load_what[kind], ret);
    }
}

// Net.load_param(src: str | DataReader | buffer) -> None   ncnn_net_load_param / _datareader
static mp_obj_t ncnn_mp_Net_load_param(mp_obj_t self_in, mp_obj_t src) {
    ncnn_mp_net_load(self_in, src, NCNN_MP_LOAD_PARAM, false, "Net.load_param");
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
    ncnn_mp_net_load(self_in, buf, NCNN_MP_LOAD_PARAM, false, where);
    return mp_const_none;
}
static NCNN_MP_DEFINE_METHOD_2(ncnn_mp_Net_load_param_mem_obj, Net, load_param_mem, ncnn_mp_Net_load_param_mem);

// Net.load_param_bin(src: str | DataReader | buffer) -> None   ncnn_net_load_param_bin / _datareader
static mp_obj_t ncnn_mp_Net_load_param_bin(mp_obj_t self_in, mp_obj_t src) {
    ncnn_mp_net_load(self_in, src, NCNN_MP_LOAD_PARAM_BIN, false, "Net.load_param_bin");
    return mp_const_none;
}
static NCNN_MP_DEFINE_METHOD_2(ncnn_mp_Net_load_param_bin_obj, Net, load_param_bin, ncnn_mp_Net_load_param_bin);

// Net.load_model(src: str | DataReader | buffer, *, copy=True) -> None
//   ncnn_net_load_model / _datareader; copy=False: Net::load_model through a reader
//   whose reference() lends ncnn the buffer (net_cxx.cpp)
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
    ncnn_mp_net_load(pos[0], args[ARG_src].u_obj, NCNN_MP_LOAD_MODEL, !args[ARG_copy].u_bool, where);
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
        ncnn_mp_raise_value(where, "no weights loaded since the last load_param or clear");
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

// Net.stack_needed() -> int   the C stack ncnn_mp asks of a thread before an extract of
// this net (stack.c): size a thread's stack with it.
static mp_obj_t ncnn_mp_Net_stack_needed(mp_obj_t self_in) {
    const char *where = "Net.stack_needed";
    ncnn_mp_net_use_t use;
    ncnn_mp_net_native_t *n = ncnn_mp_net_use(&use, self_in, false, where);
    if (n->stage != NCNN_MP_NET_PARAMS && n->stage != NCNN_MP_NET_READY) {
        ncnn_mp_raise_value(where, "no param loaded (load_param first)");
    }
    size_t need = ncnn_mp_stack_need(n->depth);
    ncnn_mp_net_done(&use);
    return mp_obj_new_int_from_uint(need);
}
static NCNN_MP_DEFINE_METHOD_1(ncnn_mp_Net_stack_needed_obj, Net, stack_needed, ncnn_mp_Net_stack_needed);

// Net.load_model_mem(buffer) -> None   (CPython ncnn) same as load_model(buffer)
static mp_obj_t ncnn_mp_Net_load_model_mem(mp_obj_t self_in, mp_obj_t src) {
    if (mp_obj_is_str(src)) {
        ncnn_mp_raise_type("Net.load_model_mem", "expected a buffer of weights, not str");
    }
    ncnn_mp_net_load(self_in, src, NCNN_MP_LOAD_MODEL, false, "Net.load_model_mem");
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
    { MP_ROM_QSTR(MP_QSTR_weights_info), MP_ROM_PTR(&ncnn_mp_Net_weights_info_obj) },
    { MP_ROM_QSTR(MP_QSTR_stack_needed), MP_ROM_PTR(&ncnn_mp_Net_stack_needed_obj) },
    { MP_ROM_QSTR(MP_QSTR_layers), MP_ROM_PTR(&ncnn_mp_Net_layers_obj) },
    { MP_ROM_QSTR(MP_QSTR_blobs), MP_ROM_PTR(&ncnn_mp_Net_blobs_obj) },
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
